//! A fixed pool of worker threads that runs one phase at a time.
//!
//! The pool is created once. Worker `k` always gets part `k`, so an artifact's work stays on one
//! thread, and the call returns only when every part is done: a barrier between phases. The
//! caller's thread is worker 0, so a one-worker pool spawns no thread at all. Waiting workers spin
//! briefly (the next phase usually comes within microseconds), then park.

use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicU64, AtomicUsize, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crossbeam::sync::{Parker, Unparker};
use crossbeam::utils::CachePadded;

type Job<'a> = dyn Fn(usize) + Sync + 'a;

struct Shared {
    /// Bumped once per phase; workers run the job when they see it change.
    epoch: CachePadded<AtomicU64>,
    /// Points at a `&Job` on the caller's stack, valid while `remaining > 0`.
    job: AtomicPtr<()>,
    /// Spawned workers still running the current job.
    remaining: CachePadded<AtomicUsize>,
    shutdown: AtomicBool,
    panicked: AtomicBool,
    caller: Unparker,
    spin: Duration,
}

/// The worker pool. See the module docs.
pub struct WorkerPool {
    shared: Arc<Shared>,
    workers: Vec<(Unparker, JoinHandle<()>)>,
    caller: Parker,
}

impl std::fmt::Debug for WorkerPool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WorkerPool")
            .field("workers", &self.workers())
            .finish()
    }
}

/// A raw pointer that may be sent to the workers; the pool guarantees exclusive use of each part.
struct PartsPtr<T>(*mut T);
// SAFETY: only used to hand part k to worker k, which are disjoint (see `for_each_mut`).
unsafe impl<T: Send> Sync for PartsPtr<T> {}
unsafe impl<T: Send> Send for PartsPtr<T> {}

impl WorkerPool {
    /// A pool of `workers` threads in all (the caller plus `workers - 1` spawned ones).
    pub fn new(workers: usize) -> std::io::Result<Self> {
        Self::with_spin(workers, Duration::from_micros(50))
    }

    /// As [`WorkerPool::new`], spinning up to `spin` before parking when idle.
    pub fn with_spin(workers: usize, spin: Duration) -> std::io::Result<Self> {
        let workers = workers.max(1);
        let caller = Parker::new();
        let shared = Arc::new(Shared {
            epoch: CachePadded::new(AtomicU64::new(0)),
            job: AtomicPtr::new(std::ptr::null_mut()),
            remaining: CachePadded::new(AtomicUsize::new(0)),
            shutdown: AtomicBool::new(false),
            panicked: AtomicBool::new(false),
            caller: caller.unparker().clone(),
            spin,
        });
        let mut spawned = Vec::with_capacity(workers - 1);
        for k in 1..workers {
            let parker = Parker::new();
            let unparker = parker.unparker().clone();
            let shared = Arc::clone(&shared);
            let handle = std::thread::Builder::new()
                .name(format!("ssx-worker-{k}"))
                .spawn(move || worker_loop(k, &shared, &parker))?;
            spawned.push((unparker, handle));
        }
        Ok(Self {
            shared,
            workers: spawned,
            caller,
        })
    }

    /// Number of workers, the caller included.
    pub fn workers(&self) -> usize {
        self.workers.len() + 1
    }

    /// The worker threads' OS ids are not exposed; this runs `f(k)` once on every worker `k`
    /// (e.g. to set thread priority or affinity) and returns when all are done.
    pub fn broadcast(&self, f: &(dyn Fn(usize) + Sync)) {
        self.run(f);
    }

    /// Runs `f(k, &mut parts[k])` on worker `k` for every part, and returns when all are done.
    ///
    /// # Panics
    /// If `parts` has more elements than the pool has workers, or if `f` panicked on any
    /// worker (re-raised here after every worker has finished).
    pub fn for_each_mut<T: Send>(&self, parts: &mut [T], f: &(dyn Fn(usize, &mut T) + Sync)) {
        assert!(parts.len() <= self.workers(), "more parts than workers");
        let len = parts.len();
        let base = PartsPtr(parts.as_mut_ptr());
        let job = |k: usize| {
            if k < len {
                let base = &base;
                // SAFETY: k < len, and each k is run by exactly one worker per call, so the
                // `&mut` parts are disjoint; `run` returns only after every worker is done, so
                // none outlives the `parts` borrow.
                let part = unsafe { &mut *base.0.add(k) };
                f(k, part);
            }
        };
        self.run(&job);
    }

    fn run(&self, job: &Job<'_>) {
        if self.workers.is_empty() {
            job(0);
            return;
        }
        let shared = &*self.shared;
        // Publish a pointer to the (fat) job reference, which lives on this stack frame. Workers
        // only dereference it between the epoch bump below and their decrement of `remaining`,
        // and this function does not return before `remaining` is back to zero.
        let job_ref: &Job<'_> = job;
        shared
            .job
            .store(&job_ref as *const &Job<'_> as *mut (), Ordering::Relaxed);
        shared
            .remaining
            .store(self.workers.len(), Ordering::Relaxed);
        shared.epoch.fetch_add(1, Ordering::Release);
        for (unparker, _) in &self.workers {
            unparker.unpark();
        }
        let mine = catch_unwind(AssertUnwindSafe(|| job(0)));
        let spin_until = Instant::now() + shared.spin;
        while shared.remaining.load(Ordering::Acquire) != 0 {
            if Instant::now() < spin_until {
                std::hint::spin_loop();
            } else {
                self.caller.park_timeout(Duration::from_millis(1));
            }
        }
        shared.job.store(std::ptr::null_mut(), Ordering::Relaxed);
        if let Err(payload) = mine {
            resume_unwind(payload);
        }
        if shared.panicked.swap(false, Ordering::AcqRel) {
            panic!("a worker thread panicked while running a phase");
        }
    }
}

fn worker_loop(k: usize, shared: &Shared, parker: &Parker) {
    let mut seen = 0u64;
    loop {
        let spin_until = Instant::now() + shared.spin;
        loop {
            if shared.shutdown.load(Ordering::Acquire) {
                return;
            }
            let epoch = shared.epoch.load(Ordering::Acquire);
            if epoch != seen {
                seen = epoch;
                break;
            }
            if Instant::now() < spin_until {
                std::hint::spin_loop();
            } else {
                parker.park();
            }
        }
        let ptr = shared.job.load(Ordering::Relaxed) as *const &Job<'_>;
        // SAFETY: the caller stored a pointer to a live `&Job` before bumping the epoch
        // (Release/Acquire above), and keeps it alive until we decrement `remaining`.
        let job: &Job<'_> = unsafe { *ptr };
        if catch_unwind(AssertUnwindSafe(|| job(k))).is_err() {
            shared.panicked.store(true, Ordering::Release);
        }
        if shared.remaining.fetch_sub(1, Ordering::AcqRel) == 1 {
            shared.caller.unpark();
        }
    }
}

impl Drop for WorkerPool {
    fn drop(&mut self) {
        self.shared.shutdown.store(true, Ordering::Release);
        for (unparker, _) in &self.workers {
            unparker.unpark();
        }
        for (_, handle) in self.workers.drain(..) {
            let _ = handle.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn part_k_runs_on_worker_k_every_time() {
        let pool = WorkerPool::new(3).unwrap();
        let mut parts: Vec<Vec<String>> = vec![vec![]; 3];
        for _ in 0..200 {
            pool.for_each_mut(&mut parts, &|k, part| {
                part.push(
                    std::thread::current()
                        .name()
                        .unwrap_or("caller")
                        .to_string(),
                );
                assert!(k < 3);
            });
        }
        assert!(parts[0].iter().all(|n| *n == parts[0][0]));
        assert!(parts[1].iter().all(|n| n == "ssx-worker-1"));
        assert!(parts[2].iter().all(|n| n == "ssx-worker-2"));
        assert_eq!(parts[1].len(), 200);
    }

    #[test]
    fn every_part_is_done_when_the_call_returns() {
        let pool = WorkerPool::new(2).unwrap();
        let mut parts = vec![0u64; 2];
        for round in 1..=1000u64 {
            pool.for_each_mut(&mut parts, &|_, p| *p += 1);
            assert_eq!(parts, vec![round; 2]);
        }
    }

    #[test]
    fn fewer_parts_than_workers_is_fine() {
        let pool = WorkerPool::new(4).unwrap();
        let mut parts = vec![1u32];
        pool.for_each_mut(&mut parts, &|_, p| *p *= 7);
        assert_eq!(parts, vec![7]);
    }

    #[test]
    fn a_panic_on_a_worker_reaches_the_caller_and_the_pool_still_works() {
        let pool = WorkerPool::new(2).unwrap();
        let mut parts = vec![0u8; 2];
        let r = catch_unwind(AssertUnwindSafe(|| {
            pool.for_each_mut(&mut parts, &|k, _| {
                if k == 1 {
                    panic!("boom");
                }
            })
        }));
        assert!(r.is_err());
        pool.for_each_mut(&mut parts, &|_, p| *p += 1);
        assert_eq!(parts, vec![1, 1]);
    }
}
