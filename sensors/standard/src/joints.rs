//! `joints`: where a robot's joints stand, as ROS 2's `sensor_msgs/JointState` reports them:
//! the positions of the revolute and prismatic joints (revolute angles counted on across
//! turns, as a wheel's encoder counts them), then their rates.
//!
//! Descriptor: `joints` (names, in reading order; default every revolute and prismatic joint
//! in the file's order), `rate_divider`, `stagger`. The description (`kind: "joints"`) names
//! the joints and their kinds, for the ROS 2 bridge and the view.

use serde::Deserialize;
use ssx_sdk::abi::{SSX_JOINT_FIXED, SSX_JOINT_PRISMATIC};
use ssx_sdk::{Ctx, Init, Rate, Sensor};

use crate::parse;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Descriptor {
    #[serde(default)]
    joints: Option<Vec<String>>,
    #[serde(default = "crate::one")]
    rate_divider: u32,
    #[serde(default)]
    stagger: bool,
}

pub(crate) struct Joints {
    d: Descriptor,
    rate: Rate,
    /// The joints read (indexes in the artifact) and whether each is revolute; resolved on the
    /// first step.
    read: Option<Vec<(u32, bool)>>,
    /// Each revolute joint's last angle in (−π, π] and the turns counted so far.
    unwrap: Vec<(f64, f64)>,
    values: Vec<f64>,
}

impl Sensor for Joints {
    fn create(descriptor: &str, init: &Init) -> Result<Self, String> {
        let d: Descriptor = parse(descriptor)?;
        let rate = crate::rate(d.rate_divider, d.stagger, init)?;
        if init.joint_count == Some(0) {
            return Err(format!("artifact '{}' has no joints", init.artifact_name));
        }
        Ok(Joints {
            d,
            rate,
            read: None,
            unwrap: Vec::new(),
            values: Vec::new(),
        })
    }

    fn step(&mut self, ctx: &Ctx<'_>) -> Result<(), String> {
        let me = ctx.artifact();
        if self.read.is_none() {
            self.resolve(ctx, me)?;
        }
        let read = self.read.as_ref().expect("resolved");
        let n = read.len();
        // Angles are followed every step (a wheel may turn more than half a turn between two
        // readings of a slow sensor); the reading goes out at the sensor's rate.
        for (i, &(k, revolute)) in read.iter().enumerate() {
            let s = ctx
                .joint_state(me, k)?
                .ok_or_else(|| format!("joint {k} is gone"))?;
            self.values[n + i] = s.velocity;
            if revolute {
                let (last, turns) = &mut self.unwrap[i];
                let jump = s.position - *last;
                if jump > std::f64::consts::PI {
                    *turns -= 1.0;
                } else if jump < -std::f64::consts::PI {
                    *turns += 1.0;
                }
                *last = s.position;
                self.values[i] = s.position + *turns * std::f64::consts::TAU;
            } else {
                self.values[i] = s.position;
            }
        }
        if self.rate.due() {
            ctx.publish(&self.values)?;
        }
        Ok(())
    }
}

impl Joints {
    fn resolve(&mut self, ctx: &Ctx<'_>, me: u32) -> Result<(), String> {
        let mut all = Vec::new();
        let mut k = 0;
        while let Some(state) = ctx.joint_state(me, k)? {
            all.push((ctx.joint_name(me, k)?, k, state));
            k += 1;
        }
        let chosen: Vec<(String, u32, ssx_sdk::abi::SsxJointState)> = match &self.d.joints {
            None => all
                .into_iter()
                .filter(|(_, _, s)| s.kind != SSX_JOINT_FIXED)
                .collect(),
            Some(names) => names
                .iter()
                .map(|n| {
                    all.iter()
                        .find(|(name, _, s)| name == n && s.kind != SSX_JOINT_FIXED)
                        .cloned()
                        .ok_or_else(|| {
                            format!("invalid descriptor: 'joints' names '{n}', which is not a revolute or prismatic joint of this artifact")
                        })
                })
                .collect::<Result<_, String>>()?,
        };
        if chosen.is_empty() {
            return Err("the artifact has no revolute or prismatic joint".into());
        }
        let description = serde_json::json!({
            "kind": "joints",
            "names": chosen.iter().map(|(n, _, _)| n.as_str()).collect::<Vec<_>>(),
            "types": chosen
                .iter()
                .map(|(_, _, s)| if s.kind == SSX_JOINT_PRISMATIC { "prismatic" } else { "revolute" })
                .collect::<Vec<_>>(),
            "rate_divider": self.d.rate_divider,
        });
        let text = description.to_string();
        if text.len() > ssx_sdk::abi::SSX_MAX_DESCRIPTION {
            return Err(format!(
                "the joints' names take {} bytes; a description holds {}: name fewer joints in 'joints'",
                text.len(),
                ssx_sdk::abi::SSX_MAX_DESCRIPTION
            ));
        }
        ctx.describe(&text)?;
        self.unwrap = chosen.iter().map(|(_, _, s)| (s.position, 0.0)).collect();
        self.values = vec![0.0; 2 * chosen.len()];
        self.read = Some(
            chosen
                .iter()
                .map(|(_, k, s)| (*k, s.kind != SSX_JOINT_PRISMATIC))
                .collect(),
        );
        Ok(())
    }
}
