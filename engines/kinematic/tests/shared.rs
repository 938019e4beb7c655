//! Static bodies held once by the worlds that have them alike (a batch's worlds), and the worlds
//! stepping as they would apart.

use std::sync::Arc;

use ssx_core::math::{Point3, Vec3};
use ssx_core::{BodyCommand, BodyId, BodyKind, Contact, PhysicEngine};
use ssx_engine_kinematic::KinematicEngine;

mod common;
use common::*;

/// A walled square with robots among the walls (ids mixed: wall, robot, wall, ...), `dx` the
/// east wall's offset.
fn world(dx: f64) -> KinematicEngine {
    let mut e = engine();
    let wall = |x: f64, y: f64, yaw: f64| {
        boxed(BodyKind::Static, [x, y, 0.25], yaw, [4.0, 0.1, 0.5], false)
    };
    e.add_body(&wall(0.0, -2.0, 0.0)).unwrap();
    e.add_body(&robot(-1.0, -1.0, 0.3)).unwrap();
    e.add_body(&wall(0.0, 2.0, 0.0)).unwrap();
    e.add_body(&robot(0.5, 0.0, 1.2)).unwrap();
    e.add_body(&wall(-2.0, 0.0, std::f64::consts::FRAC_PI_2))
        .unwrap();
    e.add_body(&robot(1.0, 1.0, -0.7)).unwrap();
    e.add_body(&wall(2.0 + dx, 0.0, std::f64::consts::FRAC_PI_2))
        .unwrap();
    e
}

const ROBOTS: [u32; 3] = [1, 3, 5];

/// 300 steps of the robots driving at the walls and each other, turning: every state and contact.
fn run(e: &mut KinematicEngine) -> (Vec<ssx_core::BodyState>, Vec<Contact>) {
    let mut contacts = Vec::new();
    for step in 0..300 {
        for (k, &b) in ROBOTS.iter().enumerate() {
            let a = (step / 50) as f64 + k as f64 * 2.1;
            e.apply(&BodyCommand::Velocity {
                body: BodyId(b),
                linear: Vec3::new(1.5 * a.cos(), 1.5 * a.sin(), 0.0),
                angular: Vec3::new(0.0, 0.0, 0.8),
            });
        }
        e.step(DT);
        for &b in &ROBOTS {
            e.contacts(BodyId(b), &mut contacts);
        }
    }
    (states(e, 7), contacts)
}

#[test]
fn worlds_with_the_same_walls_hold_one_copy_and_step_as_apart() {
    let mut alone = world(0.0);
    let (mut first, mut second) = (world(0.0), world(0.0));
    let walls = first
        .commons()
        .expect("the kinematic engine offers its statics");
    assert!(second.share(&walls), "equal walls are taken");
    assert!(Arc::ptr_eq(&second.commons().unwrap(), &walls));
    // Walls that differ are not.
    let mut other = world(0.5);
    assert!(!other.share(&walls));
    assert!(!Arc::ptr_eq(&other.commons().unwrap(), &walls));

    // The worlds step to the bit as a world that shares nothing, and the robots did meet the
    // walls (each reports contacts).
    let (states, contacts) = run(&mut alone);
    assert_eq!(run(&mut first), (states.clone(), contacts.clone()));
    assert_eq!(run(&mut second), (states.clone(), contacts.clone()));
    assert!(
        contacts.iter().any(|c| c.other.0 % 2 == 0),
        "a wall stopped a robot"
    );

    // A post added to one world afterwards, outside the square, is that world's alone: a ray
    // finds it there and not in the world it shared with.
    second
        .add_body(&boxed(
            BodyKind::Static,
            [0.0, 3.0, 0.25],
            0.0,
            [0.1, 0.1, 0.5],
            false,
        ))
        .unwrap();
    assert!(!Arc::ptr_eq(&second.commons().unwrap(), &walls));
    let down = |e: &KinematicEngine| {
        e.cast_ray(Point3::new(0.0, 3.0, 2.0), -Vec3::z(), 5.0, &|_| false)
            .map(|h| h.body)
    };
    assert_eq!(down(&second), Some(BodyId(7)));
    assert_eq!(down(&first), None);
}
