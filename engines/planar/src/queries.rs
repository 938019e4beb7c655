//! Rays, radius queries and contacts in the plane. Every body is its outline through all
//! heights, so a 3D ray meets it where the ray's shadow on the plane does: at the shadow's
//! distance over the ray's horizontal part. A vertical ray meets nothing (the floor is not a
//! body). The colliders' boxes are filed once a step, in the order the colliders were made; a
//! query visits them in that order, each culled by its box first, and a ring of rays gathers
//! the colliders within its reach once: the worlds this engine is for (a task's handful of
//! agents and objects) are small; swarms of thousands run on the kinematic engine.

use rapier2d::prelude::*;
use ssx_core::engine::{BodyId, Contact, RayHit};
use ssx_core::math::{Point3, Vec3};

use crate::convert::{back_v, v};

fn body_of(c: &Collider) -> BodyId {
    BodyId(c.user_data as u32)
}

/// A collider as the queries visit it: its box as of the last step, its body, its handle.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Filed {
    bounds: Aabb,
    body: BodyId,
    handle: ColliderHandle,
}

/// Every collider's box, in the set's order (the build's), after a step.
pub(crate) fn file(colliders: &ColliderSet, out: &mut Vec<Filed>) {
    out.clear();
    out.extend(colliders.iter().map(|(handle, c)| Filed {
        bounds: c.compute_aabb(),
        body: body_of(c),
        handle,
    }));
}

/// A ray's shadow on the plane: the 2D ray and how many metres of plane a metre along the 3D
/// ray covers; None for a ray that cannot meet anything.
fn shadow(origin: &Point3, direction: &Vec3, max_distance: f64) -> Option<(Ray, f64)> {
    let norm = direction.norm();
    let flat = direction.xy().norm();
    if !(norm > 0.0 && norm.is_finite() && max_distance > 0.0) || flat <= 1e-12 * norm {
        return None;
    }
    Some((
        Ray::new(v(&origin.coords), v(&(direction / flat))),
        flat / norm,
    ))
}

/// The first of `candidates` the 2D ray meets within `reach` (plane metres).
fn first_hit(
    colliders: &ColliderSet,
    candidates: &[Filed],
    ray: &Ray,
    reach: f32,
) -> Option<(f32, BodyId, Vector)> {
    let mut best: Option<(f32, BodyId, Vector)> = None;
    for f in candidates {
        let limit = best.map_or(reach, |b| b.0);
        if !f.bounds.intersects_local_ray(ray, limit) {
            continue;
        }
        let c = &colliders[f.handle];
        let Some(hit) = c
            .shape()
            .cast_ray_and_get_normal(c.position(), ray, limit, true)
        else {
            continue;
        };
        // The nearer wins; at a tie, the lower body (the order of the set is the build's).
        let better = best.is_none_or(|(t, b, _)| {
            hit.time_of_impact < t || (hit.time_of_impact == t && f.body < b)
        });
        if better {
            best = Some((hit.time_of_impact, f.body, hit.normal));
        }
    }
    best
}

/// The first body a ray meets (see the module's doc).
pub(crate) fn cast_ray(
    colliders: &ColliderSet,
    filed: &[Filed],
    origin: Point3,
    direction: Vec3,
    max_distance: f64,
    exclude: &dyn Fn(BodyId) -> bool,
) -> Option<RayHit> {
    let mut out = [None];
    cast_rays(
        colliders,
        filed,
        origin,
        &[direction],
        max_distance,
        exclude,
        &mut out,
    );
    out[0]
}

/// Rays from one origin: the colliders within their reach (and not excluded) gathered once,
/// then each ray offered those alone. The same hits as each ray cast alone over every collider.
pub(crate) fn cast_rays(
    colliders: &ColliderSet,
    filed: &[Filed],
    origin: Point3,
    directions: &[Vec3],
    max_distance: f64,
    exclude: &dyn Fn(BodyId) -> bool,
    out: &mut [Option<RayHit>],
) {
    let at = v(&origin.coords);
    // The farthest any ray's shadow reaches: the whole distance for a level ray.
    let reach = max_distance as f32;
    let mut near: smallvec::SmallVec<[Filed; 16]> = smallvec::SmallVec::new();
    let mut last: Option<(BodyId, bool)> = None;
    for f in filed {
        if f.bounds.distance_to_local_point(at, true) > reach {
            continue;
        }
        let skip = match last {
            Some((b, skip)) if b == f.body => skip,
            _ => exclude(f.body),
        };
        last = Some((f.body, skip));
        if !skip {
            near.push(*f);
        }
    }
    for (d, slot) in directions.iter().zip(out.iter_mut()) {
        *slot = shadow(&origin, d, max_distance).and_then(|(ray, slope)| {
            let (t, body, normal) =
                first_hit(colliders, &near, &ray, (max_distance * slope) as f32)?;
            Some(RayHit {
                body,
                distance: t as f64 / slope,
                normal: back_v(normal),
            })
        });
    }
}

/// Every body with a collider within `radius` of `center`'s shadow, once each, by id.
pub(crate) fn bodies_within(
    colliders: &ColliderSet,
    filed: &[Filed],
    center: Point3,
    radius: f64,
    out: &mut Vec<BodyId>,
) {
    let start = out.len();
    let p = v(&center.coords);
    let r = radius as f32;
    for f in filed {
        if f.bounds.distance_to_local_point(p, true) > r {
            continue;
        }
        let c = &colliders[f.handle];
        if c.shape().distance_to_point(c.position(), p, true) <= r {
            out.push(f.body);
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
