//! The ROS 2 node's outbound side, on the extension's publisher thread: snapshots the stepping
//! thread queued (plain numbers) become messages here, are written as CDR and put with
//! rmw_zenoh's attachment; service answers become `Trigger` responses.

use std::sync::Arc;

use ssx_ros2::attachment::{Attachment, now_ns};
use ssx_ros2::msgs::*;
use ssx_ros2::{Message, cdr};
use zenoh::Wait;

use super::{Call, RosShared};

/// Where a topic's samples go: a plain publisher (volatile) or an advanced one with a cache
/// that late subscribers query (transient local, as rmw_zenoh makes latched topics).
pub enum Sink {
    /// Volatile.
    Plain(zenoh::pubsub::Publisher<'static>),
    /// Transient local.
    Latched(zenoh_ext::AdvancedPublisher<'static>),
}

impl Sink {
    fn put(&self, payload: &[u8], attachment: Vec<u8>) {
        let _ = match self {
            Sink::Plain(p) => p.put(payload).attachment(attachment).wait(),
            Sink::Latched(p) => p.put(payload).attachment(attachment).wait(),
        };
    }
}

/// Writes a fixed message's CDR into the buffer.
pub type Encoder = Box<dyn Fn(&mut Vec<u8>) + Send>;

/// How a topic's snapshot becomes a message. Snapshots are little-endian f64s: the simulated
/// time, then the values listed. (Messages are boxed: an Odometry is 736 bytes.)
pub enum What {
    /// `/clock`: nothing more.
    Clock,
    /// `/tf`: 7 values (position, orientation w x y z) per child frame, in this order.
    Tf(Box<TfMessage>),
    /// `<robot>/odom`: the first body's 13 state values (world frame).
    Odom(Box<Odometry>),
    /// `<robot>/scan`: the ranges.
    Scan(Box<LaserScan>),
    /// `<robot>/imu`: specific force and angular rate, body frame.
    Imu(Box<Imu>),
    /// `<robot>/pose`: position and orientation (w x y z) from a pose sensor.
    Pose(Box<PoseStamped>),
    /// `<robot>/joint_states`: the joints sensor's positions, then rates.
    Joints(Box<JointState>),
    /// `<robot>/<camera>/depth`: a camera's depths (m), as `32FC1`.
    Depth(Box<Image>),
    /// `<robot>/<camera>/image`: a camera's colours (`0xRRGGBB` numbers), as `rgb8`.
    Colour(Box<Image>),
    /// `<robot>/<camera>/camera_info`: fixed but for the stamp, with each picture.
    CameraInfo(Box<CameraInfo>),
    /// A message fixed at the first step (`/tf_static`, `/map`), sent once.
    Once(Encoder),
}

/// One topic: its sink, its GID and sequence numbers, and its message.
pub struct TopicOut {
    /// Where it goes.
    pub sink: Sink,
    /// The publisher's GID (from its liveliness token).
    pub gid: [u8; 16],
    /// The message it fills.
    pub what: What,
    seq: i64,
}

impl TopicOut {
    /// A topic, sequence numbers from 1.
    pub fn new(sink: Sink, gid: [u8; 16], what: What) -> TopicOut {
        TopicOut {
            sink,
            gid,
            what,
            seq: 0,
        }
    }
}

/// The node's publishers, held by whoever sends (the publisher thread).
pub struct RosOut {
    shared: Arc<RosShared>,
    topics: Vec<Option<TopicOut>>,
    cdr: Vec<u8>,
    values: Vec<f64>,
}

fn f64s(buf: &[u8], out: &mut Vec<f64>) {
    out.clear();
    out.extend(
        buf.chunks_exact(8)
            .map(|c| f64::from_le_bytes(c.try_into().expect("8 bytes"))),
    );
}

fn quat(q: &[f64]) -> Quaternion {
    Quaternion::from_wxyz([q[0], q[1], q[2], q[3]])
}

/// `v` (world frame) in the frame of orientation `q` (w x y z): R(q)ᵀ v.
fn to_body(q: &[f64], v: &[f64]) -> Vector3 {
    let (w, x, y, z) = (q[0], -q[1], -q[2], -q[3]);
    // Rotate by the conjugate: t = 2 u × v, v' = v + w t + u × t.
    let (vx, vy, vz) = (v[0], v[1], v[2]);
    let (tx, ty, tz) = (
        2.0 * (y * vz - z * vy),
        2.0 * (z * vx - x * vz),
        2.0 * (x * vy - y * vx),
    );
    Vector3 {
        x: vx + w * tx + (y * tz - z * ty),
        y: vy + w * ty + (z * tx - x * tz),
        z: vz + w * tz + (x * ty - y * tx),
    }
}

impl RosOut {
    /// The node's outbound side; topics arrive through `RosShared::add_topic`.
    pub fn new(shared: Arc<RosShared>) -> RosOut {
        RosOut {
            shared,
            topics: Vec::new(),
            cdr: Vec::with_capacity(4096),
            values: Vec::with_capacity(1024),
        }
    }

    /// Makes the declarations the stepping thread handed over, keeping the topics they made.
    pub fn adopt(&mut self) {
        if !self.shared.has_pending() {
            return;
        }
        for (id, t) in self.shared.declare_pending() {
            let i = id as usize;
            if self.topics.len() <= i {
                self.topics.resize_with(i + 1, || None);
            }
            self.topics[i] = Some(t);
        }
    }

    /// Encodes snapshot `buf` for `topic` and puts it.
    pub fn publish(&mut self, topic: u32, buf: &[u8]) {
        if self.topics.get(topic as usize).is_none_or(Option::is_none) {
            self.adopt();
        }
        let Some(Some(t)) = self.topics.get_mut(topic as usize) else {
            return;
        };
        f64s(buf, &mut self.values);
        let v = &self.values;
        let stamp = Time::from_secs(v.first().copied().unwrap_or(0.0));
        let cdr = &mut self.cdr;
        match &mut t.what {
            What::Clock => cdr::encode(&Clock { clock: stamp }, cdr),
            What::Tf(m) => {
                for (tr, s) in m.transforms.iter_mut().zip(v[1..].chunks_exact(7)) {
                    tr.header.stamp = stamp;
                    tr.transform.translation = Vector3 {
                        x: s[0],
                        y: s[1],
                        z: s[2],
                    };
                    tr.transform.rotation = quat(&s[3..7]);
                }
                cdr::encode(&**m, cdr);
            }
            What::Odom(m) => {
                let s = &v[1..14];
                m.header.stamp = stamp;
                m.pose.pose.position = Point {
                    x: s[0],
                    y: s[1],
                    z: s[2],
                };
                m.pose.pose.orientation = quat(&s[3..7]);
                m.twist.twist.linear = to_body(&s[3..7], &s[7..10]);
                m.twist.twist.angular = to_body(&s[3..7], &s[10..13]);
                cdr::encode(&**m, cdr);
            }
            What::Scan(m) => {
                m.header.stamp = stamp;
                let max = m.range_max;
                m.ranges.clear();
                // REP-117: no return is +inf (the sensor reads its maximum range then).
                m.ranges.extend(v[1..].iter().map(|&r| {
                    let r = r as f32;
                    if r >= max { f32::INFINITY } else { r }
                }));
                cdr::encode(&**m, cdr);
            }
            What::Imu(m) => {
                m.header.stamp = stamp;
                m.linear_acceleration = Vector3 {
                    x: v[1],
                    y: v[2],
                    z: v[3],
                };
                m.angular_velocity = Vector3 {
                    x: v[4],
                    y: v[5],
                    z: v[6],
                };
                cdr::encode(&**m, cdr);
            }
            What::Pose(m) => {
                m.header.stamp = stamp;
                m.pose.position = Point {
                    x: v[1],
                    y: v[2],
                    z: v[3],
                };
                m.pose.orientation = quat(&v[4..8]);
                cdr::encode(&**m, cdr);
            }
            What::Joints(m) => {
                m.header.stamp = stamp;
                let n = m.name.len();
                let values = v.get(1..1 + 2 * n).unwrap_or(&[]);
                m.position.clear();
                m.velocity.clear();
                if values.len() == 2 * n {
                    m.position.extend_from_slice(&values[..n]);
                    m.velocity.extend_from_slice(&values[n..]);
                }
                cdr::encode(&**m, cdr);
            }
            What::Depth(m) => {
                m.header.stamp = stamp;
                m.data.clear();
                m.data
                    .extend(v[1..].iter().flat_map(|&d| (d as f32).to_le_bytes()));
                cdr::encode(&**m, cdr);
            }
            What::Colour(m) => {
                m.header.stamp = stamp;
                m.data.clear();
                m.data
                    .extend(v[1..].iter().flat_map(|&c| ssx_sdk::camera::unpack(c)));
                cdr::encode(&**m, cdr);
            }
            What::CameraInfo(m) => {
                m.header.stamp = stamp;
                cdr::encode(&**m, cdr);
            }
            What::Once(write) => write(cdr),
        }
        t.seq += 1;
        let attachment = Attachment {
            sequence_number: t.seq,
            source_timestamp: now_ns(),
            source_gid: t.gid,
        };
        t.sink.put(cdr, attachment.encode().to_vec());
        self.shared.count_published();
    }

    /// Answers a service call with the control answer's JSON as a `Trigger` response.
    pub fn answer(&mut self, call: Call, json: &str) {
        let response = trigger_response(json);
        cdr::encode(&response, &mut self.cdr);
        let attachment = Attachment {
            sequence_number: call.request.map_or(0, |a| a.sequence_number),
            source_timestamp: now_ns(),
            source_gid: call.request.map_or([0; 16], |a| a.source_gid),
        };
        let key = call.query.key_expr().clone();
        let _ = call
            .query
            .reply(key, self.cdr.as_slice())
            .attachment(attachment.encode().to_vec())
            .wait();
    }

    /// A command that wanted no answer (`step_n`): a refusal is logged.
    pub fn quiet_answer(&self, json: &str) {
        let r = trigger_response(json);
        if !r.success {
            self.shared
                .warn(format!("ros2: step_n refused: {}", r.message));
        }
    }

    /// Undeclares everything (after the last publication).
    pub fn close(self) {
        for t in self.topics.into_iter().flatten() {
            let _ = match t.sink {
                Sink::Plain(p) => p.undeclare().wait(),
                Sink::Latched(p) => p.undeclare().wait(),
            };
        }
    }
}

/// The control answer (`{"ok": true, "state": "paused", "step": 12, "time": 0.12}` or
/// `{"ok": false, "error": ...}`) as a `Trigger` response.
pub fn trigger_response(json: &str) -> TriggerResponse {
    let v: serde_json::Value = serde_json::from_str(json).unwrap_or_default();
    if v["ok"] != serde_json::Value::Bool(true) {
        return TriggerResponse {
            success: false,
            message: v["error"].as_str().unwrap_or(json).to_string(),
        };
    }
    let step = v["step"].as_u64().unwrap_or(0);
    let time = v["time"].as_f64().unwrap_or(0.0);
    let message = match v["state"].as_str() {
        _ if v["reset"] == serde_json::Value::Bool(true) => format!(
            "reset to step {step} (t = {time} s) with seed {}, {}",
            v["seed"].as_u64().unwrap_or(0),
            v["state"].as_str().unwrap_or("paused")
        ),
        Some("running") => format!("running from step {step} (t = {time} s)"),
        _ if v["interrupted"] == serde_json::Value::Bool(true) => format!(
            "paused at step {step} (t = {time} s); {} steps not run",
            v["remaining"].as_u64().unwrap_or(0)
        ),
        _ => format!("paused at step {step} (t = {time} s)"),
    };
    TriggerResponse {
        success: true,
        message,
    }
}

/// A one-time message, encoded when it is sent.
pub fn once<M: Message + Send + 'static>(m: M) -> What {
    What::Once(Box::new(move |out| cdr::encode(&m, out)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn world_velocities_become_body_velocities() {
        // A body turned +90° about z: world +y is its +x.
        let (s, c) = (
            std::f64::consts::FRAC_PI_4.sin(),
            std::f64::consts::FRAC_PI_4.cos(),
        );
        let v = to_body(&[c, 0.0, 0.0, s], &[0.0, 2.0, 0.5]);
        assert!((v.x - 2.0).abs() < 1e-12 && v.y.abs() < 1e-12 && (v.z - 0.5).abs() < 1e-12);
        let v = to_body(&[1.0, 0.0, 0.0, 0.0], &[1.0, 2.0, 3.0]);
        assert_eq!((v.x, v.y, v.z), (1.0, 2.0, 3.0));
    }

    #[test]
    fn control_answers_become_trigger_responses() {
        let r = trigger_response(r#"{"ok":true,"state":"paused","step":12,"time":0.12}"#);
        assert_eq!(
            (r.success, r.message.as_str()),
            (true, "paused at step 12 (t = 0.12 s)")
        );
        let r = trigger_response(r#"{"ok":true,"state":"running","step":3,"time":0.003}"#);
        assert_eq!(r.message, "running from step 3 (t = 0.003 s)");
        let r = trigger_response(r#"{"ok":false,"error":"step needs a paused run: pause first"}"#);
        assert_eq!(
            (r.success, r.message.as_str()),
            (false, "step needs a paused run: pause first")
        );
    }
}
