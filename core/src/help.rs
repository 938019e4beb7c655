//! Help within a phase. A worker holding a large job that splits into independent pieces (a
//! camera's rays) offers the pieces at its pool's desk with [`share`]; the pool's other threads
//! take pieces whenever they wait (for the next phase, or for the others to finish this one),
//! until none is left. Each piece runs on exactly one thread and writes only its own output, so
//! what a piece computes does not depend on who took it: results stay the same to the bit
//! whatever the number of workers.
//!
//! One offer at a time per pool: a second worker that offers meanwhile runs its pieces itself,
//! as does a thread outside a pool's phase.

use std::cell::Cell;
use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};
use std::ptr::NonNull;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, MutexGuard, OnceLock};

use crossbeam::sync::Unparker;

type Piece<'a> = dyn Fn(usize) + Sync + 'a;

/// A pointer to the offerer's job, which lives on its stack while the offer stands.
#[derive(Clone, Copy)]
struct JobPtr(*const Piece<'static>);
// SAFETY: the job is `Sync`, and the offerer keeps it alive until no helper runs a piece of it
// (see `Withdraw`).
unsafe impl Send for JobPtr {}

#[derive(Default)]
struct Offer {
    job: Option<JobPtr>,
    next: usize,
    total: usize,
    /// Pieces helpers are running now.
    running: usize,
    /// A helper's piece panicked.
    failed: bool,
}

/// A pool's desk: at most one offer, and whom to wake when one comes.
#[derive(Default)]
pub(crate) struct Desk {
    offered: AtomicBool,
    offer: Mutex<Offer>,
    /// The pool's threads, woken by an offer (they may be parked).
    wake: OnceLock<Vec<Unparker>>,
}

thread_local! {
    /// The desk of the pool whose phase this thread is running, if any.
    static DESK: Cell<Option<NonNull<Desk>>> = const { Cell::new(None) };
}

impl Desk {
    /// Who to wake when an offer comes: every thread of the pool.
    pub(crate) fn set_wake(&self, threads: Vec<Unparker>) {
        let _ = self.wake.set(threads);
    }

    fn lock(&self) -> MutexGuard<'_, Offer> {
        self.offer.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Takes one offered piece and runs it; whether there was one. Called by a pool thread
    /// while it waits.
    pub(crate) fn help_once(&self) -> bool {
        if !self.offered.load(Ordering::Acquire) {
            return false;
        }
        let (job, i) = {
            let mut o = self.lock();
            match o.job {
                Some(job) if o.next < o.total => {
                    o.next += 1;
                    o.running += 1;
                    (job, o.next - 1)
                }
                _ => return false,
            }
        };
        // SAFETY: the offerer keeps the job alive until `running` is back to zero (`Withdraw`),
        // and this piece is counted in it until the line below.
        let ran = catch_unwind(AssertUnwindSafe(|| unsafe { (*job.0)(i) }));
        let mut o = self.lock();
        o.running -= 1;
        o.failed |= ran.is_err();
        true
    }

    /// Posts `n` pieces of `job`; false when an offer already stands, or when the pool has no
    /// other thread to take any.
    fn post(&self, n: usize, job: &Piece<'_>) -> bool {
        if self.wake.get().is_none_or(|threads| threads.len() < 2) {
            return false;
        }
        let mut o = self.lock();
        if o.job.is_some() {
            return false;
        }
        // SAFETY (of the lifetime erasure): the pointer is only followed while the offer
        // stands or a helper's piece runs, and `share` does not return before both are over.
        let ptr: *const Piece<'_> = job;
        let ptr: *const Piece<'static> = unsafe { std::mem::transmute(ptr) };
        *o = Offer {
            job: Some(JobPtr(ptr)),
            next: 0,
            total: n,
            running: 0,
            failed: false,
        };
        self.offered.store(true, Ordering::Release);
        drop(o);
        for t in self.wake.get().into_iter().flatten() {
            t.unpark();
        }
        true
    }

    /// The next piece for the offerer itself (not counted as running).
    fn claim(&self) -> Option<usize> {
        let mut o = self.lock();
        (o.next < o.total).then(|| {
            o.next += 1;
            o.next - 1
        })
    }
}

/// Ends an offer when `share` returns or unwinds: no more pieces are handed out, then it waits
/// until the helpers' pieces are done, so the job outlives every use.
struct Withdraw<'a>(&'a Desk);

impl Drop for Withdraw<'_> {
    fn drop(&mut self) {
        let failed = loop {
            let mut o = self.0.lock();
            o.next = o.total;
            if o.running == 0 {
                let failed = o.failed;
                *o = Offer::default();
                self.0.offered.store(false, Ordering::Release);
                break failed;
            }
            drop(o);
            std::hint::spin_loop();
        };
        if failed && !std::thread::panicking() {
            panic!("a piece of shared work panicked on a helping worker");
        }
    }
}

/// Runs `job(i)` for every `i` in `0..n`, each once, sharing the pieces with the pool's threads
/// that wait while this one works (see the module docs); returns when all are done. Serial on a
/// thread outside a pool's phase.
pub fn share(n: usize, job: &(dyn Fn(usize) + Sync)) {
    let desk = DESK.with(Cell::get);
    // SAFETY: set only by `within` for the duration of a pool's job on this thread, while the
    // pool (and its desk) lives.
    let desk = desk.map(|d| unsafe { d.as_ref() });
    let Some(desk) = desk.filter(|d| n > 1 && d.post(n, job)) else {
        (0..n).for_each(job);
        return;
    };
    let _withdraw = Withdraw(desk);
    let mine = catch_unwind(AssertUnwindSafe(|| {
        while let Some(i) = desk.claim() {
            job(i);
        }
    }));
    if let Err(payload) = mine {
        resume_unwind(payload);
    }
}

/// A slice's base pointer that [`share_chunks_mut`] hands out in disjoint chunks.
struct Base<T>(*mut T);
// SAFETY: only used by `share_chunks_mut`, which gives each chunk to one piece.
unsafe impl<T: Send> Sync for Base<T> {}

/// [`share`] over `out` cut into chunks of `size`: `job(i, chunk)` for chunk `i`, each once,
/// without allocating.
pub fn share_chunks_mut<T: Send>(
    out: &mut [T],
    size: usize,
    job: &(dyn Fn(usize, &mut [T]) + Sync),
) {
    let (len, size) = (out.len(), size.max(1));
    let base = Base(out.as_mut_ptr());
    share(len.div_ceil(size), &|i| {
        let start = i * size;
        let base = &base;
        // SAFETY: `share` runs each i once, so the chunks [start, start + n) are disjoint and
        // within `out`; it returns only when all are done, so none outlives the borrow of `out`.
        let chunk =
            unsafe { std::slice::from_raw_parts_mut(base.0.add(start), size.min(len - start)) };
        job(i, chunk);
    });
}

/// Runs `f` with `desk` as this thread's desk (what [`share`] offers to), then restores the
/// one before.
pub(crate) fn within<R>(desk: &Desk, f: impl FnOnce() -> R) -> R {
    with_desk(Some(NonNull::from(desk)), f)
}

/// Runs `f` with no desk (a pool of one: [`share`] runs every piece on this thread, none going
/// to a pool this thread works for), then restores the one before.
pub(crate) fn alone<R>(f: impl FnOnce() -> R) -> R {
    with_desk(None, f)
}

fn with_desk<R>(desk: Option<NonNull<Desk>>, f: impl FnOnce() -> R) -> R {
    struct Restore(Option<NonNull<Desk>>);
    impl Drop for Restore {
        fn drop(&mut self) {
            DESK.with(|d| d.set(self.0));
        }
    }
    let _restore = Restore(DESK.with(|d| d.replace(desk)));
    f()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;
    use std::time::{Duration, Instant};

    #[test]
    fn outside_a_pool_every_piece_runs_here_once() {
        let counts: Vec<AtomicUsize> = (0..100).map(|_| AtomicUsize::new(0)).collect();
        let me = std::thread::current().id();
        share(100, &|i| {
            assert_eq!(std::thread::current().id(), me);
            counts[i].fetch_add(1, Ordering::Relaxed);
        });
        assert!(counts.iter().all(|c| c.load(Ordering::Relaxed) == 1));
    }

    #[test]
    fn chunks_cover_the_slice_once_in_order() {
        let mut out = vec![0usize; 10];
        share_chunks_mut(&mut out, 4, &|i, chunk| {
            for x in chunk.iter_mut() {
                *x = i + 1;
            }
        });
        assert_eq!(out, [1, 1, 1, 1, 2, 2, 2, 2, 3, 3]);
    }

    /// On a pool of two, one part offers its pieces while the other part has nothing to do:
    /// the idle worker takes some (the offerer's first piece waits, bounded, until it has), and
    /// every piece runs exactly once.
    #[test]
    fn an_idle_worker_takes_offered_pieces_and_each_runs_once() {
        let pool = crate::WorkerPool::new(2).unwrap();
        for _ in 0..20 {
            let counts: Vec<AtomicUsize> = (0..64).map(|_| AtomicUsize::new(0)).collect();
            let helped = AtomicBool::new(false);
            let mut parts = [0u8; 2];
            pool.for_each_mut(&mut parts, &|k, _| {
                if k != 0 {
                    return;
                }
                let offerer = std::thread::current().id();
                share(64, &|i| {
                    if std::thread::current().id() != offerer {
                        helped.store(true, Ordering::Release);
                    } else if i == 0 {
                        let t0 = Instant::now();
                        while !helped.load(Ordering::Acquire)
                            && t0.elapsed() < Duration::from_secs(10)
                        {
                            std::hint::spin_loop();
                        }
                    }
                    counts[i].fetch_add(1, Ordering::Relaxed);
                });
            });
            assert!(
                helped.load(Ordering::Acquire),
                "no piece was taken by the idle worker"
            );
            assert!(counts.iter().all(|c| c.load(Ordering::Relaxed) == 1));
        }
    }

    #[test]
    fn a_panic_in_a_helpers_piece_reaches_the_offerer_and_the_pool_goes_on() {
        let pool = crate::WorkerPool::new(2).unwrap();
        let mut parts = [0u8; 2];
        let tried = AtomicBool::new(false);
        let r = std::panic::catch_unwind(AssertUnwindSafe(|| {
            pool.for_each_mut(&mut parts, &|k, _| {
                if k != 0 {
                    return;
                }
                let offerer = std::thread::current().id();
                share(8, &|i| {
                    if std::thread::current().id() != offerer {
                        tried.store(true, Ordering::Release);
                        panic!("piece {i}");
                    }
                    // The offerer holds its first piece until a helper has taken one.
                    let t0 = Instant::now();
                    while i == 0
                        && !tried.load(Ordering::Acquire)
                        && t0.elapsed() < Duration::from_secs(10)
                    {
                        std::hint::spin_loop();
                    }
                });
            })
        }));
        assert!(
            tried.load(Ordering::Acquire),
            "no piece was taken by the idle worker"
        );
        assert!(r.is_err(), "the helper's panic did not reach the offerer");
        let mut runs = [0u32; 2];
        let total = AtomicUsize::new(0);
        pool.for_each_mut(&mut runs, &|_, r| {
            share(10, &|_| {
                total.fetch_add(1, Ordering::Relaxed);
            });
            *r += 1;
        });
        assert_eq!(runs, [1, 1]);
        assert_eq!(total.load(Ordering::Relaxed), 20);
    }
}
