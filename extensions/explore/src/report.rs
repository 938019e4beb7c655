//! What the run explored: shares and when they were reached, message counts, the metrics each
//! step, the summary, the JSON report and the PNG maps.

use std::io::Cursor;
use std::path::PathBuf;
use std::sync::atomic::Ordering;

use ssx_sdk::Ctx;

use crate::Explore;

/// Shares reached and when.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Progress {
    /// Share of free cells (0 to 1).
    pub share: f64,
    /// Simulated times the share first reached 50, 90 and 99 %.
    pub reached: [Option<f64>; 3],
}

impl Progress {
    pub(crate) fn update(&mut self, share: f64, time: f64) {
        self.share = share;
        for (r, goal) in self.reached.iter_mut().zip([0.5, 0.9, 0.99]) {
            if r.is_none() && share >= goal {
                *r = Some(time);
            }
        }
    }
}

/// Message and tag counts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    /// Messages sent.
    pub sent: u64,
    /// Deliveries made (one message to three robots is three).
    pub delivered: u64,
    /// Deliveries lost to the loss probability.
    pub lost: u64,
    /// Deliveries stopped by walls.
    pub blocked: u64,
    /// Deliveries dropped because an inbox was full.
    pub overflowed: u64,
    /// Tags dropped.
    pub tags: u64,
    /// Map merges (robot maps taking part in a merge).
    pub merges: u64,
}

/// Writes beside `path`, then renames over it: a reader never sees half a file.
pub(crate) fn write_atomic(path: &std::path::Path, bytes: &[u8]) -> Result<(), String> {
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(".tmp");
    let tmp = PathBuf::from(tmp);
    std::fs::write(&tmp, bytes)
        .and_then(|()| std::fs::rename(&tmp, path))
        .map_err(|e| format!("cannot write '{}': {e}", path.display()))
}

impl Explore {
    pub(crate) fn measure(&mut self) {
        let Some(setup) = &self.setup else { return };
        for &[x, y, _] in &self.poses {
            let (covered, now) = (&mut self.covered_at, self.time as f32);
            self.raster
                .disc(x, y, self.cfg.footprint, |i| covered[i] = now);
        }
        let free = setup.free.max(1) as f64;
        let covered = self
            .covered_at
            .iter()
            .zip(&setup.walls)
            .filter(|(c, w)| !c.is_nan() && !**w)
            .count();
        self.progress[1].update(covered as f64 / free, self.time);
        if self.fresh.swap(false, Ordering::Relaxed) {
            let explored = self
                .explored
                .iter()
                .zip(&setup.walls)
                .filter(|(e, w)| e.load(Ordering::Relaxed) && !**w)
                .count();
            self.progress[0].update(explored as f64 / free, self.time);
        }
    }

    /// The figures in the run's summary and stats JSON (`explore.explored`, ...).
    pub(crate) fn publish(&self, ctx: &Ctx<'_>) -> Result<(), String> {
        for (what, p) in ["explored", "covered"].iter().zip(&self.progress) {
            ctx.metric(what, p.share)?;
            let names = if *what == "explored" {
                ["explored_50_s", "explored_90_s", "explored_99_s"]
            } else {
                ["covered_50_s", "covered_90_s", "covered_99_s"]
            };
            for (name, t) in names.iter().zip(p.reached) {
                if let Some(t) = t {
                    ctx.metric(name, t)?;
                }
            }
        }
        let c = &self.counts;
        for (name, v) in [
            ("messages_sent", c.sent),
            ("messages_delivered", c.delivered),
            ("messages_lost", c.lost),
            ("messages_blocked", c.blocked),
            ("tags", c.tags),
            ("map_merges", c.merges),
        ] {
            ctx.metric(name, v as f64)?;
        }
        Ok(())
    }

    /// The metrics as one line.
    pub fn summary(&self) -> String {
        let t = |r: Option<f64>| r.map_or("-".to_string(), |t| format!("{t:.1} s"));
        let [e, c] = self.progress;
        format!(
            "explored {:.1}% (50% at {}, 90% at {}, 99% at {}), covered {:.1}% (50% at {}, 90% at {}, 99% at {}); messages sent {}, delivered {}, lost {}, blocked {}, overflowed {}; tags {}",
            e.share * 100.0,
            t(e.reached[0]),
            t(e.reached[1]),
            t(e.reached[2]),
            c.share * 100.0,
            t(c.reached[0]),
            t(c.reached[1]),
            t(c.reached[2]),
            self.counts.sent,
            self.counts.delivered,
            self.counts.lost,
            self.counts.blocked,
            self.counts.overflowed,
            self.counts.tags,
        )
    }

    /// The metrics as JSON.
    pub fn report_json(&self) -> serde_json::Value {
        let p = |p: &Progress| {
            serde_json::json!({
                "share": p.share,
                "time_to_50_s": p.reached[0],
                "time_to_90_s": p.reached[1],
                "time_to_99_s": p.reached[2],
            })
        };
        let c = &self.counts;
        serde_json::json!({
            "sim_time_s": self.time,
            "free_cells": self.setup.as_ref().map_or(0, |s| s.free),
            "cell_m": self.raster.cell,
            "explored": p(&self.progress[0]),
            "covered": p(&self.progress[1]),
            "messages": {"sent": c.sent, "delivered": c.delivered, "lost": c.lost,
                         "blocked": c.blocked, "overflowed": c.overflowed},
            "tags": c.tags,
            "map_merges": c.merges,
        })
    }

    /// The explored (or covered) map as a PNG: walls black, unexplored grey, explored white
    /// (covered green), row 0 at the top.
    pub fn png(&self, covered: bool) -> Result<Vec<u8>, String> {
        let r = &self.raster;
        let walls = self.setup.as_ref().map(|s| &s.walls[..]);
        let k = self.cfg.png_scale;
        let mut img = image::RgbImage::new(r.nx * k, r.ny * k);
        for i in 0..r.len() {
            let wall = walls.is_some_and(|w| w[i]);
            let seen = if covered {
                !self.covered_at[i].is_nan()
            } else {
                self.explored[i].load(Ordering::Relaxed)
            };
            let px = match (wall, seen, covered) {
                (true, _, _) => [0, 0, 0],
                (false, false, _) => [150, 150, 150],
                (false, true, false) => [255, 255, 255],
                (false, true, true) => [60, 180, 75],
            };
            let (x, y) = ((i % r.nx as usize) as u32, (i / r.nx as usize) as u32);
            let row = (r.ny - 1 - y) * k;
            for (dx, dy) in (0..k).flat_map(|dx| (0..k).map(move |dy| (dx, dy))) {
                img.put_pixel(x * k + dx, row + dy, image::Rgb(px));
            }
        }
        let mut out = Cursor::new(Vec::new());
        img.write_to(&mut out, image::ImageOutputFormat::Png)
            .map_err(|e| e.to_string())?;
        Ok(out.into_inner())
    }

    pub(crate) fn write_outputs(&self) -> Result<(), String> {
        if let Some(path) = &self.cfg.report {
            let mut text = serde_json::to_vec_pretty(&self.report_json()).unwrap();
            text.push(b'\n');
            write_atomic(path, &text)?;
        }
        if let Some(prefix) = &self.cfg.png {
            for (covered, suffix) in [(false, "explored"), (true, "covered")] {
                let mut name = prefix.clone().into_os_string();
                name.push(format!("-{suffix}.png"));
                write_atomic(&PathBuf::from(name), &self.png(covered)?)?;
            }
        }
        Ok(())
    }
}
