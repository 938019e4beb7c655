//! The kinematic engine against closed forms (stalls at walls, passing under tables, stacking)
//! and its grid against brute force on random worlds.

use rand::{Rng, SeedableRng};
use ssx_core::math::{Point3, Pose, Vec3};
use ssx_core::{
    BodyCommand, BodyId, BodyKind, BodySpec, ColliderSpec, PhysicEngine, RayHit, Shape,
};
use ssx_engine_kinematic::{KinematicEngine, SMALL_WORLD};

mod common;
use common::*;

fn drive(e: &mut KinematicEngine, id: BodyId, v: Vec3, steps: usize) {
    for _ in 0..steps {
        e.apply(&BodyCommand::Velocity {
            body: id,
            linear: v,
            angular: Vec3::zeros(),
        });
        e.step(DT);
    }
}

#[test]
fn a_robot_driving_into_a_wall_stops_at_it_and_reports_the_contact() {
    let mut e = engine();
    // A wall 0.1 m thick whose near face is at x = 2.95.
    let wall = e
        .add_body(&boxed(
            BodyKind::Static,
            [3.0, 0.0, 0.25],
            0.0,
            [0.1, 4.0, 0.5],
            false,
        ))
        .unwrap();
    let r = e.add_body(&robot(0.0, 0.0, 0.0)).unwrap();
    let speed = 0.7;
    drive(&mut e, r, Vec3::new(speed, 0.0, 0.0), 500);
    let s = states(&e, 2)[1];
    let front = s.pose.translation.vector.x + 0.225;
    assert!(
        front <= 2.95 + 1e-9 && front > 2.95 - speed * DT,
        "the front stops within one step's travel of the wall: {front}"
    );
    assert_eq!(s.linvel.x, 0.0, "a stalled body does not move");
    let mut c = Vec::new();
    e.contacts(r, &mut c);
    assert_eq!(c.len(), 1, "{c:?}");
    assert_eq!(c[0].other, wall);
    // The wall takes the robot's 0.7 m/s away in one step: 9 kg × 0.7 / 0.01 s, along -x.
    assert!((c[0].force - Vec3::new(-9.0 * speed / DT, 0.0, 0.0)).norm() < 1e-6);
    assert!((c[0].point.x - 2.95).abs() < 1e-9, "{}", c[0].point);
    let mut w = Vec::new();
    e.contacts(wall, &mut w);
    assert_eq!(w.len(), 1);
    assert_eq!(w[0].other, r);
    // Backing off works at once.
    drive(&mut e, r, Vec3::new(-speed, 0.0, 0.0), 10);
    assert!((states(&e, 2)[1].pose.translation.vector.x - (front - 0.225 - 0.07)).abs() < 1e-9);
}

#[test]
fn a_robot_passes_under_a_high_table_and_not_a_low_one() {
    for (underside, passes) in [(0.3, true), (0.2, false)] {
        let mut e = engine();
        // A tabletop 0.05 m thick over x in [1, 2]; the robot is 0.01 to 0.23 m high.
        e.add_body(&boxed(
            BodyKind::Static,
            [1.5, 0.0, underside + 0.025],
            0.0,
            [1.0, 1.0, 0.05],
            false,
        ))
        .unwrap();
        let r = e.add_body(&robot(0.0, 0.0, 0.0)).unwrap();
        drive(&mut e, r, Vec3::new(1.0, 0.0, 0.0), 300);
        let x = states(&e, 2)[1].pose.translation.vector.x;
        if passes {
            assert!(
                (x - 3.0).abs() < 1e-9,
                "passes under at {underside}: x = {x}"
            );
        } else {
            assert!(
                (x + 0.225 - 1.0).abs() < 0.01 + 1e-9,
                "stops at the tabletop's edge: x = {x}"
            );
        }
        // A ray at the robot's sensor height (0.2 m) goes under the high table only.
        let hit = e.cast_ray(Point3::new(-1.0, 0.5, 0.2), Vec3::x(), 5.0, &|_| false);
        assert_eq!(hit.is_none(), passes, "{hit:?}");
    }
}

#[test]
fn a_box_carried_above_others_passes_over_them() {
    let mut e = engine();
    e.add_body(&boxed(
        BodyKind::Static,
        [1.0, 0.0, 0.1],
        0.0,
        [0.4, 0.4, 0.2],
        false,
    ))
    .unwrap();
    // Held at 0.5 m (a planar body keeps its height): 0.35 to 0.65 m, above the box's 0.2 m.
    let carried = e
        .add_body(&boxed(
            BodyKind::Dynamic,
            [0.0, 0.0, 0.5],
            0.0,
            [0.3, 0.3, 0.3],
            true,
        ))
        .unwrap();
    drive(&mut e, carried, Vec3::x(), 200);
    let p = states(&e, 2)[1].pose.translation.vector;
    assert!((p - Vec3::new(2.0, 0.0, 0.5)).norm() < 1e-9, "{p}");
    // Lowered to 0.3 m (0.15 to 0.45 m), it is stopped by the same box.
    let mut e = engine();
    e.add_body(&boxed(
        BodyKind::Static,
        [1.0, 0.0, 0.1],
        0.0,
        [0.4, 0.4, 0.2],
        false,
    ))
    .unwrap();
    let low = e
        .add_body(&boxed(
            BodyKind::Dynamic,
            [0.0, 0.0, 0.3],
            0.0,
            [0.3, 0.3, 0.3],
            true,
        ))
        .unwrap();
    drive(&mut e, low, Vec3::x(), 200);
    let x = states(&e, 2)[1].pose.translation.vector.x;
    assert!(
        (x + 0.15 - 0.8).abs() <= 0.01 + 1e-9,
        "stopped at the box: {x}"
    );
}

#[test]
fn a_kinematic_body_moves_through_walls_and_stops_robots() {
    let mut e = engine();
    e.add_body(&boxed(
        BodyKind::Static,
        [0.0, 1.0, 0.5],
        0.0,
        [0.1, 1.0, 1.0],
        false,
    ))
    .unwrap();
    // A sliding door panel, moved into the wall beside it (the quickstart's door).
    let door = e
        .add_body(&boxed(
            BodyKind::Kinematic,
            [0.0, 0.0, 0.5],
            0.0,
            [0.08, 1.0, 1.0],
            false,
        ))
        .unwrap();
    e.apply(&BodyCommand::Velocity {
        body: door,
        linear: Vec3::y(),
        angular: Vec3::zeros(),
    });
    for _ in 0..50 {
        e.step(DT);
    }
    assert!((states(&e, 2)[1].pose.translation.vector.y - 0.5).abs() < 1e-9);
    // A robot driving at the panel stops at it.
    e.apply(&BodyCommand::Velocity {
        body: door,
        linear: Vec3::zeros(),
        angular: Vec3::zeros(),
    });
    let r = e.add_body(&robot(-1.0, 0.2, 0.0)).unwrap();
    drive(&mut e, r, Vec3::x(), 200);
    let x = states(&e, 3)[2].pose.translation.vector.x;
    assert!((x + 0.225 + 0.04).abs() <= 0.01 + 1e-9, "{x}");
}

#[test]
fn a_turn_is_kept_when_the_glide_is_refused() {
    let mut e = engine();
    e.add_body(&boxed(
        BodyKind::Static,
        [1.0, 0.0, 0.25],
        0.0,
        [0.1, 4.0, 0.5],
        false,
    ))
    .unwrap();
    // 5 mm from the wall, side on: a 10 mm glide into it is refused, the turn (which widens
    // the footprint by about 1 mm) is kept.
    let r = e
        .add_body(&robot(
            0.95 - 0.19 - 0.005,
            0.0,
            std::f64::consts::FRAC_PI_2,
        ))
        .unwrap();
    e.apply(&BodyCommand::Velocity {
        body: r,
        linear: Vec3::new(1.0, 0.0, 0.0),
        angular: Vec3::new(0.0, 0.0, 0.5),
    });
    e.step(DT);
    let s = states(&e, 2)[1];
    let (_, _, yaw) = s.pose.rotation.euler_angles();
    assert!(
        (yaw - (std::f64::consts::FRAC_PI_2 + 0.005)).abs() < 1e-12,
        "{yaw}"
    );
    assert_eq!(s.linvel.x, 0.0);
}

#[test]
fn bodies_that_start_overlapping_may_separate() {
    let mut e = engine();
    let a = e.add_body(&robot(0.0, 0.0, 0.0)).unwrap();
    let b = e.add_body(&robot(0.2, 0.0, 0.0)).unwrap();
    for _ in 0..100 {
        e.apply(&BodyCommand::Velocity {
            body: a,
            linear: -Vec3::x(),
            angular: Vec3::zeros(),
        });
        e.apply(&BodyCommand::Velocity {
            body: b,
            linear: Vec3::x(),
            angular: Vec3::zeros(),
        });
        e.step(DT);
    }
    let s = states(&e, 2);
    assert!((s[0].pose.translation.vector.x + 1.0).abs() < 1e-9);
    assert!((s[1].pose.translation.vector.x - 1.2).abs() < 1e-9);
}

/// A random world: static boxes and pillars at random headings, planar robots, and kinematic
/// bodies, some flying far outside the first layout.
/// The worlds the queries are checked on: 300 walls and pillars with 200 movers in 40 m (the
/// grid), and 30 with 24 in 8 m (a small world: no grid, every prim offered).
const WORLDS: [World; 2] = [
    World {
        statics: 300,
        movers: 200,
        half: 20.0,
    },
    World {
        statics: 30,
        movers: 24,
        half: 4.0,
    },
];

/// A random world's counts of static and moving bodies (one prim each) and its half-width (m).
#[derive(Clone, Copy)]
struct World {
    statics: usize,
    movers: usize,
    half: f64,
}

impl World {
    /// The bodies' count, the ground's included.
    fn bodies(&self) -> usize {
        1 + self.statics + self.movers
    }
}

/// Each query world's kind is the one meant: the large one over the grid's threshold, the
/// small one under it.
#[test]
fn the_query_worlds_are_one_large_and_one_small() {
    assert!(WORLDS[0].statics + WORLDS[0].movers > SMALL_WORLD);
    assert!(WORLDS[1].statics + WORLDS[1].movers <= SMALL_WORLD);
}

fn random_world(seed: u64, w: World) -> KinematicEngine {
    let mut rng = rand_pcg::Pcg64::seed_from_u64(seed);
    let mut e = engine();
    e.add_body(&BodySpec {
        colliders: vec![ColliderSpec {
            shape: Shape::Plane,
            local_pose: Pose::identity(),
            friction: 0.8,
            restitution: 0.0,
        }],
        ..boxed(BodyKind::Static, [0.0; 3], 0.0, [1.0; 3], false)
    })
    .unwrap();
    let half = w.half;
    let at =
        |rng: &mut rand_pcg::Pcg64| [rng.random_range(-half..half), rng.random_range(-half..half)];
    for _ in 0..w.statics {
        let [x, y] = at(&mut rng);
        let size = [
            rng.random_range(0.05..3.0),
            rng.random_range(0.05..3.0),
            rng.random_range(0.05..1.0),
        ];
        let z = rng.random_range(0.0..1.0);
        let mut spec = boxed(
            BodyKind::Static,
            [x, y, z],
            rng.random_range(-3.2..3.2),
            size,
            false,
        );
        if rng.random_bool(0.3) {
            spec.colliders[0].shape = Shape::Cylinder {
                radius: size[0] / 2.0,
                half_length: size[2] / 2.0,
            };
        }
        e.add_body(&spec).unwrap();
    }
    let mut movers = Vec::new();
    for i in 0..w.movers {
        let [x, y] = at(&mut rng);
        let id = if i % 4 == 0 {
            e.add_body(&boxed(
                BodyKind::Kinematic,
                [x, y, 0.5],
                0.0,
                [0.3, 0.3, 0.3],
                false,
            ))
            .unwrap()
        } else {
            e.add_body(&robot(x, y, rng.random_range(-3.2..3.2)))
                .unwrap()
        };
        let speed = if i % 20 == 0 { 40.0 } else { 1.0 };
        let v = Vec3::new(
            rng.random_range(-1.0..1.0),
            rng.random_range(-1.0..1.0),
            0.0,
        ) * speed;
        movers.push((id, v, rng.random_range(-1.0..1.0)));
    }
    for _ in 0..100 {
        for &(id, v, w) in &movers {
            e.apply(&BodyCommand::Velocity {
                body: id,
                linear: v,
                angular: Vec3::new(0.0, 0.0, w),
            });
        }
        e.step(DT);
    }
    e
}

#[test]
fn rays_and_radius_queries_through_the_grid_agree_with_brute_force() {
    for (seed, w) in [
        (1, WORLDS[0]),
        (2, WORLDS[0]),
        (7, WORLDS[1]),
        (8, WORLDS[1]),
    ] {
        let mut e = random_world(seed, w);
        let mut rng = rand_pcg::Pcg64::seed_from_u64(seed + 100);
        let far = w.half + 5.0;
        let rays: Vec<(Point3, Vec3, f64)> = (0..10_000)
            .map(|_| {
                let o = Point3::new(
                    rng.random_range(-far..far),
                    rng.random_range(-far..far),
                    rng.random_range(0.01..1.5),
                );
                let mut d = Vec3::new(
                    rng.random_range(-1.0..1.0),
                    rng.random_range(-1.0..1.0),
                    rng.random_range(-0.3..0.3),
                );
                if rng.random_bool(0.05) {
                    d = Vec3::new(0.0, 0.0, -1.0);
                }
                // Rays along an axis, which skip the slab cull.
                if rng.random_bool(0.05) {
                    d.x = 0.0;
                } else if rng.random_bool(0.05) {
                    d.y = 0.0;
                }
                (o, d, rng.random_range(0.1..30.0))
            })
            .collect();
        let balls: Vec<(Point3, f64)> = (0..2000)
            .map(|_| {
                (
                    Point3::new(
                        rng.random_range(-far..far),
                        rng.random_range(-far..far),
                        rng.random_range(0.0..2.0),
                    ),
                    rng.random_range(0.05..4.0),
                )
            })
            .collect();
        let skip = |b: BodyId| b.0 % 7 == 3;
        let answer = |e: &KinematicEngine| {
            let hits: Vec<_> = rays
                .iter()
                .map(|(o, d, m)| e.cast_ray(*o, *d, *m, &skip))
                .collect();
            let near: Vec<Vec<BodyId>> = balls
                .iter()
                .map(|(c, r)| {
                    let mut out = Vec::new();
                    e.bodies_within(*c, *r, &mut out);
                    out
                })
                .collect();
            (hits, near)
        };
        let (grid_hits, grid_near) = answer(&e);
        e.drop_index();
        let (brute_hits, brute_near) = answer(&e);
        let hits = grid_hits.iter().filter(|h| h.is_some()).count();
        assert!(
            hits > 2000 && hits < 9900,
            "a world that rays both hit and miss: {hits}"
        );
        assert_eq!(grid_hits, brute_hits, "seed {seed}");
        assert_eq!(grid_near, brute_near, "seed {seed}");
        assert!(grid_near.iter().any(|v| v.len() > 3));
    }
}

/// A ring of rays from one origin (`cast_rays`, as a range finder casts its sweep) finds what
/// each of its rays finds alone, and what brute force finds, to the bit: short rings (cast as
/// one ring query) and long ones (ray by ray), slanted, turned by any angle, with rays along an
/// axis, straight down and on the seam at ±π, rings from inside their own robot (left out, as a
/// ranger's is) and from inside another body; and fans alone (placed by arithmetic: ring.rs
/// `Sorted::fan`), whole or part turns, either way round. The gate for the engine's ring query
/// (ring.rs).
#[test]
fn rings_of_rays_agree_with_single_rays_and_brute_force() {
    for (seed, w) in [
        (3, WORLDS[0]),
        (4, WORLDS[0]),
        (9, WORLDS[1]),
        (10, WORLDS[1]),
    ] {
        let mut e = random_world(seed, w);
        let poses = states(&e, w.bodies());
        let movers = (1 + w.statics) as u32..w.bodies() as u32;
        let far = w.half + 5.0;
        let mut rng = rand_pcg::Pcg64::seed_from_u64(seed + 200);
        let rings: Vec<(Point3, Vec<Vec3>, f64, u32)> = (0..1500)
            .map(|k| {
                // Every third ring from its own robot's centre, the rest from anywhere, inside
                // a wall or a robot or not.
                let own = rng.random_range(movers.clone());
                let o = if k % 3 == 1 {
                    let p = poses[own as usize].pose.translation.vector;
                    Point3::new(p.x, p.y, p.z + rng.random_range(-0.05..0.05))
                } else {
                    Point3::new(
                        rng.random_range(-far..far),
                        rng.random_range(-far..far),
                        rng.random_range(0.01..1.5),
                    )
                };
                let n = rng.random_range(2..40);
                let tilt = if k % 4 == 0 {
                    rng.random_range(-0.3..0.3)
                } else {
                    0.0
                };
                let phase = if k % 2 == 0 {
                    0.0
                } else {
                    rng.random_range(-4.0..4.0)
                };
                // Every third ring a fan alone: a part of a turn every other time, clockwise
                // every fourth time.
                let fan = k % 3 == 2;
                let turn = match (fan, k % 4) {
                    (false, _) => 1.0,
                    (true, 0) => -1.0,
                    (true, 1 | 2) => rng.random_range(0.2..1.0),
                    (true, _) => 1.0,
                };
                let mut dirs: Vec<Vec3> = (0..n)
                    .map(|i| {
                        let a = phase + i as f64 * turn * std::f64::consts::TAU / n as f64;
                        Vec3::new(a.cos(), a.sin(), tilt)
                    })
                    .collect();
                if !fan {
                    // Rays along an axis, on the seam (either side of it) and straight down.
                    dirs.push(Vec3::new(1.0, 0.0, 0.0));
                    dirs.push(Vec3::new(0.0, -2.0, 0.0));
                    dirs.push(Vec3::new(-1.0, 0.0, 0.0));
                    dirs.push(Vec3::new(-1.0, -1e-13, 0.0));
                    dirs.push(Vec3::new(-1.0, 1e-13, 0.0));
                    dirs.push(Vec3::new(0.0, 0.0, -1.0));
                }
                let max = if k % 5 == 0 {
                    rng.random_range(5.0..30.0)
                } else {
                    rng.random_range(0.1..2.5)
                };
                (o, dirs, max, own)
            })
            .collect();
        let answer = |e: &KinematicEngine, batch: bool| -> Vec<Option<RayHit>> {
            let mut all = Vec::new();
            for (o, dirs, max, own) in &rings {
                let skip = |b: BodyId| b.0 == *own || b.0 % 7 == 3;
                if batch {
                    let mut out = vec![None; dirs.len()];
                    e.cast_rays(*o, dirs, *max, &skip, &mut out);
                    all.extend(out);
                } else {
                    all.extend(dirs.iter().map(|d| e.cast_ray(*o, *d, *max, &skip)));
                }
            }
            all
        };
        let (rings_hit, single) = (answer(&e, true), answer(&e, false));
        e.drop_index();
        let brute = answer(&e, false);
        let hits = rings_hit.iter().filter(|h| h.is_some()).count();
        assert!(
            hits > rings_hit.len() / 5 && hits < rings_hit.len() * 9 / 10,
            "rings that both hit and miss: {hits} of {}",
            rings_hit.len()
        );
        assert_eq!(rings_hit, single, "seed {seed}");
        assert_eq!(rings_hit, brute, "seed {seed}");
    }
}

/// A ray sees a body added after a step at once, before the next step files it (the rays'
/// copies of the world are set aside until then), and a robot that has driven off is no longer
/// where its copy was: a wall 3 m ahead, then a box dropped 1 m ahead, then the robot moved
/// out of a ray's way.
#[test]
fn rays_see_bodies_added_between_steps_and_robots_where_they_went() {
    let mut e = engine();
    e.add_body(&boxed(
        BodyKind::Static,
        [3.0, 0.0, 0.5],
        0.0,
        [0.2, 4.0, 1.0],
        false,
    ))
    .unwrap();
    let bot = e.add_body(&robot(0.0, 5.0, 0.0)).unwrap();
    e.step(DT);
    // The body hit and the distance to it, to the nanometre.
    let ahead = |e: &KinematicEngine, y: f64| {
        e.cast_ray(Point3::new(0.0, y, 0.1), Vec3::x(), 10.0, &|_| false)
            .map(|h| (h.body, (h.distance * 1e9).round() / 1e9))
    };
    assert_eq!(ahead(&e, 0.0), Some((BodyId(0), 2.9)));
    let dropped = e
        .add_body(&boxed(
            BodyKind::Static,
            [1.0, 0.0, 0.5],
            0.0,
            [0.2, 0.2, 1.0],
            false,
        ))
        .unwrap();
    assert_eq!(ahead(&e, 0.0), Some((dropped, 0.9)));
    e.step(DT);
    assert_eq!(ahead(&e, 0.0), Some((dropped, 0.9)));
    // The robot (0.45 m long) across the ray at y = 5, then driven 2 m along +y.
    // The ray starts inside it: a hit at 0.
    assert_eq!(ahead(&e, 5.0), Some((bot, 0.0)));
    drive(&mut e, bot, Vec3::new(0.0, 1.0, 0.0), 200);
    assert_eq!(ahead(&e, 5.0), None);
    let moved = states(&e, 3)[bot.index()].pose.translation.vector;
    assert!((moved.y - 7.0).abs() < 1e-9, "{moved}");
    assert_eq!(ahead(&e, 7.0), Some((bot, 0.0)));
}

#[test]
fn stepping_is_repeatable_to_the_bit() {
    let a = states(&random_world(5, WORLDS[0]), WORLDS[0].bodies());
    let b = states(&random_world(5, WORLDS[0]), WORLDS[0].bodies());
    assert_eq!(a, b);
}

/// A small world moves as it would through a grid, to the bit: the grid only chooses which
/// prims a move is tested against, and it never leaves out one that overlaps. 54 bodies in
/// 8 m, crowded, some at 40 m/s, for 300 steps, with and without the grid.
#[test]
fn a_small_world_moves_as_it_would_through_the_grid() {
    let w = WORLDS[1];
    let run = |grid: bool| {
        let mut e = random_world(11, w);
        if grid {
            e.set_small_world(0);
        }
        let mut rng = rand_pcg::Pcg64::seed_from_u64(12);
        let mut trace = Vec::new();
        let mut stalled = 0;
        for _ in 0..300 {
            for b in 1 + w.statics..w.bodies() {
                e.apply(&BodyCommand::Velocity {
                    body: BodyId(b as u32),
                    linear: Vec3::new(
                        rng.random_range(-2.0..2.0),
                        rng.random_range(-2.0..2.0),
                        0.0,
                    ),
                    angular: Vec3::new(0.0, 0.0, rng.random_range(-2.0..2.0)),
                });
            }
            e.step(DT);
            let mut contacts = Vec::new();
            for b in 1 + w.statics..w.bodies() {
                contacts.clear();
                e.contacts(BodyId(b as u32), &mut contacts);
                stalled += usize::from(!contacts.is_empty());
            }
            trace.extend(states(&e, w.bodies()));
        }
        (trace, stalled)
    };
    let (small, stalls) = run(false);
    let (grid, _) = run(true);
    assert!(stalls > 100, "a crowded world: {stalls} stalls");
    assert!(
        small == grid,
        "the small world's moves differ from the grid's"
    );
}

/// Whether two robots' footprints (0.45 × 0.38 m rectangles at these poses) overlap by more
/// than 1 µm: separating axes.
fn robots_overlap(a: &Pose, b: &Pose) -> bool {
    let half = [0.225, 0.19];
    let frame = |p: &Pose| {
        let m = p.rotation.to_rotation_matrix();
        let (c, s) = (m[(0, 0)], m[(1, 0)]);
        [(c, s), (-s, c)]
    };
    let (fa, fb) = (frame(a), frame(b));
    let d = b.translation.vector - a.translation.vector;
    fa.iter().chain(&fb).all(|&(ux, uy)| {
        let reach = |f: &[(f64, f64); 2]| {
            half[0] * (f[0].0 * ux + f[0].1 * uy).abs()
                + half[1] * (f[1].0 * ux + f[1].1 * uy).abs()
        };
        (d.x * ux + d.y * uy).abs() < reach(&fa) + reach(&fb) - 1e-6
    })
}

/// 900 robots packed 0.65 m apart (more than enough for the engine to move them in strips
/// shared among workers) all drive towards the middle, turning, on a pool of 2 workers: no
/// move is let into a space another robot took in the same step, so no two robots ever
/// overlap, and the crowd does jam (most are held up).
#[test]
fn robots_moved_in_strips_on_two_workers_never_overlap() {
    let mut e = engine();
    let mut robots = Vec::new();
    for i in 0..900 {
        let (x, y) = (
            (i % 30) as f64 * 0.65 - 9.425,
            (i / 30) as f64 * 0.65 - 9.425,
        );
        robots.push(e.add_body(&robot(x, y, (i % 5) as f64 * 0.3)).unwrap());
    }
    let pool = ssx_core::WorkerPool::new(2).unwrap();
    let mut held = 0;
    for k in 0..120u32 {
        let s = states(&e, robots.len());
        for (id, st) in robots.iter().zip(&s) {
            let p = st.pose.translation.vector;
            e.apply(&BodyCommand::Velocity {
                body: *id,
                linear: Vec3::new(-p.x, -p.y, 0.0),
                angular: Vec3::new(0.0, 0.0, if (id.0 + k / 20) % 3 == 0 { 2.0 } else { 0.0 }),
            });
        }
        e.step_on(DT, &pool);
        let after = states(&e, robots.len());
        // Grid-bucket the robots (0.6 m cells: two overlapping robots are in neighbouring cells).
        let mut cells: std::collections::HashMap<(i64, i64), Vec<usize>> = Default::default();
        for (i, st) in after.iter().enumerate() {
            let p = st.pose.translation.vector;
            let key = ((p.x / 0.6).floor() as i64, (p.y / 0.6).floor() as i64);
            cells.entry(key).or_default().push(i);
        }
        for (&(cx, cy), members) in &cells {
            for &i in members {
                for dx in -1..=1 {
                    for dy in -1..=1 {
                        for &j in cells.get(&(cx + dx, cy + dy)).into_iter().flatten() {
                            assert!(
                                j <= i || !robots_overlap(&after[i].pose, &after[j].pose),
                                "step {k}: robots {i} and {j} overlap"
                            );
                        }
                    }
                }
            }
        }
        held = after
            .iter()
            .zip(&s)
            .filter(|(a, b)| {
                let moved = (a.pose.translation.vector - b.pose.translation.vector).norm();
                moved < 0.5 * b.pose.translation.vector.xy().norm() * DT
            })
            .count();
    }
    assert!(
        held > 300,
        "only {held} of 900 robots were held up in the last step"
    );
}
