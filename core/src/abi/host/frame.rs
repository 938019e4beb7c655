//! The frame of a host call: which world, which artifact, and what the calling phase may touch;
//! the handle check every host function starts with, and the checks of its arguments.

use std::cell::Cell;
use std::ffi::{CStr, c_char};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicU64, Ordering};

use ssx_sdk::abi::*;

use crate::engine::BodyId;
use crate::guard::Label;
use crate::math::Vec3;
use crate::plugin::{CommandBuffer, Reading, ReadingSource, SwapDesk};
use crate::stats::StatsView;
use crate::world::{ArtifactId, World};

use super::refusal::Refusal;

/// What the current call may touch.
pub(in crate::abi) enum FrameKind<'a> {
    Sensor {
        out: &'a mut Reading,
    },
    Driver {
        commands: &'a mut CommandBuffer,
        readings: &'a dyn ReadingSource,
    },
    Extension {
        readings: &'a dyn ReadingSource,
        stats: StatsView<'a>,
        /// Where `metric` writes (after_step only).
        metrics: Option<&'a mut crate::plugin::Metrics>,
        /// Where `overlay` writes (after_step only), and whether anything shows it.
        overlays: Option<&'a mut Vec<crate::render::Overlay>>,
        overlays_wanted: bool,
        /// Library swaps: `swap` asks (control only), `swap_outcome` reads.
        swaps: Option<&'a dyn SwapDesk>,
        /// Whether this is the `control` entry (the one phase that may ask for a swap).
        control: bool,
    },
}

pub(in crate::abi) struct Frame<'a> {
    pub(in crate::abi) world: &'a World<'a>,
    /// The calling plugin's artifact (none for extensions).
    pub(in crate::abi) artifact: Option<ArtifactId>,
    pub(in crate::abi) kind: FrameKind<'a>,
    /// What the crash handler and the watchdog call the instance, where a batch call moves
    /// from one instance to the next (none outside batches).
    pub(in crate::abi) label: Option<&'static Label>,
}

/// The plugin call running on a thread: handles `first..first + count` are `frames[0..count]`;
/// `last` is the one the latest host call named (a batch call's relabelling).
#[derive(Clone, Copy)]
struct Current {
    first: SsxCtx,
    count: u64,
    frames: *mut (),
    last: u64,
}

const NONE: Current = Current {
    first: 0,
    count: 0,
    frames: std::ptr::null_mut(),
    last: 0,
};

thread_local! {
    /// The handles and frames of the plugin call running on this thread (none: no call).
    static CURRENT: Cell<Current> = const { Cell::new(NONE) };
    /// Handles are unique across threads: a per-thread tag in the high bits, a counter below.
    static NEXT: Cell<u64> = Cell::new(THREAD_TAG.fetch_add(1, Ordering::Relaxed) << 40);
}
static THREAD_TAG: AtomicU64 = AtomicU64::new(1);

/// Makes `frame` current for the duration of `call`, which gets a fresh handle.
pub(in crate::abi) fn with_frame(
    frame: &mut Frame<'_>,
    call: impl FnOnce(SsxCtx) -> SsxStatus,
) -> SsxStatus {
    with_frames(std::slice::from_mut(frame), call)
}

/// Makes `frames` current for the duration of `call` (a batch call), which gets the first of
/// as many fresh, consecutive handles: handle `first + k` is `frames[k]`'s.
pub(in crate::abi) fn with_frames(
    frames: &mut [Frame<'_>],
    call: impl FnOnce(SsxCtx) -> SsxStatus,
) -> SsxStatus {
    let count = frames.len() as u64;
    let first = NEXT.with(|n| {
        let v = n.get() + 1;
        n.set(v + count - 1);
        v
    });
    let current = Current {
        first,
        count,
        frames: frames.as_mut_ptr() as *mut (),
        last: 0,
    };
    let previous = CURRENT.with(|c| c.replace(current));
    let status = call(first);
    CURRENT.with(|c| c.set(previous));
    status
}

/// Runs a host function's body against the current frame, checking the handle. Panics are
/// caught: a host function never unwinds into a plugin.
pub(super) fn host<F>(ctx: SsxCtx, body: F) -> SsxStatus
where
    F: FnOnce(&mut Frame<'_>) -> Result<(), Refusal>,
{
    let current = CURRENT.with(Cell::get);
    let k = ctx.wrapping_sub(current.first);
    if ctx == 0 || k >= current.count || current.frames.is_null() {
        return SSX_ERR_INVALID_HANDLE;
    }
    // SAFETY: `frames` holds the `count` frames `with_frames` installed for these very handles
    // on this thread; they live until that call returns, and host functions do not nest.
    let frame = unsafe { &mut *(current.frames as *mut Frame<'_>).add(k as usize) };
    if k != current.last {
        // A batch call went on to its next instance: a crash from here on names that one.
        if let Some(label) = frame.label {
            crate::guard::relabel(label);
        }
        CURRENT.with(|c| c.set(Current { last: k, ..current }));
    }
    run(frame, body)
}

/// A host function's body on its frame, counted, behind a panic boundary.
fn run<F>(frame: &mut Frame<'_>, body: F) -> SsxStatus
where
    F: FnOnce(&mut Frame<'_>) -> Result<(), Refusal>,
{
    crate::counters::add(
        match frame.kind {
            FrameKind::Driver { .. } => crate::counters::Work::DriverHostCall,
            FrameKind::Sensor { .. } => crate::counters::Work::SensorHostCall,
            FrameKind::Extension { .. } => crate::counters::Work::ExtensionHostCall,
        },
        1,
    );
    match catch_unwind(AssertUnwindSafe(|| body(frame))) {
        Ok(Ok(())) => SSX_OK,
        Ok(Err(refusal)) => refusal.status(),
        Err(_) => Refusal::InvalidArgument.status(),
    }
}

/// `*mut T` to `&mut T`, null refused.
pub(super) fn out<'p, T>(p: *mut T) -> Result<&'p mut T, Refusal> {
    // SAFETY: the caller promises a valid pointer or null.
    unsafe { p.as_mut() }.ok_or(Refusal::InvalidArgument)
}

/// A `double[3]`, null and non-finite refused.
pub(super) fn vec3(p: *const f64) -> Result<Vec3, Refusal> {
    if p.is_null() {
        return Err(Refusal::InvalidArgument);
    }
    // SAFETY: a non-null `double[3]` per the ABI.
    let v = unsafe { std::slice::from_raw_parts(p, 3) };
    let v = Vec3::new(v[0], v[1], v[2]);
    if v.iter().all(|x| x.is_finite()) {
        Ok(v)
    } else {
        Err(Refusal::InvalidArgument)
    }
}

pub(super) fn name<'p>(p: *const c_char) -> Result<&'p str, Refusal> {
    if p.is_null() {
        return Err(Refusal::InvalidArgument);
    }
    // SAFETY: NUL-terminated per the ABI.
    unsafe { CStr::from_ptr(p) }
        .to_str()
        .map_err(|_| Refusal::InvalidArgument)
}

pub(super) fn body_of(world: &World<'_>, artifact: u32, body: u32) -> Result<BodyId, Refusal> {
    if artifact as usize >= world.artifact_count() {
        return Err(Refusal::OutOfRange);
    }
    world
        .artifact(ArtifactId(artifact))
        .body(body as usize)
        .ok_or(Refusal::OutOfRange)
}

pub(super) fn commands<'f>(frame: &'f mut Frame<'_>) -> Result<&'f mut CommandBuffer, Refusal> {
    match &mut frame.kind {
        FrameKind::Driver { commands, .. } => Ok(commands),
        FrameKind::Sensor { .. } | FrameKind::Extension { .. } => Err(Refusal::WrongPhase),
    }
}

/// Writes `name` and a NUL into the caller's `capacity` bytes at `buf`, and its length (NUL
/// excluded) into `len`; `SSX_ERR_OUT_OF_RANGE` when it does not fit.
pub(super) fn copy_name(
    name: &str,
    buf: *mut c_char,
    capacity: usize,
    len: *mut usize,
) -> Result<(), Refusal> {
    let name = name.as_bytes();
    *out(len)? = name.len();
    if capacity < name.len() + 1 {
        return Err(Refusal::OutOfRange);
    }
    if buf.is_null() {
        return Err(Refusal::InvalidArgument);
    }
    // SAFETY: `capacity` bytes at `buf` per the ABI, and the name plus NUL fit.
    unsafe {
        std::ptr::copy_nonoverlapping(name.as_ptr(), buf.cast::<u8>(), name.len());
        *buf.add(name.len()) = 0;
    }
    Ok(())
}

/// Writes `v` into a caller's `T[N]` (`double[3]`, `float[4]`, ...), null refused.
pub(super) fn write_array<T: Copy, const N: usize>(p: *mut T, v: [T; N]) -> Result<(), Refusal> {
    if p.is_null() {
        return Err(Refusal::InvalidArgument);
    }
    // SAFETY: a non-null `T[N]` per the ABI.
    unsafe { std::slice::from_raw_parts_mut(p, N) }.copy_from_slice(&v);
    Ok(())
}
