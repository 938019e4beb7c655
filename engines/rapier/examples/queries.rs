//! Times the engine's ray and radius queries on the formation layout (2000 boxes 2 m apart at
//! 1.5 m, a ground plane): `cargo run --release -p ssx-engine-rapier --example queries`.
//! BUILDS=n steps and rebuilds the query index n times (default 5), ROUNDS=n casts 16,000 rays
//! and 2000 balls of 3 m n times (default 200); each line is one round.
use ssx_core::engine::*;
use ssx_core::math::{Point3, Pose, Vec3};
use ssx_engine_rapier::RapierEngine;
use std::time::Instant;

fn main() {
    let mut e = RapierEngine::new(&EngineConfig {
        gravity: Vec3::zeros(),
        timestep: 0.02,
    });
    let plane = BodySpec {
        kind: BodyKind::Static,
        pose: Pose::identity(),
        mass: MassSpec::Density(1.0),
        colliders: vec![ColliderSpec {
            shape: Shape::Plane,
            local_pose: Pose::identity(),
            friction: 0.5,
            restitution: 0.0,
        }],
        linear_damping: 0.0,
        angular_damping: 0.0,
        planar: false,
        group: 0,
    };
    e.add_body(&plane).unwrap();
    let mut pos = Vec::new();
    for i in 0..2000 {
        let p = Vec3::new(
            (i % 45) as f64 * 2.0 - 44.0,
            (i / 45) as f64 * 2.0 - 44.0,
            1.5,
        );
        let mut b = plane.clone();
        b.kind = BodyKind::Dynamic;
        b.pose = Pose::new(p, Vec3::new(0.0, 0.0, 0.1 * i as f64));
        b.colliders[0].shape = Shape::Box {
            half_extents: Vec3::new(0.15, 0.15, 0.03),
        };
        e.add_body(&b).unwrap();
        pos.push(p);
    }
    e.step(0.02);
    let n: usize = std::env::var("BUILDS").map_or(5, |s| s.parse().unwrap());
    for _ in 0..n {
        let t = Instant::now();
        e.step(0.02);
        let s = t.elapsed();
        let t = Instant::now();
        e.cast_ray(Point3::new(0.0, 0.0, 5.0), Vec3::x(), 1.0, &|_| false);
        println!("step {:?}, first query (index build) {:?}", s, t.elapsed());
    }
    for round in 0..std::env::var("ROUNDS").map_or(200, |s| s.parse().unwrap()) {
        let t = Instant::now();
        let mut hits = 0;
        for (k, p) in pos.iter().enumerate() {
            let me = BodyId(k as u32 + 1);
            for r in 0..8 {
                let a = r as f64 * std::f64::consts::TAU / 8.0;
                let d = Vec3::new(a.cos(), a.sin(), 0.0);
                if e.cast_ray(Point3::from(*p), d, 2.0, &|b| b == me).is_some() {
                    hits += 1;
                }
            }
        }
        let rays = t.elapsed().as_secs_f64() * 1e9 / 16000.0;
        let t = Instant::now();
        let mut near = Vec::new();
        let mut n = 0;
        for p in &pos {
            near.clear();
            e.bodies_within(Point3::from(*p), 3.0, &mut near);
            n += near.len();
        }
        let balls = t.elapsed().as_secs_f64() * 1e9 / 2000.0;
        println!("round {round}: {rays:.0} ns/ray ({hits} hits), {balls:.0} ns/ball ({n} found)");
    }
}
