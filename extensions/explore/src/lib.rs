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

mod comms;
mod config;
pub mod raster;
mod report;
pub mod slam;
pub mod view;

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, RwLock};

use ssx_sdk::abi::SSX_LOG_INFO;
use ssx_sdk::explore::{Reader, Scan, service};
use ssx_sdk::{Ctx, Extension, Init};

use comms::*;
use config::*;
use raster::Raster;
pub use report::{Counts, Progress};
use slam::Slam;

/// What the first step finds out about the world.
struct Setup {
    walls: Vec<bool>,
    free: usize,
    /// The robots' artifacts, ascending.
    robots: Vec<u32>,
    /// The robot whose SLAM map views show.
    shown: Option<u32>,
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

impl Explore {
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
