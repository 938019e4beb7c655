//! The node's inputs, checked on Zenoh's threads before anything reaches the run: the services
//! `pause`, `resume` and `step` (std_srvs/srv/Trigger), the topic `step_n` (std_msgs/msg/UInt32),
//! every robot's `cmd_vel` (geometry_msgs/msg/Twist), a robot model's `joint_commands`
//! (std_msgs/msg/Float64MultiArray) and a gripper robot's `gripper/grip`
//! (std_msgs/msg/Bool) and `gripper/height` (std_msgs/msg/Float64). A payload over its type's size, one
//! that is not CDR of that type, or a message of another type on the same topic is refused,
//! counted and warned of (at most once a second); a flood costs Zenoh's thread the decoding and
//! a driver still reads one command a step.

use std::sync::{Arc, OnceLock};

use ssx_ros2::graph::{Kind, Qos};
use ssx_ros2::msgs::{
    Bool, Float64, Float64MultiArray, Message, TRIGGER, TriggerRequest, TriggerResponse, Twist,
    UINT32, UInt32,
};
use ssx_ros2::types::{dds_name, service_hash, type_hash};
use ssx_ros2::{Attachment, cdr};
use zenoh::Wait;

use super::{Call, RosShared};
use crate::control::{Command, MAX_STEPS};
use crate::mailbox::Inbox;
use crate::publisher::Asker;

/// Largest `Trigger` request taken (it is 5 bytes: the CDR header and one byte).
pub const MAX_REQUEST: usize = 64;
/// Largest `Twist` taken (it is 52 bytes).
pub const MAX_TWIST: usize = 64;
/// Largest `UInt32` taken (it is 8 bytes).
pub const MAX_UINT32: usize = 16;
/// Largest `Bool` or `Float64` taken (5 and 12 bytes).
pub const MAX_SMALL: usize = 16;
/// Largest `Float64MultiArray` taken: a layout with one short dimension and 32 values.
pub const MAX_JOINT_COMMANDS: usize = 512;

/// Who carries out a command: the extension's control queue.
pub type OnCommand = Arc<dyn Fn(Asker, Command) + Send + Sync>;

/// The request's attachment, if it has rmw_zenoh's layout.
fn attachment_of(a: Option<&zenoh::bytes::ZBytes>) -> Option<Attachment> {
    a.and_then(|b| Attachment::decode(&b.to_bytes()))
}

/// Answers a call at once (a refusal, on Zenoh's thread).
pub fn reply_now(call: Call, success: bool, message: &str) {
    let mut bytes = Vec::new();
    cdr::encode(
        &TriggerResponse {
            success,
            message: message.to_string(),
        },
        &mut bytes,
    );
    let attachment = Attachment {
        sequence_number: call.request.map_or(0, |a| a.sequence_number),
        source_timestamp: ssx_ros2::attachment::now_ns(),
        source_gid: call.request.map_or([0; 16], |a| a.source_gid),
    };
    let key = call.query.key_expr().clone();
    let _ = call
        .query
        .reply(key, bytes)
        .attachment(attachment.encode().to_vec())
        .wait();
}

/// Declares `<node>/pause`, `<node>/resume`, `<node>/step` (one step, while paused) and
/// `<node>/reset` (the run from step 0, with the scene's seed) as Trigger services, and the `<node>/step_n` topic (N steps, while paused).
pub fn declare_control(ros: &Arc<RosShared>, on_command: OnCommand) -> Result<(), String> {
    let hash = service_hash(&TRIGGER);
    let node = ros.spec.node.clone();
    for service in ["pause", "resume", "step", "reset"] {
        let qualified = ros.qualify(&format!("{node}/{service}"));
        let (token, key, _) = ros.name_entity(
            Kind::Service,
            &qualified,
            TRIGGER.name,
            &hash,
            Qos::reliable(10),
        );
        let (r, run) = (Arc::downgrade(ros), Arc::clone(&on_command));
        let on = qualified.clone();
        let queryable = ros
            .session
            .declare_queryable(key.clone())
            .complete(true)
            .callback(move |query| {
                let Some(ros) = r.upgrade() else { return };
                let call = Call {
                    request: attachment_of(query.attachment()),
                    query,
                };
                let len = call.query.payload().map_or(0, |p| p.len());
                if len > MAX_REQUEST {
                    let why = format!("{len} bytes; a Trigger request is 5");
                    ros.refuse(&on, &why);
                    return reply_now(call, false, &why);
                }
                if let Some(p) = call.query.payload()
                    && let Err(e) = cdr::decode::<TriggerRequest>(&p.to_bytes(), MAX_REQUEST)
                {
                    let why = format!("not a std_srvs/srv/Trigger request: {e}");
                    ros.refuse(&on, &why);
                    return reply_now(call, false, &why);
                }
                let command = match service {
                    "pause" => Command::Pause,
                    "resume" => Command::Resume,
                    "reset" => Command::Reset { seed: None },
                    _ => Command::Step {
                        n: 1,
                        observe: Vec::new(),
                        binary: false,
                    },
                };
                run(Asker::Ros2(Box::new(call)), command);
            })
            .wait()
            .map_err(|e| format!("ros2: cannot declare the service '{qualified}': {e}"))?;
        ros.keep_queryable(queryable, &token)?;
    }
    let qualified = ros.qualify(&format!("{node}/step_n"));
    let (token, key, _) = ros.name_entity(
        Kind::Subscription,
        &qualified,
        UINT32.name,
        &type_hash(&UINT32),
        Qos::reliable(10),
    );
    let r = Arc::downgrade(ros);
    let on = qualified.clone();
    let subscriber = ros
        .session
        .declare_subscriber(key)
        .callback(move |sample| {
            let Some(ros) = r.upgrade() else { return };
            match cdr::decode::<UInt32>(&sample.payload().to_bytes(), MAX_UINT32) {
                Ok(UInt32 { data }) if (1..=MAX_STEPS).contains(&u64::from(data)) => {
                    on_command(
                        Asker::Quiet,
                        Command::Step {
                            n: u64::from(data),
                            observe: Vec::new(),
                            binary: false,
                        },
                    );
                }
                Ok(UInt32 { data }) => {
                    ros.refuse(&on, &format!("{data} steps; from 1 to {MAX_STEPS}"));
                }
                Err(e) => ros.refuse(&on, &format!("not a std_msgs/msg/UInt32: {e}")),
            }
        })
        .wait()
        .map_err(|e| format!("ros2: cannot subscribe to '{qualified}': {e}"))?;
    ros.keep_subscriber(subscriber, &token)
}

/// Who receives a robot's input topic: the mailbox of its driver's Zenoh key, found by `inbox`
/// once the driver has subscribed.
pub type Route = Arc<dyn Fn() -> Option<Arc<Inbox>> + Send + Sync>;

/// Declares `<robot>/cmd_vel` (its token and subscriber made by the publisher thread, see
/// [`RosShared::publisher`]): Twists become commands in the mailbox the robot's driver reads for
/// its Zenoh commands (`linear` = linear.x, `angular` = angular.z), with that driver's limits
/// and timeout. `inbox` finds the mailbox by key (`artifacts/<robot>/cmd`), once the driver has
/// subscribed. The subscription takes every type on the topic, so that a message of another
/// type or hash is counted and named rather than silently unmatched.
pub fn declare_cmd_vel(ros: &Arc<RosShared>, robot: &str, inbox: Route) {
    declare_input(
        ros,
        robot,
        "cmd_vel",
        MAX_TWIST,
        inbox,
        |t: Twist, to, on| {
            to.receive_named(&[("linear", t.linear.x), ("angular", t.angular.z)], on)
        },
    );
}

/// Declares `<robot>/joint_commands` (std_msgs/msg/Float64MultiArray, what ros2_control's
/// forward_command_controller takes on `commands`) for a robot made from a model file: the
/// data, one value a joint in the order the robot's `joints` driver drives them, become its
/// Zenoh command `{"values": [...]}` in the mailbox `inbox` finds (`artifacts/<robot>/cmd`).
/// A message with more values than a command carries is refused before it is decoded.
pub fn declare_joint_commands(ros: &Arc<RosShared>, robot: &str, inbox: Route) {
    declare_input(
        ros,
        robot,
        "joint_commands",
        MAX_JOINT_COMMANDS,
        inbox,
        |m: Float64MultiArray, to, on| to.receive_values(&m.data, on),
    );
}

/// Declares `<robot>/gripper/grip` (std_msgs/msg/Bool: true closes, false opens) and
/// `<robot>/gripper/height` (std_msgs/msg/Float64: the held body's height, m) for a robot with
/// a gripper (docs/robots.md). The two are latched into one Zenoh gripper command, `{"grip",
/// "height"}` (open and 0 until told otherwise), for the mailbox `inbox` finds
/// (`artifacts/<robot>/gripper`).
pub fn declare_gripper(ros: &Arc<RosShared>, robot: &str, inbox: Route) {
    let state = Arc::new(std::sync::Mutex::new([0.0f64; 2]));
    let latch = |slot: usize, value: f64, state: &std::sync::Mutex<[f64; 2]>| {
        let mut s = state.lock().unwrap_or_else(|p| p.into_inner());
        s[slot] = value;
        [("grip", s[0]), ("height", s[1])]
    };
    let s = Arc::clone(&state);
    declare_input(
        ros,
        robot,
        "gripper/grip",
        MAX_SMALL,
        Arc::clone(&inbox),
        move |b: Bool, to, on| to.receive_named(&latch(0, f64::from(u8::from(b.data)), &s), on),
    );
    declare_input(
        ros,
        robot,
        "gripper/height",
        MAX_SMALL,
        inbox,
        move |h: Float64, to, on| to.receive_named(&latch(1, h.data, &state), on),
    );
}

/// Declares `<robot>/<topic>` of message type `M`: each message, at most `max` bytes of CDR of
/// that type, goes into the robot's mailbox as `deliver` puts it (which returns a warning).
fn declare_input<M: Message + 'static>(
    ros: &Arc<RosShared>,
    robot: &str,
    topic: &str,
    max: usize,
    inbox: Route,
    deliver: impl Fn(M, &Inbox, &str) -> Option<String> + Send + Sync + 'static,
) {
    let def = M::TYPE;
    let qualified = ros.qualify(&format!("{robot}/{topic}"));
    let hash = ros.hash(def);
    let (token, ours, _) = ros.name_entity(
        Kind::Subscription,
        &qualified,
        def.name,
        &hash,
        Qos::reliable(10),
    );
    let any_type = format!(
        "{}/{}/*/*",
        ros.node.domain,
        qualified.trim_start_matches('/')
    );
    let (r, robot) = (Arc::downgrade(ros), robot.to_string());
    let found: OnceLock<Arc<Inbox>> = OnceLock::new();
    let on = qualified.clone();
    let callback = move |sample: zenoh::sample::Sample| {
        let Some(ros) = r.upgrade() else { return };
        let key = sample.key_expr().as_str();
        if key != ours {
            let mut chunks = key.rsplit('/');
            let (h, t) = (chunks.next().unwrap_or(""), chunks.next().unwrap_or(""));
            let why = format!(
                "type {} with hash {}; ssx takes {} ({}) with hash {hash}",
                ssx_sdk::text::clip(t, 80),
                ssx_sdk::text::clip(h, 80),
                def.name,
                dds_name(def.name)
            );
            return ros.refuse(&on, &why);
        }
        let msg = match cdr::decode::<M>(&sample.payload().to_bytes(), max) {
            Ok(m) => m,
            Err(e) => return ros.refuse(&on, &format!("not a {}: {e}", def.name)),
        };
        let Some(mailbox) = found.get().cloned().or_else(|| {
            let m = inbox()?;
            Some(found.get_or_init(|| m).clone())
        }) else {
            return ros.unrouted(&robot);
        };
        if let Some(w) = deliver(msg, &mailbox, &on) {
            ros.warn(w);
        }
    };
    ros.defer(Box::new(move |ros| {
        let subscriber = ros
            .session
            .declare_subscriber(any_type)
            .callback(callback)
            .wait()
            .map_err(|e| format!("ros2: cannot subscribe to '{qualified}': {e}"))?;
        ros.keep_subscriber(subscriber, &token)?;
        Ok(None)
    }));
}
