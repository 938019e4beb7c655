//! What the view knows of the scene, fixed before the first step: frame names, what each body
//! looks like, and which sensors there are and how to draw or label their readings.

use foxglove::schemas::{
    Color, CubePrimitive, CylinderPrimitive, LinePrimitive, Point3, Pose, Quaternion, SceneEntity,
    SceneUpdate, SpherePrimitive, Vector3, line_primitive,
};
use serde::Deserialize;
use ssx_core::{ArtifactId, RenderNode, RenderScene, Shape};

/// The frame every pose is given in.
pub const WORLD_FRAME: &str = "world";

/// How a sensor's reading is shown.
#[derive(Clone, Debug, PartialEq)]
pub enum SensorKind {
    /// The standard `range` sensor: rays from a mount on a body.
    Range(RangeGeometry),
    /// The standard `pose` sensor: `[x, y, z, qw, qx, qy, qz, vx, vy, vz, wx, wy, wz]`.
    Pose,
    /// The standard `imu` sensor: `[fx, fy, fz, wx, wy, wz]`.
    Imu,
    /// Anything else: its values as they are.
    Values,
}

/// Where a range sensor's rays start and which way they point, in its body's frame.
#[derive(Clone, Debug, PartialEq)]
pub struct RangeGeometry {
    /// Global body id of the mount.
    pub body: u32,
    /// Mount position in the body frame.
    pub position: [f64; 3],
    /// Unit ray directions in the body frame.
    pub directions: Vec<[f64; 3]>,
    /// Distance read when nothing is hit.
    pub max_range: f64,
}

/// The standard range sensor's descriptor, as far as drawing goes (the sensor itself checks it).
#[derive(Deserialize)]
struct RangeDescriptor {
    count: u32,
    #[serde(default = "full_ring")]
    fov: f64,
    max_range: f64,
    #[serde(default)]
    position: [f64; 3],
    #[serde(default)]
    yaw: f64,
    #[serde(default)]
    body: u32,
}

fn full_ring() -> f64 {
    std::f64::consts::TAU
}

/// One sensor of one artifact.
#[derive(Clone, Debug)]
pub struct SensorInfo {
    /// Its artifact.
    pub artifact: ArtifactId,
    /// Its index within the artifact.
    pub index: usize,
    /// `<artifact>/<sensor>`.
    pub path: String,
    /// How it is shown.
    pub kind: SensorKind,
}

/// The scene, fixed at start.
#[derive(Clone, Debug, Default)]
pub struct SceneInfo {
    /// Scene name.
    pub name: String,
    /// Seconds per step.
    pub timestep: f64,
    /// Frame name of every body (`<artifact>/<body>`), by global body id.
    pub frames: Vec<String>,
    /// Every sensor, in scene order.
    pub sensors: Vec<SensorInfo>,
    /// What every body looks like.
    pub entities: SceneUpdate,
}

/// Whether a sensor comes from the standard sensor library (`libssx_sensors.so`).
fn standard(library: Option<&std::path::Path>) -> bool {
    library
        .and_then(|l| l.file_name())
        .is_some_and(|f| f == "libssx_sensors.so")
}

impl SceneInfo {
    /// Builds the description from the scene and the render nodes.
    pub fn new(scene: &RenderScene<'_>, nodes: &[RenderNode]) -> Self {
        let mut frames = Vec::new();
        let mut sensors = Vec::new();
        for (ai, (info, spec)) in scene.artifacts.iter().zip(scene.specs).enumerate() {
            for body in &info.body_names {
                frames.push(format!("{}/{}", info.name, body));
            }
            for (si, s) in spec.sensors.iter().enumerate() {
                let kind = if !standard(s.plugin.library.as_deref()) {
                    SensorKind::Values
                } else {
                    match s.plugin.plugin.as_str() {
                        "range" => range_geometry(&s.plugin.descriptor, info.bodies.start)
                            .map_or(SensorKind::Values, SensorKind::Range),
                        "pose" => SensorKind::Pose,
                        "imu" => SensorKind::Imu,
                        _ => SensorKind::Values,
                    }
                };
                sensors.push(SensorInfo {
                    artifact: ArtifactId(ai as u32),
                    index: si,
                    path: format!("{}/{}", info.name, s.name),
                    kind,
                });
            }
        }
        let entities = scene_entities(&frames, nodes);
        Self {
            name: scene.name.to_string(),
            timestep: scene.timestep,
            frames,
            sensors,
            entities,
        }
    }
}

fn range_geometry(descriptor: &serde_json::Value, first_body: u32) -> Option<RangeGeometry> {
    let d = RangeDescriptor::deserialize(descriptor).ok()?;
    let directions = (0..d.count)
        .map(|i| {
            let a = ssx_sdk::geometry::range_ray_yaw(i, d.count, d.fov, d.yaw);
            [a.cos(), a.sin(), 0.0]
        })
        .collect();
    Some(RangeGeometry {
        body: first_body + d.body,
        position: d.position,
        directions,
        max_range: d.max_range,
    })
}

pub(crate) fn vec3(x: f64, y: f64, z: f64) -> Option<Vector3> {
    Some(Vector3 { x, y, z })
}

pub(crate) fn color(c: [f32; 4]) -> Option<Color> {
    Some(Color {
        r: f64::from(c[0]),
        g: f64::from(c[1]),
        b: f64::from(c[2]),
        a: f64::from(c[3]),
    })
}

fn pose(p: &ssx_core::math::Pose) -> Option<Pose> {
    let t = p.translation.vector;
    let q = p.rotation.quaternion();
    Some(Pose {
        position: vec3(t.x, t.y, t.z),
        orientation: Some(Quaternion {
            x: q.i,
            y: q.j,
            z: q.k,
            w: q.w,
        }),
    })
}

/// Half the side of the square a ground plane is drawn as (m), and its grid spacing.
const GROUND_HALF: f64 = 30.0;
const GRID_STEP: f64 = 1.0;

/// One entity per body that has nodes, in the body's frame (frame-locked, so it moves with the
/// body's transform).
fn scene_entities(frames: &[String], nodes: &[RenderNode]) -> SceneUpdate {
    let mut entities: Vec<SceneEntity> = Vec::new();
    for node in nodes {
        let frame = &frames[node.body.index()];
        let e = match entities.iter_mut().find(|e| &e.id == frame) {
            Some(e) => e,
            None => {
                entities.push(SceneEntity {
                    frame_id: frame.clone(),
                    id: frame.clone(),
                    frame_locked: true,
                    ..Default::default()
                });
                entities.last_mut().expect("just pushed")
            }
        };
        let p = pose(&node.local_pose);
        match node.shape {
            Shape::Box { half_extents: h } => e.cubes.push(CubePrimitive {
                pose: p,
                size: vec3(2.0 * h.x, 2.0 * h.y, 2.0 * h.z),
                color: color(node.color),
            }),
            Shape::Sphere { radius: r } => e.spheres.push(SpherePrimitive {
                pose: p,
                size: vec3(2.0 * r, 2.0 * r, 2.0 * r),
                color: color(node.color),
            }),
            Shape::Cylinder {
                radius: r,
                half_length: l,
            } => e.cylinders.push(cylinder(p, r, l, node.color)),
            Shape::Capsule {
                radius: r,
                half_length: l,
            } => {
                e.cylinders.push(cylinder(p, r, l, node.color));
                for end in [-l, l] {
                    let cap = node.local_pose * ssx_core::math::Pose::translation(0.0, 0.0, end);
                    e.spheres.push(SpherePrimitive {
                        pose: pose(&cap),
                        size: vec3(2.0 * r, 2.0 * r, 2.0 * r),
                        color: color(node.color),
                    });
                }
            }
            Shape::Plane => {
                e.cubes.push(CubePrimitive {
                    pose: p,
                    size: vec3(2.0 * GROUND_HALF, 2.0 * GROUND_HALF, 0.001),
                    color: color(node.color),
                });
                e.lines.push(ground_grid(p));
            }
        }
    }
    SceneUpdate {
        deletions: Vec::new(),
        entities,
    }
}

fn cylinder(p: Option<Pose>, r: f64, l: f64, c: [f32; 4]) -> CylinderPrimitive {
    CylinderPrimitive {
        pose: p,
        size: vec3(2.0 * r, 2.0 * r, 2.0 * l),
        bottom_scale: 1.0,
        top_scale: 1.0,
        color: color(c),
    }
}

fn ground_grid(p: Option<Pose>) -> LinePrimitive {
    let n = (GROUND_HALF / GRID_STEP) as i32;
    let mut points = Vec::new();
    for i in -n..=n {
        let k = f64::from(i) * GRID_STEP;
        let z = 0.002;
        points.push(Point3 {
            x: k,
            y: -GROUND_HALF,
            z,
        });
        points.push(Point3 {
            x: k,
            y: GROUND_HALF,
            z,
        });
        points.push(Point3 {
            x: -GROUND_HALF,
            y: k,
            z,
        });
        points.push(Point3 {
            x: GROUND_HALF,
            y: k,
            z,
        });
    }
    LinePrimitive {
        r#type: line_primitive::Type::LineList as i32,
        pose: p,
        thickness: 0.01,
        scale_invariant: false,
        points,
        color: color([0.35, 0.35, 0.35, 1.0]),
        ..Default::default()
    }
}
