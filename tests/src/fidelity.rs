//! SwarmSimX's fidelity experiment (sec. 3.1): quadrotors fly a horizontal and a vertical
//! figure-eight at constant yaw rate with the cascaded controller and the noisy IMU; the
//! tracking error `d(t) = |p_d(t) − p(t)|` over the eight's first `laps` periods gives the
//! cumulative distribution `F(d)`: the share of the time the quadrotor was closer than `d` to
//! where it should have been.
//!
//! The same measure applies to any quadrotor flying a trajectory with a measuring window
//! ([`Trajectory::window`]): a piecewise polynomial (Crazyswarm's figure-eight) is measured once
//! over its length.
//!
//! Outputs in the output directory: `figure8_<artifact>.csv` (t, desired and actual position,
//! error) per quadrotor, `figure8_cdf.csv` (d, then F(d) per quadrotor), `figure8_summary.json`
//! (trajectory parameters, mean and standard deviation of the error, the paper's numbers) and
//! `figure8_cdf.png`.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use ssx_driver_quadrotor::trajectory::Trajectory;

/// One quadrotor's result.
#[derive(Clone, Debug)]
pub struct Track {
    /// Its artifact.
    pub name: String,
    /// What it flies.
    pub trajectory: Trajectory,
    /// The simulated time the error is measured over (s).
    pub window: (f64, f64),
    /// (t, desired, actual, error) per step within the measured window.
    pub samples: Vec<(f64, [f64; 3], [f64; 3], f64)>,
}

impl Track {
    /// Mean and standard deviation of the error (m).
    pub fn mean_std(&self) -> (f64, f64) {
        let n = self.samples.len() as f64;
        let m = self.samples.iter().map(|s| s.3).sum::<f64>() / n;
        let v = self.samples.iter().map(|s| (s.3 - m).powi(2)).sum::<f64>() / n;
        (m, v.sqrt())
    }
    /// F(d): the share of samples with an error below `d`.
    pub fn cdf(&self, d: f64) -> f64 {
        self.samples.iter().filter(|s| s.3 < d).count() as f64 / self.samples.len() as f64
    }
}

/// Runs every quadrotor of `scene` that flies a figure-eight or a polynomial, until the latest
/// measuring window ends (`laps` periods of an eight, a polynomial once).
pub fn run(scene: &Path, laps: f64) -> Result<Vec<Track>, String> {
    let registry = crate::registry();
    let mut env = crate::build_fast_with(scene, &registry, 2, true).map_err(|e| e.to_string())?;
    let loaded = ssx_artifacts::Scene::load(scene, &registry).map_err(|e| e.to_string())?;
    let mut tracks = Vec::new();
    for a in &loaded.artifacts {
        let Some(driver) = &a.driver else { continue };
        let Some(t) = driver.descriptor.get("trajectory") else {
            continue;
        };
        let Ok(trajectory) = serde_json::from_value::<Trajectory>(t.clone()) else {
            continue;
        };
        if let Some(window) = trajectory.window(laps) {
            tracks.push(Track {
                name: a.name.clone(),
                trajectory,
                window,
                samples: Vec::new(),
            });
        }
    }
    if tracks.is_empty() {
        return Err(format!(
            "{}: no quadrotor flies a figure-eight or a polynomial",
            scene.display()
        ));
    }
    let end = tracks.iter().map(|t| t.window.1).fold(0.0, f64::max);
    while env.sim_time() < end - 1e-9 {
        env.step().map_err(|e| e.to_string())?;
        let t = env.sim_time();
        for track in &mut tracks {
            let (from, to) = track.window;
            if t < from || t > to {
                continue;
            }
            let want = track.trajectory.at(t).position;
            let p = crate::state_of(&env, &track.name).pose.translation.vector;
            let d = (want - p).norm();
            track
                .samples
                .push((t, [want.x, want.y, want.z], [p.x, p.y, p.z], d));
        }
    }
    Ok(tracks)
}

fn write_atomic(path: &Path, text: &str) -> Result<(), String> {
    ssx_core::write_atomic(path, text.as_bytes()).map_err(|e| e.to_string())
}

/// The paper's numbers: (simulated mean, std), (real mean, std) for horizontal and vertical.
pub const PAPER: [(&str, [f64; 2], [f64; 2]); 2] = [
    ("horizontal", [0.1245, 0.0444], [0.0919, 0.0412]),
    ("vertical", [0.0546, 0.0131], [0.0654, 0.0179]),
];

/// Writes the CSVs, the summary and the plot into `out`; returns the written paths.
pub fn write(tracks: &[Track], out: &Path) -> Result<Vec<PathBuf>, String> {
    std::fs::create_dir_all(out).map_err(|e| format!("{}: {e}", out.display()))?;
    let mut written = Vec::new();
    for t in tracks {
        let mut csv = String::from("t,x_desired,y_desired,z_desired,x,y,z,error\n");
        for (time, w, p, d) in &t.samples {
            writeln!(
                csv,
                "{time:.3},{:.5},{:.5},{:.5},{:.5},{:.5},{:.5},{d:.5}",
                w[0], w[1], w[2], p[0], p[1], p[2]
            )
            .unwrap();
        }
        let path = out.join(format!("figure8_{}.csv", t.name));
        write_atomic(&path, &csv)?;
        written.push(path);
    }
    let max_d = tracks
        .iter()
        .flat_map(|t| t.samples.iter().map(|s| s.3))
        .fold(0.0, f64::max);
    let grid: Vec<f64> = (0..=400).map(|i| max_d * 1.05 * i as f64 / 400.0).collect();
    let mut csv = String::from("d");
    for t in tracks {
        write!(csv, ",F_{}", t.name).unwrap();
    }
    csv.push('\n');
    for d in &grid {
        write!(csv, "{d:.5}").unwrap();
        for t in tracks {
            write!(csv, ",{:.5}", t.cdf(*d)).unwrap();
        }
        csv.push('\n');
    }
    let path = out.join("figure8_cdf.csv");
    write_atomic(&path, &csv)?;
    written.push(path);

    let summary: Vec<serde_json::Value> = tracks
        .iter()
        .map(|t| {
            let (mean, std) = t.mean_std();
            let paper = PAPER.iter().find(|p| t.name.contains(p.0));
            let mut row = match &t.trajectory {
                Trajectory::Figure8(f) => serde_json::json!({
                    "plane": format!("{:?}", f.plane).to_lowercase(),
                    "center_m": f.center, "size_m": f.size, "period_s": f.period,
                    "yaw_rate_rad_s": f.yaw_rate, "start_s": f.start,
                }),
                _ => serde_json::json!({ "window_s": [t.window.0, t.window.1] }),
            };
            row.as_object_mut().expect("an object").extend(serde_json::json!({
                "artifact": t.name,
                "samples": t.samples.len(),
                "mean_error_m": mean, "std_error_m": std,
                "paper_simulated": paper.map(|p| serde_json::json!({"mean_m": p.1[0], "std_m": p.1[1]})),
                "paper_real": paper.map(|p| serde_json::json!({"mean_m": p.2[0], "std_m": p.2[1]})),
            }).as_object().expect("an object").clone());
            row
        })
        .collect();
    let path = out.join("figure8_summary.json");
    write_atomic(
        &path,
        &(serde_json::to_string_pretty(&summary).unwrap() + "\n"),
    )?;
    written.push(path);

    let path = out.join("figure8_cdf.png");
    plot(tracks, &grid, &path)?;
    written.push(path);
    Ok(written)
}

/// Registers a TrueType font for plots (the view crate's, shared with `ssxd sweep --summary`).
pub use ssx_view::plot::register_font as register_plot_font;

fn plot(tracks: &[Track], grid: &[f64], path: &Path) -> Result<(), String> {
    use plotters::prelude::*;
    let labels = register_plot_font();
    if !labels {
        eprintln!("figure8: no TrueType font found (set SSX_PLOT_FONT); the plot has no text");
    }
    let err = |e: &dyn std::fmt::Display| format!("{}: {e}", path.display());
    let tmp = path.with_extension("png.tmp.png");
    {
        let root = BitMapBackend::new(&tmp, (900, 600)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| err(&e))?;
        let x_max = grid.last().copied().unwrap_or(1.0).max(1e-3);
        let mut builder = ChartBuilder::on(&root);
        builder.margin(20);
        if labels {
            builder
                .caption(
                    "Cumulative tracking error F(d), figure-eight",
                    ("sans-serif", 24),
                )
                .x_label_area_size(45)
                .y_label_area_size(55);
        }
        let mut chart = builder
            .build_cartesian_2d(0.0..x_max, 0.0..1.02)
            .map_err(|e| err(&e))?;
        let mut mesh = chart.configure_mesh();
        if labels {
            mesh.x_desc("d (m)").y_desc("F(d)");
        } else {
            mesh.disable_x_mesh()
                .disable_y_mesh()
                .x_labels(0)
                .y_labels(0);
        }
        mesh.draw().map_err(|e| err(&e))?;
        let colours = [
            RGBColor(31, 119, 180),
            RGBColor(214, 39, 40),
            RGBColor(44, 160, 44),
        ];
        for (i, t) in tracks.iter().enumerate() {
            let c = colours[i % colours.len()];
            let (mean, std) = t.mean_std();
            let series = chart
                .draw_series(LineSeries::new(
                    grid.iter().map(|d| (*d, t.cdf(*d))),
                    c.stroke_width(3),
                ))
                .map_err(|e| err(&e))?;
            if labels {
                series
                    .label(format!("{} (mean {mean:.4} m, std {std:.4} m)", t.name))
                    .legend(move |(x, y)| {
                        PathElement::new(vec![(x, y), (x + 20, y)], c.stroke_width(3))
                    });
            }
        }
        if labels {
            chart
                .configure_series_labels()
                .background_style(WHITE.mix(0.8))
                .border_style(BLACK)
                .position(SeriesLabelPosition::LowerRight)
                .draw()
                .map_err(|e| err(&e))?;
        }
        root.present().map_err(|e| err(&e))?;
    }
    std::fs::rename(&tmp, path).map_err(|e| err(&e))
}
