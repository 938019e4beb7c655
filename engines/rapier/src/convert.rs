//! Between ssx's f64 nalgebra types and Rapier's f32 glam types, and ssx's shapes as Rapier's:
//! the only place either conversion happens.

use rapier3d::math::{Pose as RPose, Rot3, Vec3 as RVec};
use rapier3d::prelude::*;
use ssx_core::engine::{Mesh, MeshFit, Shape};
use ssx_core::math::{Pose, Rotation, Vec3};

pub(crate) fn v(x: &Vec3) -> RVec {
    RVec::new(x.x as f32, x.y as f32, x.z as f32)
}

pub(crate) fn pose(p: &Pose) -> RPose {
    let q = p.rotation.quaternion();
    RPose::from_parts(
        v(&p.translation.vector),
        Rot3::from_xyzw(q.i as f32, q.j as f32, q.k as f32, q.w as f32).normalize(),
    )
}

pub(crate) fn back_v(x: RVec) -> Vec3 {
    Vec3::new(x.x as f64, x.y as f64, x.z as f64)
}

pub(crate) fn back_pose(p: &RPose) -> Pose {
    let r = p.rotation;
    Pose::from_parts(
        ssx_core::math::nalgebra::Translation3::from(back_v(p.translation)),
        Rotation::new_normalize(ssx_core::math::nalgebra::Quaternion::new(
            r.w as f64, r.x as f64, r.y as f64, r.z as f64,
        )),
    )
}

/// A shape as Rapier makes it, and its pose in the collider (Rapier's cylinder runs along
/// y, ours along z). Only a mesh can be refused (a hull of flat or too few points, a triangle
/// mesh Rapier cannot index).
pub(crate) fn shape(shape: &Shape) -> Result<(SharedShape, RPose), String> {
    let f = |x: f64| x as f32;
    Ok(match *shape {
        Shape::Box { half_extents: h } => {
            (SharedShape::cuboid(f(h.x), f(h.y), f(h.z)), RPose::IDENTITY)
        }
        Shape::Sphere { radius } => (SharedShape::ball(f(radius)), RPose::IDENTITY),
        Shape::Capsule {
            radius,
            half_length,
        } => (
            SharedShape::capsule_z(f(half_length), f(radius)),
            RPose::IDENTITY,
        ),
        // Rapier's cylinder runs along y; turn it onto z.
        Shape::Cylinder {
            radius,
            half_length,
        } => (
            SharedShape::cylinder(f(half_length), f(radius)),
            RPose::from_rotation(Rot3::from_rotation_x(std::f32::consts::FRAC_PI_2)),
        ),
        Shape::Plane => (SharedShape::halfspace(RVec::Z), RPose::IDENTITY),
        Shape::Mesh { ref mesh, fit } => (mesh_shape(mesh, fit)?, RPose::IDENTITY),
    })
}

fn mesh_shape(mesh: &Mesh, fit: MeshFit) -> Result<SharedShape, String> {
    let points: Vec<RVec> = mesh
        .vertices
        .iter()
        .map(|p| RVec::new(p[0], p[1], p[2]))
        .collect();
    match fit {
        MeshFit::TriMesh => SharedShape::trimesh(points, mesh.triangles.clone())
            .map_err(|e| format!("mesh '{}' as triangles: {e}", mesh.source)),
        MeshFit::ConvexHull => SharedShape::convex_hull(&points).ok_or_else(|| {
            format!(
                "mesh '{}' has no convex hull (its points are flat or too few)",
                mesh.source
            )
        }),
        MeshFit::ConvexDecomposition => {
            Ok(SharedShape::convex_decomposition(&points, &mesh.triangles))
        }
    }
}
