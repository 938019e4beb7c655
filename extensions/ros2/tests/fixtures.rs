//! Every message type against an independent implementation: `fixtures/fixtures.json` holds, for
//! each type, the RIHS01 hash and the CDR bytes of a sample message as the Python `rosbags`
//! package computes them (`fixtures/generate.py`). Here the same sample goes through ssx's serde
//! structs and `cdr::encode`, and must give the same bytes; the bytes decode back to the sample;
//! and the hash computed from ssx's type descriptions is rosbags'.

use serde_json::Value;
use ssx_ros2::cdr;
use ssx_ros2::msgs::*;
use ssx_ros2::types::{service_hash, type_hash};

fn fixtures() -> Value {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/fixtures.json");
    serde_json::from_str(&std::fs::read_to_string(path).expect("fixtures.json")).expect("JSON")
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

fn unhex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

/// The sample through ssx: same bytes as rosbags, decodes back, same hash.
fn check<M: Message + PartialEq + std::fmt::Debug>(entry: &Value) {
    let name = entry["type"].as_str().unwrap();
    assert_eq!(name, M::TYPE.name);
    let sample: M = serde_json::from_value(entry["sample"].clone())
        .unwrap_or_else(|e| panic!("{name}: the sample does not fit ssx's struct: {e}"));
    let mut bytes = Vec::new();
    cdr::encode(&sample, &mut bytes);
    assert_eq!(
        hex(&bytes),
        entry["cdr"].as_str().unwrap(),
        "{name}: CDR bytes"
    );
    let theirs = unhex(entry["cdr"].as_str().unwrap());
    assert_eq!(
        cdr::decode::<M>(&theirs, 1 << 20).unwrap(),
        sample,
        "{name}: decoded"
    );
    assert_eq!(
        type_hash(M::TYPE),
        entry["hash"].as_str().unwrap(),
        "{name}: hash"
    );
}

#[test]
fn every_message_type_matches_rosbags_byte_for_byte_and_hash_for_hash() {
    let f = fixtures();
    let mut seen = Vec::new();
    for entry in f["messages"].as_array().unwrap() {
        let name = entry["type"].as_str().unwrap();
        match name {
            "builtin_interfaces/msg/Time" => check::<Time>(entry),
            "rosgraph_msgs/msg/Clock" => check::<Clock>(entry),
            "std_msgs/msg/Header" => check::<Header>(entry),
            "std_msgs/msg/UInt32" => check::<UInt32>(entry),
            "std_msgs/msg/Bool" => check::<Bool>(entry),
            "std_msgs/msg/Float64" => check::<Float64>(entry),
            "geometry_msgs/msg/Twist" => check::<Twist>(entry),
            "geometry_msgs/msg/PoseStamped" => check::<PoseStamped>(entry),
            "tf2_msgs/msg/TFMessage" => check::<TfMessage>(entry),
            "nav_msgs/msg/Odometry" => check::<Odometry>(entry),
            "sensor_msgs/msg/LaserScan" => check::<LaserScan>(entry),
            "sensor_msgs/msg/Imu" => check::<Imu>(entry),
            "sensor_msgs/msg/Image" => check::<Image>(entry),
            "sensor_msgs/msg/CameraInfo" => check::<CameraInfo>(entry),
            "nav_msgs/msg/OccupancyGrid" => check::<OccupancyGrid>(entry),
            other => panic!("fixtures.json has {other}, which this test does not know"),
        }
        seen.push(name);
    }
    // Every type ssx publishes or takes is covered (the others are nested in these).
    for t in [
        &CLOCK,
        &TF_MESSAGE,
        &ODOMETRY,
        &LASER_SCAN,
        &IMU,
        &IMAGE,
        &CAMERA_INFO,
        &POSE_STAMPED,
        &OCCUPANCY_GRID,
        &TWIST,
        &UINT32,
        &BOOL,
        &FLOAT64,
    ] {
        assert!(seen.contains(&t.name), "{} has no fixture", t.name);
    }
}

#[test]
fn the_trigger_service_matches_rosbags() {
    let f = fixtures();
    let s = &f["services"][0];
    assert_eq!(s["type"], "std_srvs/srv/Trigger");
    assert_eq!(service_hash(&TRIGGER), s["hash"].as_str().unwrap());
    let mut bytes = Vec::new();
    let request: TriggerRequest = serde_json::from_value(s["request"]["sample"].clone()).unwrap();
    cdr::encode(&request, &mut bytes);
    assert_eq!(hex(&bytes), s["request"]["cdr"].as_str().unwrap());
    let response: TriggerResponse =
        serde_json::from_value(s["response"]["sample"].clone()).unwrap();
    cdr::encode(&response, &mut bytes);
    assert_eq!(hex(&bytes), s["response"]["cdr"].as_str().unwrap());
    assert_eq!(
        cdr::decode::<TriggerResponse>(&bytes, 1024).unwrap(),
        response
    );
}
