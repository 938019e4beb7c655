//! Host calls that cast rays: one, or many from one origin (a range ring, a camera).

use crate::engine::RayHit;
use crate::math::{Point3, Vec3};
use crate::world::World;
use ssx_sdk::abi::*;

use super::frame::*;
use super::refusal::Refusal;

pub(super) unsafe extern "C" fn host_ray_cast(
    ctx: SsxCtx,
    origin: *const f64,
    direction: *const f64,
    max_distance: f64,
    ignore_own: u32,
    hit: *mut SsxRayHit,
) -> SsxStatus {
    host(ctx, |f| {
        let (o, d) = (vec3(origin)?, vec3(direction)?);
        if !(max_distance.is_finite() && max_distance > 0.0) || d.norm() == 0.0 {
            return Err(Refusal::InvalidArgument);
        }
        let ignore = if ignore_own != 0 { f.artifact } else { None };
        let result = f.world.cast_ray(Point3::from(o), d, max_distance, ignore);
        *out(hit)? = ray_hit(f.world, result);
        Ok(())
    })
}

/// A ray's hit as plugins see it.
pub(super) fn ray_hit(world: &World<'_>, hit: Option<RayHit>) -> SsxRayHit {
    match hit {
        None => SsxRayHit::default(),
        Some(h) => SsxRayHit {
            hit: 1,
            artifact: world.owner(h.body).0,
            body: world.local_index(h.body),
            distance: h.distance,
            normal: [h.normal.x, h.normal.y, h.normal.z],
        },
    }
}

pub(super) unsafe extern "C" fn host_ray_cast_many(
    ctx: SsxCtx,
    origin: *const f64,
    directions: *const f64,
    count: usize,
    max_distance: f64,
    ignore_own: u32,
    hits: *mut SsxRayHit,
) -> SsxStatus {
    // Per-thread scratch lists: no allocation once they have grown to the largest batch.
    thread_local! {
        static RAYS: std::cell::RefCell<(Vec<Vec3>, Vec<Option<RayHit>>)> =
            const { std::cell::RefCell::new((Vec::new(), Vec::new())) };
    }
    host(ctx, |f| {
        let o = vec3(origin)?;
        if !(max_distance.is_finite() && max_distance > 0.0)
            || count > SSX_MAX_RAYS
            || (count > 0 && (directions.is_null() || hits.is_null()))
        {
            return Err(Refusal::InvalidArgument);
        }
        // SAFETY: `3 × count` doubles at `directions` per the ABI, null checked above.
        let d = unsafe { slice(directions, 3 * count) };
        let usable =
            |c: &[f64]| c.iter().all(|x| x.is_finite()) && Vec3::new(c[0], c[1], c[2]).norm() > 0.0;
        if !d.chunks_exact(3).all(usable) {
            return Err(Refusal::InvalidArgument);
        }
        RAYS.with(|slot| {
            let (dirs, found) = &mut *slot.borrow_mut();
            dirs.clear();
            dirs.extend(d.chunks_exact(3).map(|c| Vec3::new(c[0], c[1], c[2])));
            found.clear();
            found.resize(count, None);
            let ignore = if ignore_own != 0 { f.artifact } else { None };
            f.world
                .cast_rays(Point3::from(o), dirs, max_distance, ignore, found);
            // SAFETY: `count` records at `hits` per the ABI, null checked above.
            let out = unsafe { slice_mut(hits, count) };
            for (slot, h) in out.iter_mut().zip(found.iter()) {
                *slot = ray_hit(f.world, *h);
            }
        });
        Ok(())
    })
}
