//! What the node publishes for a run, resolved on its first step: each robot's topics (odometry,
//! scans, images, camera info, readings), /tf and /tf_static, /map; and writing them after each
//! step for the publisher thread.

use std::sync::Arc;

use ssx_ros2::graph::Qos;
use ssx_ros2::msgs::*;
use ssx_sdk::Ctx;

use super::out::{What, once};

use super::{Fixed, Ros2Spec, RosShared};

/// A reading published as a ROS message.
struct ReadingTopic {
    topic: u32,
    artifact: u32,
    sensor: u32,
    last: u64,
    /// The values it takes (a camera's depths, or its colours; all of most readings).
    span: std::ops::Range<usize>,
}

/// One transform of `/tf`: a body of a robot, in the world (odom) or relative to another body
/// of the same robot.
struct TfFrame {
    artifact: u32,
    body: u32,
    relative_to: Option<u32>,
}

/// What a robot's inputs are, for the caller to declare.
pub struct Inputs {
    /// It has a gripper (`gripper/grip`, `gripper/height`).
    pub gripper: bool,
    /// It came from a robot model with joints (`joint_commands`).
    pub joints: bool,
}

/// A robot model's links, from the `robot_model` host call.
#[derive(serde::Deserialize)]
struct ModelLinks {
    urdf: Option<String>,
    links: Vec<LinkFrame>,
}

#[derive(serde::Deserialize)]
struct LinkFrame {
    name: String,
    body: u32,
    position: [f64; 3],
    orientation: [f64; 4],
}

/// The pose of `child` in `parent`'s frame: position then orientation (w x y z).
fn relative(parent: &ssx_sdk::abi::SsxBodyState, child: &ssx_sdk::abi::SsxBodyState) -> [f64; 7] {
    use nalgebra::{Isometry3, Quaternion as Q, Translation3, UnitQuaternion};
    let pose = |s: &ssx_sdk::abi::SsxBodyState| {
        let [w, x, y, z] = s.orientation;
        Isometry3::from_parts(
            Translation3::new(s.position[0], s.position[1], s.position[2]),
            UnitQuaternion::from_quaternion(Q::new(w, x, y, z)),
        )
    };
    let r = pose(parent).inverse() * pose(child);
    let t = r.translation.vector;
    let q = r.rotation.quaternion();
    [t.x, t.y, t.z, q.w, q.i, q.j, q.k]
}

/// What the stepping thread writes each step, resolved on the first.
pub struct Plan {
    clock: Option<(u32, u64)>,
    tf: Option<(u32, u64)>,
    tf_frames: Vec<TfFrame>,
    odom: Vec<(u32, u32)>,
    odom_every: u64,
    readings: Vec<ReadingTopic>,
    /// One-time topics (`/tf_static`, `/map`), sent on the first step.
    once: Vec<u32>,
    /// The largest snapshot, in bytes.
    pub largest: usize,
}

/// A robot's sensors that map onto ROS messages, from their descriptions.
struct Described {
    sensor: u32,
    name: String,
    description: serde_json::Value,
}

fn described(ctx: &Ctx<'_>, artifact: u32) -> Result<Vec<Described>, String> {
    let mut out = Vec::new();
    for sensor in 0.. {
        let name = match ctx.sensor_name(artifact, sensor) {
            Ok(Some(n)) => n,
            Ok(None) => break, // a host without sensor names
            Err(e) if e.0 == ssx_sdk::abi::SSX_ERR_OUT_OF_RANGE => break,
            Err(e) => return Err(e.to_string()),
        };
        let Some(text) = ctx.reading_description(artifact, sensor)? else {
            continue;
        };
        let Ok(description) = serde_json::from_str(text) else {
            continue;
        };
        out.push(Described {
            sensor,
            name,
            description,
        });
    }
    Ok(out)
}

/// A camera's topics: `<robot>/<sensor>/image` (`rgb8`, when it has colour),
/// `<robot>/<sensor>/depth` (`32FC1`, metres; +inf where nothing is seen, NaN too near) and
/// `<robot>/<sensor>/camera_info`, in the optical frame `<robot>/<sensor>_optical` that
/// `/tf_static` places on the robot's base_link (REP 103's optical convention: z ahead, x right,
/// y down). Each takes only its part of the reading.
fn camera_topics(
    ros: &RosShared,
    plan: &mut Plan,
    statics: &mut Vec<TransformStamped>,
    (artifact, robot, base): (u32, &str, &str),
    s: &Described,
) {
    let d = &s.description;
    let (width, height) = (num(d, "width") as u32, num(d, "height") as u32);
    let pixels = width as usize * height as usize;
    let frame = format!("{robot}/{}_optical", s.name);
    let at = |i: usize| d["position"][i].as_f64().unwrap_or(0.0);
    let rpy = [0, 1, 2].map(|i| d["rpy"][i].as_f64().unwrap_or(0.0));
    statics.push(TransformStamped {
        header: header(base),
        child_frame_id: frame.clone(),
        transform: Transform {
            translation: Vector3 {
                x: at(0),
                y: at(1),
                z: at(2),
            },
            rotation: Quaternion::from_wxyz(ssx_sdk::camera::optical_orientation(rpy)),
        },
    });
    let image = |encoding: &str, step: u32| Image {
        header: header(&frame),
        height,
        width,
        encoding: encoding.into(),
        is_bigendian: 0,
        step,
        data: Vec::new(),
    };
    let (fx, fy, cx, cy) = (num(d, "fx"), num(d, "fy"), num(d, "cx"), num(d, "cy"));
    let info = CameraInfo {
        header: header(&frame),
        height,
        width,
        distortion_model: "plumb_bob".into(),
        d: vec![0.0; 5],
        k: F64Array([fx, 0.0, cx, 0.0, fy, cy, 0.0, 0.0, 1.0]),
        r: F64Array([1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0]),
        p: F64Array([fx, 0.0, cx, 0.0, 0.0, fy, cy, 0.0, 0.0, 0.0, 1.0, 0.0]),
        ..CameraInfo::default()
    };
    let mut topics = vec![
        (
            "depth",
            &IMAGE,
            What::Depth(Box::new(image("32FC1", 4 * width))),
            0..pixels,
        ),
        (
            "camera_info",
            &CAMERA_INFO,
            What::CameraInfo(Box::new(info)),
            0..0,
        ),
    ];
    if d["color"] == true {
        topics.push((
            "image",
            &IMAGE,
            What::Colour(Box::new(image("rgb8", 3 * width))),
            pixels..2 * pixels,
        ));
    }
    for (name, t, what, span) in topics {
        let topic = ros.publisher(
            &format!("{robot}/{}/{name}", s.name),
            t,
            Qos::best_effort(5),
            what,
        );
        plan.readings.push(ReadingTopic {
            topic,
            artifact,
            sensor: s.sensor,
            last: 0,
            span,
        });
    }
    plan.largest = plan.largest.max(8 * (1 + pixels));
}

/// A robot model's frames, named `<robot>/<link>` as the URDF names its links: `/tf` places
/// its root body in `odom` and every other body relative to the root each step; `/tf_static`
/// places the links fixed to a body (lumped into it) on that body's head link. Its URDF goes
/// out once, latched, as `<robot>/robot_description` (what robot_state_publisher publishes and
/// RViz2's RobotModel reads).
fn model_frames(
    ros: &RosShared,
    plan: &mut Plan,
    statics: &mut Vec<TransformStamped>,
    tf: &mut Vec<(TfFrame, TransformStamped)>,
    (artifact, robot): (u32, &str),
    m: &ModelLinks,
) {
    // The first link of each body is its head (the model lists a body's head first).
    let mut heads: Vec<(u32, &str)> = Vec::new();
    for l in &m.links {
        if !heads.iter().any(|(b, _)| *b == l.body) {
            heads.push((l.body, &l.name));
            let (frame_id, relative_to) = if l.body == 0 {
                ("odom".to_string(), None)
            } else {
                let root = heads.iter().find(|(b, _)| *b == 0).map_or("", |h| h.1);
                (format!("{robot}/{root}"), Some(0))
            };
            tf.push((
                TfFrame {
                    artifact,
                    body: l.body,
                    relative_to,
                },
                TransformStamped {
                    header: header(&frame_id),
                    child_frame_id: format!("{robot}/{}", l.name),
                    transform: Transform::default(),
                },
            ));
        } else {
            let head = heads.iter().find(|(b, _)| *b == l.body).map_or("", |h| h.1);
            let [w, x, y, z] = l.orientation;
            statics.push(TransformStamped {
                header: header(&format!("{robot}/{head}")),
                child_frame_id: format!("{robot}/{}", l.name),
                transform: Transform {
                    translation: Vector3 {
                        x: l.position[0],
                        y: l.position[1],
                        z: l.position[2],
                    },
                    rotation: Quaternion::from_wxyz([w, x, y, z]),
                },
            });
        }
    }
    if let Some(urdf) = &m.urdf {
        plan.once.push(ros.publisher(
            &format!("{robot}/robot_description"),
            &STRING,
            Qos::latched(1),
            once(StringMsg { data: urdf.clone() }),
        ));
    }
}

fn num(v: &serde_json::Value, key: &str) -> f64 {
    v[key].as_f64().unwrap_or(0.0)
}

fn header(frame: &str) -> Header {
    Header {
        stamp: Time::default(),
        frame_id: frame.to_string(),
    }
}

impl Plan {
    /// Resolves the robots against the world and declares their topics, `/tf`, `/tf_static` and
    /// `/map` (the stepping thread, on the first step). An unknown robot name is an error.
    pub fn resolve(
        ros: &Arc<RosShared>,
        fixed: &Fixed,
        ctx: &Ctx<'_>,
        timestep: f64,
        mut route: impl FnMut(&Arc<RosShared>, &str, Inputs),
    ) -> Result<Plan, String> {
        let spec = &ros.spec;
        let count = ctx.artifact_count()?;
        let names: Vec<String> = (0..count)
            .map(|a| ctx.artifact_name(a))
            .collect::<Result<_, _>>()?;
        let mut robots = Vec::new();
        for pattern in &spec.robots {
            let found = crate::config::matching(&names, pattern);
            if found.is_empty() {
                return Err(format!(
                    "ros2.robots: no artifact named '{}'",
                    ssx_sdk::text::clip(pattern, 64)
                ));
            }
            for a in found {
                if !robots.contains(&a) {
                    robots.push(a);
                }
            }
        }
        let step_of = |rate| Ros2Spec::every(rate, timestep);
        let mut plan = Plan {
            clock: fixed.clock.map(|t| (t, u64::from(spec.clock_every))),
            tf: None,
            tf_frames: Vec::new(),
            odom: Vec::new(),
            odom_every: step_of(spec.odom_rate),
            readings: Vec::new(),
            once: Vec::new(),
            largest: 8,
        };
        let mut tf: Vec<(TfFrame, TransformStamped)> = Vec::new();
        let mut statics = vec![TransformStamped {
            header: header("map"),
            child_frame_id: "odom".into(),
            transform: Transform::default(),
        }];
        for &a in &robots {
            let robot = &names[a as usize];
            let base = format!("{robot}/base_link");
            if plan.odom_every > 0 {
                let what = What::Odom(Box::new(Odometry {
                    header: header("odom"),
                    child_frame_id: base.clone(),
                    ..Odometry::default()
                }));
                let t = ros.publisher(&format!("{robot}/odom"), &ODOMETRY, Qos::reliable(10), what);
                plan.odom.push((t, a));
                plan.largest = plan.largest.max(8 * 14);
            }
            let sensors = described(ctx, a)?;
            let gripper = sensors.iter().any(|s| s.description["kind"] == "gripper");
            let model: Option<ModelLinks> = ctx
                .robot_model(a)?
                .map(serde_json::from_str)
                .transpose()
                .map_err(|e| format!("ros2: robot '{robot}': its model: {e}"))?;
            let joints = ctx.joint_state(a, 0)?.is_some();
            route(ros, robot, Inputs { gripper, joints });
            match &model {
                Some(m) => model_frames(ros, &mut plan, &mut statics, &mut tf, (a, robot), m),
                None => tf.push((
                    TfFrame {
                        artifact: a,
                        body: 0,
                        relative_to: None,
                    },
                    TransformStamped {
                        header: header("odom"),
                        child_frame_id: base.clone(),
                        transform: Transform::default(),
                    },
                )),
            }
            let ranges = sensors
                .iter()
                .filter(|s| s.description["kind"] == "range")
                .count();
            for s in &sensors {
                let d = &s.description;
                if d["kind"] == "camera" {
                    camera_topics(ros, &mut plan, &mut statics, (a, robot, &base), s);
                    continue;
                }
                let period = (timestep * num(d, "rate_divider").max(1.0)) as f32;
                let (name, what, width) = match d["kind"].as_str() {
                    Some("range") => {
                        let frame = format!("{robot}/{}", s.name);
                        let pos = &d["position"];
                        statics.push(TransformStamped {
                            header: header(&base),
                            child_frame_id: frame.clone(),
                            transform: Transform {
                                translation: Vector3 {
                                    x: pos[0].as_f64().unwrap_or(0.0),
                                    y: pos[1].as_f64().unwrap_or(0.0),
                                    z: pos[2].as_f64().unwrap_or(0.0),
                                },
                                rotation: Quaternion::from_yaw(num(d, "yaw")),
                            },
                        });
                        let count = num(d, "count") as usize;
                        let (min, inc) = (num(d, "angle_min"), num(d, "angle_increment"));
                        let scan = LaserScan {
                            header: header(&frame),
                            angle_min: min as f32,
                            angle_max: (min + inc * count.saturating_sub(1) as f64) as f32,
                            angle_increment: inc as f32,
                            time_increment: 0.0,
                            scan_time: period,
                            range_min: num(d, "min_range") as f32,
                            range_max: num(d, "max_range") as f32,
                            ranges: Vec::with_capacity(count),
                            intensities: Vec::new(),
                        };
                        let topic = if ranges == 1 {
                            format!("{robot}/scan")
                        } else {
                            format!("{robot}/scan_{}", s.name)
                        };
                        (
                            topic,
                            (What::Scan(Box::new(scan)), &LASER_SCAN, Qos::best_effort(5)),
                            count,
                        )
                    }
                    Some("imu") => {
                        let body = num(d, "body") as u32;
                        let frame = if body == 0 {
                            base.clone()
                        } else {
                            format!("{robot}/body_{body}")
                        };
                        let mut imu = Imu {
                            header: header(&frame),
                            ..Imu::default()
                        };
                        // REP-145: no orientation estimate.
                        imu.orientation_covariance.0[0] = -1.0;
                        (
                            format!("{robot}/imu"),
                            (What::Imu(Box::new(imu)), &IMU, Qos::best_effort(5)),
                            6,
                        )
                    }
                    Some("joints") => {
                        let names: Vec<String> = d["names"]
                            .as_array()
                            .map(|n| {
                                n.iter()
                                    .filter_map(|x| x.as_str().map(str::to_string))
                                    .collect()
                            })
                            .unwrap_or_default();
                        let width = 2 * names.len();
                        let state = JointState {
                            header: header(""),
                            name: names,
                            ..JointState::default()
                        };
                        (
                            format!("{robot}/joint_states"),
                            (
                                What::Joints(Box::new(state)),
                                &JOINT_STATE,
                                Qos::reliable(10),
                            ),
                            width,
                        )
                    }
                    Some("pose") => (
                        format!("{robot}/pose"),
                        (
                            What::Pose(Box::new(PoseStamped {
                                header: header("map"),
                                pose: Pose::default(),
                            })),
                            &POSE_STAMPED,
                            Qos::reliable(10),
                        ),
                        13,
                    ),
                    _ => continue,
                };
                let (what, t, qos) = what;
                let topic = ros.publisher(&name, t, qos, what);
                plan.readings.push(ReadingTopic {
                    topic,
                    artifact: a,
                    sensor: s.sensor,
                    last: 0,
                    span: 0..usize::MAX,
                });
                plan.largest = plan.largest.max(8 * (1 + width));
            }
        }
        // `/tf`: reliable, depth 100, as tf2's broadcaster; one message for every robot.
        {
            let every = step_of(spec.tf_rate);
            if every > 0 && !tf.is_empty() {
                let (frames, transforms): (Vec<TfFrame>, Vec<TransformStamped>) =
                    tf.into_iter().unzip();
                let t = ros.publisher(
                    "/tf",
                    &TF_MESSAGE,
                    Qos::reliable(100),
                    What::Tf(Box::new(TfMessage { transforms })),
                );
                plan.tf = Some((t, every));
                plan.largest = plan.largest.max(8 * (1 + 7 * frames.len()));
                plan.tf_frames = frames;
            }
        }
        let tf_static = TfMessage {
            transforms: statics,
        };
        plan.once
            .push(ros.publisher("/tf_static", &TF_MESSAGE, Qos::latched(1), once(tf_static)));
        if spec.map {
            let mut cells = Vec::new();
            if let Some(info) = ctx.map(&mut cells)? {
                let grid = OccupancyGrid {
                    header: header("map"),
                    info: MapMetaData {
                        map_load_time: Time::default(),
                        resolution: info.resolution as f32,
                        width: info.width,
                        height: info.height,
                        origin: Pose {
                            position: Point {
                                x: info.origin[0],
                                y: info.origin[1],
                                z: 0.0,
                            },
                            orientation: Quaternion::from_yaw(info.origin[2]),
                        },
                    },
                    data: cells
                        .iter()
                        .map(|&c| if c == 1 { 100 } else { 0 })
                        .collect(),
                };
                plan.once
                    .push(ros.publisher("/map", &OCCUPANCY_GRID, Qos::latched(1), once(grid)));
            }
        }
        Ok(plan)
    }

    /// `/clock` at `time` once more, if the node publishes it (while paused: see
    /// `Zenoh::clock_again`). Returns whether it was queued.
    pub fn clock_again(
        &self,
        time: f64,
        send: impl FnOnce(u32, &mut dyn FnMut(&mut Vec<u8>)) -> bool,
    ) -> bool {
        self.clock.is_some_and(|(t, _)| {
            send(t, &mut |b: &mut Vec<u8>| {
                b.extend_from_slice(&time.to_le_bytes())
            })
        })
    }

    /// After a step (the stepping thread): the due snapshots, as plain numbers into the
    /// extension's reused buffers. Never allocates.
    pub fn after_step(
        &mut self,
        ctx: &Ctx<'_>,
        step: u64,
        time: f64,
        mut send: impl FnMut(u32, &mut dyn FnMut(&mut Vec<u8>)),
    ) -> Result<(), String> {
        let put = |b: &mut Vec<u8>, v: &[f64]| {
            for x in v {
                b.extend_from_slice(&x.to_le_bytes());
            }
        };
        for t in self.once.drain(..) {
            send(t, &mut |b| put(b, &[time]));
        }
        if let Some((t, every)) = self.clock
            && step.is_multiple_of(every)
        {
            send(t, &mut |b| put(b, &[time]));
        }
        if let Some((t, every)) = self.tf
            && step.is_multiple_of(every)
        {
            let mut err = Ok(());
            send(t, &mut |b| {
                put(b, &[time]);
                for f in &self.tf_frames {
                    let state = ctx.body_state(f.artifact, f.body);
                    let at = match (state, f.relative_to) {
                        (Ok(s), None) => {
                            put(b, &s.position);
                            put(b, &s.orientation);
                            continue;
                        }
                        (Ok(s), Some(r)) => ctx.body_state(f.artifact, r).map(|p| relative(&p, &s)),
                        (Err(e), _) => Err(e),
                    };
                    match at {
                        Ok(v) => put(b, &v),
                        Err(e) => {
                            err = Err(e);
                            put(b, &[0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0]);
                        }
                    }
                }
            });
            err?;
        }
        if self.odom_every > 0 && step.is_multiple_of(self.odom_every) {
            for &(t, a) in &self.odom {
                let s = ctx.body_state(a, 0)?;
                send(t, &mut |b| {
                    put(b, &[time]);
                    put(b, &s.position);
                    put(b, &s.orientation);
                    put(b, &s.linear_velocity);
                    put(b, &s.angular_velocity);
                });
            }
        }
        for r in &mut self.readings {
            let (values, taken) = ctx.reading(r.artifact, r.sensor)?;
            if taken == 0 || taken == r.last {
                continue;
            }
            r.last = taken;
            let span = r.span.start.min(values.len())..r.span.end.min(values.len());
            send(r.topic, &mut |b| {
                put(b, &[time]);
                put(b, &values[span.clone()]);
            });
        }
        Ok(())
    }
}
