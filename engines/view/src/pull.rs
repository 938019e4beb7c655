//! Frames on request: the built-in page pulls the world instead of being pushed it.
//!
//! Pushed at the view rate, a 1000-robot world is about 20 MB of transforms and rays a second;
//! a browser that draws in software on a small machine takes in a tenth of that while it draws,
//! and the rest waits in the server's queue and the sockets: the picture falls seconds behind
//! (measured: BENCHMARKS.md, issue 28). So the page asks for one frame at a time over two
//! Foxglove WebSocket services and asks for the next when it has drawn it; it is sent the newest
//! state, never a queue, and what it receives is as much as it can draw.
//!
//! - `/ssx/layout` (JSON, once): the body frames in order, and each drawn range sensor's mount and
//!   ray directions (its rays are sent as distances only).
//! - `/ssx/frame` (request `{"after": step, "episode": e}`, JSON): the first state newer than
//!   `after`, at once when there is one, else when the next frame is published; after a reset, a
//!   state of the new world (another `episode`) is newer whatever its step. Response
//!   `ssx.frame.v2`, little endian, 4-byte aligned ([`FrameState::encode`]). The layout says
//!   its episode too: a page whose frame comes from another episode asks for the layout again.
//! - `/ssx/camera` (request `{"camera": index, "after": step}`): the newest picture of the
//!   layout's camera `index`, answered at once: `ssx.camera.v1` ([`Picture::encode`]), empty
//!   (0 × 0) when it has none newer than `after`. A camera's picture is kept only once someone
//!   asked for it.
//!
//! Foxglove and other clients keep the pushed channels (`/tf`, `/rays`, ...); nothing here
//! changes them.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use foxglove::websocket::service::{Request, Responder, Service, ServiceSchema};
use serde_json::json;

use crate::frame::Frame;
use crate::rays::RayPlan;
use crate::scene::{CameraGeometry, SceneInfo, SensorKind};

/// Service names, fixed: docs/view.md lists them.
pub const LAYOUT_SERVICE: &str = "/ssx/layout";
/// See [`LAYOUT_SERVICE`].
pub const FRAME_SERVICE: &str = "/ssx/frame";
/// The frame response's encoding.
pub const FRAME_ENCODING: &str = "ssx.frame.v2";
/// See [`LAYOUT_SERVICE`].
pub const CAMERA_SERVICE: &str = "/ssx/camera";
/// The camera response's encoding.
pub const CAMERA_ENCODING: &str = "ssx.camera.v1";
/// A ray distance that hit nothing within range.
pub const MISS: u16 = u16::MAX;

/// The newest state, in the form it is sent.
#[derive(Default)]
struct FrameState {
    /// Resets before this world.
    episode: u64,
    /// Whether a frame of this episode was published (not before the first after a reset).
    seen: bool,
    step: u64,
    time: f64,
    wall: f64,
    /// x, y, z, qx, qy, qz, qw per body.
    poses: Vec<f32>,
    /// By drawn sensor (layout order): the step of its newest reading (0: none) and its rays as
    /// distances scaled to `u16` over its range ([`MISS`]: nothing hit).
    rays: Vec<(u64, Vec<u16>)>,
}

impl FrameState {
    /// `ssx.frame.v2`: u32 version (2), u32 bodies n, f64 step, f64 time, f64 wall (Unix s when
    /// the daemon took the snapshot), u32 episode (resets before this world), u32 0; n × 7 f32
    /// poses; u32 sensors m with a reading newer than
    /// `after`; per sensor u32 index (into the layout's sensors), u32 rays k, k × u16 distance
    /// (× max_range / 65534; 65535: nothing hit), padded to 4 bytes.
    fn encode(&self, after: u64) -> Vec<u8> {
        let fresh = || self.rays.iter().enumerate().filter(|(_, r)| r.0 > after);
        let ray_bytes: usize = fresh()
            .map(|(_, r)| 8 + (2 * r.1.len()).next_multiple_of(4))
            .sum();
        let mut out = Vec::with_capacity(40 + 4 * self.poses.len() + 4 + ray_bytes);
        out.extend_from_slice(&2u32.to_le_bytes());
        out.extend_from_slice(&((self.poses.len() / 7) as u32).to_le_bytes());
        out.extend_from_slice(&(self.step as f64).to_le_bytes());
        out.extend_from_slice(&self.time.to_le_bytes());
        out.extend_from_slice(&self.wall.to_le_bytes());
        out.extend_from_slice(&(self.episode as u32).to_le_bytes());
        out.extend_from_slice(&0u32.to_le_bytes());
        for p in &self.poses {
            out.extend_from_slice(&p.to_le_bytes());
        }
        out.extend_from_slice(&(fresh().count() as u32).to_le_bytes());
        for (i, (_, d)) in fresh() {
            out.extend_from_slice(&(i as u32).to_le_bytes());
            out.extend_from_slice(&(d.len() as u32).to_le_bytes());
            for v in d {
                out.extend_from_slice(&v.to_le_bytes());
            }
            if d.len() % 2 == 1 {
                out.extend_from_slice(&[0, 0]);
            }
        }
        out
    }

    /// Whether this state is newer than a caller's frame (`after`, of `episode`).
    fn newer(&self, after: u64, episode: u64) -> bool {
        self.seen && (self.episode != episode || self.step > after)
    }
}

/// A camera's newest picture, as the page draws it.
#[derive(Default)]
struct Picture {
    step: u64,
    width: u32,
    height: u32,
    /// `width × height` RGBA pixels, row by row from the top left.
    rgba: Vec<u8>,
}

impl Picture {
    /// `ssx.camera.v1`: u32 version (1), u32 width, u32 height, u32 0, f64 step, then
    /// `width × height × 4` bytes of RGBA; 0 × 0 and no pixels when the picture is not newer
    /// than `after`.
    fn encode(&self, after: u64) -> Vec<u8> {
        let fresh = self.step > after;
        let mut out = Vec::with_capacity(24 + if fresh { self.rgba.len() } else { 0 });
        out.extend_from_slice(&1u32.to_le_bytes());
        let (w, h) = if fresh {
            (self.width, self.height)
        } else {
            (0, 0)
        };
        for v in [w, h, 0] {
            out.extend_from_slice(&v.to_le_bytes());
        }
        out.extend_from_slice(&(self.step as f64).to_le_bytes());
        if fresh {
            out.extend_from_slice(&self.rgba);
        }
        out
    }

    /// A camera reading as a picture: its colours, or without colour its depths in grey
    /// (white near, darker with distance, black where nothing is seen, white too near).
    fn fill(&mut self, step: u64, g: &CameraGeometry, values: &[f64]) {
        let pixels = g.width as usize * g.height as usize;
        if values.len() != pixels * if g.color { 2 } else { 1 } {
            return;
        }
        (self.step, self.width, self.height) = (step, g.width, g.height);
        self.rgba.clear();
        if g.color {
            for &c in &values[pixels..] {
                let [r, g, b] = ssx_sdk::camera::unpack(c);
                self.rgba.extend_from_slice(&[r, g, b, 255]);
            }
        } else {
            for &d in values {
                let v = if d.is_nan() {
                    255
                } else {
                    (510.0 / (2.0 + d.max(0.0))).round() as u8
                };
                self.rgba.extend_from_slice(&[v, v, v, 255]);
            }
        }
    }
}

/// The services' shared state: written by the publisher thread, read by the server's.
pub(crate) struct Pull {
    state: Mutex<FrameState>,
    /// Calls waiting for a state newer than theirs: (after, episode, responder).
    waiting: Mutex<Vec<(u64, u64, Responder)>>,
    /// Whether any client has asked: until then the publisher does not keep the state.
    wanted: AtomicBool,
    /// The world's layout: replaced at a reset.
    layout: Mutex<Arc<Layout>>,
}

/// What the services know of one world: made from its scene and ray plan.
struct Layout {
    /// By sensor slot: its index among the drawn sensors, and its range.
    drawn: Vec<Option<(usize, f64)>>,
    /// By sensor slot: its index among the cameras.
    camera_of: Vec<Option<usize>>,
    /// By camera: its newest picture, and whether anyone asked for it (until then it is not
    /// kept).
    pictures: Vec<(Mutex<Picture>, AtomicBool)>,
    /// The `/ssx/layout` answer.
    bytes: Vec<u8>,
    /// Drawn range sensors.
    drawn_count: usize,
}

impl Pull {
    pub fn new(scene: &SceneInfo, plan: &RayPlan) -> Self {
        let layout = Layout::new(scene, plan, 0);
        Self {
            state: Mutex::new(FrameState {
                rays: vec![(0, Vec::new()); layout.drawn_count],
                ..Default::default()
            }),
            waiting: Mutex::new(Vec::new()),
            wanted: AtomicBool::new(false),
            layout: Mutex::new(Arc::new(layout)),
        }
    }

    /// Publisher thread: the world started over (`episode` resets so far). Callers are answered
    /// with the new world's first frame.
    pub fn reset(&self, scene: &SceneInfo, plan: &RayPlan, episode: u64) {
        let layout = Layout::new(scene, plan, episode);
        let mut s = self.state.lock().expect("not poisoned");
        *s = FrameState {
            episode,
            rays: vec![(0, Vec::new()); layout.drawn_count],
            ..Default::default()
        };
        *self.layout.lock().expect("not poisoned") = Arc::new(layout);
    }

    fn layout(&self) -> Arc<Layout> {
        Arc::clone(&self.layout.lock().expect("not poisoned"))
    }
}

impl Layout {
    fn new(scene: &SceneInfo, plan: &RayPlan, episode: u64) -> Self {
        let mut drawn = Vec::with_capacity(scene.sensors.len());
        let mut sensors = Vec::new();
        let mut geometries: Vec<serde_json::Value> = Vec::new();
        let mut cameras = Vec::new();
        let mut camera_of = Vec::with_capacity(scene.sensors.len());
        for (slot, s) in scene.sensors.iter().enumerate() {
            camera_of.push(match &s.kind {
                SensorKind::Camera(g) => {
                    cameras.push(json!({"path": s.path, "width": g.width, "height": g.height, "color": g.color}));
                    Some(cameras.len() - 1)
                }
                _ => None,
            });
            match &s.kind {
                SensorKind::Range(g) if plan.drawn[slot] => {
                    drawn.push(Some((sensors.len(), g.max_range)));
                    // Sensors of one kind share one geometry: 10,000 robots send it once.
                    let geometry = json!({
                        "position": g.position,
                        "directions": g.directions,
                        "max_range": g.max_range,
                    });
                    let index = geometries
                        .iter()
                        .position(|x| *x == geometry)
                        .unwrap_or_else(|| {
                            geometries.push(geometry);
                            geometries.len() - 1
                        });
                    sensors.push(json!({"path": s.path, "body": g.body, "geometry": index}));
                }
                _ => drawn.push(None),
            }
        }
        let layout = json!({
            "version": 1,
            "episode": episode,
            "frames": scene.frames,
            "geometries": geometries,
            "sensors": sensors,
            "rays": {"total": plan.total, "shown": plan.shown},
            "cameras": cameras,
        });
        Self {
            drawn_count: sensors.len(),
            drawn,
            pictures: (0..cameras.len())
                .map(|_| (Mutex::new(Picture::default()), AtomicBool::new(false)))
                .collect(),
            camera_of,
            bytes: layout.to_string().into_bytes(),
        }
    }
}

impl Pull {
    /// The three services, for the server.
    pub fn services(self: &std::sync::Arc<Self>) -> Vec<Service> {
        let json_schema = |name: &str, schema: &str| {
            foxglove::Schema::new(name, "jsonschema", schema.as_bytes().to_vec())
        };
        let layout = std::sync::Arc::clone(self);
        let frame = std::sync::Arc::clone(self);
        let camera = std::sync::Arc::clone(self);
        vec![
            Service::builder(
                LAYOUT_SERVICE,
                ServiceSchema::new("ssx.Layout")
                    .with_request("json", json_schema("ssx.LayoutRequest", r#"{"type":"object"}"#)),
            )
            .handler_fn(move |_req: Request| -> Result<Vec<u8>, String> {
                layout.wanted.store(true, Ordering::Relaxed);
                Ok(layout.layout().bytes.clone())
            }),
            Service::builder(
                FRAME_SERVICE,
                ServiceSchema::new("ssx.Frame").with_request(
                    "json",
                    json_schema(
                        "ssx.FrameRequest",
                        r#"{"type":"object","properties":{"after":{"type":"integer","description":"the step of the frame the client has; the answer is newer"},"episode":{"type":"integer","description":"the episode of that frame (or of the layout); a frame of another episode is newer"}}}"#,
                    ),
                ),
            )
            .handler(FrameHandler(frame)),
            Service::builder(
                CAMERA_SERVICE,
                ServiceSchema::new("ssx.Camera").with_request(
                    "json",
                    json_schema(
                        "ssx.CameraRequest",
                        r#"{"type":"object","properties":{"camera":{"type":"integer","description":"index into the layout's cameras"},"after":{"type":"integer","description":"the step of the picture the client has; the answer is newer or empty"}}}"#,
                    ),
                ),
            )
            .handler(CameraHandler(camera)),
        ]
    }

    /// Publisher thread: a new frame is the newest state; waiting calls are answered.
    pub fn publish(&self, f: &Frame, info: &SceneInfo) {
        if !self.wanted.load(Ordering::Relaxed) {
            return;
        }
        let layout = self.layout();
        let mut s = self.state.lock().expect("not poisoned");
        (s.step, s.time, s.wall, s.seen) = (f.step, f.time, f.wall, true);
        s.poses.clear();
        s.poses
            .extend(f.poses.iter().flat_map(|p| p.map(|x| x as f32)));
        for &(slot, start, len) in &f.readings {
            if let (Some(Some(c)), SensorKind::Camera(g)) = (
                layout.camera_of.get(slot as usize),
                &info.sensors[slot as usize].kind,
            ) && layout.pictures[*c].1.load(Ordering::Relaxed)
            {
                let mut p = layout.pictures[*c].0.lock().expect("not poisoned");
                p.fill(f.step, g, f.values(start, len));
                continue;
            }
            let (Some(Some((index, range))), SensorKind::Range(_)) = (
                layout.drawn.get(slot as usize),
                &info.sensors[slot as usize].kind,
            ) else {
                continue;
            };
            let (updated, d) = &mut s.rays[*index];
            *updated = f.step;
            d.clear();
            d.extend(f.values(start, len).iter().map(|&v| scale(v, *range)));
        }
        let mut waiting = self.waiting.lock().expect("not poisoned");
        let mut i = 0;
        while i < waiting.len() {
            if s.newer(waiting[i].0, waiting[i].1) {
                let (after, _, responder) = waiting.swap_remove(i);
                responder.respond_ok(s.encode(after));
            } else {
                i += 1;
            }
        }
    }
}

impl Pull {
    /// `/ssx/camera`: the newest picture of one camera, at once.
    fn picture(&self, payload: &[u8]) -> Result<Vec<u8>, String> {
        let v: serde_json::Value = serde_json::from_slice(payload)
            .map_err(|e| format!("{CAMERA_SERVICE}: the request is not JSON: {e}"))?;
        let index = |key: &str| match v.get(key) {
            None | Some(serde_json::Value::Null) => Ok(0),
            Some(a) => a.as_u64().ok_or_else(|| {
                format!("{CAMERA_SERVICE}: \"{key}\" must be a whole number from 0, got {a}")
            }),
        };
        let (camera, after) = (index("camera")?, index("after")?);
        let layout = self.layout();
        let (picture, wanted) = layout.pictures.get(camera as usize).ok_or_else(|| {
            format!(
                "{CAMERA_SERVICE}: no camera {camera}; the scene has {}",
                layout.pictures.len()
            )
        })?;
        self.wanted.store(true, Ordering::Relaxed);
        wanted.store(true, Ordering::Relaxed);
        Ok(picture.lock().expect("not poisoned").encode(after))
    }
}

/// A distance as `u16` over `range`; [`MISS`] when nothing was hit within it.
fn scale(d: f64, range: f64) -> u16 {
    if d.is_finite() && d >= 0.0 && d < range - 1e-9 {
        (d / range * f64::from(MISS - 1)).round() as u16
    } else {
        MISS
    }
}

/// Answers a picture call at once.
struct CameraHandler(std::sync::Arc<Pull>);

impl foxglove::websocket::service::Handler for CameraHandler {
    fn call(&self, request: Request, mut responder: Responder) {
        match self.0.picture(request.payload()) {
            Ok(bytes) => {
                responder.set_encoding(CAMERA_ENCODING);
                responder.respond_ok(bytes);
            }
            Err(e) => responder.respond_err(e),
        }
    }
}

/// Answers at once when the state is newer than the caller's, else queues the call.
struct FrameHandler(std::sync::Arc<Pull>);

impl foxglove::websocket::service::Handler for FrameHandler {
    fn call(&self, request: Request, mut responder: Responder) {
        let pull = &*self.0;
        pull.wanted.store(true, Ordering::Relaxed);
        let request = match serde_json::from_slice::<serde_json::Value>(request.payload()) {
            Ok(v) => v,
            Err(e) => {
                responder.respond_err(format!("{FRAME_SERVICE}: the request is not JSON: {e}"));
                return;
            }
        };
        let number = |key: &str, what: &str| match request.get(key) {
            None | Some(serde_json::Value::Null) => Ok(None),
            Some(a) => a.as_u64().map(Some).ok_or_else(|| {
                format!(
                    "{FRAME_SERVICE}: \"{key}\" must be {what} (a whole number from 0), got {a}"
                )
            }),
        };
        let (after, episode) = match (
            number("after", "a step number"),
            number("episode", "an episode number"),
        ) {
            (Ok(a), Ok(e)) => (a.unwrap_or(0), e),
            (Err(m), _) | (_, Err(m)) => {
                responder.respond_err(m);
                return;
            }
        };
        responder.set_encoding(FRAME_ENCODING);
        let s = pull.state.lock().expect("not poisoned");
        // Without an episode, the caller means the current one.
        let episode = episode.unwrap_or(s.episode);
        if s.newer(after, episode) {
            responder.respond_ok(s.encode(after));
        } else {
            pull.waiting
                .lock()
                .expect("not poisoned")
                .push((after, episode, responder));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_frame_carries_every_pose_and_only_the_rays_read_after_the_callers_step() {
        let s = FrameState {
            episode: 3,
            seen: true,
            step: 7,
            time: 0.07,
            wall: 1.5e9,
            poses: vec![1.0, 2.0, 3.0, 0.0, 0.0, 0.0, 1.0],
            rays: vec![(3, vec![1, 2, 3]), (6, vec![MISS, 9]), (0, vec![])],
        };
        let b = s.encode(4);
        let u32_at = |i: usize| u32::from_le_bytes(b[i..i + 4].try_into().unwrap());
        let f64_at = |i: usize| f64::from_le_bytes(b[i..i + 8].try_into().unwrap());
        assert_eq!((u32_at(0), u32_at(4)), (2, 1));
        assert_eq!((f64_at(8), f64_at(16), f64_at(24)), (7.0, 0.07, 1.5e9));
        assert_eq!((u32_at(32), u32_at(36)), (3, 0), "episode, padding");
        let z = f32::from_le_bytes(b[48..52].try_into().unwrap());
        assert_eq!(z, 3.0);
        // One sensor read after step 4: the second, index 1, two rays, no padding.
        assert_eq!((u32_at(68), u32_at(72), u32_at(76)), (1, 1, 2));
        assert_eq!(&b[80..84], &[0xff, 0xff, 9, 0]);
        assert_eq!(b.len(), 84);
        // From the start: both read sensors; three rays take two bytes of padding.
        let b = s.encode(0);
        assert_eq!(b.len(), 68 + 4 + (8 + 8) + (8 + 4));
        assert_eq!(b.len() % 4, 0);
        // Newer: a later step of the caller's world, or any frame of another world once one
        // was published.
        assert!(s.newer(6, 3) && !s.newer(7, 3) && s.newer(900, 2));
        let fresh = FrameState {
            episode: 4,
            ..Default::default()
        };
        assert!(!fresh.newer(900, 3), "no frame of the new world yet");
    }

    #[test]
    fn a_picture_is_sent_once_newer_than_the_callers_in_rgba() {
        let g = CameraGeometry {
            body: 0,
            width: 2,
            height: 1,
            pinhole: ssx_sdk::camera::Pinhole::new(2, 1, None, None, None, None, None).unwrap(),
            color: true,
            position: [0.0; 3],
            orientation: [0.0, 0.0, 0.0, 1.0],
        };
        let mut p = Picture::default();
        let red = ssx_sdk::camera::pack([200, 10, 20]);
        p.fill(9, &g, &[1.0, f64::INFINITY, red, 0.0]);
        let b = p.encode(5);
        let u32_at = |i: usize| u32::from_le_bytes(b[i..i + 4].try_into().unwrap());
        assert_eq!((u32_at(0), u32_at(4), u32_at(8), u32_at(12)), (1, 2, 1, 0));
        assert_eq!(f64::from_le_bytes(b[16..24].try_into().unwrap()), 9.0);
        assert_eq!(&b[24..], &[200, 10, 20, 255, 0, 0, 0, 255]);
        // Not newer than the caller's: empty.
        let empty = p.encode(9);
        assert_eq!(empty.len(), 24);
        assert_eq!(&empty[4..12], &[0; 8], "0 × 0");
        // Depth only: grey by distance, black where nothing is seen, white too near.
        let g = CameraGeometry { color: false, ..g };
        p.fill(10, &g, &[0.0, f64::INFINITY]);
        assert_eq!(&p.rgba, &[255, 255, 255, 255, 0, 0, 0, 255]);
        p.fill(11, &g, &[f64::NAN, 8.0]);
        assert_eq!(&p.rgba, &[255, 255, 255, 255, 51, 51, 51, 255]);
        // A reading of the wrong length is not drawn.
        p.fill(12, &g, &[1.0]);
        assert_eq!(p.step, 11);
    }

    #[test]
    fn distances_are_scaled_over_the_range_and_misses_marked() {
        assert_eq!(scale(0.0, 2.0), 0);
        assert_eq!(scale(1.0, 2.0), 32767);
        assert_eq!(scale(2.0, 2.0), MISS);
        assert_eq!(scale(f64::INFINITY, 2.0), MISS);
        assert_eq!(scale(f64::NAN, 2.0), MISS);
        // Resolution: a 2 m ring is read to 0.03 mm.
        assert!((f64::from(scale(1.23456, 2.0)) * 2.0 / 65534.0 - 1.23456).abs() < 3.1e-5);
    }
}
