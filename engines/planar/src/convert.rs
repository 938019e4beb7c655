//! Between ssx's f64 3D types and rapier2d's f32 plane, and ssx's shapes as their footprints:
//! the only place either conversion happens. The plane is the world's xy plane; a body keeps
//! the height and the tilt it was built with, and turns about z.

use rapier2d::math::{Pose as RPose, Rot2, Vector as RVec};
use rapier2d::prelude::SharedShape;
use ssx_core::engine::Shape;
use ssx_core::math::{Pose, Rotation, Vec3};

/// What a 3D pose keeps in the plane: the heading about z, and the rest of it (height, tilt)
/// that the engine gives back unchanged.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Flat {
    /// The pose in the plane.
    pub(crate) pose: RPose,
    /// Its height (m).
    pub(crate) z: f64,
    /// The rotation left once the heading is taken out: `rotation = Rz(heading) · tilt`.
    pub(crate) tilt: Rotation,
}

/// The heading of a rotation: the angle about z of its x axis seen from above (of its y axis
/// when x points up or down).
pub(crate) fn heading(r: &Rotation) -> f64 {
    let x = r * Vec3::x();
    if x.x.hypot(x.y) > 1e-9 {
        x.y.atan2(x.x)
    } else {
        let y = r * Vec3::y();
        y.y.atan2(y.x) - std::f64::consts::FRAC_PI_2
    }
}

/// A 3D pose in the plane.
pub(crate) fn flat(p: &Pose) -> Flat {
    let yaw = heading(&p.rotation);
    let turn = Rotation::from_axis_angle(&Vec3::z_axis(), yaw);
    let t = p.translation.vector;
    Flat {
        pose: RPose::new(RVec::new(t.x as f32, t.y as f32), yaw as f32),
        z: t.z,
        tilt: turn.inverse() * p.rotation,
    }
}

/// The 3D pose of a body at `pose` in the plane, with the height and tilt it was built with.
pub(crate) fn back_pose(pose: &RPose, z: f64, tilt: &Rotation) -> Pose {
    let turn = Rotation::from_axis_angle(&Vec3::z_axis(), pose.rotation.angle() as f64);
    Pose::from_parts(
        ssx_core::math::nalgebra::Translation3::new(
            pose.translation.x as f64,
            pose.translation.y as f64,
            z,
        ),
        turn * tilt,
    )
}

/// A vector in the plane (its z dropped).
pub(crate) fn v(x: &Vec3) -> RVec {
    RVec::new(x.x as f32, x.y as f32)
}

/// A plane vector in 3D (z = 0).
pub(crate) fn back_v(x: RVec) -> Vec3 {
    Vec3::new(x.x as f64, x.y as f64, 0.0)
}

/// A rotation in the plane by `angle` (rad).
pub(crate) fn rot(angle: f64) -> Rot2 {
    Rot2::new(angle as f32)
}

/// A collider's footprint: its outline in the plane, in the collider frame's plane pose, and
/// the area over which its volume spreads (so that a density in kg/m³ gives the 3D mass:
/// the footprint's areal density is the density times the volume over the area). `None` for a
/// plane: the floor, which the plane world has everywhere.
///
/// A box turned about z alone keeps its rectangle; a sphere, an upright cylinder or capsule
/// becomes a disc; a mesh the convex hull of its vertices seen from above; anything tilted
/// off the vertical the rectangle of its world-aligned bounding box, as in the kinematic
/// engine.
pub(crate) fn footprint(
    shape: &Shape,
    local: &Pose,
) -> Result<Option<(SharedShape, RPose)>, String> {
    let f = |x: f64| x as f32;
    let upright = (local.rotation * Vec3::z()).z.abs() > 1.0 - 1e-9;
    let at = flat(local).pose;
    let shape = match *shape {
        Shape::Plane => return Ok(None),
        Shape::Box { half_extents: h } if upright => SharedShape::cuboid(f(h.x), f(h.y)),
        Shape::Sphere { radius } => SharedShape::ball(f(radius)),
        Shape::Cylinder { radius, .. } | Shape::Capsule { radius, .. } if upright => {
            SharedShape::ball(f(radius))
        }
        Shape::Mesh { ref mesh, .. } => {
            let points: Vec<RVec> = mesh
                .vertices
                .iter()
                .map(|p| {
                    let q = local.rotation * Vec3::new(p[0] as f64, p[1] as f64, p[2] as f64);
                    let q =
                        Rotation::from_axis_angle(&Vec3::z_axis(), -heading(&local.rotation)) * q;
                    RVec::new(q.x as f32, q.y as f32)
                })
                .collect();
            SharedShape::convex_hull(&points).ok_or_else(|| {
                format!(
                    "mesh '{}' has no outline seen from above (its points are on a line or too few)",
                    mesh.source
                )
            })?
        }
        _ => {
            // Tilted: the rectangle of its box turned into the world's axes, placed at the
            // collider's origin without a heading.
            let Some(h) = shape.half_extents() else {
                return Ok(None);
            };
            let reach = local.rotation.to_rotation_matrix().into_inner().abs() * h;
            let t = local.translation.vector;
            return Ok(Some((
                SharedShape::cuboid(f(reach.x), f(reach.y)),
                RPose::translation(f(t.x), f(t.y)),
            )));
        }
    };
    Ok(Some((shape, at)))
}

/// The area of a footprint (m²).
pub(crate) fn area(shape: &SharedShape) -> f64 {
    shape.mass_properties(1.0).mass() as f64
}
