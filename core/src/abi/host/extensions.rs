//! Host calls of extensions and the run: logging, calling another extension, metrics, library
//! swaps, overlays, waking a paused run, and status messages.

use ssx_sdk::abi::*;
use std::ffi::c_char;

use super::frame::*;
use super::refusal::Refusal;
use crate::tape::{Answer, CallPhase, Outcome};

pub(super) unsafe extern "C" fn host_log(
    ctx: SsxCtx,
    level: SsxLogLevel,
    message: *const c_char,
) -> SsxStatus {
    if ctx == 0 {
        // Outside a step (from `create` or `destroy`, or a plugin's own thread): no handle,
        // so the message is attributed to what the calling thread is running, if anything.
        let Ok(m) = name(message) else {
            return Refusal::InvalidArgument.status();
        };
        let m = crate::text::escape_controls(m);
        let who =
            crate::guard::running().map_or_else(|| "(no step)".to_string(), |b| b.to_string());
        match level {
            SSX_LOG_ERROR => tracing::error!(target: "ssx::plugin", plugin = %who, "{m}"),
            SSX_LOG_WARN => tracing::warn!(target: "ssx::plugin", plugin = %who, "{m}"),
            SSX_LOG_INFO => tracing::info!(target: "ssx::plugin", plugin = %who, "{m}"),
            _ => tracing::debug!(target: "ssx::plugin", plugin = %who, "{m}"),
        }
        return SSX_OK;
    }
    host(ctx, |f| {
        // Plugin text reaches terminals and logs: no escape sequences, no forged lines.
        let m = crate::text::escape_controls(name(message)?);
        let a = f
            .artifact
            .map_or("(extension)", |a| f.world.artifact(a).name.as_str());
        match level {
            SSX_LOG_ERROR => tracing::error!(target: "ssx::plugin", artifact = %a, "{m}"),
            SSX_LOG_WARN => tracing::warn!(target: "ssx::plugin", artifact = %a, "{m}"),
            SSX_LOG_INFO => tracing::info!(target: "ssx::plugin", artifact = %a, "{m}"),
            _ => tracing::debug!(target: "ssx::plugin", artifact = %a, "{m}"),
        }
        Ok(())
    })
}

pub(super) unsafe extern "C" fn host_extension(
    ctx: SsxCtx,
    n: *const c_char,
    extension: *mut u32,
) -> SsxStatus {
    host(ctx, |f| {
        *out(extension)? = f.world.extension_index(name(n)?).ok_or(Refusal::NotFound)? as u32;
        Ok(())
    })
}

#[allow(clippy::too_many_arguments)] // the C signature
pub(super) unsafe extern "C" fn host_call_extension(
    ctx: SsxCtx,
    extension: u32,
    service: *const c_char,
    request: *const u8,
    request_len: usize,
    response: *mut u8,
    capacity: usize,
    response_len: *mut usize,
) -> SsxStatus {
    host(ctx, |f| {
        let ext = f
            .world
            .extension_at(extension as usize)
            .ok_or(Refusal::OutOfRange)?;
        let service = name(service)?;
        if (request.is_null() && request_len > 0) || (response.is_null() && capacity > 0) {
            return Err(Refusal::InvalidArgument);
        }
        // SAFETY: buffers of the given lengths per the ABI, null checked above.
        let (req, resp) = unsafe { (slice(request, request_len), slice_mut(response, capacity)) };
        // A driver's or sensor's call goes on the tape, or is answered from it (tape.rs).
        let taped = match (f.world.extensions.tape(), &f.kind, f.artifact) {
            (Some(tape), FrameKind::Sensor { .. }, Some(a)) => Some((tape, CallPhase::Sensors, a)),
            (Some(tape), FrameKind::Driver { .. }, Some(a)) => Some((tape, CallPhase::Drivers, a)),
            _ => None,
        };
        let ext_name = || f.world.extensions.name(extension as usize).unwrap_or("");
        if let Some((tape, phase, a)) = taped
            && tape.replaying()
        {
            let answer = tape
                .answer(phase, a.0, ext_name(), service, req)
                .ok_or(Refusal::Plugin)?;
            let n = answer.response.len().min(resp.len());
            resp[..n].copy_from_slice(&answer.response[..n]);
            return match answer.outcome {
                Outcome::Failed => Err(Refusal::Plugin),
                outcome => {
                    *out(response_len)? = answer.len as usize;
                    match outcome {
                        Outcome::TooLong => Err(Refusal::OutOfRange),
                        _ => Ok(()),
                    }
                }
            };
        }
        let _doing = f
            .world
            .extensions
            .label(extension as usize)
            .map(|l| crate::guard::enter(l, crate::guard::Phase::Service, f.world.step));
        let answered = ext.call(service, req, resp);
        if let Some((tape, phase, a)) = taped
            && tape.recording()
        {
            let (len, outcome) = match &answered {
                Ok(len) if *len > capacity => (*len, Outcome::TooLong),
                Ok(len) => (*len, Outcome::Answered),
                Err(_) => (0, Outcome::Failed),
            };
            tape.keep(Answer {
                phase,
                artifact: a.0,
                extension: ext_name().to_string(),
                service: service.to_string(),
                request: req.to_vec(),
                response: resp[..len.min(capacity)].to_vec(),
                len: len as u64,
                outcome,
            });
        }
        let len = answered.map_err(|m| {
            tracing::debug!(target: "ssx::plugin", "extension service '{service}' failed: {m}");
            Refusal::Plugin
        })?;
        *out(response_len)? = len;
        if len > capacity {
            Err(Refusal::OutOfRange)
        } else {
            Ok(())
        }
    })
}

pub(super) unsafe extern "C" fn host_metric(
    ctx: SsxCtx,
    name: *const c_char,
    value: f64,
) -> SsxStatus {
    host(ctx, |f| {
        let FrameKind::Extension {
            metrics: Some(metrics),
            ..
        } = &mut f.kind
        else {
            return Err(Refusal::WrongPhase);
        };
        crate::plugin::set_metric(metrics, self::name(name)?, value).map_err(|why| {
            tracing::debug!(target: "ssx::plugin", "metric refused: {why}");
            Refusal::InvalidArgument
        })
    })
}

pub(super) unsafe extern "C" fn host_metric_at(
    ctx: SsxCtx,
    index: u32,
    name: *mut c_char,
    capacity: usize,
    len: *mut usize,
    value: *mut f64,
) -> SsxStatus {
    host(ctx, |f| {
        let FrameKind::Extension { stats, .. } = &f.kind else {
            return Err(Refusal::WrongPhase);
        };
        let (key, v) = stats
            .metrics()
            .get(index as usize)
            .ok_or(Refusal::NotFound)?;
        *out(value)? = *v;
        copy_name(key, name, capacity, len)
    })
}

pub(super) unsafe extern "C" fn host_swap(
    ctx: SsxCtx,
    library: *const c_char,
    ticket: *mut u64,
) -> SsxStatus {
    host(ctx, |f| {
        let FrameKind::Extension {
            swaps,
            control: true,
            ..
        } = &f.kind
        else {
            return Err(Refusal::WrongPhase);
        };
        let desk = swaps.ok_or(Refusal::NotFound)?;
        let library = name(library)?;
        let t = desk.request(library).map_err(|m| {
            tracing::debug!(target: "ssx::plugin", "swap refused: {m}");
            Refusal::NotFound
        })?;
        *out(ticket)? = t;
        Ok(())
    })
}

pub(super) unsafe extern "C" fn host_swap_outcome(
    ctx: SsxCtx,
    ticket: u64,
    swapped: *mut u32,
    text: *mut c_char,
    capacity: usize,
    len: *mut usize,
) -> SsxStatus {
    host(ctx, |f| {
        let FrameKind::Extension { swaps, .. } = &f.kind else {
            return Err(Refusal::WrongPhase);
        };
        let outcome = swaps
            .and_then(|d| d.outcome(ticket))
            .ok_or(Refusal::NotFound)?;
        let (ok, message) = match &outcome {
            Ok(library) => (1, library.as_str()),
            Err(reason) => (0, reason.as_str()),
        };
        *out(swapped)? = ok;
        copy_name(message, text, capacity, len)
    })
}

/// The calling extension's overlays: `SSX_ERR_WRONG_PHASE` outside `after_step`,
/// `SSX_ERR_NOT_FOUND` when nothing in the run shows them.
pub(super) fn overlay_list<'f>(
    kind: &'f mut FrameKind<'_>,
) -> Result<&'f mut Vec<crate::render::Overlay>, Refusal> {
    match kind {
        FrameKind::Extension {
            overlays: Some(list),
            overlays_wanted,
            ..
        } => match overlays_wanted {
            true => Ok(list),
            false => Err(Refusal::NotFound),
        },
        _ => Err(Refusal::WrongPhase),
    }
}

pub(super) unsafe extern "C" fn host_overlay(
    ctx: SsxCtx,
    n: *const c_char,
    info: *const SsxMapInfo,
    rgba: *const u8,
    len: usize,
) -> SsxStatus {
    host(ctx, |f| {
        let time = f.world.time;
        let list = overlay_list(&mut f.kind)?;
        // SAFETY: a readable `SsxMapInfo` or null, per the ABI.
        let info = unsafe { info.as_ref() }.ok_or(Refusal::InvalidArgument)?;
        if rgba.is_null() {
            return Err(Refusal::InvalidArgument);
        }
        // SAFETY: `len` readable bytes at a non-null `rgba`, per the ABI.
        let cells = unsafe { std::slice::from_raw_parts(rgba, len) };
        let size = (info.width, info.height, info.resolution, info.origin);
        crate::render::set_overlay(list, name(n)?, size, cells, time)
            .map_err(|_| Refusal::InvalidArgument)
    })
}

pub(super) unsafe extern "C" fn host_overlay_shapes(
    ctx: SsxCtx,
    n: *const c_char,
    kind: SsxOverlayKind,
    values: *const f64,
    len: usize,
    color: *const f32,
) -> SsxStatus {
    host(ctx, |f| {
        let time = f.world.time;
        let list = overlay_list(&mut f.kind)?;
        let kind = match kind {
            SSX_OVERLAY_BOXES => crate::render::OverlayKind::Boxes,
            SSX_OVERLAY_LINES => crate::render::OverlayKind::Lines,
            _ => return Err(Refusal::InvalidArgument),
        };
        if color.is_null() || (values.is_null() && len > 0) {
            return Err(Refusal::InvalidArgument);
        }
        // SAFETY: `len` readable doubles at `values` and a `float[4]` at `color`, per the ABI.
        let (values, color) = unsafe {
            let v = if len == 0 {
                &[][..]
            } else {
                std::slice::from_raw_parts(values, len)
            };
            (v, *color.cast::<[f32; 4]>())
        };
        crate::render::set_shapes(list, name(n)?, kind, values, color, time)
            .map_err(|_| Refusal::InvalidArgument)
    })
}

pub(super) unsafe extern "C" fn host_wake() {
    crate::wake::ring();
}

pub(super) unsafe extern "C" fn host_status_message(status: SsxStatus) -> *const c_char {
    status_message_c(status).as_ptr()
}
