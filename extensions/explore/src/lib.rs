//! The `explore` extension (`libssx_explore.so`): what multi-robot exploration research needs
//! from a simulator, after MAES 2.0 (reference/002), as services for drivers and sensors on the
//! plain plugin ABI (the requests and responses are in `ssx_sdk::explore`).
//!
//! - **Communication** (`comms`): a driver broadcasts a small message; at the end of the step it
//!   is delivered to every robot within `range` whose line of sight passes the walls (`"walls":
//!   "block"`), or whose distance plus `attenuate` metres per wall crossed is within `range`, or
//!   regardless of walls (`"ignore"`), and is then lost with probability `loss`, drawn from the
//!   seed, the step, the sender, the receiver and the message's number, so the outcome does not
//!   depend on the order workers ran in. Receivers read it during the next step.
//! - **Tags** (`tags`): a driver drops an id and a few bytes at its position; any driver reads
//!   the tags within a radius. Tags last for the run.
//! - **Coverage and exploration**: the free space of `area` is rasterised once from the engine's
//!   geometry (a ball query at each cell centre against the `walls` artifact). A free cell is
//!   *explored* once a `slam` sensor's ray (at the robot's true pose) has passed it or ended in
//!   it, and *covered* once a robot's footprint disc has held its centre. The shares and the
//!   simulated times they first reached 50, 90 and 99 % are logged, written to `report` (JSON)
//!   at the end, and the final maps to `png` (`<png>-explored.png`, `<png>-covered.png`).
//! - **SLAM maps** (`slam`): each robot's occupancy grid, built from its `slam` sensor's scans at
//!   its noisy pose; every `merge_every` seconds the maps of robots that can talk (range and
//!   walls as for messages, no loss) are merged, transitively, as MAES's map sharing.
//!
//! Walls for communication are counted on the same raster: a crossing is a step of the segment
//! from a free cell into a wall cell, so walls thinner than a cell that fall between cell
//! centres are not seen. Robots never block messages.

pub mod raster;
pub mod slam;
pub mod view;

use std::collections::BTreeMap;
use std::io::Cursor;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, RwLock};

use serde::Deserialize;
use ssx_sdk::abi::SSX_LOG_INFO;
use ssx_sdk::explore::{Reader, Scan, service};
use ssx_sdk::{Ctx, Extension, Init};

use raster::Raster;
use slam::Slam;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Config {
    /// The explored rectangle: lower-left and upper-right corners (m).
    area: [[f64; 2]; 2],
    /// Cell side (m, default 0.5).
    #[serde(default = "d_cell")]
    cell: f64,
    /// Robots: the artifacts whose names start with this.
    robots: String,
    /// The artifact whose bodies are walls (default `map`, the scene's map).
    #[serde(default = "d_walls")]
    walls: String,
    /// Height at which walls are probed (m, default 0.25).
    #[serde(default = "d_height")]
    probe_height: f64,
    #[serde(default)]
    comms: Option<Comms>,
    #[serde(default)]
    tags: Option<Tags>,
    /// A robot's footprint radius for coverage (m, default 0.25).
    #[serde(default = "d_footprint")]
    footprint: f64,
    #[serde(default)]
    slam: Option<SlamConfig>,
    /// Write the metrics here as JSON at the end of the run.
    #[serde(default)]
    report: Option<PathBuf>,
    /// Write the explored and covered maps as `<png>-explored.png` and `<png>-covered.png`.
    #[serde(default)]
    png: Option<PathBuf>,
    /// Pixels per cell side in those pictures (1 to 16, default 1): a 120 × 120 cell map at 4 is
    /// a 480-pixel picture.
    #[serde(default = "d_scale")]
    png_scale: u32,
    /// Log the metrics every this many simulated seconds (0: never; default 10).
    #[serde(default = "d_log")]
    log_every: f64,
    /// What views and recordings are shown (the explored and covered maps every second by
    /// default).
    #[serde(default)]
    view: view::ViewConfig,
}

#[derive(Deserialize, Clone, Copy, Debug, PartialEq)]
#[serde(rename_all = "lowercase")]
enum WallRule {
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
struct Comms {
    /// Largest distance a message travels (m).
    range: f64,
    #[serde(default = "d_rule")]
    walls: WallRule,
    /// Probability a message in range is lost.
    #[serde(default)]
    loss: f64,
    /// Seed of the losses (default: the instance's seed from the scene's).
    #[serde(default)]
    seed: Option<u64>,
    /// Largest message (bytes, default 256).
    #[serde(default = "d_bytes")]
    max_bytes: usize,
    /// Most messages a robot receives in a step; more are dropped and counted (default 256).
    #[serde(default = "d_inbox")]
    inbox: usize,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Tags {
    /// Largest radius a read may ask for (m, default 5).
    #[serde(default = "d_radius")]
    max_radius: f64,
    /// Largest tag (bytes, default 32).
    #[serde(default = "d_tag_bytes")]
    max_bytes: usize,
    /// Most tags in a run (default 100 000): more are refused.
    #[serde(default = "d_max_tags")]
    max_tags: usize,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SlamConfig {
    /// Seconds between map merges of robots in communication range (0: never; default 1).
    #[serde(default = "d_merge")]
    merge_every: f64,
}

fn d_cell() -> f64 {
    0.5
}
fn d_walls() -> String {
    "map".into()
}
fn d_height() -> f64 {
    0.25
}
/// Largest `png_scale`.
const MAX_PNG_SCALE: u32 = 16;
/// Most pixels in a map picture (64 Mi: 192 MiB of RGB while it is encoded).
const MAX_PNG_PIXELS: usize = 64 << 20;

fn d_scale() -> u32 {
    1
}

fn d_footprint() -> f64 {
    0.25
}
fn d_log() -> f64 {
    10.0
}
fn d_rule() -> WallRule {
    WallRule::Block
}
fn d_bytes() -> usize {
    256
}
fn d_inbox() -> usize {
    256
}
fn d_radius() -> f64 {
    5.0
}
fn d_tag_bytes() -> usize {
    32
}
fn d_max_tags() -> usize {
    100_000
}
fn d_merge() -> f64 {
    1.0
}

/// Most cells of the area.
const MAX_CELLS: usize = 16 << 20;

/// What the first step finds out about the world.
struct Setup {
    walls: Vec<bool>,
    free: usize,
    /// The robots' artifacts, ascending.
    robots: Vec<u32>,
    /// The robot whose SLAM map views show.
    shown: Option<u32>,
}

/// A tag in the world.
struct Tag {
    id: u32,
    artifact: u32,
    at: [f64; 2],
    bytes: Vec<u8>,
}

/// The tags, filed in square buckets as wide as the largest read radius, so a read looks at
/// the nine buckets around its point rather than at every tag.
#[derive(Default)]
struct TagIndex {
    list: Vec<Tag>,
    buckets: std::collections::HashMap<(i64, i64), Vec<u32>>,
    size: f64,
}

impl TagIndex {
    fn bucket(&self, x: f64, y: f64) -> (i64, i64) {
        (
            (x / self.size).floor() as i64,
            (y / self.size).floor() as i64,
        )
    }
    fn push(&mut self, tag: Tag) {
        let b = self.bucket(tag.at[0], tag.at[1]);
        self.buckets
            .entry(b)
            .or_default()
            .push(self.list.len() as u32);
        self.list.push(tag);
    }
    /// The tags within `r` of (x, y) (r at most the bucket size), in drop order.
    fn near(&self, x: f64, y: f64, r: f64, out: &mut Vec<u32>) {
        out.clear();
        let (bx, by) = self.bucket(x, y);
        for dy in -1..=1 {
            for dx in -1..=1 {
                if let Some(ids) = self.buckets.get(&(bx + dx, by + dy)) {
                    out.extend(ids.iter().copied().filter(|&i| {
                        let t = &self.list[i as usize];
                        (t.at[0] - x).powi(2) + (t.at[1] - y).powi(2) <= r * r
                    }));
                }
            }
        }
        out.sort_unstable();
    }
}

/// Shares reached and when.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Progress {
    /// Share of free cells (0 to 1).
    pub share: f64,
    /// Simulated times the share first reached 50, 90 and 99 %.
    pub reached: [Option<f64>; 3],
}

impl Progress {
    fn update(&mut self, share: f64, time: f64) {
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

/// The extension.
pub struct Explore {
    cfg: Config,
    raster: Raster,
    timestep: f64,
    seed: u64,
    setup: Option<Setup>,
    /// Per robot: x, y, yaw.
    poses: Vec<[f64; 3]>,
    explored: Vec<AtomicBool>,
    fresh: AtomicBool,
    /// When each cell was last covered (s; NaN: never).
    covered_at: Vec<f32>,
    view: view::View,
    /// The last delivery between two robots (indexes into the robots, ascending), for views.
    links: BTreeMap<(usize, usize), f64>,
    outbox: Mutex<Vec<(u32, Vec<u8>)>>,
    inbox: RwLock<BTreeMap<u32, (Vec<u8>, u32)>>,
    dropped: Mutex<Vec<(u32, u32, Vec<u8>)>>,
    tags: RwLock<TagIndex>,
    maps: RwLock<BTreeMap<u32, Mutex<Slam>>>,
    merge_scratch: Vec<i8>,
    /// Explored and covered.
    pub progress: [Progress; 2],
    /// Counts.
    pub counts: Counts,
    time: f64,
    next_log: f64,
}

fn positive(key: &str, v: f64) -> Result<f64, String> {
    if v.is_finite() && v > 0.0 {
        Ok(v)
    } else {
        Err(format!(
            "invalid descriptor: '{key}' must be a positive number, got {v}"
        ))
    }
}

impl Explore {
    fn parse(descriptor: &str, init: &Init) -> Result<Self, String> {
        let cfg: Config = serde_json::from_str(descriptor).map_err(ssx_sdk::descriptor_error)?;
        let [[x0, y0], [x1, y1]] = cfg.area;
        positive("cell", cfg.cell)?;
        positive("footprint", cfg.footprint)?;
        if ![x0, y0, x1, y1].iter().all(|v| v.is_finite()) || x1 <= x0 || y1 <= y0 {
            return Err(
                "invalid descriptor: 'area' must be [[x0, y0], [x1, y1]] with x1 > x0 and y1 > y0"
                    .into(),
            );
        }
        let nx = ((x1 - x0) / cfg.cell).ceil();
        let ny = ((y1 - y0) / cfg.cell).ceil();
        if nx * ny > MAX_CELLS as f64 {
            return Err(format!(
                "invalid descriptor: the area holds {nx} × {ny} cells; the limit is {MAX_CELLS} (a larger 'cell'?)"
            ));
        }
        if let Some(c) = &cfg.comms {
            positive("comms.range", c.range)?;
            if !(0.0..=1.0).contains(&c.loss) {
                return Err(format!(
                    "invalid descriptor: 'comms.loss' must be from 0 to 1, got {}",
                    c.loss
                ));
            }
            if let WallRule::Attenuate { attenuate } = c.walls {
                positive("comms.walls.attenuate", attenuate)?;
            }
        }
        if let Some(t) = &cfg.tags {
            positive("tags.max_radius", t.max_radius)?;
        }
        if !(1..=MAX_PNG_SCALE).contains(&cfg.png_scale) {
            return Err(format!(
                "invalid descriptor: 'png_scale' must be from 1 to {MAX_PNG_SCALE} pixels per cell, got {}",
                cfg.png_scale
            ));
        }
        let k = f64::from(cfg.png_scale);
        if cfg.png.is_some() && nx * ny * k * k > MAX_PNG_PIXELS as f64 {
            return Err(format!(
                "invalid descriptor: 'png_scale' {} makes the {nx} × {ny}-cell map a picture of {} × {} pixels; the limit is {MAX_PNG_PIXELS} pixels",
                cfg.png_scale,
                nx * k,
                ny * k
            ));
        }
        cfg.view.validate()?;
        if cfg.view.slam.is_some() && cfg.slam.is_none() {
            return Err("invalid descriptor: 'view.slam' names a robot whose SLAM map to draw, but there is no 'slam' block".into());
        }
        if let Some(s) = &cfg.slam
            && !(s.merge_every.is_finite() && s.merge_every >= 0.0)
        {
            return Err("invalid descriptor: 'slam.merge_every' must be 0 or more seconds".into());
        }
        let raster = Raster {
            x0,
            y0,
            cell: cfg.cell,
            nx: nx as u32,
            ny: ny as u32,
        };
        let seed = cfg.comms.as_ref().and_then(|c| c.seed).unwrap_or(init.seed);
        let tag_bucket = cfg.tags.as_ref().map_or(1.0, |t| t.max_radius);
        Ok(Explore {
            explored: (0..raster.len()).map(|_| AtomicBool::new(false)).collect(),
            covered_at: vec![f32::NAN; raster.len()],
            view: view::View::new(cfg.view.clone()),
            links: BTreeMap::new(),
            next_log: cfg.log_every,
            cfg,
            raster,
            timestep: init.timestep,
            seed,
            setup: None,
            poses: Vec::new(),
            fresh: AtomicBool::new(false),
            outbox: Mutex::new(Vec::new()),
            inbox: RwLock::new(BTreeMap::new()),
            dropped: Mutex::new(Vec::new()),
            tags: RwLock::new(TagIndex {
                size: tag_bucket,
                ..TagIndex::default()
            }),
            maps: RwLock::new(BTreeMap::new()),
            merge_scratch: Vec::new(),
            progress: Default::default(),
            counts: Counts::default(),
            time: 0.0,
        })
    }

    /// Robots, and the walls rasterised by ball queries at each cell centre.
    fn discover(&self, ctx: &Ctx<'_>) -> Result<Setup, String> {
        let n = ctx.artifact_count()?;
        let walls_id = ctx.artifact_by_name(&self.cfg.walls).ok();
        let mut robots = Vec::new();
        for a in 0..n {
            if Some(a) != walls_id && ctx.artifact_name(a)?.starts_with(&self.cfg.robots) {
                robots.push(a);
            }
        }
        let r = &self.raster;
        let mut walls = vec![false; r.len()];
        if let Some(w) = walls_id {
            let mut near = Vec::with_capacity(16);
            let radius = 0.45 * r.cell;
            for (i, wall) in walls.iter_mut().enumerate() {
                let [x, y] = r.centre(i);
                ctx.neighbours([x, y, self.cfg.probe_height], radius, &mut near)?;
                *wall = near.contains(&w);
            }
        }
        let free = walls.iter().filter(|&&w| !w).count();
        let shown = match &self.cfg.view.slam {
            Some(name) => {
                let a = ctx
                    .artifact_by_name(name)
                    .ok()
                    .filter(|a| robots.contains(a));
                Some(a.ok_or_else(|| {
                    format!("'view.slam': no robot '{name}' (robots are the artifacts whose names start with '{}')", self.cfg.robots)
                })?)
            }
            None => None,
        };
        Ok(Setup {
            walls,
            free,
            robots,
            shown,
        })
    }

    fn deliver(&mut self, step: u64) {
        let Some(setup) = &self.setup else { return };
        let Some(c) = &self.cfg.comms else { return };
        let mut out = std::mem::take(self.outbox.get_mut().unwrap());
        // One sender's messages keep their order (one driver sends from one thread).
        out.sort_by_key(|(from, _)| *from);
        let inbox = self.inbox.get_mut().unwrap();
        for (bytes, n) in inbox.values_mut() {
            bytes.clear();
            *n = 0;
        }
        let mut number = 0u64;
        let mut last = None;
        for (from, msg) in &out {
            number = if last == Some(*from) { number + 1 } else { 0 };
            last = Some(*from);
            self.counts.sent += 1;
            let Ok(k) = setup.robots.binary_search(from) else {
                continue;
            };
            for (j, &to) in setup.robots.iter().enumerate() {
                if to == *from {
                    continue;
                }
                match reaches(&self.raster, c, &setup.walls, self.poses[k], self.poses[j]) {
                    Err(true) => self.counts.blocked += 1,
                    Err(false) => {}
                    Ok(()) => {
                        if unit(self.seed, step, *from, to, number) < c.loss {
                            self.counts.lost += 1;
                            continue;
                        }
                        let (bytes, n) = inbox.entry(to).or_default();
                        if *n as usize >= c.inbox {
                            self.counts.overflowed += 1;
                            continue;
                        }
                        bytes.extend_from_slice(&from.to_le_bytes());
                        bytes.extend_from_slice(&(msg.len() as u32).to_le_bytes());
                        bytes.extend_from_slice(msg);
                        *n += 1;
                        self.counts.delivered += 1;
                        // Kept only while someone is shown them (else never pruned, see
                        // `after_step`).
                        if self.cfg.view.links && self.view.drawing() {
                            self.links.insert((k.min(j), k.max(j)), self.time);
                        }
                    }
                }
            }
        }
    }

    fn place_tags(&mut self) {
        let Some(setup) = &self.setup else { return };
        let mut dropped = std::mem::take(self.dropped.get_mut().unwrap());
        dropped.sort_by_key(|(a, _, _)| *a);
        let tags = self.tags.get_mut().unwrap();
        for (artifact, id, bytes) in dropped {
            if let Ok(k) = setup.robots.binary_search(&artifact) {
                let [x, y, _] = self.poses[k];
                tags.push(Tag {
                    id,
                    artifact,
                    at: [x, y],
                    bytes,
                });
                self.counts.tags += 1;
            }
        }
    }

    fn merge_maps(&mut self) {
        let Some(setup) = &self.setup else { return };
        let Some(c) = &self.cfg.comms else { return };
        let maps = self.maps.get_mut().unwrap();
        let robots: Vec<usize> = (0..setup.robots.len())
            .filter(|&k| maps.contains_key(&setup.robots[k]))
            .collect();
        // Components of the "can talk" graph, by union-find.
        let mut parent: Vec<usize> = (0..robots.len()).collect();
        fn root(p: &mut [usize], mut i: usize) -> usize {
            while p[i] != i {
                p[i] = p[p[i]];
                i = p[i];
            }
            i
        }
        for a in 0..robots.len() {
            for b in a + 1..robots.len() {
                let (pa, pb) = (self.poses[robots[a]], self.poses[robots[b]]);
                let (ra, rb) = (root(&mut parent, a), root(&mut parent, b));
                if ra != rb && reaches(&self.raster, c, &setup.walls, pa, pb).is_ok() {
                    parent[ra.max(rb)] = ra.min(rb);
                }
            }
        }
        let mut groups: BTreeMap<usize, Vec<u32>> = BTreeMap::new();
        for (a, &k) in robots.iter().enumerate() {
            let r = root(&mut parent, a);
            groups.entry(r).or_default().push(setup.robots[k]);
        }
        for members in groups.values().filter(|m| m.len() > 1) {
            let mut locked: Vec<&mut Slam> = Vec::with_capacity(members.len());
            for (id, m) in maps.iter_mut() {
                if members.contains(id) {
                    locked.push(m.get_mut().unwrap());
                }
            }
            slam::merge(&mut locked, &mut self.merge_scratch);
            self.counts.merges += members.len() as u64;
        }
    }

    fn measure(&mut self) {
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
    fn publish(&self, ctx: &Ctx<'_>) -> Result<(), String> {
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

    fn write_outputs(&self) -> Result<(), String> {
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

/// Whether a message from a robot at `a` reaches one at `b` (range and walls, before losses);
/// if not, whether walls were the reason.
fn reaches(
    raster: &Raster,
    c: &Comms,
    walls: &[bool],
    a: [f64; 3],
    b: [f64; 3],
) -> Result<(), bool> {
    let d = ((a[0] - b[0]).powi(2) + (a[1] - b[1]).powi(2)).sqrt();
    if d > c.range {
        return Err(false);
    }
    let (p, q) = ([a[0], a[1]], [b[0], b[1]]);
    match c.walls {
        WallRule::Ignore => Ok(()),
        WallRule::Block if raster.crossings(walls, p, q) == 0 => Ok(()),
        WallRule::Attenuate { attenuate }
            if d + attenuate * f64::from(raster.crossings(walls, p, q)) <= c.range =>
        {
            Ok(())
        }
        _ => Err(true),
    }
}

/// Writes beside `path`, then renames over it: a reader never sees half a file.
fn write_atomic(path: &std::path::Path, bytes: &[u8]) -> Result<(), String> {
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(".tmp");
    let tmp = PathBuf::from(tmp);
    std::fs::write(&tmp, bytes)
        .and_then(|()| std::fs::rename(&tmp, path))
        .map_err(|e| format!("cannot write '{}': {e}", path.display()))
}

/// A uniform number in [0, 1) from the seed and a delivery's identity (SplitMix64's finaliser
/// over their mix): the same delivery draws the same number however the run was scheduled.
pub fn unit(seed: u64, step: u64, from: u32, to: u32, number: u64) -> f64 {
    let mut z = seed
        ^ step.wrapping_mul(0x9E37_79B9_7F4A_7C15)
        ^ (u64::from(from) << 32 | u64::from(to)).wrapping_mul(0xD1B5_4A32_D192_ED03)
        ^ number.wrapping_mul(0x8CB9_2BA7_2F3D_8DD7);
    for _ in 0..2 {
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
    }
    (z >> 11) as f64 / (1u64 << 53) as f64
}

impl Extension for Explore {
    fn create(descriptor: &str, init: &Init) -> Result<Self, String> {
        Explore::parse(descriptor, init)
    }

    fn after_step(&mut self, ctx: &Ctx<'_>) -> Result<(), String> {
        let (time, step) = ctx.time()?;
        self.time = time;
        if self.setup.is_none() {
            self.setup = Some(self.discover(ctx)?);
        }
        let robots = &self.setup.as_ref().unwrap().robots;
        self.poses.clear();
        for &a in robots {
            let s = ctx.body_state(a, 0)?;
            let yaw = ssx_sdk::geometry::yaw(s.orientation);
            self.poses.push([s.position[0], s.position[1], yaw]);
        }
        self.measure();
        self.deliver(step);
        self.place_tags();
        if let Some(s) = &self.cfg.slam
            && s.merge_every > 0.0
        {
            let every = (s.merge_every / self.timestep).round().max(1.0) as u64;
            if step % every == 0 {
                self.merge_maps();
            }
        }
        self.publish(ctx)?;
        if let Some(setup) = &self.setup
            && self.view.due(time)
        {
            let tags: Option<Vec<[f64; 2]>> = (self.view.config().tags && self.cfg.tags.is_some())
                .then(|| {
                    self.tags
                        .read()
                        .unwrap()
                        .list
                        .iter()
                        .map(|t| t.at)
                        .collect()
                });
            // The links of the last second, between where the robots are now.
            self.links.retain(|_, at| time - *at < 1.0);
            let links: Option<Vec<[[f64; 2]; 2]>> =
                (self.view.config().links && self.cfg.comms.is_some()).then(|| {
                    let at = |k: usize| [self.poses[k][0], self.poses[k][1]];
                    self.links.keys().map(|&(a, b)| [at(a), at(b)]).collect()
                });
            let explored = |i: usize| self.explored[i].load(Ordering::Relaxed);
            let robot_maps = self.maps.read().unwrap();
            let shown = setup.shown.and_then(|a| robot_maps.get(&a));
            let slam = shown.map(|m| m.lock().unwrap());
            let maps = view::Maps {
                walls: &setup.walls,
                explored: &explored,
                covered_at: &self.covered_at,
                slam: slam.as_ref().map(|m| &m.map.cells[..]),
                tags: tags.as_deref(),
                links: links.as_deref(),
            };
            self.view.draw(ctx, &self.raster, &maps, time)?;
        }
        if self.cfg.log_every > 0.0 && time + 1e-9 >= self.next_log {
            self.next_log += self.cfg.log_every;
            let line = format!("t = {time:.1} s: {}", self.summary());
            ctx.log(SSX_LOG_INFO, &line);
        }
        Ok(())
    }

    fn call(&self, name: &str, request: &[u8], response: &mut [u8]) -> Result<usize, String> {
        let mut r = Reader::new(request);
        match name {
            service::SEND => {
                let c =
                    self.cfg.comms.as_ref().ok_or(
                        "comms is not enabled (no \"comms\" in the extension's descriptor)",
                    )?;
                let from = r.u32("sender")?;
                let msg = r.rest();
                if msg.len() > c.max_bytes {
                    return Err(format!(
                        "a message is at most {} bytes, got {}",
                        c.max_bytes,
                        msg.len()
                    ));
                }
                self.outbox.lock().unwrap().push((from, msg.to_vec()));
                Ok(0)
            }
            service::RECEIVE => {
                let to = r.u32("artifact")?;
                let inbox = self.inbox.read().unwrap();
                let bytes = inbox.get(&to).map_or(&[][..], |(b, _)| b);
                if let Some(out) = response.get_mut(..bytes.len()) {
                    out.copy_from_slice(bytes);
                }
                Ok(bytes.len())
            }
            service::DROP => {
                let t =
                    self.cfg.tags.as_ref().ok_or(
                        "tags are not enabled (no \"tags\" in the extension's descriptor)",
                    )?;
                let (artifact, id) = (r.u32("artifact")?, r.u32("tag id")?);
                let bytes = r.rest();
                if bytes.len() > t.max_bytes {
                    return Err(format!(
                        "a tag is at most {} bytes, got {}",
                        t.max_bytes,
                        bytes.len()
                    ));
                }
                let placed = self.tags.read().unwrap().list.len();
                let mut dropped = self.dropped.lock().unwrap();
                if placed + dropped.len() >= t.max_tags {
                    return Err(format!("the run holds its limit of {} tags", t.max_tags));
                }
                dropped.push((artifact, id, bytes.to_vec()));
                Ok(0)
            }
            service::READ => {
                let t =
                    self.cfg.tags.as_ref().ok_or(
                        "tags are not enabled (no \"tags\" in the extension's descriptor)",
                    )?;
                let (x, y, radius) = (r.f64("x")?, r.f64("y")?, r.f64("radius")?);
                if !(0.0..=t.max_radius).contains(&radius) {
                    return Err(format!(
                        "a tag read's radius must be from 0 to {} m, got {radius}",
                        t.max_radius
                    ));
                }
                let mut len = 0;
                let tags = self.tags.read().unwrap();
                let mut near = Vec::new();
                tags.near(x, y, radius, &mut near);
                for &i in &near {
                    let tag = &tags.list[i as usize];
                    let mut put = |b: &[u8]| {
                        if let Some(out) = response.get_mut(len..len + b.len()) {
                            out.copy_from_slice(b);
                        }
                        len += b.len();
                    };
                    put(&tag.id.to_le_bytes());
                    put(&tag.artifact.to_le_bytes());
                    put(&tag.at[0].to_le_bytes());
                    put(&tag.at[1].to_le_bytes());
                    put(&(tag.bytes.len() as u32).to_le_bytes());
                    put(&tag.bytes);
                }
                Ok(len)
            }
            service::SCAN => {
                thread_local! {
                    // A scan's rays, kept per worker thread: no allocation per scan.
                    static SCAN: std::cell::RefCell<Scan> = std::cell::RefCell::default();
                }
                SCAN.with_borrow_mut(|scan| self.take_scan(scan, request))?;
                Ok(0)
            }
            service::MAP => {
                let who = r.u32("artifact")?;
                let maps = self.maps.read().unwrap();
                let m = maps.get(&who).ok_or_else(|| {
                    format!("artifact {who} has no SLAM map yet (no scan from its slam sensor)")
                })?;
                Ok(m.lock().unwrap().map.encode(response))
            }
            other => Err(format!(
                "no service '{other}' (services: comms.send, comms.receive, tags.drop, tags.read, slam.scan, slam.map)"
            )),
        }
    }
}

impl Explore {
    /// A `slam.scan`: marks what it saw as explored and takes it into the robot's map.
    fn take_scan(&self, scan: &mut Scan, request: &[u8]) -> Result<(), String> {
        scan.decode(request)?;
        self.explore(scan);
        if self.cfg.slam.is_some() {
            let maps = self.maps.read().unwrap();
            if let Some(m) = maps.get(&scan.artifact) {
                m.lock().unwrap().take(&self.raster, scan);
            } else {
                drop(maps);
                let mut slam = Slam::new(&self.raster);
                slam.take(&self.raster, scan);
                self.maps
                    .write()
                    .unwrap()
                    .insert(scan.artifact, Mutex::new(slam));
            }
        }
        Ok(())
    }

    /// Marks what a scan saw from the robot's true pose.
    fn explore(&self, scan: &Scan) {
        let [x, y, yaw] = scan.truth;
        let (s, c) = yaw.sin_cos();
        let origin = [
            x + c * scan.mount[0] - s * scan.mount[1],
            y + s * scan.mount[0] + c * scan.mount[1],
        ];
        for &[angle, d] in &scan.rays {
            let d = d.abs().min(scan.max_range);
            let a = yaw + angle;
            let end = [origin[0] + d * a.cos(), origin[1] + d * a.sin()];
            self.raster.trace(origin, end, |i, _| {
                self.explored[i].store(true, Ordering::Relaxed);
                true
            });
        }
        self.fresh.store(true, Ordering::Relaxed);
    }
}

impl Drop for Explore {
    fn drop(&mut self) {
        if let Err(e) = self.write_outputs() {
            // No context is left to log through at teardown.
            eprintln!("explore: {e}");
        }
    }
}

ssx_sdk::export_plugins!(
    extension "explore" "multi-robot exploration after MAES: limited communication, tags, coverage and per-robot SLAM maps" => Explore,
);
