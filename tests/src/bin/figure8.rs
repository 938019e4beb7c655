//! `figure8 [SCENE] [OUT_DIR]`: SwarmSimX's fidelity experiment. Flies the figure-eight scene
//! (default `artifacts/scenes/figure8.json`) for two periods of each eight and writes the
//! tracking-error CSVs, F(d), a summary and a PNG plot into OUT_DIR (default `figure8-out`).

use ssx_driver_quadrotor::trajectory::Trajectory;

fn main() {
    let mut args = std::env::args().skip(1);
    let root = ssx_tests::repo_root();
    let scene = args
        .next()
        .map_or(root.join("artifacts/scenes/figure8.json"), Into::into);
    let out: std::path::PathBuf = args.next().map_or("figure8-out".into(), Into::into);
    let result = ssx_tests::fidelity::run(&scene, 2.0)
        .and_then(|tracks| Ok((ssx_tests::fidelity::write(&tracks, &out)?, tracks)));
    match result {
        Ok((written, tracks)) => {
            for t in &tracks {
                let (mean, std) = t.mean_std();
                let what = match &t.trajectory {
                    Trajectory::Figure8(f) => format!(
                        "{:?} eight {} x {} m, period {} s, yaw rate {} rad/s",
                        f.plane,
                        2.0 * f.size[0],
                        f.size[1],
                        f.period,
                        f.yaw_rate
                    ),
                    _ => format!("polynomial from {} s to {:.2} s", t.window.0, t.window.1),
                };
                println!(
                    "{}: {what}: tracking error mean {mean:.4} m, std {std:.4} m over {} samples",
                    t.name,
                    t.samples.len()
                );
            }
            for (plane, sim, real) in ssx_tests::fidelity::PAPER {
                println!(
                    "paper, {plane}: simulated mean {} m (std {}), real mean {} m (std {})",
                    sim[0], sim[1], real[0], real[1]
                );
            }
            for p in written {
                println!("wrote {}", p.display());
            }
        }
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(1);
        }
    }
}
