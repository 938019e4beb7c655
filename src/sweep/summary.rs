//! What a sweep leaves: every run's result gathered into `results.csv`, and `--summary`: each
//! configuration's figures with their mean and 95% interval.

use std::path::{Path, PathBuf};

use serde_json::Value;
use ssx_core::SsxError;

use super::*;

/// Every finished run's `result.json` under `out/runs`, in run order.
pub(super) fn results(out: &Path) -> Result<Vec<Value>, SsxError> {
    let runs = out.join("runs");
    let entries = std::fs::read_dir(&runs).map_err(|e| SsxError::Io {
        path: runs.clone(),
        message: format!("{e} (is this a sweep's --out directory?)"),
    })?;
    let mut paths: Vec<PathBuf> = entries
        .filter_map(|e| e.ok())
        .map(|e| e.path().join("result.json"))
        .filter(|p| p.exists())
        .collect();
    paths.sort();
    paths
        .iter()
        .map(|p| {
            std::fs::read_to_string(p)
                .ok()
                .and_then(|t| serde_json::from_str(&t).ok())
                .ok_or_else(|| SsxError::Io {
                    path: p.clone(),
                    message: "not a run's result".into(),
                })
        })
        .collect()
}

/// `results.csv`: one row a finished run, in run order: its values, seed, kept figures, exit
/// status, wall time and error.
pub(super) fn write_csv(
    out: &Path,
    parameters: &[Parameter],
    seed_name: &str,
    keep: &[String],
) -> Result<(), SsxError> {
    let mut text = String::from("run");
    for p in parameters {
        text.push(',');
        text.push_str(&cell(&p.path));
    }
    text.push(',');
    text.push_str(&cell(seed_name));
    for k in keep {
        text.push(',');
        text.push_str(&cell(k));
    }
    text.push_str(",exit_status,wall_s,error\n");
    for r in results(out)? {
        text.push_str(&cell(&plain(&r["run"])));
        for v in r["values"].as_array().into_iter().flatten() {
            text.push(',');
            text.push_str(&cell(&plain(v)));
        }
        text.push(',');
        text.push_str(&plain(&r["seed"]));
        for k in keep {
            text.push(',');
            text.push_str(&cell(&plain(&r["figures"][k])));
        }
        text.push_str(&format!(
            ",{},{:.3},{}\n",
            plain(&r["exit_status"]),
            r["wall_s"].as_f64().unwrap_or(0.0),
            cell(&plain(&r["error"]))
        ));
    }
    write_atomically(&out.join("results.csv"), text.as_bytes())
}

/// Two-sided 95% quantiles of Student's t for 1 to 30 degrees of freedom; 1.96 beyond.
pub(super) const T95: [f64; 30] = [
    12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160,
    2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056,
    2.052, 2.048, 2.045, 2.042,
];

/// n, mean, sample standard deviation and the half-width of the 95% interval of the mean
/// (Student's t); the last two are NaN for fewer than two values.
pub(super) fn spread(x: &[f64]) -> (usize, f64, f64, f64) {
    let n = x.len();
    let mean = x.iter().sum::<f64>() / n as f64;
    if n < 2 {
        return (n, mean, f64::NAN, f64::NAN);
    }
    let sd = (x.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1) as f64).sqrt();
    let t = T95.get(n - 2).copied().unwrap_or(1.96);
    (n, mean, sd, t * sd / (n as f64).sqrt())
}

/// `ssxd sweep --summary DIR`: every configuration (the runs with the same parameter values,
/// over their seeds) with each kept figure's n, mean, standard deviation and 95% interval;
/// printed and written to `DIR/summary.csv`. Failed runs and missing figures are left out
/// (n says how many counted).
pub fn summary(dir: &Path) -> Result<(), SsxError> {
    let read = |p: &Path| {
        std::fs::read_to_string(p).map_err(|e| SsxError::Io {
            path: p.to_path_buf(),
            message: format!("{e} (is this a sweep's --out directory?)"),
        })
    };
    let f: SweepFile =
        serde_json::from_str(&read(&dir.join("sweep.json"))?).map_err(|e| SsxError::Io {
            path: dir.join("sweep.json"),
            message: e.to_string(),
        })?;
    // results.csv again from every result: array tasks on several nodes each wrote it with the
    // results they saw.
    let seed_name = match &f.seeds {
        Some(Seeds::Range {
            path: Some(path), ..
        }) => path.as_str(),
        _ => "seed",
    };
    write_csv(dir, &f.parameters, seed_name, &f.keep)?;
    let results = results(dir)?;
    // Configurations in the order their first run appears.
    let mut configs: Vec<(Value, Vec<&Value>)> = Vec::new();
    for r in &results {
        match configs.iter_mut().find(|(v, _)| *v == r["values"]) {
            Some((_, rs)) => rs.push(r),
            None => configs.push((r["values"].clone(), vec![r])),
        }
    }
    let mut csv = String::new();
    for p in &f.parameters {
        csv.push_str(&cell(&p.path));
        csv.push(',');
    }
    csv.push_str("figure,n,mean,sd,ci95_low,ci95_high\n");
    let mut text = String::new();
    for (values, rs) in &configs {
        let label: Vec<String> = f
            .parameters
            .iter()
            .zip(values.as_array().into_iter().flatten())
            .map(|(p, v)| format!("{} = {v}", p.path))
            .collect();
        text.push_str(&format!(
            "{} ({} runs)\n",
            if label.is_empty() {
                "all runs".into()
            } else {
                label.join(", ")
            },
            rs.len()
        ));
        for k in &f.keep {
            let x: Vec<f64> = rs
                .iter()
                .filter(|r| r["exit_status"] == 0)
                .filter_map(|r| r["figures"][k].as_f64())
                .collect();
            if x.is_empty() {
                text.push_str(&format!("  {k}: no values\n"));
                continue;
            }
            let (n, mean, sd, half) = spread(&x);
            text.push_str(&format!(
                "  {k}: mean {} sd {} 95% [{}, {}] (n = {n})\n",
                g(mean),
                g(sd),
                g(mean - half),
                g(mean + half)
            ));
            for v in values.as_array().into_iter().flatten() {
                csv.push_str(&cell(&plain(v)));
                csv.push(',');
            }
            csv.push_str(&format!(
                "{},{n},{mean},{},{},{}\n",
                cell(k),
                num(sd),
                num(mean - half),
                num(mean + half)
            ));
        }
    }
    write_atomically(&dir.join("summary.csv"), csv.as_bytes())?;
    print!("{text}");
    // A box plot per figure: one box a configuration, over its successful runs.
    let mut plots = Vec::new();
    let mut unlabelled = false;
    for k in &f.keep {
        let boxes: Vec<(String, Vec<f64>)> = configs
            .iter()
            .map(|(values, rs)| {
                let label: Vec<String> =
                    values.as_array().into_iter().flatten().map(short).collect();
                let x = rs
                    .iter()
                    .filter(|r| r["exit_status"] == 0)
                    .filter_map(|r| r["figures"][k].as_f64())
                    .collect();
                (label.join(", "), x)
            })
            .collect();
        if boxes.iter().all(|(_, x)| x.is_empty()) {
            continue;
        }
        let name: String = k
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '_' || c == '.' {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        let path = dir.join(format!("{name}.png"));
        unlabelled |= !ssx_view::plot::box_plot(&path, k, &boxes).map_err(SsxError::Config)?;
        plots.push(path.display().to_string());
    }
    if !plots.is_empty() {
        println!("box plots: {}", plots.join(", "));
    }
    if unlabelled {
        println!("(no TrueType font found: the plots have no text; set SSX_PLOT_FONT to a .ttf)");
    }
    println!(
        "{} runs in {} configurations; table in {}",
        results.len(),
        configs.len(),
        dir.join("summary.csv").display()
    );
    Ok(())
}

/// A number for people: 4 significant digits, "–" for NaN.
pub(super) fn g(v: f64) -> String {
    if v.is_nan() {
        return "–".into();
    }
    if v == 0.0 || !v.is_finite() {
        return v.to_string();
    }
    let decimals = (3 - v.abs().log10().floor() as i32).clamp(0, 12) as usize;
    format!("{v:.decimals$}")
}

/// A parameter value as a box's label: a file named by path as its name alone.
pub(super) fn short(v: &Value) -> String {
    let text = plain(v);
    match Path::new(&text).file_stem() {
        Some(stem) if text.ends_with(".json") => stem.to_string_lossy().into_owned(),
        _ => text,
    }
}

/// A number for the CSV: empty for NaN.
pub(super) fn num(v: f64) -> String {
    if v.is_nan() {
        String::new()
    } else {
        v.to_string()
    }
}

/// A figure from a run's stats: a metric of that name, else the stats field at that dotted
/// path (`step_time_us.p99`).
pub(super) fn figure(stats: &Value, name: &str) -> Option<Value> {
    if let Some(v) = stats["metrics"].get(name) {
        return Some(v.clone());
    }
    let mut at = stats;
    for key in name.split('.') {
        at = at.get(key)?;
    }
    at.is_number().then(|| at.clone())
}

/// A value as a CSV cell shows it: strings without quotes, null empty.
pub(super) fn plain(v: &Value) -> String {
    match v {
        Value::Null => String::new(),
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// A CSV cell, quoted when it must be (RFC 4180).
pub(super) fn cell(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

pub(super) fn human(seconds: f64) -> String {
    if seconds < 90.0 {
        format!("{seconds:.0} s")
    } else if seconds < 5400.0 {
        format!("{:.0} min", seconds / 60.0)
    } else {
        format!("{:.1} h", seconds / 3600.0)
    }
}
