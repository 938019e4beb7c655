//! What a scene asks the Environment for, once parsed: its artifacts (bodies, joints, visuals,
//! driver and sensors), its extensions, and how to run. The scene loader (`ssx-artifacts`)
//! makes these; [`crate::Environment`] is built from them.

use std::sync::Arc;

use crate::engine::{BodySpec, JointDynamics, JointKind, Shape};
use crate::error::Origin;
use crate::math::{Pose, Vec3};
use crate::pacer::{LatePolicy, Mode};

/// A plugin to create: its registered name, its JSON descriptor and where that came from.
#[derive(Clone, Debug, PartialEq)]
pub struct PluginSpec {
    /// Registered name (`"hover"`), or the name inside `library`.
    pub plugin: Arc<str>,
    /// The plugin library (already located) to load it from; `None`: built in.
    pub library: Option<Arc<std::path::Path>>,
    /// JSON descriptor handed to the factory. Shared, as the name, library and origin are: a
    /// world's recipes for swaps and resets, and the worlds of a batch whose specs are equal,
    /// hold one copy (issue 60).
    pub descriptor: Arc<serde_json::Value>,
    /// Where the spec is written, for messages.
    pub origin: Option<Arc<Origin>>,
}

/// A sensor of an artifact: a name unique within the artifact, and the plugin.
#[derive(Clone, Debug, PartialEq)]
pub struct SensorSpec {
    /// Name within the artifact (`"imu"`).
    pub name: String,
    /// The plugin.
    pub plugin: PluginSpec,
}

/// A joint between two bodies of one artifact (indices into its body list).
#[derive(Clone, Debug, PartialEq)]
pub struct ArtifactJoint {
    /// Joint name.
    pub name: String,
    /// What it allows.
    pub kind: JointKind,
    /// Parent body index.
    pub parent: usize,
    /// Child body index.
    pub child: usize,
    /// Joint frame in the parent's frame.
    pub frame1: Pose,
    /// Joint frame in the child's frame.
    pub frame2: Pose,
    /// Damping and effort limit.
    pub dynamics: JointDynamics,
}

/// A visual of one body of an artifact.
#[derive(Clone, Debug, PartialEq)]
pub struct ArtifactVisual {
    /// Body index within the artifact.
    pub body: usize,
    /// Pose relative to the body.
    pub local_pose: Pose,
    /// Shape.
    pub shape: Shape,
    /// RGBA.
    pub color: [f32; 4],
}

/// What a robot model file (URDF, MJCF) says beyond bodies and joints: every link's frame
/// (links fixed together share a body) and, for a URDF, its text, for ROS 2's
/// `robot_description` and `/tf`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RobotModel {
    /// The URDF: the file's own (xacro expanded), or an MJCF model written as one.
    pub urdf: Option<String>,
    /// Every link: its name, the body (index in the artifact) it is part of, and its pose in
    /// that body's frame.
    pub links: Vec<(String, usize, Pose)>,
}

/// One artifact instance, fully resolved: world poses, joints, visuals, plugins.
#[derive(Clone, Debug, PartialEq)]
pub struct ArtifactSpec {
    /// Unique name in the scene.
    pub name: String,
    /// Bodies with names, world poses already applied.
    pub bodies: Vec<(String, BodySpec)>,
    /// Joints between its bodies.
    pub joints: Vec<ArtifactJoint>,
    /// What it looks like.
    pub visuals: Vec<ArtifactVisual>,
    /// At most one driver.
    pub driver: Option<PluginSpec>,
    /// Any number of sensors.
    pub sensors: Vec<SensorSpec>,
    /// What its robot model file says of its links, if it came from one.
    pub model: Option<Arc<RobotModel>>,
}

/// A simulation extension instance.
#[derive(Clone, Debug)]
pub struct ExtensionSpec {
    /// Name drivers use to find it.
    pub name: String,
    /// The plugin.
    pub plugin: PluginSpec,
}

/// How to run.
#[derive(Clone, Debug)]
pub struct EnvironmentConfig {
    /// Scene name, for logs.
    pub scene: String,
    /// Physics engine by registered name.
    pub engine: String,
    /// Timestep (s).
    pub timestep: f64,
    /// Gravity (m/s²).
    pub gravity: Vec3,
    /// Scene seed; every plugin instance gets its own seed derived from it.
    pub seed: u64,
    /// Worker threads, the stepping thread included.
    pub workers: usize,
    /// Realtime (with factor) or fast.
    pub mode: Mode,
    /// What a late step does to the schedule.
    pub late_policy: LatePolicy,
    /// Stop the run when a plugin fails instead of disabling it.
    pub strict: bool,
    /// The scene's map, if it has one (plugins read it through the host's `map`).
    pub map: Option<Arc<crate::world::MapGrid>>,
}

impl EnvironmentConfig {
    /// A fast, one-worker configuration for tests and tools.
    pub fn fast(timestep: f64) -> Self {
        Self {
            scene: "unnamed".into(),
            engine: crate::engine::DEFAULT_ENGINE.into(),
            timestep,
            gravity: Vec3::new(0.0, 0.0, -9.81),
            seed: 0,
            workers: 1,
            mode: Mode::Fast,
            late_policy: LatePolicy::CatchUp,
            strict: false,
            map: None,
        }
    }
}

/// Makes `specs`' plugin descriptors share the copies in `like` wherever the two are equal,
/// artifact by artifact and plugin by plugin (the same scene read for another seed, or the
/// world a batch built first): a world then holds no descriptor of its own that another
/// already holds (issue 60's small worlds). Specs that differ in shape are left as they are.
pub fn share_descriptors(specs: &mut [ArtifactSpec], like: &[ArtifactSpec]) {
    for (mine, theirs) in specs.iter_mut().zip(like) {
        share_artifact_descriptors(mine, theirs);
    }
}

fn share_artifact_descriptors(mine: &mut ArtifactSpec, theirs: &ArtifactSpec) {
    fn one<T: PartialEq + ?Sized>(mine: &mut Arc<T>, theirs: &Arc<T>) {
        if !Arc::ptr_eq(mine, theirs) && **mine == **theirs {
            *mine = Arc::clone(theirs);
        }
    }
    let share = |mine: &mut PluginSpec, theirs: &PluginSpec| {
        one(&mut mine.descriptor, &theirs.descriptor);
        one(&mut mine.plugin, &theirs.plugin);
        if let (Some(a), Some(b)) = (&mut mine.library, &theirs.library) {
            one(a, b);
        }
        if let (Some(a), Some(b)) = (&mut mine.origin, &theirs.origin) {
            one(a, b);
        }
    };
    if let (Some(a), Some(b)) = (&mut mine.driver, &theirs.driver) {
        share(a, b);
    }
    for (a, b) in mine.sensors.iter_mut().zip(&theirs.sensors) {
        share(&mut a.plugin, &b.plugin);
    }
}

/// Makes `specs` hold `like`'s artifacts wherever the two are equal (a batch's walls, and its
/// robots when the seed does not place them), artifact by artifact, and share the plugin
/// descriptors of the others that no one else holds yet (as [`share_descriptors`]).
pub fn share_artifacts(specs: &mut [Arc<ArtifactSpec>], like: &[Arc<ArtifactSpec>]) {
    for (mine, theirs) in specs.iter_mut().zip(like) {
        if Arc::ptr_eq(mine, theirs) {
            continue;
        }
        if **mine == **theirs {
            *mine = Arc::clone(theirs);
        } else if let Some(m) = Arc::get_mut(mine) {
            share_artifact_descriptors(m, theirs);
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use serde_json::json;

    use super::{ArtifactSpec, PluginSpec, SensorSpec, share_artifacts, share_descriptors};

    fn plugin(descriptor: serde_json::Value) -> PluginSpec {
        PluginSpec {
            plugin: "range".into(),
            library: Some(std::path::Path::new("/lib/libssx_sensors.so").into()),
            descriptor: Arc::new(descriptor),
            origin: Some(Arc::new(crate::Origin {
                file: "scene.json".into(),
                json_path: "artifacts[1].driver".into(),
                line: 3,
                column: 7,
            })),
        }
    }

    fn artifact(driver: serde_json::Value, sensors: &[serde_json::Value]) -> ArtifactSpec {
        ArtifactSpec {
            name: "robot".into(),
            bodies: Vec::new(),
            joints: Vec::new(),
            visuals: Vec::new(),
            driver: Some(plugin(driver)),
            sensors: (sensors.iter())
                .map(|d| SensorSpec {
                    name: "s".into(),
                    plugin: plugin(d.clone()),
                })
                .collect(),
            model: None,
        }
    }

    #[test]
    fn equal_descriptors_are_shared_and_others_kept() {
        let like = vec![
            artifact(
                json!({"gain": 1}),
                &[json!({"rays": 12}), json!({"rate": 10})],
            ),
            artifact(json!({"gain": 2}), &[]),
        ];
        let mut specs = vec![
            artifact(
                json!({"gain": 1}),
                &[json!({"rays": 12}), json!({"rate": 5})],
            ),
            artifact(json!({"gain": 3}), &[]),
            artifact(json!({"gain": 2}), &[]),
        ];
        share_descriptors(&mut specs, &like);
        let shared = |a: &PluginSpec, b: &PluginSpec| Arc::ptr_eq(&a.descriptor, &b.descriptor);
        let driver = |s: &ArtifactSpec| s.driver.clone().unwrap();
        assert!(shared(&driver(&specs[0]), &driver(&like[0])));
        // The name, library and origin too, where equal, even beside another descriptor.
        let (mine, theirs) = (driver(&specs[1]), driver(&like[1]));
        assert!(Arc::ptr_eq(&mine.plugin, &theirs.plugin));
        assert!(Arc::ptr_eq(
            mine.library.as_ref().unwrap(),
            theirs.library.as_ref().unwrap()
        ));
        assert!(Arc::ptr_eq(
            mine.origin.as_ref().unwrap(),
            theirs.origin.as_ref().unwrap()
        ));
        assert!(shared(
            &specs[0].sensors[0].plugin,
            &like[0].sensors[0].plugin
        ));
        // Different values stay the world's own, and so does an artifact `like` lacks.
        assert!(!shared(
            &specs[0].sensors[1].plugin,
            &like[0].sensors[1].plugin
        ));
        assert_eq!(*specs[0].sensors[1].plugin.descriptor, json!({"rate": 5}));
        assert_eq!(*driver(&specs[1]).descriptor, json!({"gain": 3}));
        assert_eq!(*driver(&specs[2]).descriptor, json!({"gain": 2}));
    }

    #[test]
    fn equal_artifacts_are_shared_whole_and_the_others_share_their_descriptors() {
        let like: Vec<Arc<ArtifactSpec>> = vec![
            Arc::new(artifact(json!({"gain": 1}), &[json!({"rays": 12})])),
            Arc::new(artifact(json!({"gain": 2}), &[json!({"rays": 12})])),
        ];
        let mut moved = artifact(json!({"gain": 2}), &[json!({"rays": 12})]);
        moved.name = "moved".into();
        let mut specs = vec![
            Arc::new(artifact(json!({"gain": 1}), &[json!({"rays": 12})])),
            Arc::new(moved),
        ];
        share_artifacts(&mut specs, &like);
        assert!(Arc::ptr_eq(&specs[0], &like[0]));
        // Not equal (its name differs): its own, but its descriptors are the other's.
        assert!(!Arc::ptr_eq(&specs[1], &like[1]));
        assert_eq!(specs[1].name, "moved");
        let descriptor = |s: &ArtifactSpec| Arc::clone(&s.sensors[0].plugin.descriptor);
        assert!(Arc::ptr_eq(&descriptor(&specs[1]), &descriptor(&like[1])));
        // An artifact someone else holds too is left as it is (its descriptors stay its own).
        let mut held = artifact(json!({"gain": 2}), &[json!({"rays": 12})]);
        held.name = "held".into();
        let held = Arc::new(held);
        let mut specs = vec![Arc::clone(&held), Arc::clone(&held)];
        share_artifacts(&mut specs, &like);
        assert!(Arc::ptr_eq(&specs[1], &held));
        assert!(!Arc::ptr_eq(&descriptor(&specs[1]), &descriptor(&like[1])));
    }
}
