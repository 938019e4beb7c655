//! What an engine without heights (the planar engine) answers instead of falling and stacking:
//! rays at any height, the floor's friction in a top view, gravity in the plane in a side view,
//! a bar turning about its pin, and carrying in the plane. Asked of every engine that declares
//! `heights: false`.

use super::*;

/// The engines whose world is a plane.
fn planar_engines(gravity: Vec3) -> Vec<(String, Box<dyn PhysicEngine>)> {
    let found: Vec<_> = engines(gravity)
        .into_iter()
        .filter(|(_, e)| !e.capabilities().heights)
        .collect();
    assert!(!found.is_empty(), "the planar engine is registered");
    found
}

#[test]
fn rays_meet_outlines_at_any_height_and_none_goes_down() {
    for (name, mut e) in planar_engines(Vec3::zeros()) {
        e.add_body(&ground()).unwrap();
        let low = e
            .add_body(&body(
                BodyKind::Static,
                [5.0, 0.0, 0.05],
                Shape::Box {
                    half_extents: Vec3::new(0.5, 0.5, 0.05),
                },
            ))
            .unwrap();
        e.step(DT);
        let none = |_: BodyId| false;
        for z in [0.05, 0.2, 3.0] {
            let hit = e
                .cast_ray(Point3::new(0.0, 0.0, z), Vec3::x(), 10.0, &none)
                .unwrap();
            assert_eq!(hit.body, low, "{name}");
            assert!(
                (hit.distance - 4.5).abs() < 1e-5,
                "{name}: {}",
                hit.distance
            );
            assert!((hit.normal + Vec3::x()).norm() < 1e-5, "{name}");
        }
        // A ray 60° down travels twice as far along itself as its shadow on the plane does.
        let slanted = Vec3::new(0.5, 0.0, -(3.0f64.sqrt()) / 2.0);
        let hit = e
            .cast_ray(Point3::new(0.0, 0.0, 9.0), slanted, 10.0, &none)
            .unwrap();
        assert!(
            (hit.distance - 9.0).abs() < 1e-4,
            "{name}: {}",
            hit.distance
        );
        assert!(
            e.cast_ray(Point3::new(0.0, 0.0, 9.0), slanted, 8.9, &none)
                .is_none()
        );
        // The floor is not a body: straight down meets nothing, even over the box.
        assert!(
            e.cast_ray(Point3::new(5.0, 0.0, 1.0), -Vec3::z(), 10.0, &none)
                .is_none(),
            "{name}"
        );
        let skip = |b: BodyId| b == low;
        assert!(
            e.cast_ray(Point3::new(0.0, 0.0, 0.05), Vec3::x(), 10.0, &skip)
                .is_none()
        );
    }
}

/// A box sent sliding at 2 m/s on a floor of friction 0.5 under 9.81 m/s² stops after
/// v²/(2μg) = 0.408 m, in v/(μg) = 0.408 s (kinetic Coulomb friction), and stays.
#[test]
fn a_pushed_box_slides_and_stops_with_friction() {
    for (name, mut e) in planar_engines(Vec3::new(0.0, 0.0, -9.81)) {
        let b = e
            .add_body(&body(BodyKind::Dynamic, [0.0, 0.0, 0.1], cube(0.1)))
            .unwrap();
        e.apply(&BodyCommand::Velocity {
            body: b,
            linear: Vec3::new(2.0, 0.0, 0.0),
            angular: Vec3::zeros(),
        });
        let mut stopped_at = None;
        for k in 1..=100 {
            e.step(DT);
            if stopped_at.is_none() && state(&*e, b, 1).linvel.norm() == 0.0 {
                stopped_at = Some(k as f64 * DT);
            }
        }
        let (mu, g, v) = (0.5, 9.81, 2.0);
        let s = state(&*e, b, 1);
        let x = s.pose.translation.x;
        let want = v * v / (2.0 * mu * g);
        // Within 1% (the engine's step takes μ·g·τ off the speed before it moves).
        assert!(
            (x - want).abs() < 0.01 * want,
            "{name}: stopped at {x}, not {want}"
        );
        let t = stopped_at.expect("it stops");
        assert!((t - v / (mu * g)).abs() <= DT, "{name}: after {t} s");
        assert_eq!(s.pose.translation.y, 0.0, "{name}: straight on");
        // A push below μ·m·g (9.81 N on 2 kg) leaves it at rest.
        for _ in 0..50 {
            e.apply(&BodyCommand::Force {
                body: b,
                force: Vec3::new(9.0, 0.0, 0.0),
            });
            e.step(DT);
        }
        assert_eq!(
            state(&*e, b, 1).pose.translation.x,
            x,
            "{name}: held by the floor"
        );
    }
}

/// A 1 m bar pinned at one end to a static post turns about the pin: a force at its free end,
/// across it, turns it at α = F·L / (m·L²/3), and its centre stays L/2 from the pin.
#[test]
fn a_pinned_bar_turns_about_its_pin() {
    for (name, mut e) in planar_engines(Vec3::zeros()) {
        let post = e
            .add_body(&body(
                BodyKind::Static,
                [0.0; 3],
                Shape::Sphere { radius: 0.01 },
            ))
            .unwrap();
        let mut bar = body(
            BodyKind::Dynamic,
            [0.5, 0.0, 0.0],
            Shape::Box {
                half_extents: Vec3::new(0.5, 0.02, 0.02),
            },
        );
        bar.mass = MassSpec::Mass(3.0);
        let bar = e.add_body(&bar).unwrap();
        let up = ssx_core::math::x_onto(&Vec3::z());
        let spec = JointSpec {
            kind: JointKind::Revolute {
                limits: None,
                motor: None,
            },
            body1: post,
            body2: bar,
            frame1: Pose::from_parts(Vec3::zeros().into(), up),
            frame2: Pose::from_parts(
                ssx_core::math::nalgebra::Translation3::new(-0.5, 0.0, 0.0),
                up,
            ),
            dynamics: Default::default(),
        };
        e.add_joint(&spec).unwrap();
        let (m, l, f) = (3.0, 1.0, 0.3);
        let steps = 40;
        for _ in 0..steps {
            let s = state(&*e, bar, 2);
            let across = s.pose.rotation * Vec3::y();
            let tip = s.pose * Point3::new(0.5, 0.0, 0.0);
            e.apply(&BodyCommand::ForceAtPoint {
                body: bar,
                force: across * f,
                point: tip,
            });
            e.step(DT);
        }
        let mut out = vec![BodyState::default(); 2];
        e.read_state(&mut out);
        let r = ssx_core::engine::joint_reading(&spec, &out[0], &out[1]);
        let alpha = f * l / (m * l * l / 3.0);
        let t = steps as f64 * DT;
        assert!(
            (r.velocity - alpha * t).abs() < 0.02 * alpha * t,
            "{name}: ω = {}",
            r.velocity
        );
        assert!(
            (r.position - alpha * t * t / 2.0).abs() < 0.05 * alpha * t * t / 2.0,
            "{name}: θ = {}",
            r.position
        );
        let centre = out[1].pose.translation.vector;
        assert!(
            (centre.xy().norm() - 0.5).abs() < 1e-3,
            "{name}: the centre left the pin's circle: {centre}"
        );
    }
}

/// In a side view (gravity along −y), a disc dropped onto a line tilted 20° rolls down it,
/// with friction, at the rolling disc's a = g·sin θ / 1.5, and falls off its lower end.
#[test]
fn a_ball_rolls_off_a_tilted_line() {
    for (name, mut e) in planar_engines(Vec3::new(0.0, -9.81, 0.0)) {
        let tilt = 20f64.to_radians();
        let mut line = body(
            BodyKind::Static,
            [0.0; 3],
            Shape::Box {
                half_extents: Vec3::new(1.0, 0.01, 0.1),
            },
        );
        line.pose = pose_from_xyz_rpy([0.0; 3], [0.0, 0.0, -tilt]);
        e.add_body(&line).unwrap();
        let r = 0.05;
        // Resting on the line near its upper end.
        let along = Vec3::new(tilt.cos(), -tilt.sin(), 0.0);
        let normal = Vec3::new(tilt.sin(), tilt.cos(), 0.0);
        let start = -0.8 * along + (r + 0.01) * normal;
        let mut ball = body(
            BodyKind::Dynamic,
            [start.x, start.y, 0.0],
            Shape::Sphere { radius: r },
        );
        ball.colliders[0].friction = 1.0;
        let ball = e.add_body(&ball).unwrap();
        let speed_along = |e: &dyn PhysicEngine| state(e, ball, 2).linvel.dot(&along);
        for _ in 0..20 {
            e.step(DT);
        }
        let (v0, t0) = (speed_along(&*e), 20.0 * DT);
        for _ in 0..30 {
            e.step(DT);
        }
        let a = (speed_along(&*e) - v0) / (50.0 * DT - t0);
        let want = 9.81 * tilt.sin() / 1.5;
        assert!(
            (a - want).abs() < 0.05 * want,
            "{name}: rolls at {a} m/s², not {want}"
        );
        assert!(
            state(&*e, ball, 2).angvel.z < 0.0,
            "{name}: turning as it rolls"
        );
        for _ in 0..150 {
            e.step(DT);
        }
        let p = state(&*e, ball, 2).pose.translation.vector;
        let end = along * 1.0;
        assert!(
            p.x > end.x && p.y < end.y - 0.5,
            "{name}: off the end and falling: {p}"
        );
    }
}

/// Under gravity in the plane as weak as VMAS's balance (0.05 m/s²) and VMAS's drag (damping
/// 3.33 /s), a disc falls at a few centimetres a second and keeps falling: it does not go to
/// sleep in mid-air (Rapier's sleep takes a body below 0.05 m/s for 0.5 s to be at rest: it
/// would have stopped within 5 mm). Its fall over 10 s is the damped fall's closed form
/// (g/c)·(t − (1 − e^(−ct))/c) = 0.1455 m to within dt·c = 3.3%, the most the order in which a
/// step applies gravity and damping can change it.
#[test]
fn a_slow_fall_in_the_plane_does_not_fall_asleep() {
    let (g, c) = (0.05, (1.0 / 0.75 - 1.0) / 0.1);
    for (name, mut e) in planar_engines(Vec3::new(0.0, -g, 0.0)) {
        let mut disc = body(BodyKind::Dynamic, [0.0; 3], Shape::Sphere { radius: 0.05 });
        disc.linear_damping = c;
        let disc = e.add_body(&disc).unwrap();
        for _ in 0..1000 {
            e.step(DT);
        }
        let t = 1000.0 * DT;
        let y = -(g / c) * (t - (1.0 - (-c * t).exp()) / c);
        let s = state(&*e, disc, 2);
        assert!(
            s.linvel.norm() < 0.05,
            "{name}: slower than Rapier's sleep threshold"
        );
        let got = s.pose.translation.y;
        assert!(
            (got - y).abs() < DT * c * y.abs(),
            "{name}: fell {got} m, not {y}"
        );
    }
}

/// A disc held at a commanded turn in place keeps turning: its shape does not move, which
/// Rapier's sleep would take for rest after 0.5 s (a differential-drive robot turning on the
/// spot, VMAS's tasks on ssx's differential drive). 0.5 rad/s for 4 s turns it 2 rad.
#[test]
fn a_disc_commanded_to_turn_in_place_does_not_fall_asleep() {
    for (name, mut e) in planar_engines(Vec3::zeros()) {
        let disc = e
            .add_body(&body(
                BodyKind::Dynamic,
                [0.0, 0.0, 0.1],
                Shape::Sphere { radius: 0.1 },
            ))
            .unwrap();
        let steps = (4.0 / DT).round() as usize;
        for _ in 0..steps {
            e.apply(&BodyCommand::Velocity {
                body: disc,
                linear: Vec3::zeros(),
                angular: Vec3::new(0.0, 0.0, 0.5),
            });
            e.step(DT);
        }
        let s = state(&*e, disc, 1);
        let (_, _, yaw) = s.pose.rotation.euler_angles();
        assert!((yaw - 2.0).abs() < 1e-3, "{name}: turned {yaw} rad, not 2");
        assert!(
            s.pose.translation.vector.xy().norm() < 1e-6,
            "{name}: {s:?}"
        );
    }
}

/// A body attached to a carrier rides at its offset in the plane as the carrier drives, and
/// stays where it was released.
#[test]
fn an_attached_body_rides_in_the_plane() {
    for (name, mut e) in planar_engines(Vec3::zeros()) {
        let robot = e
            .add_body(&body(BodyKind::Dynamic, [0.0, 0.0, 0.1], cube(0.2)))
            .unwrap();
        let cube = e
            .add_body(&body(BodyKind::Dynamic, [0.35, 0.0, 0.1], cube(0.1)))
            .unwrap();
        let offset = Pose::translation(0.35, 0.0, 0.0);
        e.attach(cube, robot, offset).unwrap();
        assert_eq!(e.attachment(cube).map(|a| a.0), Some(robot), "{name}");
        for _ in 0..200 {
            e.apply(&BodyCommand::Velocity {
                body: robot,
                linear: Vec3::new(0.5, 0.0, 0.0),
                angular: Vec3::new(0.0, 0.0, 0.5),
            });
            e.step(DT);
        }
        let (r, c) = (state(&*e, robot, 2), state(&*e, cube, 2));
        let held = (r.pose * offset).translation.vector;
        assert!(
            (c.pose.translation.vector - held).xy().norm() < 5e-3,
            "{name}: {} vs {held}",
            c.pose.translation.vector
        );
        e.detach(cube);
        assert_eq!(e.attachment(cube), None);
    }
}

#[test]
fn a_revolute_joint_off_the_vertical_is_refused() {
    for (name, mut e) in planar_engines(Vec3::zeros()) {
        let a = e
            .add_body(&body(BodyKind::Static, [0.0; 3], cube(0.1)))
            .unwrap();
        let b = e
            .add_body(&body(BodyKind::Dynamic, [0.5, 0.0, 0.0], cube(0.1)))
            .unwrap();
        let err = e
            .add_joint(&JointSpec {
                kind: JointKind::Revolute {
                    limits: None,
                    motor: None,
                },
                body1: a,
                body2: b,
                frame1: Pose::identity(),
                frame2: Pose::identity(),
                dynamics: Default::default(),
            })
            .unwrap_err();
        assert_eq!(
            err,
            "the planar engine turns joints about the vertical only: this revolute joint's axis is (1.000, 0.000, 0.000)",
            "{name}"
        );
    }
}
