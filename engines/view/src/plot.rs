//! Plots of runs, with plotters: a sweep's box plots (`ssxd sweep --summary`), and the font
//! the benchmarks' plots use too.

use std::path::Path;

/// Registers a TrueType font as plotters' "sans-serif", from `SSX_PLOT_FONT` or the usual places;
/// false when there is none (plots are then drawn without text).
pub fn register_font() -> bool {
    let candidates = [
        std::env::var("SSX_PLOT_FONT").unwrap_or_default(),
        "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf".into(),
        "/usr/share/fonts/dejavu/DejaVuSans.ttf".into(),
        "/usr/share/fonts/TTF/DejaVuSans.ttf".into(),
        "/usr/share/fonts/truetype/liberation/LiberationSans-Regular.ttf".into(),
    ];
    candidates
        .iter()
        .filter(|p| !p.is_empty())
        .find_map(|p| std::fs::read(p).ok())
        .is_some_and(|bytes| {
            // plotters keeps the font for the process's lifetime.
            let bytes: &'static [u8] = Box::leak(bytes.into_boxed_slice());
            plotters::style::register_font("sans-serif", plotters::style::FontStyle::Normal, bytes)
                .is_ok()
        })
}

/// One box per configuration (its label, its runs' values) of figure `name`, into `path`
/// (written to a temporary file and renamed). Returns whether the plot has text.
pub fn box_plot(path: &Path, name: &str, boxes: &[(String, Vec<f64>)]) -> Result<bool, String> {
    use plotters::prelude::*;
    let labels = register_font();
    let err = |e: &dyn std::fmt::Display| format!("{}: {e}", path.display());
    let values = boxes.iter().flat_map(|(_, v)| v.iter().copied());
    let (lo, hi) = values.fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| {
        (a.min(v), b.max(v))
    });
    if !lo.is_finite() {
        return Err(format!("{name}: no values to plot"));
    }
    let pad = ((hi - lo) * 0.1).max(hi.abs() * 0.05).max(1e-9);
    let tmp = path.with_extension("tmp.png");
    {
        let root = BitMapBackend::new(&tmp, (900, 560)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| err(&e))?;
        let names: Vec<String> = boxes
            .iter()
            .map(|(n, v)| format!("{n} (n = {})", v.len()))
            .collect();
        let mut builder = ChartBuilder::on(&root);
        builder.margin(20);
        if labels {
            builder
                .caption(name, ("sans-serif", 22))
                .x_label_area_size(40)
                .y_label_area_size(70);
        }
        let mut chart = builder
            .build_cartesian_2d(
                names.as_slice().into_segmented(),
                (lo - pad) as f32..(hi + pad) as f32,
            )
            .map_err(|e| err(&e))?;
        let mut mesh = chart.configure_mesh();
        let label_of = |v: &SegmentValue<&String>| match v {
            SegmentValue::Exact(s) | SegmentValue::CenterOf(s) => s.to_string(),
            SegmentValue::Last => String::new(),
        };
        if labels {
            mesh.y_desc(name).x_label_formatter(&label_of);
        } else {
            mesh.x_labels(0).y_labels(0);
        }
        mesh.draw().map_err(|e| err(&e))?;
        for ((_, v), label) in boxes.iter().zip(&names) {
            if v.is_empty() {
                continue;
            }
            let q = Quartiles::new(&v.iter().map(|x| *x as f32).collect::<Vec<_>>());
            chart
                .draw_series(std::iter::once(Boxplot::new_vertical(
                    SegmentValue::CenterOf(label),
                    &q,
                )))
                .map_err(|e| err(&e))?;
        }
        root.present().map_err(|e| err(&e))?;
    }
    std::fs::rename(&tmp, path).map_err(|e| err(&e))?;
    Ok(labels)
}
