//! Work split across the Environment's worker threads, for the phases of a step and for engines
//! ([`crate::PhysicEngine::step_on`]).

/// Runs a job on several threads at once and returns when every one is done.
pub trait Parallel {
    /// Threads in all, the caller's included.
    fn workers(&self) -> usize;
    /// Runs `job(k)` for every `k` in `0..participants` (at most [`Parallel::workers`]), `k` on
    /// worker `k` (the caller is worker 0), and returns when all are done.
    fn run(&self, participants: usize, job: &(dyn Fn(usize) + Sync));
}

/// No other thread: every job runs on the caller.
#[derive(Clone, Copy, Debug, Default)]
pub struct Serial;

impl Parallel for Serial {
    fn workers(&self) -> usize {
        1
    }
    fn run(&self, participants: usize, job: &(dyn Fn(usize) + Sync)) {
        (0..participants).for_each(job);
    }
}

/// A raw pointer that may be sent to the workers; [`for_each_mut`] hands each part to one.
struct PartsPtr<T>(*mut T);
// SAFETY: only used to hand part k to the one worker running k (see `for_each_mut`).
unsafe impl<T: Send> Sync for PartsPtr<T> {}
unsafe impl<T: Send> Send for PartsPtr<T> {}

/// Runs `f(k, &mut parts[k])` for every part, part `k` on worker `k`, and returns when all are
/// done.
///
/// # Panics
/// If `parts` has more elements than `par` has workers; a panic in `f` reaches the caller as
/// [`Parallel::run`] reports it.
pub fn for_each_mut<T: Send>(
    par: &dyn Parallel,
    parts: &mut [T],
    f: &(dyn Fn(usize, &mut T) + Sync),
) {
    assert!(parts.len() <= par.workers(), "more parts than workers");
    let len = parts.len();
    let base = PartsPtr(parts.as_mut_ptr());
    let job = |k: usize| {
        if k < len {
            let base = &base;
            // SAFETY: k < len, and `run` calls the job once for each k, so the `&mut` parts are
            // disjoint; `run` returns only after every call is done, so none outlives the
            // `parts` borrow.
            let part = unsafe { &mut *base.0.add(k) };
            f(k, part);
        }
    };
    par.run(len, &job);
}

/// The `k`th of `parts` contiguous ranges that split `0..n` as evenly as can be (sizes differ by
/// at most one, the longer first).
pub fn share(n: usize, parts: usize, k: usize) -> std::ops::Range<usize> {
    let parts = parts.max(1);
    let (base, extra) = (n / parts, n % parts);
    let start = k * base + k.min(extra);
    start..start + base + usize::from(k < extra)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shares_cover_everything_once_in_order() {
        for n in [0usize, 1, 2, 7, 100] {
            for parts in 1..5 {
                let ranges: Vec<_> = (0..parts).map(|k| share(n, parts, k)).collect();
                assert_eq!(ranges[0].start, 0);
                assert_eq!(ranges[parts - 1].end, n);
                for w in ranges.windows(2) {
                    assert_eq!(w[0].end, w[1].start);
                    assert!(w[0].len() >= w[1].len() && w[0].len() <= w[1].len() + 1);
                }
            }
        }
    }

    #[test]
    fn serial_runs_every_part() {
        let mut parts = vec![0u32; 1];
        for_each_mut(&Serial, &mut parts, &|k, p| *p += k as u32 + 1);
        assert_eq!(parts, vec![1]);
    }
}
