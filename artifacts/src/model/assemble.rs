//! A model's links and joints as an artifact: links held together by fixed joints become one
//! body (their shapes and masses merged, as Gazebo lumps fixed joints), every other joint a
//! joint between bodies, posed at joint position 0. The root is static when the model is held
//! in the world, dynamic otherwise.

use std::path::Path;
use std::rc::Rc;
use std::sync::Arc;

use nalgebra::{Matrix3, SymmetricEigen};
use ssx_core::environment::{ArtifactJoint, ArtifactVisual};
use ssx_core::math::{Pose, Rotation, Vec3};
use ssx_core::{
    BodyKind, BodySpec, ColliderSpec, JointDynamics, JointKind, MassSpec, MeshFit, Origin, Shape,
    SsxError,
};

use super::{GeomShape, JointType, Model, ModelOptions};
use crate::prepared::Prepared;
use crate::source::Source;

/// Default friction of a model's colliders (URDF gives none).
const FRICTION: f64 = 0.8;

fn fail(at: &Origin, message: String) -> SsxError {
    SsxError::Input {
        origin: Box::new(at.clone()),
        message,
    }
}

pub(crate) fn assemble(
    src: Rc<Source>,
    file: &Path,
    model: Model,
    options: &ModelOptions,
) -> Result<Prepared, SsxError> {
    let n = model.links.len();
    // Each link's joint to its parent; a link may have only one.
    let mut up: Vec<Option<usize>> = vec![None; n];
    for (k, j) in model.joints.iter().enumerate() {
        if let Some(first) = up[j.child].replace(k) {
            return Err(fail(
                &j.at,
                format!(
                    "link '{}' is already the child of joint '{}': a link has one parent",
                    model.links[j.child].name, model.joints[first].name
                ),
            ));
        }
    }
    let roots: Vec<usize> = (0..n).filter(|&l| up[l].is_none()).collect();
    let root = match roots.as_slice() {
        [r] => *r,
        [] => {
            return Err(fail(
                &model.links[0].at,
                "the joints form a cycle: no link is the root".into(),
            ));
        }
        [a, b, ..] => {
            return Err(fail(
                &model.links[*b].at,
                format!(
                    "two root links, '{}' and '{}': every link but one must be a joint's child",
                    model.links[*a].name, model.links[*b].name
                ),
            ));
        }
    };
    // Links in an order where a parent comes before its children; a link never reached is on
    // a cycle.
    let mut order = vec![root];
    let mut k = 0;
    while k < order.len() {
        let l = order[k];
        order.extend(
            model
                .joints
                .iter()
                .filter(|j| j.parent == l)
                .map(|j| j.child),
        );
        k += 1;
    }
    if order.len() < n {
        let lost = (0..n).find(|l| !order.contains(l)).expect("a lost link");
        return Err(fail(
            &model.links[lost].at,
            format!(
                "link '{}' is on a cycle of joints: a model's links form a tree",
                model.links[lost].name
            ),
        ));
    }
    // Each link's pose in the model frame at joint position 0, and its body.
    let mut pose = vec![Pose::identity(); n];
    let mut body_of = vec![usize::MAX; n];
    let mut bodies_links: Vec<usize> = Vec::new();
    for &l in &order {
        match up[l] {
            None => {
                body_of[l] = 0;
                bodies_links.push(l);
            }
            Some(j) => {
                let joint = &model.joints[j];
                pose[l] = pose[joint.parent] * joint.origin;
                if joint.kind == JointType::Fixed {
                    body_of[l] = body_of[joint.parent];
                } else {
                    body_of[l] = bodies_links.len();
                    bodies_links.push(l);
                }
            }
        }
    }
    let fixed = options.fixed.unwrap_or(model.fixed);
    let mut bodies = Vec::with_capacity(bodies_links.len());
    let mut visuals = Vec::new();
    for (b, &head) in bodies_links.iter().enumerate() {
        let frame = pose[head];
        let kind = if b == 0 && fixed {
            BodyKind::Static
        } else {
            BodyKind::Dynamic
        };
        let fit = match kind {
            BodyKind::Dynamic => options.meshes.unwrap_or(MeshFit::ConvexHull),
            _ => MeshFit::TriMesh,
        };
        let mut colliders = Vec::new();
        let mut mass = 0.0;
        let mut moment = Vec3::zeros();
        let mut parts: Vec<(f64, Vec3, Matrix3<f64>)> = Vec::new();
        for l in order.iter().copied().filter(|&l| body_of[l] == b) {
            let link = &model.links[l];
            let rel = frame.inverse() * pose[l];
            for g in &link.collisions {
                colliders.push(ColliderSpec {
                    shape: shape(&g.shape, fit),
                    local_pose: rel * g.pose,
                    friction: g.friction.unwrap_or(FRICTION),
                    restitution: 0.0,
                });
            }
            for g in &link.visuals {
                visuals.push(ArtifactVisual {
                    body: b,
                    local_pose: rel * g.pose,
                    shape: shape(&g.shape, MeshFit::TriMesh),
                    color: g.color.unwrap_or(ssx_core::world::DEFAULT_BODY_COLOR),
                });
            }
            if let Some(i) = &link.inertial
                && i.mass > 0.0
            {
                let at = rel * i.pose;
                let r = at.rotation.to_rotation_matrix();
                let c = at.translation.vector;
                mass += i.mass;
                moment += c * i.mass;
                parts.push((i.mass, c, r.matrix() * i.inertia * r.matrix().transpose()));
            }
        }
        let mass_spec = if kind == BodyKind::Dynamic {
            if mass <= 0.0 {
                let link = &model.links[head];
                let why = match up[head] {
                    Some(j) => format!("moves on joint '{}'", model.joints[j].name),
                    None => "is the root of a free robot".to_string(),
                };
                return Err(fail(
                    &link.at,
                    format!(
                        "link '{}' {why} but has no mass: give it (or a link fixed to it) an <inertial> with a positive mass",
                        link.name
                    ),
                ));
            }
            let center = moment / mass;
            let mut tensor = Matrix3::zeros();
            for (m, c, i) in &parts {
                let d = c - center;
                tensor += i + (Matrix3::identity() * d.norm_squared() - d * d.transpose()) * *m;
            }
            let (inertia, frame) = principal(tensor);
            MassSpec::Inertial {
                mass,
                center,
                inertia,
                frame,
            }
        } else {
            MassSpec::Density(0.0)
        };
        bodies.push((
            model.links[head].name.clone(),
            BodySpec {
                kind,
                pose: frame,
                mass: mass_spec,
                colliders,
                linear_damping: 0.0,
                angular_damping: 0.0,
                planar: false,
                group: 0,
            },
        ));
    }
    let mut joints = Vec::new();
    for j in model.joints.iter().filter(|j| j.kind != JointType::Fixed) {
        let (parent, child) = (body_of[j.parent], body_of[j.child]);
        let turn = ssx_core::math::x_onto(&j.axis);
        // The child link heads its body: the joint frame is the anchor on the axis.
        let frame2 = Pose::from_parts(j.anchor.into(), turn);
        let frame1 = pose[bodies_links[parent]].inverse() * pose[j.child] * frame2;
        let kind = match j.kind {
            JointType::Prismatic => JointKind::Prismatic {
                limits: j.limits,
                motor: None,
            },
            JointType::Revolute => JointKind::Revolute {
                limits: j.limits,
                motor: None,
            },
            _ => JointKind::Revolute {
                limits: None,
                motor: None,
            },
        };
        joints.push(ArtifactJoint {
            name: j.name.clone(),
            kind,
            parent,
            child,
            frame1,
            frame2,
            dynamics: JointDynamics {
                damping: j.damping,
                max_effort: j.effort.unwrap_or(f64::INFINITY),
            },
        });
    }
    let _ = file;
    let links = order
        .iter()
        .map(|&l| {
            let b = body_of[l];
            (
                model.links[l].name.clone(),
                b,
                pose[bodies_links[b]].inverse() * pose[l],
            )
        })
        .collect();
    Ok(Prepared {
        src,
        bodies,
        joints,
        visuals,
        driver: None,
        sensors: Vec::new(),
        model: Some(Arc::new(ssx_core::environment::RobotModel {
            urdf: model.urdf,
            links,
        })),
    })
}

fn shape(g: &GeomShape, fit: MeshFit) -> Shape {
    match *g {
        GeomShape::Box(h) => Shape::Box { half_extents: h },
        GeomShape::Sphere(r) => Shape::Sphere { radius: r },
        GeomShape::Cylinder {
            radius,
            half_length,
        } => Shape::Cylinder {
            radius,
            half_length,
        },
        GeomShape::Capsule {
            radius,
            half_length,
        } => Shape::Capsule {
            radius,
            half_length,
        },
        GeomShape::Mesh(ref m) => Shape::Mesh {
            mesh: Arc::clone(&m.mesh),
            fit,
        },
    }
}

/// Principal moments and axes of an inertia tensor (a right-handed frame).
fn principal(tensor: Matrix3<f64>) -> (Vec3, Rotation) {
    let off = tensor[(0, 1)].abs() + tensor[(0, 2)].abs() + tensor[(1, 2)].abs();
    if off <= 1e-12 * tensor.trace().abs().max(1e-30) {
        return (tensor.diagonal(), Rotation::identity());
    }
    let eig = SymmetricEigen::new(tensor);
    let mut axes = eig.eigenvectors;
    if axes.determinant() < 0.0 {
        axes.column_mut(2).neg_mut();
    }
    let rotation = Rotation::from_matrix(&axes);
    (eig.eigenvalues.map(|v| v.max(0.0)), rotation)
}
