//! A world's bodies and sensors as rows of numbers: the state row's columns, and which artifacts
//! carry a sensor (with the error that names the sensors there are).

use ssx_core::Environment;

use crate::error::WorldsError;

/// Columns of a state row.
pub const STATE_WIDTH: usize = 13;

/// A state row: position, quaternion (x, y, z, w), linear and angular velocity.
pub fn state_row(s: &ssx_core::BodyState, out: &mut [f64]) {
    let t = s.pose.translation.vector;
    let q = s.pose.rotation.coords;
    out[..3].copy_from_slice(t.as_slice());
    out[3..7].copy_from_slice(q.as_slice());
    out[7..10].copy_from_slice(s.linvel.as_slice());
    out[10..13].copy_from_slice(s.angvel.as_slice());
}

/// The artifacts of `env` that carry `sensor`; when none does, an error that names the sensors
/// there are (and the closest).
pub fn sensor_carriers(env: &Environment, sensor: &str) -> Result<Vec<usize>, WorldsError> {
    let found: Vec<usize> = env
        .artifacts()
        .iter()
        .enumerate()
        .filter(|(_, a)| a.sensor_index(sensor).is_some())
        .map(|(i, _)| i)
        .collect();
    if found.is_empty() {
        return Err(WorldsError::Name(format!(
            "no artifact carries a sensor '{sensor}'{}",
            known_sensors(env.artifacts(), sensor)
        )));
    }
    Ok(found)
}

/// " (sensors: a, b; did you mean 'a'?)", or " (no artifact has a sensor)".
pub(crate) fn known_sensors(artifacts: &[ssx_core::ArtifactInfo], sensor: &str) -> String {
    let mut names: Vec<&str> = artifacts
        .iter()
        .flat_map(|a| a.sensor_names.iter().map(String::as_str))
        .collect();
    names.sort_unstable();
    names.dedup();
    if names.is_empty() {
        return " (no artifact has a sensor)".into();
    }
    let hint = ssx_core::spelling::closest(sensor, names.iter().copied())
        .map(|c| format!("; did you mean '{c}'?"))
        .unwrap_or_default();
    format!(" (sensors: {}{hint})", names.join(", "))
}
