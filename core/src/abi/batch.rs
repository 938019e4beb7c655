//! Batch calls: consecutive instances of one library plugin stepped by its `step_many`, each
//! with its own handle and frame (all written before the call, in place on the stack), as its
//! `step` would step them one after another.

use std::ffi::c_void;
use std::mem::MaybeUninit;

use smallvec::SmallVec;
use ssx_sdk::abi::*;

use super::host::{Frame, FrameKind, with_frames};
use super::instance::{error_arg, error_message};
use crate::guard::Label;
use crate::plugin::{BatchMember, CommandBuffer, Reading, ReadingSource};
use crate::world::{ArtifactId, World};

/// The most instances one call steps (its instances and handles live on the stack).
pub(crate) const MOST: usize = 64;

/// The instances of a call that failed (their positions in the call), with their messages.
pub(crate) type Faults = SmallVec<[(usize, String); 2]>;

/// The driver instances of a batch call (1 to [`MOST`], all members of one plugin).
pub(crate) trait DriverRun {
    fn len(&self) -> usize;
    fn member(&self, k: usize) -> BatchMember;
    /// Calls `f` with each instance's artifact, commands and label (what the crash handler
    /// and the watchdog call it), in the run's order.
    fn each<'s>(&'s mut self, f: &mut dyn FnMut(ArtifactId, &'s mut CommandBuffer, &'static Label));
}

/// The sensor instances of a batch call (1 to [`MOST`], all members of one plugin).
pub(crate) trait SensorRun {
    fn len(&self) -> usize;
    fn member(&self, k: usize) -> BatchMember;
    /// Calls `f` with each instance's artifact, reading and label, in the run's order.
    fn each<'s>(&'s mut self, f: &mut dyn FnMut(ArtifactId, &'s mut Reading, &'static Label));
}

/// Steps a run of drivers in one call (again after an instance that failed).
pub(crate) fn drive_many(
    world: &World<'_>,
    readings: &dyn ReadingSource,
    run: &mut dyn DriverRun,
) -> Faults {
    let n = run.len();
    let mut instances = [UNSET; MOST];
    let members = gather(n, |k| run.member(k), &mut instances);
    crate::counters::add(crate::counters::Work::DriverCall, 1);
    let mut frames = [const { MaybeUninit::<Frame<'_>>::uninit() }; MOST];
    let mut made = 0;
    run.each(&mut |artifact, commands, label| {
        frames[made].write(Frame {
            world,
            artifact: Some(artifact),
            kind: FrameKind::Driver { commands, readings },
            label: Some(label),
        });
        made += 1;
    });
    assert_eq!(made, n, "a run's instances and its frames");
    // SAFETY: the first `n` frames were written just above (and hold no drop glue).
    let frames = unsafe { std::slice::from_raw_parts_mut(frames.as_mut_ptr().cast(), n) };
    call(members, |from, call| with_frames(&mut frames[from..], call))
}

/// Steps a run of sensors in one call (again after an instance that failed).
pub(crate) fn sense_many(world: &World<'_>, run: &mut dyn SensorRun) -> Faults {
    let n = run.len();
    let mut instances = [UNSET; MOST];
    let members = gather(n, |k| run.member(k), &mut instances);
    crate::counters::add(crate::counters::Work::SensorCall, 1);
    let mut frames = [const { MaybeUninit::<Frame<'_>>::uninit() }; MOST];
    let mut made = 0;
    run.each(&mut |artifact, out, label| {
        frames[made].write(Frame {
            world,
            artifact: Some(artifact),
            kind: FrameKind::Sensor { out },
            label: Some(label),
        });
        made += 1;
    });
    assert_eq!(made, n, "a run's instances and its frames");
    // SAFETY: the first `n` frames were written just above (and hold no drop glue).
    let frames = unsafe { std::slice::from_raw_parts_mut(frames.as_mut_ptr().cast(), n) };
    call(members, |from, call| with_frames(&mut frames[from..], call))
}

const UNSET: MaybeUninit<*mut c_void> = MaybeUninit::uninit();

/// A run's members as the call needs them: the plugin's `step_many`, and each instance, in an
/// array on the caller's stack (nothing of a run's size is built and moved).
struct Members<'a> {
    step_many: SsxStepManyFn,
    instances: &'a [*mut c_void],
}

/// The first `n` members (`n` from 1 to [`MOST`]) into the arrays.
fn gather<'a>(
    n: usize,
    member: impl Fn(usize) -> BatchMember,
    instances: &'a mut [MaybeUninit<*mut c_void>; MOST],
) -> Members<'a> {
    assert!(
        (1..=MOST).contains(&n),
        "a batch call of {n} instances (1 to {MOST})"
    );
    let first = member(0);
    for (k, slot) in instances[..n].iter_mut().enumerate() {
        let m = if k == 0 { first } else { member(k) };
        slot.write(m.instance);
    }
    // SAFETY: the first `n` were written just above.
    unsafe {
        Members {
            step_many: first.step_many,
            instances: std::slice::from_raw_parts(instances.as_ptr().cast(), n),
        }
    }
}

/// Calls the members' `step_many` over them, with their frames made current by `current(from,
/// call)` for those from `from` on; after a failure, again over those after the one that
/// failed, so that one instance's fault leaves the others stepped.
fn call(
    members: Members<'_>,
    mut current: impl FnMut(usize, &mut dyn FnMut(SsxCtx) -> SsxStatus) -> SsxStatus,
) -> Faults {
    let n = members.instances.len();
    let mut ctxs = [MaybeUninit::<SsxCtx>::uninit(); MOST];
    let mut faults = Faults::new();
    let mut from = 0;
    while from < n {
        let count = n - from;
        let mut failed = usize::MAX;
        // This thread's buffer (the host's, initialised), cleared: the message is the call's.
        let mut error = error_arg();
        let status = current(from, &mut |first| {
            for (k, slot) in ctxs[..count].iter_mut().enumerate() {
                slot.write(first + k as u64);
            }
            // SAFETY: live instances of the plugin whose `step_many` this is, and `ctxs[..count]`
            // (written above) the handles of their frames, current until `current` returns;
            // the buffers outlive the call.
            unsafe {
                (members.step_many)(
                    members.instances[from..].as_ptr(),
                    ctxs.as_ptr().cast(),
                    count,
                    &mut failed,
                    &mut error,
                )
            }
        });
        if status == SSX_OK {
            break;
        }
        let mut message = error_message(status);
        // An instance the plugin did not name is taken to be the call's first.
        let at = if failed < count {
            from + failed
        } else {
            message.push_str(&format!(
                " (step_many failed without naming the instance: {failed} of {count}; the \
                 call's first is disabled)"
            ));
            from
        };
        faults.push((at, message));
        from = at + 1;
    }
    faults
}
