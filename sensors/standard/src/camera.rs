//! `camera`: a pinhole camera that ray-casts a depth image and, optionally, a colour image of
//! the world through the same query index the range sensors use (no GPU).
//!
//! Descriptor: `width`, `height` (pixels, 1 to 4096 each, at most 2,097,152 pixels); the
//! intrinsics either as `fov` (horizontal field of view, rad, in (0, π); 60° by default) or as
//! `fx` (and optionally `fy`, default `fx`; `cx`, `cy`, default the image centre `(width − 1)/2`,
//! `(height − 1)/2`), in pixels; `near`, `far` (clip distances, m; 0.05 and 20 by default);
//! `depth`: `"z"` (the default: distance along the optical axis, as ROS depth images and
//! REP 118 have it) or `"range"` (distance along each pixel's ray); `color` (`true` by default:
//! also a colour image); `noise` (σ of Gaussian depth noise, m, seeded per instance); `position`
//! and `rpy` (the mount in the body frame: the camera looks along the mount's x axis, the
//! image's right is the mount's −y and its down the mount's −z; `rpy: [0, 1.5708, 0]` looks
//! straight down); `body` (default 0); `rate` (frames a second, taken to the nearest whole
//! number of steps a frame) or `rate_divider` (steps a frame; 1 by default); `shutter` (below);
//! `stagger`.
//!
//! The reading is `width × height` depths (m), row by row from the top-left pixel, then, with
//! `color`, `width × height` colours, each the integer `0xRRGGBB` (red × 65536 + green × 256 +
//! blue) as a number. A pixel whose ray meets nothing within `far` reads `+inf` (and the sky's
//! colour); one whose surface is nearer than `near` reads `NaN` (too near to measure; its colour
//! is the surface's). Colours are the hit body's (`body_color`) lit by a fixed light from above
//! (40% ambient, 60% by the surface's slope to the light); the camera's own artifact is not
//! seen. The reading's description (`describe`) carries the intrinsics and the layout.
//!
//! `shutter`: `"rolling"` (the default) casts the image's rows spread evenly over the
//! `rate_divider` steps of a frame (top rows first, as a CMOS rolling shutter exposes them) and
//! publishes the frame on its last step, so that a 30 Hz camera in a 1 kHz world costs each step
//! a thirty-third of a frame instead of one step a whole frame; `"global"` casts the whole image
//! on one step (every `rate_divider`-th, offset by `stagger`) and is idle in between.

use nalgebra::{Quaternion, UnitQuaternion, Vector3};
use serde::Deserialize;
use ssx_sdk::camera::{Pinhole, pack};
use ssx_sdk::{Ctx, Init, Rate, RayHit, Sensor, limits};

use crate::noise::{Noise, non_negative};
use crate::{Description, parse};

/// Largest width or height (pixels).
const MAX_SIDE: u32 = 4096;
/// Most pixels of one camera (1920 × 1080 fits).
const MAX_PIXELS: u64 = 2_097_152;
/// Rays cast per host call: the scratch lists stay bounded (about 1 MB) whatever the image,
/// and a call is long enough for the host to share its rays among idle workers (a 320 × 240
/// frame is 5 calls).
const CHUNK: usize = 16_384;
/// Towards the light (from above, a little from +x and +y), normalised at use.
const LIGHT: [f64; 3] = [0.35, 0.25, 1.0];
const AMBIENT: f64 = 0.4;
/// The colour of a pixel that sees nothing within `far`.
const SKY: [u8; 3] = [170, 200, 235];

#[derive(Deserialize, Clone, Copy, PartialEq, Default)]
#[serde(rename_all = "lowercase")]
enum Depth {
    #[default]
    Z,
    Range,
}

#[derive(Deserialize, Clone, Copy, PartialEq, Default)]
#[serde(rename_all = "lowercase")]
enum Shutter {
    #[default]
    Rolling,
    Global,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Descriptor {
    width: u32,
    height: u32,
    fov: Option<f64>,
    fx: Option<f64>,
    fy: Option<f64>,
    cx: Option<f64>,
    cy: Option<f64>,
    #[serde(default = "default_near")]
    near: f64,
    #[serde(default = "default_far")]
    far: f64,
    #[serde(default)]
    depth: Depth,
    #[serde(default = "yes")]
    color: bool,
    #[serde(default)]
    noise: f64,
    #[serde(default)]
    position: [f64; 3],
    #[serde(default)]
    rpy: [f64; 3],
    #[serde(default)]
    body: u32,
    rate_divider: Option<u32>,
    rate: Option<f64>,
    #[serde(default)]
    shutter: Shutter,
    #[serde(default)]
    stagger: bool,
}

fn default_near() -> f64 {
    0.05
}
fn default_far() -> f64 {
    20.0
}
fn yes() -> bool {
    true
}

pub(crate) struct Camera {
    width: usize,
    height: usize,
    k: Pinhole,
    near: f64,
    far: f64,
    /// The longest ray that can still read within `far`.
    reach: f64,
    z_depth: bool,
    color: bool,
    sigma: f64,
    body: u32,
    position: Vector3<f64>,
    mount: UnitQuaternion<f64>,
    /// Rolling shutter: the frame's steps and where in the frame this call is.
    rolling: bool,
    period: u32,
    tick: u32,
    rate: Rate,
    noise: Noise,
    light: Vector3<f64>,
    /// One chunk's world-frame directions and hits.
    directions: Vec<[f64; 3]>,
    hits: Vec<RayHit>,
    /// Body colours as the host gave them, by artifact then body; loaded at first sight.
    palette: Vec<Vec<Option<[f32; 3]>>>,
    out: Vec<f64>,
    description: Description,
}

impl Sensor for Camera {
    fn create(descriptor: &str, init: &Init) -> Result<Self, String> {
        let d: Descriptor = parse(descriptor)?;
        for (key, side) in [("width", d.width), ("height", d.height)] {
            if !(1..=MAX_SIDE).contains(&side) {
                return Err(format!(
                    "invalid descriptor: '{key}' must be from 1 to {MAX_SIDE} pixels, got {side}"
                ));
            }
        }
        let pixels = u64::from(d.width) * u64::from(d.height);
        if pixels > MAX_PIXELS {
            return Err(format!(
                "invalid descriptor: a camera has at most {MAX_PIXELS} pixels ('width' × 'height'), got {} × {} = {pixels}",
                d.width, d.height
            ));
        }
        init.body_index("body", d.body)?;
        let k = Pinhole::new(d.width, d.height, d.fov, d.fx, d.fy, d.cx, d.cy)?;
        non_negative("near", d.near)?;
        ssx_sdk::within("far", d.far, 0.0, limits::DISTANCE)?;
        if d.near >= d.far {
            return Err(format!(
                "invalid descriptor: 'near' ({}) must be below 'far' ({})",
                ssx_sdk::number(d.near),
                ssx_sdk::number(d.far)
            ));
        }
        ssx_sdk::within("noise", d.noise, 0.0, limits::DISTANCE)?;
        for p in d.position {
            ssx_sdk::within("position", p, -limits::DISTANCE, limits::DISTANCE)?;
        }
        if !d.rpy.iter().all(|a| a.is_finite()) {
            return Err("invalid descriptor: 'rpy' must be finite".into());
        }
        let divider = match (d.rate, d.rate_divider) {
            (Some(_), Some(_)) => {
                return Err(
                    "invalid descriptor: give either 'rate' (Hz) or 'rate_divider', not both"
                        .into(),
                );
            }
            (Some(hz), None) => {
                let hz = ssx_sdk::within("rate", hz, 1e-6, limits::RATE)?;
                // The nearest whole number of steps a frame, at least one.
                (1.0 / (hz * init.timestep))
                    .round()
                    .clamp(1.0, f64::from(limits::DIVIDER)) as u32
            }
            (None, divider) => divider.unwrap_or(1),
        };
        let rate = crate::rate(divider, d.stagger, init)?;
        let (w, h) = (d.width as usize, d.height as usize);
        let z_depth = d.depth == Depth::Z;
        // In z mode a corner pixel's ray reads within `far` up to far / cos(its angle).
        let reach = if z_depth {
            let corners = [(0, 0), (w - 1, 0), (0, h - 1), (w - 1, h - 1)];
            let widest = corners
                .iter()
                .map(|&(u, v)| {
                    let (x, y) = k.ray(u, v);
                    (1.0 + x * x + y * y).sqrt()
                })
                .fold(1.0, f64::max);
            d.far * widest
        } else {
            d.far
        };
        let description = Description::new(serde_json::json!({
            "kind": "camera",
            "body": d.body,
            "position": d.position,
            "rpy": d.rpy,
            "width": d.width,
            "height": d.height,
            "fx": k.fx,
            "fy": k.fy,
            "cx": k.cx,
            "cy": k.cy,
            "near": d.near,
            "far": d.far,
            "depth": if z_depth { "z" } else { "range" },
            "color": d.color,
            "shutter": if d.shutter == Shutter::Rolling { "rolling" } else { "global" },
            "rate_divider": divider,
            "layout": "width x height depths (m) row by row from the top-left pixel, then with color width x height colours 0xRRGGBB",
            "no_hit": "inf",
            "too_near": "nan",
            "frame": "looks along the mount's x; image right is the mount's -y, image down its -z",
        }));
        let [roll, pitch, yaw] = d.rpy;
        let n = w * h * if d.color { 2 } else { 1 };
        let mut out = vec![f64::INFINITY; n];
        if d.color {
            out[w * h..].fill(pack(SKY));
        }
        Ok(Camera {
            width: w,
            height: h,
            k,
            near: d.near,
            far: d.far,
            reach,
            z_depth,
            color: d.color,
            sigma: d.noise,
            body: d.body,
            position: Vector3::from(d.position),
            mount: UnitQuaternion::from_euler_angles(roll, pitch, yaw),
            rolling: d.shutter == Shutter::Rolling,
            period: rate.divider(),
            tick: 0,
            rate,
            noise: Noise::new(init.seed),
            light: Vector3::from(LIGHT).normalize(),
            directions: Vec::with_capacity(CHUNK.min(w * h)),
            hits: Vec::with_capacity(CHUNK.min(w * h)),
            palette: Vec::new(),
            out,
            description,
        })
    }

    fn step(&mut self, ctx: &Ctx<'_>) -> Result<(), String> {
        self.description.once(ctx)?;
        if self.rolling {
            // This step's share of the rows: step j of a frame of P steps casts rows
            // [j·H/P, (j+1)·H/P).
            let (p, j, h) = (self.period as usize, self.tick as usize, self.height);
            self.cast_rows(ctx, j * h / p, (j + 1) * h / p)?;
            self.tick = (self.tick + 1) % self.period;
            if self.tick == 0 {
                ctx.publish(&self.out)?;
            }
        } else if self.rate.due_idle(ctx) {
            self.cast_rows(ctx, 0, self.height)?;
            ctx.publish(&self.out)?;
        }
        Ok(())
    }
}

impl Camera {
    /// Casts rows `first..last` at the body's pose now, into the reading buffer.
    fn cast_rows(&mut self, ctx: &Ctx<'_>, first: usize, last: usize) -> Result<(), String> {
        if first >= last {
            return Ok(());
        }
        let s = ctx.body_state(ctx.artifact(), self.body)?;
        let [w, x, y, z] = s.orientation;
        let q = UnitQuaternion::from_quaternion(Quaternion::new(w, x, y, z));
        let origin: [f64; 3] = (Vector3::from(s.position) + q * self.position).into();
        let r = q * self.mount;
        let (fwd, left, up) = (r * Vector3::x(), r * Vector3::y(), r * Vector3::z());
        let width = self.width;
        let end = last * width;
        let mut start = first * width;
        while start < end {
            let stop = (start + CHUNK).min(end);
            self.directions.clear();
            for i in start..stop {
                let (px, py) = self.k.ray(i % width, i / width);
                self.directions.push((fwd - left * px - up * py).into());
            }
            self.hits.clear();
            self.hits.resize(stop - start, RayHit::default());
            ctx.ray_cast_many(origin, &self.directions, self.reach, true, &mut self.hits)?;
            for (n, i) in (start..stop).enumerate() {
                self.pixel(ctx, i, n)?;
            }
            start = stop;
        }
        Ok(())
    }

    /// Writes pixel `i`'s depth and colour from hit `n` of the chunk.
    fn pixel(&mut self, ctx: &Ctx<'_>, i: usize, n: usize) -> Result<(), String> {
        let hit = self.hits[n];
        let depth = if hit.hit == 0 {
            f64::INFINITY
        } else if self.z_depth {
            let (x, y) = self.k.ray(i % self.width, i / self.width);
            hit.distance / (1.0 + x * x + y * y).sqrt()
        } else {
            hit.distance
        };
        let seen = depth <= self.far;
        self.out[i] = if !seen {
            f64::INFINITY
        } else if depth < self.near {
            f64::NAN
        } else {
            (depth + self.noise.gauss(self.sigma)).clamp(self.near, self.far)
        };
        if self.color {
            let rgb = if seen {
                let base = self.color_of(ctx, hit.artifact, hit.body)?;
                let slope = Vector3::from(hit.normal).dot(&self.light).max(0.0);
                let lit = AMBIENT + (1.0 - AMBIENT) * slope;
                base.map(|c| (f64::from(c) * lit * 255.0).round().clamp(0.0, 255.0) as u8)
            } else {
                SKY
            };
            self.out[self.width * self.height + i] = pack(rgb);
        }
        Ok(())
    }

    /// A body's colour, asked of the host once per body.
    fn color_of(&mut self, ctx: &Ctx<'_>, artifact: u32, body: u32) -> Result<[f32; 3], String> {
        let (a, b) = (artifact as usize, body as usize);
        if let Some(Some(c)) = self.palette.get(a).and_then(|bodies| bodies.get(b)) {
            return Ok(*c);
        }
        let [r, g, bl, _] = ctx.body_color(artifact, body)?;
        if self.palette.len() <= a {
            self.palette.resize(a + 1, Vec::new());
        }
        let bodies = &mut self.palette[a];
        if bodies.len() <= b {
            bodies.resize(b + 1, None);
        }
        bodies[b] = Some([r, g, bl]);
        Ok([r, g, bl])
    }
}
