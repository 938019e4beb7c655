//! `quadrotor-ablation [SCENE] [ARTIFACT]`: the figure-eight scene (default
//! `artifacts/scenes/figure8.json`) flown with the quadrotor artifact's (default the scene's own,
//! `artifacts/library/quadrotor.json`) airframe effects all off, each alone and all on; prints a
//! Markdown table of the tracking error's mean ± std per eight (or polynomial) beside
//! SwarmSimX's published figures where the scene is its eights.

fn main() {
    let mut args = std::env::args().skip(1);
    let root = ssx_tests::repo_root();
    let scene = args
        .next()
        .map_or(root.join("artifacts/scenes/figure8.json"), Into::into);
    let artifact = args
        .next()
        .map_or(root.join("artifacts/library/quadrotor.json"), Into::into);
    let dir = tempfile::tempdir().expect("a temporary directory");
    match ssx_tests::ablation::run(&scene, &artifact, 2.0, dir.path()) {
        Ok(rows) => {
            let names: Vec<&str> = rows[0].errors.iter().map(|e| e.0.as_str()).collect();
            println!("| variant | {} |", names.join(" | "));
            println!("|---|{}", "---:|".repeat(names.len()));
            for r in &rows {
                let cells: Vec<String> = r
                    .errors
                    .iter()
                    .map(|(_, m, s)| format!("{m:.4} ± {s:.4}"))
                    .collect();
                println!("| {} | {} |", r.name, cells.join(" | "));
            }
            // SwarmSimX's figures beside its own eights (artifacts named after the plane).
            for (plane, sim, real) in ssx_tests::fidelity::PAPER
                .iter()
                .filter(|p| names.iter().any(|n| n.contains(p.0)))
            {
                println!(
                    "| SwarmSimX paper, {plane}: simulated {:.4} ± {:.4}, real {:.4} ± {:.4} | |",
                    sim[0], sim[1], real[0], real[1]
                );
            }
        }
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(1);
        }
    }
}
