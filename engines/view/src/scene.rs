//! What the view knows of the scene, fixed before the first step: frame names, what each body
//! looks like, and which sensors there are and how to draw or label their readings.

use std::collections::HashMap;

use foxglove::schemas::{
    CubePrimitive, CylinderPrimitive, LinePrimitive, ModelPrimitive, Point3, Pose, SceneEntity,
    SceneUpdate, SpherePrimitive, line_primitive,
};
use serde::Deserialize;
use ssx_core::{ArtifactId, RenderNode, RenderScene, Shape};

use crate::convert::{color, pose, vec3};
use crate::mesh::ViewMesh;

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
    /// The standard `camera` sensor: depth and colour images ([`ssx_sdk::camera`]).
    Camera(CameraGeometry),
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

/// A camera's image size, intrinsics and optical frame.
#[derive(Clone, Debug, PartialEq)]
pub struct CameraGeometry {
    /// Global body id of the mount.
    pub body: u32,
    /// Image size (pixels).
    pub width: u32,
    /// See `width`.
    pub height: u32,
    /// Intrinsics.
    pub pinhole: ssx_sdk::camera::Pinhole,
    /// Whether the reading carries a colour image after the depths.
    pub color: bool,
    /// The optical frame (z ahead, x right, y down) in the body frame: position, and
    /// orientation as x, y, z, w.
    pub position: [f64; 3],
    /// See `position`.
    pub orientation: [f64; 4],
}

/// The standard camera's descriptor, as far as showing its images goes (the sensor itself
/// checks it).
#[derive(Deserialize)]
struct CameraDescriptor {
    width: u32,
    height: u32,
    fov: Option<f64>,
    fx: Option<f64>,
    fy: Option<f64>,
    cx: Option<f64>,
    cy: Option<f64>,
    #[serde(default = "yes")]
    color: bool,
    #[serde(default)]
    position: [f64; 3],
    #[serde(default)]
    rpy: [f64; 3],
    #[serde(default)]
    body: u32,
}

fn yes() -> bool {
    true
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
    /// What every body looks like. A mesh is a model primitive whose URL is
    /// `/meshes/<name>`: each sink links it or embeds it (`mesh.rs`).
    pub entities: SceneUpdate,
    /// The scene's distinct meshes by name.
    pub(crate) meshes: HashMap<String, ViewMesh>,
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
                    match &*s.plugin.plugin {
                        "range" => range_geometry(&s.plugin.descriptor, info.bodies.start)
                            .map_or(SensorKind::Values, SensorKind::Range),
                        "pose" => SensorKind::Pose,
                        "imu" => SensorKind::Imu,
                        "camera" => camera_geometry(&s.plugin.descriptor, info.bodies.start)
                            .map_or(SensorKind::Values, SensorKind::Camera),
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
        let poses: Vec<ssx_core::math::Pose> = scene
            .specs
            .iter()
            .flat_map(|a| a.bodies.iter().map(|(_, b)| b.pose))
            .collect();
        let mut meshes = HashMap::new();
        let entities = scene_entities(
            &frames,
            nodes,
            &poses,
            &Ground::covering(&poses, nodes),
            &mut meshes,
        );
        Self {
            name: scene.name.to_string(),
            timestep: scene.timestep,
            frames,
            sensors,
            entities,
            meshes,
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

fn camera_geometry(descriptor: &serde_json::Value, first_body: u32) -> Option<CameraGeometry> {
    let d = CameraDescriptor::deserialize(descriptor).ok()?;
    let pinhole =
        ssx_sdk::camera::Pinhole::new(d.width, d.height, d.fov, d.fx, d.fy, d.cx, d.cy).ok()?;
    let [w, x, y, z] = ssx_sdk::camera::optical_orientation(d.rpy);
    Some(CameraGeometry {
        body: first_body + d.body,
        width: d.width,
        height: d.height,
        pinhole,
        color: d.color,
        position: d.position,
        orientation: [x, y, z, w],
    })
}

/// The least half side of the square a ground plane is drawn as (m).
const GROUND_HALF: f64 = 30.0;
/// Grid spacings to choose from (m): the smallest that draws at most 120 lines each way.
const GRID_STEPS: [f64; 7] = [1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0];

/// The square a ground plane is drawn as: it covers every other shape at its first pose, with a
/// margin, so that the walls of a large arena do not stand in the void.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Ground {
    /// Centre (m, world frame).
    centre: [f64; 2],
    /// Half its side (m).
    half: f64,
    /// Grid spacing (m).
    step: f64,
}

impl Ground {
    /// Around every shape but planes, `poses` being the bodies' first poses by body index.
    fn covering(poses: &[ssx_core::math::Pose], nodes: &[RenderNode]) -> Ground {
        let (mut lo, mut hi) = ([f64::INFINITY; 2], [f64::NEG_INFINITY; 2]);
        for n in nodes {
            let (Some(body), Some(h)) = (poses.get(n.body.index()), n.shape.half_extents()) else {
                continue;
            };
            let at = (body * n.local_pose).translation.vector;
            let reach = h.norm();
            for i in 0..2 {
                lo[i] = lo[i].min(at[i] - reach);
                hi[i] = hi[i].max(at[i] + reach);
            }
        }
        if lo[0] > hi[0] {
            return Ground {
                centre: [0.0; 2],
                half: GROUND_HALF,
                step: GRID_STEPS[0],
            };
        }
        let centre = [(lo[0] + hi[0]) / 2.0, (lo[1] + hi[1]) / 2.0];
        let extent = (hi[0] - lo[0]).max(hi[1] - lo[1]) / 2.0;
        let half = (extent * 1.1 + 2.0).max(GROUND_HALF);
        let step = GRID_STEPS
            .into_iter()
            .find(|s| 2.0 * half / s <= 120.0)
            .unwrap_or(GRID_STEPS[GRID_STEPS.len() - 1]);
        Ground { centre, half, step }
    }
}

/// One entity per body that has nodes, in the body's frame (frame-locked, so it moves with the
/// body's transform); each distinct mesh into `meshes`, once.
fn scene_entities(
    frames: &[String],
    nodes: &[RenderNode],
    poses: &[ssx_core::math::Pose],
    ground: &Ground,
    meshes: &mut HashMap<String, ViewMesh>,
) -> SceneUpdate {
    let mut entities: Vec<SceneEntity> = Vec::new();
    // A mesh shared by many bodies (a replicated robot's) is one `Arc`: named once.
    let mut named: HashMap<*const ssx_core::Mesh, String> = HashMap::new();
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
            Shape::Mesh { ref mesh, .. } => {
                let name = named
                    .entry(std::sync::Arc::as_ptr(mesh))
                    .or_insert_with(|| {
                        let (name, m) = ViewMesh::new(mesh);
                        meshes.entry(name.clone()).or_insert(m);
                        name
                    });
                e.models.push(ModelPrimitive {
                    pose: p,
                    scale: vec3(1.0, 1.0, 1.0),
                    color: color(node.color),
                    override_color: true,
                    url: format!("{}{name}", crate::mesh::PREFIX),
                    media_type: crate::mesh::MEDIA_TYPE.into(),
                    data: Default::default(),
                })
            }
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
                // The square's centre, moved within the plane's body frame to the world's
                // middle (`poses`: the bodies' first poses).
                let body = poses.get(node.body.index()).copied().unwrap_or_default();
                let middle = body.inverse()
                    * ssx_core::math::Point3::new(ground.centre[0], ground.centre[1], 0.0);
                let mut at = node.local_pose;
                at.translation.vector.x = middle.x;
                at.translation.vector.y = middle.y;
                let p = pose(&at);
                e.cubes.push(CubePrimitive {
                    pose: p,
                    size: vec3(2.0 * ground.half, 2.0 * ground.half, 0.001),
                    color: color(node.color),
                });
                e.lines.push(ground_grid(p, ground));
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

fn ground_grid(p: Option<Pose>, ground: &Ground) -> LinePrimitive {
    let (half, step) = (ground.half, ground.step);
    let n = (half / step) as i32;
    let mut points = Vec::new();
    for i in -n..=n {
        let k = f64::from(i) * step;
        let z = 0.002;
        points.push(Point3 { x: k, y: -half, z });
        points.push(Point3 { x: k, y: half, z });
        points.push(Point3 { x: -half, y: k, z });
        points.push(Point3 { x: half, y: k, z });
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

#[cfg(test)]
mod ground_tests {
    use super::*;
    use ssx_core::engine::BodyId;
    use ssx_core::math::{Pose as P, Vec3};

    fn node(body: u32, shape: Shape) -> RenderNode {
        RenderNode {
            body: BodyId(body),
            local_pose: P::identity(),
            shape,
            color: [1.0; 4],
        }
    }

    #[test]
    fn the_ground_covers_a_large_arena_and_a_small_scene_keeps_the_sixty_metre_square() {
        let wall = Shape::Box {
            half_extents: Vec3::new(0.5, 0.05, 0.25),
        };
        // A 126 m arena: walls at x = ±63 (the dispersal-1000 scene's size), the plane body at
        // the origin.
        let poses = [
            P::identity(),
            P::translation(-63.0, 0.0, 0.0),
            P::translation(63.0, 10.0, 0.0),
        ];
        let nodes = [node(0, Shape::Plane), node(1, wall.clone()), node(2, wall)];
        let g = Ground::covering(&poses, &nodes);
        assert!(g.half >= 63.5 && g.half < 75.0, "{g:?}");
        assert!(
            g.centre[0].abs() < 1e-9 && (g.centre[1] - 5.0).abs() < 1e-9,
            "{g:?}"
        );
        assert_eq!(g.step, 2.0, "at most 120 lines each way");
        // A room: the 60 m square, 1 m grid, around the room.
        let g = Ground::covering(&poses[..2], &nodes[..2]);
        assert_eq!((g.half, g.step), (GROUND_HALF, 1.0));
        // The drawn square is centred there, in the plane body's frame.
        let frames = ["g/plane".to_string(), "a/w".into(), "b/w".into()];
        let g = Ground::covering(&poses, &nodes);
        let update = scene_entities(&frames, &nodes, &poses, &g, &mut HashMap::new());
        let floor = &update.entities[0].cubes[0];
        let at = floor.pose.as_ref().unwrap().position.as_ref().unwrap();
        assert_eq!((at.x, at.y), (0.0, 5.0));
        assert_eq!(floor.size.as_ref().unwrap().x, 2.0 * g.half);
    }
}
