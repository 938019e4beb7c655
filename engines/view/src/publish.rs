//! The channels, and turning snapshots into messages. The live stream and the recording each
//! have their own foxglove `Context` (one channel set, its own sinks) and publish the same way.

use std::fmt::Write as _;
use std::sync::Arc;

use foxglove::schemas::{
    FrameTransform, FrameTransforms, Log, Quaternion, SceneEntityDeletion, SceneUpdate, log::Level,
    scene_entity_deletion,
};
use foxglove::{Channel, ChannelBuilder, Context, PartialMetadata, RawChannel, Schema, SinkId};

use crate::ViewError;
use crate::camera::CameraChannels;
use crate::convert::{stamp, vec3};
use crate::frame::{Frame, ResetEvent, nanos};
use crate::mesh::Links;
use crate::overlays::{OverlayChannel, grid, shapes};
use crate::rays::{RayPlan, ray_entity};
use crate::scene::{SceneInfo, SensorKind, WORLD_FRAME};

/// Topic names, fixed: docs/view.md lists them.
pub mod topics {
    /// Every body's shapes, frame-locked to its transform (`foxglove.SceneUpdate`).
    pub const SCENE: &str = "/scene";
    /// One transform per body from `world` (`foxglove.FrameTransforms`).
    pub const TF: &str = "/tf";
    /// Range sensors' rays from the mount to each hit (`foxglove.SceneUpdate`, line lists).
    pub const RAYS: &str = "/rays";
    /// Deadline violations and other warnings (`foxglove.Log`).
    pub const LOG: &str = "/log";
    /// Simulated step and time (JSON).
    pub const CLOCK: &str = "/clock";
    /// One message per reset: the step, simulated time and seed it came at, and the log time
    /// from which the new run's messages are stamped (JSON).
    pub const RESET: &str = "/reset";
    /// The run's statistics, the `--stats-json` fields, once a wall second (JSON).
    pub const STATS: &str = "/stats";
    /// Prefix of each sensor's readings, `/readings/<artifact>/<sensor>` (JSON).
    pub const READINGS: &str = "/readings/";
    /// Prefix of the extensions' overlays, `/overlays/<extension>/<name>` (`foxglove.Grid`).
    pub const OVERLAYS: &str = "/overlays/";
    /// Prefix of the cameras' images and calibrations, `/cameras/<artifact>/<sensor>/depth`,
    /// `.../image` and `.../calibration` (`foxglove.RawImage`, `foxglove.CameraCalibration`).
    pub const CAMERAS: &str = crate::camera::CAMERAS;
}

/// Something other than a frame for the channels: a log line or the statistics.
#[derive(Clone, Debug)]
pub enum Side {
    /// A warning or error from the daemon's log.
    Log {
        /// Foxglove log level.
        level: Level,
        /// The message.
        text: String,
        /// Where it came from (the tracing target).
        name: String,
        /// Simulated time it refers to (ns).
        time_ns: u64,
    },
    /// The statistics as JSON (`StatsSummary`), with the simulated time they were taken at.
    Stats {
        /// JSON object.
        json: String,
        /// Simulated time (ns).
        time_ns: u64,
    },
}

const CLOCK_SCHEMA: &str = r#"{"type":"object","properties":{"step":{"type":"integer"},"time":{"type":"number"},"wall":{"type":"number","description":"Unix time (s) at which the daemon took this step's snapshot"},"episode":{"type":"integer","description":"resets before this step (0: the run's first world)"}}}"#;
const RESET_SCHEMA: &str = r#"{"type":"object","properties":{"episode":{"type":"integer","description":"resets so far, this one included"},"step":{"type":"integer","description":"steps done when the reset came"},"time":{"type":"number","description":"simulated time (s) when the reset came"},"seed":{"type":"integer","description":"the new world's seed"},"log_time_offset":{"type":"number","description":"log time (s) of the new run's simulated time 0: a later message's simulated time is its log time minus this"}}}"#;
const STATS_SCHEMA: &str =
    r#"{"type":"object","description":"ssx run statistics: the --stats-json fields"}"#;
const VALUES_SCHEMA: &str = r#"{"type":"object","properties":{"step":{"type":"integer"},"time":{"type":"number"},"values":{"type":"array","items":{"type":"number"}}}}"#;
const POSE_SCHEMA: &str = r##"{"type":"object","properties":{"step":{"type":"integer"},"time":{"type":"number"},"values":{"type":"array","items":{"type":"number"}},"position":{"$ref":"#/$defs/v"},"orientation":{"type":"object","properties":{"w":{"type":"number"},"x":{"type":"number"},"y":{"type":"number"},"z":{"type":"number"}}},"linear_velocity":{"$ref":"#/$defs/v"},"angular_velocity":{"$ref":"#/$defs/v"}},"$defs":{"v":{"type":"object","properties":{"x":{"type":"number"},"y":{"type":"number"},"z":{"type":"number"}}}}}"##;
const IMU_SCHEMA: &str = r##"{"type":"object","properties":{"step":{"type":"integer"},"time":{"type":"number"},"values":{"type":"array","items":{"type":"number"}},"specific_force":{"$ref":"#/$defs/v"},"angular_velocity":{"$ref":"#/$defs/v"}},"$defs":{"v":{"type":"object","properties":{"x":{"type":"number"},"y":{"type":"number"},"z":{"type":"number"}}}}}"##;

pub(crate) fn json_channel(
    ctx: &Arc<Context>,
    topic: &str,
    name: &str,
    schema: &str,
) -> Result<Arc<RawChannel>, ViewError> {
    ChannelBuilder::new(topic)
        .context(ctx)
        .message_encoding("json")
        .schema(Schema::new(name, "jsonschema", schema.as_bytes().to_vec()))
        .build_raw()
        .map_err(|source| ViewError::Channel {
            topic: topic.to_string(),
            source,
        })
}

pub(crate) fn at(ns: u64) -> PartialMetadata {
    PartialMetadata { log_time: Some(ns) }
}

/// One set of channels in one context.
pub(crate) struct Channels {
    scene_info: Arc<SceneInfo>,
    scene: Channel<SceneUpdate>,
    tf: Channel<FrameTransforms>,
    rays_channel: Channel<SceneUpdate>,
    log: Channel<Log>,
    clock: Arc<RawChannel>,
    reset: Arc<RawChannel>,
    stats: Arc<RawChannel>,
    /// By sensor slot: its readings as JSON (not for cameras: their images go on their own).
    readings: Vec<Option<Arc<RawChannel>>>,
    /// By sensor slot: a camera's image channels.
    cameras: Vec<Option<CameraChannels>>,
    /// The extensions' overlays, made as they first appear (`<extension>/<name>`, channel).
    overlays: Vec<(String, OverlayChannel)>,
    ctx: Arc<Context>,
    /// The transforms message, frame names filled once; only numbers change per frame.
    tf_msg: FrameTransforms,
    /// Rays are drawn at most this often (simulated ns): a picture, not data; the readings
    /// channel has every value.
    rays_every_ns: u64,
    last_rays_ns: Option<u64>,
    /// Whose rays are drawn when there are too many to draw them all.
    rays: RayPlan,
    /// The most rays drawn (for a new world's plan).
    max_rays: usize,
    /// How the scene's model primitives reach their meshes.
    links: Links,
    text: String,
    /// Messages logged so far.
    pub messages: u64,
}

impl Channels {
    /// Channels for `scene_info` in `ctx`; rays at most `rays_hz` simulated times a second and
    /// of at most `max_rays` rays in all (see [`RayPlan`]); meshes reached as `links` says.
    pub fn new(
        ctx: &Arc<Context>,
        scene_info: Arc<SceneInfo>,
        rays_hz: f64,
        max_rays: usize,
        links: Links,
    ) -> Result<Self, ViewError> {
        let world = World::new(ctx, &scene_info, max_rays)?;
        Ok(Self {
            scene: ctx.channel_builder(topics::SCENE).build(),
            tf: ctx.channel_builder(topics::TF).build(),
            rays_channel: ctx.channel_builder(topics::RAYS).build(),
            log: ctx.channel_builder(topics::LOG).build(),
            clock: json_channel(ctx, topics::CLOCK, "ssx.Clock", CLOCK_SCHEMA)?,
            stats: json_channel(ctx, topics::STATS, "ssx.Stats", STATS_SCHEMA)?,
            reset: json_channel(ctx, topics::RESET, "ssx.Reset", RESET_SCHEMA)?,
            readings: world.readings,
            cameras: world.cameras,
            overlays: Vec::new(),
            ctx: Arc::clone(ctx),
            scene_info,
            tf_msg: world.tf_msg,
            rays_every_ns: (1e9 / rays_hz) as u64,
            last_rays_ns: None,
            rays: world.rays,
            max_rays,
            links,
            text: String::new(),
            messages: 0,
        })
    }

    /// The world started over ([`crate::frame::ResetEvent`]): a message on `/reset`, then the
    /// new world's channels (a sensor's channel is the same one when its topic and schema are),
    /// and its scene to every sink, the old world's entities deleted first.
    pub fn reset(&mut self, r: &ResetEvent) -> Result<(), ViewError> {
        let at_ns = r.offset_ns;
        self.text.clear();
        let _ = write!(
            self.text,
            r#"{{"episode":{},"step":{},"time":{},"seed":{},"log_time_offset":{}}}"#,
            r.episode,
            r.steps_before,
            r.time_before,
            r.seed,
            at_ns as f64 * 1e-9
        );
        self.reset.log_with_meta(self.text.as_bytes(), at(at_ns));
        self.messages += 1;
        let world = World::new(&self.ctx, &r.info, self.max_rays)?;
        (self.readings, self.cameras, self.tf_msg, self.rays) =
            (world.readings, world.cameras, world.tf_msg, world.rays);
        let deletions = self
            .scene_info
            .entities
            .entities
            .iter()
            .map(|e| SceneEntityDeletion {
                timestamp: stamp(at_ns),
                r#type: scene_entity_deletion::Type::MatchingId as i32,
                id: e.id.clone(),
            })
            .collect();
        self.scene_info = Arc::clone(&r.info);
        self.last_rays_ns = None;
        let mut update = self.scene_update();
        update.deletions = deletions;
        for e in &mut update.entities {
            e.timestamp = stamp(at_ns);
        }
        self.scene.log_with_meta(&update, at(at_ns));
        self.messages += 1;
        Ok(())
    }

    /// The scene's shapes, meshes reached as this sink's `links` say.
    fn scene_update(&self) -> SceneUpdate {
        crate::mesh::linked(
            &self.scene_info.entities,
            &self.scene_info.meshes,
            &self.links,
        )
        .unwrap_or_else(|| self.scene_info.entities.clone())
    }

    /// Whose rays are drawn.
    pub fn ray_plan(&self) -> &RayPlan {
        &self.rays
    }

    /// Whether `topic` is the scene's.
    pub fn is_scene(topic: &str) -> bool {
        topic == topics::SCENE
    }

    /// The scene's shapes, to every sink or to one (a client that just subscribed).
    pub fn publish_scene(&mut self, time_ns: u64, sink: Option<SinkId>) {
        let mut update = self.scene_update();
        for e in &mut update.entities {
            e.timestamp = stamp(time_ns);
        }
        self.scene.log_with_meta_to_sink(&update, at(time_ns), sink);
        self.messages += 1;
    }

    /// Everything in one snapshot: clock, transforms, rays, readings.
    pub fn publish_frame(&mut self, f: &Frame) {
        let ns = f.log_ns();
        let info = Arc::clone(&self.scene_info);
        self.text.clear();
        let _ = write!(
            self.text,
            r#"{{"step":{},"time":{},"wall":{:.6},"episode":{}}}"#,
            f.step, f.time, f.wall, f.episode
        );
        if self.clock.has_sinks() {
            self.clock.log_with_meta(self.text.as_bytes(), at(ns));
            self.messages += 1;
        }

        if self.tf.has_sinks() {
            for t in &mut self.tf_msg.transforms {
                t.timestamp = stamp(ns);
            }
            for (t, p) in self.tf_msg.transforms.iter_mut().zip(&f.poses) {
                t.translation = vec3(p[0], p[1], p[2]);
                t.rotation = Some(Quaternion {
                    x: p[3],
                    y: p[4],
                    z: p[5],
                    w: p[6],
                });
            }
            self.tf.log_with_meta(&self.tf_msg, at(ns));
            self.messages += 1;
        }

        let draw_rays = self.rays_channel.has_sinks()
            && self
                .last_rays_ns
                .is_none_or(|last| ns >= last + self.rays_every_ns);
        let mut rays = Vec::new();
        for &(slot, start, len) in &f.readings {
            let sensor = &info.sensors[slot as usize];
            let values = f.values(start, len);
            if let SensorKind::Range(g) = &sensor.kind
                && draw_rays
                && self.rays.drawn[slot as usize]
            {
                let mut e = ray_entity(&sensor.path, g, f, values, ns);
                e.metadata = self.rays.metadata();
                rays.push(e);
            }
            if let (SensorKind::Camera(g), Some(ch)) = (&sensor.kind, &self.cameras[slot as usize])
            {
                self.messages += ch.publish(g, values, stamp(ns), || at(ns));
            }
            if let Some(ch) = &self.readings[slot as usize]
                && ch.has_sinks()
            {
                reading_json(&mut self.text, f, &sensor.kind, values);
                ch.log_with_meta(self.text.as_bytes(), at(ns));
                self.messages += 1;
            }
        }
        for o in f.overlays() {
            let grid_kind = o.kind == ssx_core::OverlayKind::Grid;
            // A channel's schema is fixed: an overlay that changes kind gets a new channel.
            let found = self.overlays.iter().position(|(p, c)| {
                *p == o.path && matches!(c, OverlayChannel::Grid(_)) == grid_kind
            });
            let ch = match found {
                Some(i) => &self.overlays[i].1,
                None => {
                    self.overlays.retain(|(p, _)| *p != o.path);
                    let b = self
                        .ctx
                        .channel_builder(format!("{}{}", topics::OVERLAYS, o.path));
                    let ch = if grid_kind {
                        OverlayChannel::Grid(b.build())
                    } else {
                        OverlayChannel::Shapes(b.build())
                    };
                    self.overlays.push((o.path.clone(), ch));
                    &self.overlays.last().unwrap().1
                }
            };
            let sent = match ch {
                OverlayChannel::Grid(c) if c.has_sinks() => {
                    c.log_with_meta(&grid(o, f.offset_ns), at(f.offset_ns + nanos(o.time)));
                    true
                }
                OverlayChannel::Shapes(c) if c.has_sinks() => {
                    c.log_with_meta(&shapes(o, f.offset_ns), at(f.offset_ns + nanos(o.time)));
                    true
                }
                _ => false,
            };
            self.messages += u64::from(sent);
        }
        if !rays.is_empty() {
            self.last_rays_ns = Some(ns);
            self.rays_channel.log_with_meta(
                &SceneUpdate {
                    deletions: Vec::new(),
                    entities: rays,
                },
                at(ns),
            );
            self.messages += 1;
        }
    }

    /// A log line or the statistics.
    pub fn publish_side(&mut self, side: &Side) {
        match side {
            Side::Log {
                level,
                text,
                name,
                time_ns,
            } => {
                let msg = Log {
                    timestamp: stamp(*time_ns),
                    level: *level as i32,
                    message: text.clone(),
                    name: name.clone(),
                    file: String::new(),
                    line: 0,
                };
                self.log.log_with_meta(&msg, at(*time_ns));
            }
            Side::Stats { json, time_ns } => {
                self.stats.log_with_meta(json.as_bytes(), at(*time_ns));
            }
        }
        self.messages += 1;
    }
}

/// The channels and messages that depend on the world's bodies and sensors.
struct World {
    readings: Vec<Option<Arc<RawChannel>>>,
    cameras: Vec<Option<CameraChannels>>,
    tf_msg: FrameTransforms,
    rays: RayPlan,
}

impl World {
    fn new(ctx: &Arc<Context>, scene_info: &SceneInfo, max_rays: usize) -> Result<Self, ViewError> {
        let rays = RayPlan::new(&scene_info.sensors, max_rays);
        let mut tf_msg = FrameTransforms {
            transforms: scene_info
                .frames
                .iter()
                .map(|name| FrameTransform {
                    parent_frame_id: WORLD_FRAME.into(),
                    child_frame_id: name.clone(),
                    ..Default::default()
                })
                .collect(),
        };
        // Each camera's optical frame, fixed on its body, after the bodies' transforms.
        for s in &scene_info.sensors {
            if let SensorKind::Camera(g) = &s.kind {
                let body = &scene_info.frames[g.body as usize];
                tf_msg.transforms.push(crate::camera::transform(s, g, body));
            }
        }
        let readings = scene_info
            .sensors
            .iter()
            .map(|s| {
                let (name, schema) = match s.kind {
                    SensorKind::Camera(_) => return Ok(None),
                    SensorKind::Pose => ("ssx.PoseReading", POSE_SCHEMA),
                    SensorKind::Imu => ("ssx.ImuReading", IMU_SCHEMA),
                    SensorKind::Range(_) | SensorKind::Values => ("ssx.Reading", VALUES_SCHEMA),
                };
                json_channel(
                    ctx,
                    &format!("{}{}", topics::READINGS, s.path),
                    name,
                    schema,
                )
                .map(Some)
            })
            .collect::<Result<_, _>>()?;
        let cameras = scene_info
            .sensors
            .iter()
            .map(|s| match &s.kind {
                SensorKind::Camera(g) => Some(CameraChannels::new(ctx, s, g)),
                _ => None,
            })
            .collect();
        Ok(Self {
            readings,
            cameras,
            tf_msg,
            rays,
        })
    }
}

fn num(out: &mut String, x: f64) {
    if x.is_finite() {
        let _ = write!(out, "{x}");
    } else {
        out.push_str("null");
    }
}

fn xyz(out: &mut String, key: &str, v: &[f64]) {
    let _ = write!(out, r#","{key}":{{"x":"#);
    num(out, v[0]);
    out.push_str(r#","y":"#);
    num(out, v[1]);
    out.push_str(r#","z":"#);
    num(out, v[2]);
    out.push('}');
}

/// `{"step","time","values"}`, plus named fields for the standard pose and IMU readings.
fn reading_json(out: &mut String, f: &Frame, kind: &SensorKind, v: &[f64]) {
    out.clear();
    let _ = write!(out, r#"{{"step":{},"time":{},"values":["#, f.step, f.time);
    for (i, &x) in v.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        num(out, x);
    }
    out.push(']');
    match kind {
        SensorKind::Pose if v.len() >= 13 => {
            xyz(out, "position", &v[0..3]);
            out.push_str(r#","orientation":{"w":"#);
            num(out, v[3]);
            out.push_str(r#","x":"#);
            num(out, v[4]);
            out.push_str(r#","y":"#);
            num(out, v[5]);
            out.push_str(r#","z":"#);
            num(out, v[6]);
            out.push('}');
            xyz(out, "linear_velocity", &v[7..10]);
            xyz(out, "angular_velocity", &v[10..13]);
        }
        SensorKind::Imu if v.len() >= 6 => {
            xyz(out, "specific_force", &v[0..3]);
            xyz(out, "angular_velocity", &v[3..6]);
        }
        _ => {}
    }
    out.push('}');
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn imu_readings_are_named_and_non_finite_values_are_null() {
        let f = Frame {
            step: 3,
            time: 0.003,
            ..Default::default()
        };
        let mut out = String::new();
        reading_json(
            &mut out,
            &f,
            &SensorKind::Imu,
            &[0.0, 0.5, 9.81, 1.0, f64::NAN, -2.0],
        );
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        assert_eq!(v["step"], 3);
        assert_eq!(v["specific_force"]["z"], 9.81);
        assert_eq!(v["angular_velocity"]["x"], 1.0);
        assert!(v["angular_velocity"]["y"].is_null());
        assert_eq!(v["values"].as_array().unwrap().len(), 6);
    }
}
