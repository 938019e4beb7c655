//! Rays, radius queries and contacts in the plane. Every body is its outline through all
//! heights, so a 3D ray meets it where the ray's shadow on the plane does: at the shadow's
//! distance over the ray's horizontal part. A vertical ray meets nothing (the floor is not a
//! body). The colliders are visited in the order they were made, each culled by its box first:
//! the worlds this engine is for (a task's handful of agents and objects) are small; swarms of
//! thousands run on the kinematic engine.

use rapier2d::prelude::*;
use ssx_core::engine::{BodyId, Contact, RayHit};
use ssx_core::math::{Point3, Vec3};

use crate::convert::{back_v, v};

fn body_of(c: &Collider) -> BodyId {
    BodyId(c.user_data as u32)
}

/// The first body a ray meets (see the module's doc).
pub(crate) fn cast_ray(
    colliders: &ColliderSet,
    origin: Point3,
    direction: Vec3,
    max_distance: f64,
    exclude: &dyn Fn(BodyId) -> bool,
) -> Option<RayHit> {
    let norm = direction.norm();
    let flat = direction.xy().norm();
    if !(norm > 0.0 && norm.is_finite() && max_distance > 0.0) || flat <= 1e-12 * norm {
        return None;
    }
    // Per metre along the 3D ray, its shadow covers `slope` metres of the plane.
    let slope = flat / norm;
    let ray = Ray::new(v(&origin.coords), v(&(direction / flat)));
    let reach = (max_distance * slope) as f32;
    let mut best: Option<(f32, BodyId, Vector)> = None;
    for (_, c) in colliders.iter() {
        let limit = best.map_or(reach, |b| b.0);
        if !c.compute_aabb().intersects_local_ray(&ray, limit) {
            continue;
        }
        let body = body_of(c);
        let Some(hit) = c
            .shape()
            .cast_ray_and_get_normal(c.position(), &ray, limit, true)
        else {
            continue;
        };
        // The nearer wins; at a tie, the lower body (the order of the set is the build's).
        let better = best.is_none_or(|(t, b, _)| {
            hit.time_of_impact < t || (hit.time_of_impact == t && body < b)
        });
        if better && !exclude(body) {
            best = Some((hit.time_of_impact, body, hit.normal));
        }
    }
    best.map(|(t, body, normal)| RayHit {
        body,
        distance: t as f64 / slope,
        normal: back_v(normal),
    })
}

/// Every body with a collider within `radius` of `center`'s shadow, once each, by id.
pub(crate) fn bodies_within(
    colliders: &ColliderSet,
    center: Point3,
    radius: f64,
    out: &mut Vec<BodyId>,
) {
    let start = out.len();
    let p = v(&center.coords);
    let r = radius as f32;
    for (_, c) in colliders.iter() {
        let bounds = c.compute_aabb();
        if bounds.distance_to_local_point(p, true) > r {
            continue;
        }
        if c.shape().distance_to_point(c.position(), p, true) <= r {
            out.push(body_of(c));
        }
    }
    out[start..].sort_unstable();
    let mut tail = out.split_off(start);
    tail.dedup();
    out.extend(tail);
}

/// One entry per body touching `handle`'s body (`body`) after the last step: the force on it
/// (the solver's impulses over the step), at the mean of the touching points, at its height.
pub(crate) fn contacts(
    world: &PhysicsWorld,
    handle: RigidBodyHandle,
    body: BodyId,
    z: f64,
    out: &mut Vec<Contact>,
) {
    let dt = f64::from(world.integration_parameters.dt);
    let start = out.len();
    for &own in world.bodies[handle].colliders() {
        for pair in world.contact_pairs_with(own) {
            if !pair.has_any_active_contact() {
                continue;
            }
            let (mine_first, other) = if pair.collider1 == own {
                (true, pair.collider2)
            } else {
                (false, pair.collider1)
            };
            let (Some(c1), Some(c_other)) = (
                world.colliders.get(pair.collider1),
                world.colliders.get(other),
            ) else {
                continue;
            };
            let other = body_of(c_other);
            if other == body {
                continue;
            }
            // The pair's impulse pushes collider2's body.
            let impulse = back_v(pair.total_impulse());
            let force = if mine_first { -impulse } else { impulse } / dt.max(f64::MIN_POSITIVE);
            let (mut sum, mut n) = (Vec3::zeros(), 0.0);
            for m in pair.manifolds() {
                for p in m.points.iter().filter(|p| p.dist <= 0.0) {
                    sum += back_v(c1.position().transform_point(p.local_p1));
                    n += 1.0;
                }
            }
            let mut point = if n > 0.0 { sum / n } else { sum };
            point.z = z;
            if let Some(c) = out[start..].iter_mut().find(|c| c.other == other) {
                c.force += force;
                continue;
            }
            out.push(Contact {
                other,
                point: Point3::from(point),
                force,
            });
        }
    }
}
