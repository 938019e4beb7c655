//! The `ros2` block of the extension's descriptor: which node, which robots, which rates.

use serde::Deserialize;
use ssx_ros2::graph::valid_name;

/// `"ros2": {...}` in the Zenoh extension's descriptor.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Ros2Spec {
    /// `ROS_DOMAIN_ID` (0 to 232).
    #[serde(default)]
    pub domain_id: u32,
    /// The node's namespace (`""` or `/sim`); robot topics and the node's services are in it.
    #[serde(default)]
    pub namespace: String,
    /// The node's name.
    #[serde(default = "d_node")]
    pub node: String,
    /// Artifacts that are robots on the ROS side, by name or name prefix ending in `*`: each gets
    /// `odom`, `cmd_vel`, and a topic per range, IMU and pose sensor.
    #[serde(default)]
    pub robots: Vec<String>,
    /// `/clock` every this many steps (0: none).
    #[serde(default = "d_one")]
    pub clock_every: u32,
    /// `/tf` (every robot's `odom` → `<robot>/base_link`) rate, Hz (0: none).
    #[serde(default = "d_rate")]
    pub tf_rate: f64,
    /// `/<robot>/odom` rate, Hz (0: none).
    #[serde(default = "d_rate")]
    pub odom_rate: f64,
    /// Publish the scene's map (if it has one) on `/map`, latched.
    #[serde(default = "d_true")]
    pub map: bool,
}

fn d_node() -> String {
    "ssx".into()
}
fn d_one() -> u32 {
    1
}
fn d_rate() -> f64 {
    50.0
}
fn d_true() -> bool {
    true
}

impl Ros2Spec {
    /// Checks the block; the message names the field.
    pub fn check(&self) -> Result<(), String> {
        let bad = |what: &str| Err(format!("invalid descriptor: ros2.{what}"));
        if self.domain_id > 232 {
            return bad(&format!(
                "domain_id must be from 0 to 232, got {}",
                self.domain_id
            ));
        }
        if !self.namespace.is_empty()
            && (!self.namespace.starts_with('/') || !valid_name(&self.namespace))
        {
            return bad(&format!(
                "namespace must be empty or an absolute ROS name such as \"/sim\", got \"{}\"",
                ssx_sdk::text::clip(&self.namespace, 64)
            ));
        }
        if self.node.contains('/') || !valid_name(&self.node) {
            return bad(&format!(
                "node must be a ROS name token (letters, digits, '_', not starting with a digit), got \"{}\"",
                ssx_sdk::text::clip(&self.node, 64)
            ));
        }
        for r in &self.robots {
            let name = r.strip_suffix('*').unwrap_or(r);
            if !name.is_empty() && (name.contains('/') || !valid_name(name)) {
                return bad(&format!(
                    "robots: \"{}\" cannot name ROS topics (letters, digits, '_', not starting with a digit)",
                    ssx_sdk::text::clip(r, 64)
                ));
            }
        }
        for (name, v) in [("tf_rate", self.tf_rate), ("odom_rate", self.odom_rate)] {
            if !(v.is_finite() && (0.0..=1e6).contains(&v)) {
                return bad(&format!("{name} must be from 0 to 1e6 Hz, got {v}"));
            }
        }
        Ok(())
    }

    /// Every how many steps a rate in Hz falls (0: never; at most every step).
    pub fn every(rate: f64, timestep: f64) -> u64 {
        if rate <= 0.0 {
            0
        } else {
            ((1.0 / (rate * timestep)).round() as u64).max(1)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(json: &str) -> Result<Ros2Spec, String> {
        let s: Ros2Spec = serde_json::from_str(json).map_err(|e| e.to_string())?;
        s.check().map(|()| s)
    }

    #[test]
    fn names_and_ranges_are_checked() {
        let s = spec(r#"{"robots": ["rover", "quad*"]}"#).unwrap();
        assert_eq!((s.node.as_str(), s.domain_id, s.clock_every), ("ssx", 0, 1));
        assert_eq!(
            spec(r#"{"domain_id": 300}"#).unwrap_err(),
            "invalid descriptor: ros2.domain_id must be from 0 to 232, got 300"
        );
        assert!(
            spec(r#"{"namespace": "sim"}"#)
                .unwrap_err()
                .contains("absolute ROS name")
        );
        assert!(
            spec(r#"{"node": "my node"}"#)
                .unwrap_err()
                .contains("ROS name token")
        );
        assert!(
            spec(r#"{"robots": ["2d-bot"]}"#)
                .unwrap_err()
                .contains("cannot name ROS topics")
        );
        assert!(spec(r#"{"tf_rate": -1}"#).unwrap_err().contains("tf_rate"));
        assert_eq!(Ros2Spec::every(50.0, 0.001), 20);
        assert_eq!(Ros2Spec::every(50.0, 0.1), 1);
        assert_eq!(Ros2Spec::every(0.0, 0.01), 0);
    }
}
