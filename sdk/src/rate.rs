//! Doing something every n-th step, at a phase of its own.

use crate::Ctx;

/// Runs something every `divider`-th step (a 500 Hz IMU in a 1 kHz world has divider 2), at a
/// fixed phase: `due()` is true on steps `phase, phase + divider, ...` counted from the first
/// call. Staggering the phase across instances spreads a swarm's sensing over the steps.
#[derive(Clone, Copy, Debug)]
pub struct Rate {
    divider: u32,
    countdown: u32,
}

impl Rate {
    /// Every `divider` steps (0 is taken as 1), first at call `phase % divider` (0-based).
    pub fn new(divider: u32, phase: u32) -> Self {
        let divider = divider.max(1);
        Rate {
            divider,
            countdown: phase % divider,
        }
    }
    /// As [`Rate::due`], and tells the host of the quiet steps that follow (`Ctx::idle`), so
    /// that it does not call the sensor on them. Call once per call of `step`.
    pub fn due_idle(&mut self, ctx: &Ctx<'_>) -> bool {
        let due = self.due();
        if self.countdown > 0 && ctx.idle(self.countdown) {
            // The host skips the quiet steps: the next call is the next sampling step.
            self.countdown = 0;
        }
        due
    }
    /// Whether this call's step is a sampling step; call exactly once per step.
    pub fn due(&mut self) -> bool {
        if self.countdown == 0 {
            self.countdown = self.divider - 1;
            true
        } else {
            self.countdown -= 1;
            false
        }
    }
    /// The divider.
    pub fn divider(&self) -> u32 {
        self.divider
    }
}
