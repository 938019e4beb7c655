//! ssx's values as Foxglove's schema values: what the scene, the meshes, the cameras and the
//! published channels all write, kept below them.

use foxglove::schemas::{Color, Pose, Quaternion, Timestamp, Vector3};

pub(crate) fn vec3(x: f64, y: f64, z: f64) -> Option<Vector3> {
    Some(Vector3 { x, y, z })
}

pub(crate) fn color(c: [f32; 4]) -> Option<Color> {
    Some(Color {
        r: f64::from(c[0]),
        g: f64::from(c[1]),
        b: f64::from(c[2]),
        a: f64::from(c[3]),
    })
}

pub(crate) fn pose(p: &ssx_core::math::Pose) -> Option<Pose> {
    let t = p.translation.vector;
    let q = p.rotation.quaternion();
    Some(Pose {
        position: vec3(t.x, t.y, t.z),
        orientation: Some(Quaternion {
            x: q.i,
            y: q.j,
            z: q.k,
            w: q.w,
        }),
    })
}

/// Nanoseconds as a Foxglove timestamp.
pub(crate) fn stamp(ns: u64) -> Option<Timestamp> {
    Some(Timestamp::new(
        (ns / 1_000_000_000) as u32,
        (ns % 1_000_000_000) as u32,
    ))
}
