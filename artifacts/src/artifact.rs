//! An artifact description file, checked and resolved in its own frame: bodies, colliders,
//! mass, joints, visuals, driver and sensors.

use std::collections::BTreeMap;
use std::rc::Rc;

use ssx_core::environment::{ArtifactJoint, ArtifactVisual};
use ssx_core::math::{Pose, Vec3};
use ssx_core::plugin::PluginKind;
use ssx_core::{
    BodyKind, BodySpec, ColliderSpec, JointDynamics, JointKind, MassSpec, PluginSpec, SensorSpec,
    Shape, SsxError,
};

use crate::DEFAULT_DENSITY;
use crate::loader::Loader;
use crate::loader::xyz_rpy;
use crate::prepared::Prepared;
use crate::schema::*;
use crate::source::Source;

impl Loader<'_> {
    pub(crate) fn prepare(&self, src: Rc<Source>, a: &ArtifactFile) -> Result<Prepared, SsxError> {
        if let Some(m) = &a.model {
            return self.prepare_from_model(src, a, m);
        }
        let mut index: BTreeMap<&str, usize> = BTreeMap::new();
        for (i, b) in a.bodies.iter().enumerate() {
            if let Some(first) = index.insert(&b.name, i) {
                return Err(src.err(
                    &format!("bodies[{i}].name"),
                    format!(
                        "duplicate body name '{}' (first at bodies[{first}])",
                        b.name
                    ),
                ));
            }
        }
        let known = || {
            a.bodies
                .iter()
                .map(|b| b.name.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        };
        let lookup = |name: &str, at: String| {
            index.get(name).copied().ok_or_else(|| {
                src.err(
                    &at,
                    format!(
                        "no body named '{name}' in this artifact (bodies: {})",
                        known()
                    ),
                )
            })
        };
        let parents: Vec<Option<usize>> = a
            .bodies
            .iter()
            .enumerate()
            .map(|(i, b)| {
                b.parent
                    .as_deref()
                    .map(|p| lookup(p, format!("bodies[{i}].parent")))
                    .transpose()
            })
            .collect::<Result<_, _>>()?;

        // Each body's pose in the artifact frame: its parent's pose times its own.
        let mut rel: Vec<Option<Pose>> = vec![None; a.bodies.len()];
        for i in 0..a.bodies.len() {
            let mut chain = vec![i];
            while let Some(p) = parents[*chain.last().unwrap()] {
                if rel[p].is_some() {
                    break;
                }
                if chain.contains(&p) {
                    return Err(src.err(
                        &format!("bodies[{i}].parent"),
                        format!(
                            "the parent chain of body '{}' loops back on itself",
                            a.bodies[i].name
                        ),
                    ));
                }
                chain.push(p);
            }
            for &k in chain.iter().rev() {
                if rel[k].is_none() {
                    let own = xyz_rpy(&a.bodies[k].pose);
                    rel[k] = Some(match parents[k] {
                        Some(p) => rel[p].expect("parents resolved first") * own,
                        None => own,
                    });
                }
            }
        }
        let rel: Vec<Pose> = rel
            .into_iter()
            .map(|p| p.expect("every body resolved"))
            .collect();

        let mut bodies = Vec::with_capacity(a.bodies.len());
        let mut visuals = Vec::new();
        for (i, b) in a.bodies.iter().enumerate() {
            let at = format!("bodies[{i}]");
            let kind = match b.kind {
                KindFile::Dynamic => BodyKind::Dynamic,
                KindFile::Static => BodyKind::Static,
                KindFile::Kinematic => BodyKind::Kinematic,
            };
            let mut colliders = Vec::with_capacity(b.colliders.len());
            for (j, c) in b.colliders.iter().enumerate() {
                let shape = shape_of(&src, &format!("{at}.colliders[{j}].shape"), &c.shape, kind)?;
                colliders.push(ColliderSpec {
                    shape,
                    local_pose: xyz_rpy(&c.pose),
                    friction: c.friction.map_or(0.5, |f| f.0),
                    restitution: c.restitution.map_or(0.0, |r| r.0),
                });
            }
            let volume: f64 = colliders
                .iter()
                .map(|c| c.shape.volume())
                .filter(|v| v.is_finite())
                .sum();
            let mass = match (kind, b.mass, b.density, b.inertia) {
                (BodyKind::Dynamic, Some(_), Some(_), _) => {
                    return Err(src.err(
                        &format!("{at}.density"),
                        "give either 'mass' or 'density', not both",
                    ));
                }
                (BodyKind::Dynamic, None, _, Some(_)) => {
                    return Err(src.err(&format!("{at}.inertia"), "'inertia' needs 'mass'"));
                }
                (BodyKind::Dynamic, Some(m), None, Some(inertia)) => MassSpec::Explicit {
                    mass: m.0,
                    inertia: Vec3::new(inertia[0].0, inertia[1].0, inertia[2].0),
                },
                (BodyKind::Dynamic, Some(m), None, None) => {
                    if volume <= 0.0 {
                        return Err(src.err(&format!("{at}.mass"), "'mass' is spread over the colliders by volume: give a collider with a volume, or 'inertia'"));
                    }
                    MassSpec::Mass(m.0)
                }
                (BodyKind::Dynamic, None, d, None) => {
                    if volume <= 0.0 {
                        return Err(src.err(&at, format!("dynamic body '{}' has no mass: give it a collider with a volume, or 'mass' and 'inertia'", b.name)));
                    }
                    let density = d.map_or(DEFAULT_DENSITY, |d| d.0);
                    let mass = density * volume;
                    if !(Mass::MIN..=Mass::MAX).contains(&mass) {
                        return Err(src.err(&at, format!("body '{}' would weigh {mass:.3e} kg (density x volume); masses run from {} to {} kg", b.name, ssx_sdk::number(Mass::MIN), ssx_sdk::number(Mass::MAX))));
                    }
                    MassSpec::Density(density)
                }
                (_, m, d, i) => {
                    let field = if m.is_some() {
                        "mass"
                    } else if d.is_some() {
                        "density"
                    } else if i.is_some() {
                        "inertia"
                    } else {
                        ""
                    };
                    if !field.is_empty() {
                        return Err(src.err(
                            &format!("{at}.{field}"),
                            format!(
                                "a {} body has no mass: remove '{field}'",
                                match kind {
                                    BodyKind::Static => "static",
                                    _ => "kinematic",
                                }
                            ),
                        ));
                    }
                    MassSpec::Density(0.0)
                }
            };
            let color = match b.color {
                None => ssx_core::world::DEFAULT_BODY_COLOR,
                Some(c) => {
                    if let Some(k) = c.iter().position(|x| x.0 > 1.0) {
                        return Err(src.err(
                            &format!("{at}.color[{k}]"),
                            format!("colour components run from 0 to 1, got {}", c[k].0),
                        ));
                    }
                    c.map(|x| x.0 as f32)
                }
            };
            for c in &colliders {
                visuals.push(ArtifactVisual {
                    body: i,
                    local_pose: c.local_pose,
                    shape: c.shape.clone(),
                    color,
                });
            }
            for (j, v) in b.visuals.iter().enumerate() {
                let shape = shape_of(&src, &format!("{at}.visuals[{j}].shape"), &v.shape, kind)?;
                visuals.push(ArtifactVisual {
                    body: i,
                    local_pose: xyz_rpy(&v.pose),
                    shape,
                    color,
                });
            }
            bodies.push((
                b.name.clone(),
                BodySpec {
                    kind,
                    pose: rel[i],
                    mass,
                    colliders,
                    linear_damping: b.linear_damping.map_or(0.0, |d| d.0),
                    angular_damping: b.angular_damping.map_or(0.0, |d| d.0),
                    planar: b.planar,
                    group: 0,
                },
            ));
        }

        let mut joints = Vec::new();
        let mut joint_names: BTreeMap<&str, usize> = BTreeMap::new();
        for (i, j) in a.joints.iter().enumerate() {
            let at = format!("joints[{i}]");
            if let Some(first) = joint_names.insert(&j.name, i) {
                return Err(src.err(
                    &format!("{at}.name"),
                    format!(
                        "duplicate joint name '{}' (first at joints[{first}])",
                        j.name
                    ),
                ));
            }
            let parent = lookup(&j.parent, format!("{at}.parent"))?;
            let child = lookup(&j.child, format!("{at}.child"))?;
            if parent == child {
                return Err(src.err(
                    &format!("{at}.child"),
                    format!("a joint links two different bodies; both are '{}'", j.child),
                ));
            }
            let (kind, axis) = match j.kind {
                JointKindFile::Fixed => {
                    if j.axis.is_some() || j.limits.is_some() || j.motor.is_some() {
                        return Err(src.err(
                            &at,
                            "only revolute joints take 'axis', 'limits' and 'motor'",
                        ));
                    }
                    (JointKind::Fixed, Vec3::x())
                }
                JointKindFile::Revolute => {
                    let axis = j
                        .axis
                        .ok_or_else(|| src.err(&at, "a revolute joint needs 'axis'"))?;
                    let axis = Vec3::new(axis[0].0, axis[1].0, axis[2].0);
                    if axis.norm() < 1e-9 {
                        return Err(src.err(&format!("{at}.axis"), "the axis must not be zero"));
                    }
                    let limits = match j.limits {
                        Some([lo, hi]) if lo.0 >= hi.0 => {
                            return Err(src.err(
                                &format!("{at}.limits"),
                                format!("lower limit {} must be below upper limit {}", lo.0, hi.0),
                            ));
                        }
                        l => l.map(|[lo, hi]| [lo.0, hi.0]),
                    };
                    (
                        JointKind::Revolute {
                            limits,
                            motor: j.motor.map(|m| [m.stiffness.0, m.damping.0]),
                        },
                        axis.normalize(),
                    )
                }
            };
            // The joint frame's x axis is the rotation axis; the child's frame follows from the
            // bodies' initial relative pose.
            let turn = ssx_core::math::x_onto(&axis);
            let frame1 = Pose::from_parts(
                Vec3::new(j.anchor[0].0, j.anchor[1].0, j.anchor[2].0).into(),
                turn,
            );
            let frame2 = rel[child].inverse() * rel[parent] * frame1;
            joints.push(ArtifactJoint {
                name: j.name.clone(),
                kind,
                parent,
                child,
                frame1,
                frame2,
                dynamics: JointDynamics::default(),
            });
        }
        // A child with no joint to its parent is welded to it.
        for (i, p) in parents.iter().enumerate() {
            let Some(p) = *p else { continue };
            let linked = joints
                .iter()
                .any(|j| (j.parent, j.child) == (p, i) || (j.parent, j.child) == (i, p));
            if !linked {
                joints.push(ArtifactJoint {
                    name: format!("weld:{}", a.bodies[i].name),
                    kind: JointKind::Fixed,
                    parent: p,
                    child: i,
                    frame1: rel[p].inverse() * rel[i],
                    frame2: Pose::identity(),
                    dynamics: JointDynamics::default(),
                });
            }
        }

        let (driver, sensors) = self.plugins(&src, a)?;
        Ok(Prepared {
            src,
            bodies,
            joints,
            visuals,
            driver,
            sensors,
            model: None,
        })
    }

    /// An artifact made of a robot model file, with the driver and sensors this file gives it.
    fn prepare_from_model(
        &self,
        src: Rc<Source>,
        a: &ArtifactFile,
        m: &ModelFile,
    ) -> Result<Prepared, SsxError> {
        if !a.bodies.is_empty() || !a.joints.is_empty() {
            return Err(src.err(
                if a.bodies.is_empty() { "joints" } else { "bodies" },
                "an artifact made of a 'model' takes its bodies and joints from it: remove 'bodies' and 'joints'",
            ));
        }
        let options = crate::model::ModelOptions {
            meshes: m.collision_meshes.map(|f| match f {
                MeshFitFile::Trimesh => ssx_core::MeshFit::TriMesh,
                MeshFitFile::ConvexHull => ssx_core::MeshFit::ConvexHull,
                MeshFitFile::ConvexDecomposition => ssx_core::MeshFit::ConvexDecomposition,
            }),
            fixed: m.base.map(|b| b == BaseFile::Fixed),
            packages: m.packages.iter().map(|p| src.resolve(p)).collect(),
        };
        let path = src.resolve(&m.file);
        let mut prepared = self.prepare_model(&path, (&src, "model.file"), &options)?;
        let (driver, sensors) = self.plugins(&src, a)?;
        prepared.driver = driver;
        prepared.sensors = sensors;
        prepared.src = src;
        Ok(prepared)
    }

    /// The artifact's driver and sensors, checked.
    fn plugins(
        &self,
        src: &Rc<Source>,
        a: &ArtifactFile,
    ) -> Result<(Option<PluginSpec>, Vec<SensorSpec>), SsxError> {
        let src = src.as_ref();
        let driver = match &a.driver {
            None => None,
            Some(d) => {
                let library = self.check_plugin(
                    src,
                    "driver",
                    PluginKind::Driver,
                    &d.plugin,
                    d.library.as_deref(),
                )?;
                Some(PluginSpec {
                    plugin: d.plugin.as_str().into(),
                    library: library.map(Into::into),
                    descriptor: std::sync::Arc::new(d.descriptor.clone()),
                    origin: Some(src.origin("driver.descriptor").into()),
                })
            }
        };
        let mut sensors = Vec::with_capacity(a.sensors.len());
        for (i, s) in a.sensors.iter().enumerate() {
            let at = format!("sensors[{i}]");
            if let Some(first) = a.sensors[..i].iter().position(|o| o.name == s.name) {
                return Err(src.err(
                    &format!("{at}.name"),
                    format!(
                        "duplicate sensor name '{}' (first at sensors[{first}])",
                        s.name
                    ),
                ));
            }
            let library = self.check_plugin(
                src,
                &at,
                PluginKind::Sensor,
                &s.plugin,
                s.library.as_deref(),
            )?;
            sensors.push(SensorSpec {
                name: s.name.clone(),
                plugin: PluginSpec {
                    plugin: s.plugin.as_str().into(),
                    library: library.map(Into::into),
                    descriptor: std::sync::Arc::new(s.descriptor.clone()),
                    origin: Some(src.origin(&format!("{at}.descriptor")).into()),
                },
            });
        }
        Ok((driver, sensors))
    }
}

/// A shape of a scene file as the engines take it (`at`: where it stands, for the error).
fn shape_of(src: &Source, at: &str, shape: &ShapeFile, kind: BodyKind) -> Result<Shape, SsxError> {
    Ok(match *shape {
        ShapeFile::Box { size } => Shape::Box {
            half_extents: Vec3::new(size[0].0, size[1].0, size[2].0) / 2.0,
        },
        ShapeFile::Sphere { radius } => Shape::Sphere { radius: radius.0 },
        ShapeFile::Capsule { radius, length } => Shape::Capsule {
            radius: radius.0,
            half_length: length.0 / 2.0,
        },
        ShapeFile::Cylinder { radius, length } => Shape::Cylinder {
            radius: radius.0,
            half_length: length.0 / 2.0,
        },
        ShapeFile::Plane {} => {
            if kind != BodyKind::Static {
                return Err(src.err(at, "a plane is infinite: only static bodies may have one"));
            }
            Shape::Plane
        }
    })
}
