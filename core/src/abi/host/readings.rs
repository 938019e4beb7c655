//! Host calls about readings: a sensor publishes and describes its reading and may say it is
//! idle; drivers and extensions find and read readings.

use crate::plugin::Reading;
use crate::world::ArtifactId;
use ssx_sdk::abi::*;
use std::ffi::c_char;

use super::frame::*;
use super::refusal::Refusal;

pub(super) unsafe extern "C" fn host_sensor_index(
    ctx: SsxCtx,
    artifact: u32,
    n: *const c_char,
    sensor: *mut u32,
) -> SsxStatus {
    host(ctx, |f| {
        if artifact as usize >= f.world.artifact_count() {
            return Err(Refusal::OutOfRange);
        }
        let idx = f
            .world
            .artifact(ArtifactId(artifact))
            .sensor_index(name(n)?)
            .ok_or(Refusal::NotFound)?;
        *out(sensor)? = idx as u32;
        Ok(())
    })
}

pub(super) unsafe extern "C" fn host_publish(
    ctx: SsxCtx,
    values: *const f64,
    len: usize,
) -> SsxStatus {
    host(ctx, |f| {
        let FrameKind::Sensor { out } = &mut f.kind else {
            return Err(Refusal::WrongPhase);
        };
        if values.is_null() && len > 0 {
            return Err(Refusal::InvalidArgument);
        }
        // SAFETY: `len` doubles at `values` per the ABI (or none), null checked above.
        let v = unsafe { slice(values, len) };
        out.set(v);
        Ok(())
    })
}

/// A sensor's reading as drivers and extensions may read it (sensors may not: their phase
/// writes readings). An index past the artifacts, or past an artifact's sensors, is out of
/// range, like every other index.
pub(super) fn reading_of<'f>(
    f: &'f Frame<'_>,
    artifact: u32,
    sensor: u32,
) -> Result<&'f Reading, Refusal> {
    let readings = match &f.kind {
        FrameKind::Driver { readings, .. } | FrameKind::Extension { readings, .. } => *readings,
        FrameKind::Sensor { .. } => return Err(Refusal::WrongPhase),
    };
    if artifact as usize >= f.world.artifact_count() {
        return Err(Refusal::OutOfRange);
    }
    readings
        .reading(ArtifactId(artifact), sensor as usize)
        .ok_or(Refusal::OutOfRange)
}

pub(super) unsafe extern "C" fn host_reading(
    ctx: SsxCtx,
    artifact: u32,
    sensor: u32,
    values: *mut *const f64,
    len: *mut usize,
    step: *mut u64,
) -> SsxStatus {
    host(ctx, |f| {
        let r = reading_of(f, artifact, sensor)?;
        *out(values)? = r.values().as_ptr();
        *out(len)? = r.values().len();
        *out(step)? = r.step();
        Ok(())
    })
}

pub(super) unsafe extern "C" fn host_describe(ctx: SsxCtx, json: *const c_char) -> SsxStatus {
    host(ctx, |f| {
        let FrameKind::Sensor { out } = &mut f.kind else {
            return Err(Refusal::WrongPhase);
        };
        let text = name(json)?;
        if text.len() > SSX_MAX_DESCRIPTION {
            return Err(Refusal::OutOfRange);
        }
        out.describe(text);
        Ok(())
    })
}

pub(super) unsafe extern "C" fn host_idle(ctx: SsxCtx, steps: u32) -> SsxStatus {
    host(ctx, |f| {
        let FrameKind::Sensor { out } = &mut f.kind else {
            return Err(Refusal::WrongPhase);
        };
        out.idle(f.world.step, steps);
        Ok(())
    })
}

pub(super) unsafe extern "C" fn host_reading_description(
    ctx: SsxCtx,
    artifact: u32,
    sensor: u32,
    text: *mut *const c_char,
    len: *mut usize,
) -> SsxStatus {
    host(ctx, |f| {
        let r = reading_of(f, artifact, sensor)?;
        *out(text)? = r.description().as_ptr().cast();
        *out(len)? = r.description().len();
        Ok(())
    })
}
