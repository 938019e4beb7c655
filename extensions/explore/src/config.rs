//! The extension's descriptor: communication, tags, coverage and SLAM settings with their
//! defaults and limits (`Explore::parse` reads it).

use std::path::PathBuf;

use serde::Deserialize;

use crate::view;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Config {
    /// The explored rectangle: lower-left and upper-right corners (m).
    pub(crate) area: [[f64; 2]; 2],
    /// Cell side (m, default 0.5).
    #[serde(default = "d_cell")]
    pub(crate) cell: f64,
    /// Robots: the artifacts whose names start with this.
    pub(crate) robots: String,
    /// The artifact whose bodies are walls (default `map`, the scene's map).
    #[serde(default = "d_walls")]
    pub(crate) walls: String,
    /// Height at which walls are probed (m, default 0.25).
    #[serde(default = "d_height")]
    pub(crate) probe_height: f64,
    #[serde(default)]
    pub(crate) comms: Option<Comms>,
    #[serde(default)]
    pub(crate) tags: Option<Tags>,
    /// A robot's footprint radius for coverage (m, default 0.25).
    #[serde(default = "d_footprint")]
    pub(crate) footprint: f64,
    #[serde(default)]
    pub(crate) slam: Option<SlamConfig>,
    /// Write the metrics here as JSON at the end of the run.
    #[serde(default)]
    pub(crate) report: Option<PathBuf>,
    /// Write the explored and covered maps as `<png>-explored.png` and `<png>-covered.png`.
    #[serde(default)]
    pub(crate) png: Option<PathBuf>,
    /// Pixels per cell side in those pictures (1 to 16, default 1): a 120 × 120 cell map at 4 is
    /// a 480-pixel picture.
    #[serde(default = "d_scale")]
    pub(crate) png_scale: u32,
    /// Log the metrics every this many simulated seconds (0: never; default 10).
    #[serde(default = "d_log")]
    pub(crate) log_every: f64,
    /// What views and recordings are shown (the explored and covered maps every second by
    /// default).
    #[serde(default)]
    pub(crate) view: view::ViewConfig,
}

#[derive(Deserialize, Clone, Copy, Debug, PartialEq)]
#[serde(rename_all = "lowercase")]
pub(crate) enum WallRule {
    Block,
    Ignore,
    #[serde(untagged)]
    Attenuate {
        /// Metres of range each wall crossing costs.
        attenuate: f64,
    },
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Comms {
    /// Largest distance a message travels (m).
    pub(crate) range: f64,
    #[serde(default = "d_rule")]
    pub(crate) walls: WallRule,
    /// Probability a message in range is lost.
    #[serde(default)]
    pub(crate) loss: f64,
    /// Seed of the losses (default: the instance's seed from the scene's).
    #[serde(default)]
    pub(crate) seed: Option<u64>,
    /// Largest message (bytes, default 256).
    #[serde(default = "d_bytes")]
    pub(crate) max_bytes: usize,
    /// Most messages a robot receives in a step; more are dropped and counted (default 256).
    #[serde(default = "d_inbox")]
    pub(crate) inbox: usize,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Tags {
    /// Largest radius a read may ask for (m, default 5).
    #[serde(default = "d_radius")]
    pub(crate) max_radius: f64,
    /// Largest tag (bytes, default 32).
    #[serde(default = "d_tag_bytes")]
    pub(crate) max_bytes: usize,
    /// Most tags in a run (default 100 000): more are refused.
    #[serde(default = "d_max_tags")]
    pub(crate) max_tags: usize,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct SlamConfig {
    /// Seconds between map merges of robots in communication range (0: never; default 1).
    #[serde(default = "d_merge")]
    pub(crate) merge_every: f64,
}

pub(crate) fn d_cell() -> f64 {
    0.5
}

pub(crate) fn d_walls() -> String {
    "map".into()
}

pub(crate) fn d_height() -> f64 {
    0.25
}

/// Largest `png_scale`.
pub(crate) const MAX_PNG_SCALE: u32 = 16;

/// Most pixels in a map picture (64 Mi: 192 MiB of RGB while it is encoded).
pub(crate) const MAX_PNG_PIXELS: usize = 64 << 20;

pub(crate) fn d_scale() -> u32 {
    1
}

pub(crate) fn d_footprint() -> f64 {
    0.25
}

pub(crate) fn d_log() -> f64 {
    10.0
}

pub(crate) fn d_rule() -> WallRule {
    WallRule::Block
}

pub(crate) fn d_bytes() -> usize {
    256
}

pub(crate) fn d_inbox() -> usize {
    256
}

pub(crate) fn d_radius() -> f64 {
    5.0
}

pub(crate) fn d_tag_bytes() -> usize {
    32
}

pub(crate) fn d_max_tags() -> usize {
    100_000
}

pub(crate) fn d_merge() -> f64 {
    1.0
}

/// Most cells of the area.
pub(crate) const MAX_CELLS: usize = 16 << 20;

pub(crate) fn positive(key: &str, v: f64) -> Result<f64, String> {
    if v.is_finite() && v > 0.0 {
        Ok(v)
    } else {
        Err(format!(
            "invalid descriptor: '{key}' must be a positive number, got {v}"
        ))
    }
}
