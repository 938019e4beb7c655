//! A fixed pool of worker threads that runs one phase at a time.
//!
//! The pool is created once. Worker `k` always gets part `k`, so an artifact's work stays on one
//! thread, and the call returns only when every part is done: a barrier between phases. The
//! caller's thread is worker 0, so a one-worker pool spawns no thread at all. Waiting workers spin
//! briefly (the next phase usually comes within microseconds), then park; while they wait they
//! take the pieces a busy worker offers at the pool's desk (help.rs).

use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicU64, AtomicUsize, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crossbeam::sync::{Parker, Unparker};
use crossbeam::utils::CachePadded;

use crate::help::{self, Desk};

type Job<'a> = dyn Fn(usize) + Sync + 'a;

/// Participants are packed into 16 bits of the state word.
const MAX_WORKERS: usize = 1 << 12;
const PARTICIPANT_BITS: u32 = 16;

struct Shared {
    /// `epoch << 16 | participants`, in one atomic so a worker always reads a consistent pair:
    /// the epoch is bumped once per job; workers `0..participants` take part in it.
    state: CachePadded<AtomicU64>,
    /// Points at a `&Job` on the caller's stack, valid while `remaining > 0`.
    job: AtomicPtr<()>,
    /// Spawned workers still running the current job.
    remaining: CachePadded<AtomicUsize>,
    shutdown: AtomicBool,
    panicked: AtomicBool,
    caller: Unparker,
    spin: Duration,
    /// Workers keep spinning (instead of parking) until this many ns after `origin`: set by
    /// [`WorkerPool::prewake`] while the next phase is known to be near.
    hold_until_ns: AtomicU64,
    origin: Instant,
    /// Work a participant offers to the others while the phase runs (help.rs).
    desk: Desk,
}

/// The worker pool. See the module docs.
pub struct WorkerPool {
    /// What the threads share, and the caller's parker; `None` for a pool of one, the caller
    /// alone (a batch's worlds each hold one: 0.7 KiB a world, issue 60).
    shared: Option<(Arc<Shared>, Parker)>,
    workers: Vec<(Unparker, JoinHandle<()>)>,
}

impl std::fmt::Debug for WorkerPool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WorkerPool")
            .field("workers", &self.workers())
            .finish()
    }
}

impl WorkerPool {
    /// A pool of `workers` threads in all (the caller plus `workers - 1` spawned ones).
    pub fn new(workers: usize) -> std::io::Result<Self> {
        Self::with_spin(workers, Duration::from_micros(50))
    }

    /// As [`WorkerPool::new`], spinning up to `spin` before parking when idle.
    pub fn with_spin(workers: usize, spin: Duration) -> std::io::Result<Self> {
        let workers = workers.clamp(1, MAX_WORKERS);
        if workers == 1 {
            return Ok(Self {
                shared: None,
                workers: Vec::new(),
            });
        }
        let caller = Parker::new();
        let shared = Arc::new(Shared {
            state: CachePadded::new(AtomicU64::new(0)),
            job: AtomicPtr::new(std::ptr::null_mut()),
            remaining: CachePadded::new(AtomicUsize::new(0)),
            shutdown: AtomicBool::new(false),
            panicked: AtomicBool::new(false),
            caller: caller.unparker().clone(),
            spin,
            hold_until_ns: AtomicU64::new(0),
            origin: Instant::now(),
            desk: Desk::default(),
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
        let mut everyone: Vec<Unparker> = spawned.iter().map(|(u, _)| u.clone()).collect();
        everyone.push(shared.caller.clone());
        shared.desk.set_wake(everyone);
        Ok(Self {
            shared: Some((shared, caller)),
            workers: spawned,
        })
    }

    /// Number of workers, the caller included.
    pub fn workers(&self) -> usize {
        self.workers.len() + 1
    }

    /// Wakes the helper workers now and keeps them spinning for up to `budget`, so that a phase
    /// dispatched within it does not pay for waking parked threads (tens to hundreds of
    /// microseconds on a VM). Costs the helpers' cores while they spin; call it when those
    /// cores would idle anyway, e.g. while the stepping thread runs the physics.
    pub fn prewake(&self, budget: Duration) {
        let Some((shared, _)) = &self.shared else {
            return;
        };
        let until = shared.origin.elapsed() + budget;
        shared
            .hold_until_ns
            .store(until.as_nanos() as u64, Ordering::Release);
        for (unparker, _) in &self.workers {
            unparker.unpark();
        }
    }

    /// Runs `f(k, &mut parts[k])` on worker `k` for every part, and returns when all are done.
    /// Only the workers that get a part are woken.
    ///
    /// # Panics
    /// If `parts` has more elements than the pool has workers, or if `f` panicked on any
    /// worker (re-raised here after every worker has finished).
    pub fn for_each_mut<T: Send>(&self, parts: &mut [T], f: &(dyn Fn(usize, &mut T) + Sync)) {
        crate::parallel::for_each_mut(self, parts, f);
    }

    fn run(&self, job: &Job<'_>, participants: usize) {
        let helpers = participants.saturating_sub(1).min(self.workers.len());
        let Some((shared, caller)) = self.shared.as_ref().map(|(s, c)| (&**s, c)) else {
            // The caller alone: pieces it offers are its own to run (not another pool's).
            help::alone(|| job(0));
            return;
        };
        if helpers == 0 {
            // The other workers wait outside this job, but may still take pieces it offers.
            help::within(&shared.desk, || job(0));
            return;
        }
        // Publish a pointer to the (fat) job reference, which lives on this stack frame.
        // Participating workers only dereference it between the state store below and their
        // decrement of `remaining`, and this function does not return before `remaining` is
        // back to zero; so no new job can be published while one of them still reads it.
        let job_ref: &Job<'_> = job;
        shared
            .job
            .store(&job_ref as *const &Job<'_> as *mut (), Ordering::Relaxed);
        shared.remaining.store(helpers, Ordering::Relaxed);
        let epoch = (shared.state.load(Ordering::Relaxed) >> PARTICIPANT_BITS) + 1;
        shared.state.store(
            epoch << PARTICIPANT_BITS | (helpers as u64 + 1),
            Ordering::Release,
        );
        for (unparker, _) in &self.workers[..helpers] {
            unparker.unpark();
        }
        let mine = catch_unwind(AssertUnwindSafe(|| help::within(&shared.desk, || job(0))));
        let mut spin_until = Instant::now() + shared.spin;
        while shared.remaining.load(Ordering::Acquire) != 0 {
            // A worker still at its part may have offered some of it.
            if shared.desk.help_once() {
                spin_until = Instant::now() + shared.spin;
            } else if Instant::now() < spin_until {
                std::hint::spin_loop();
            } else {
                caller.park_timeout(Duration::from_millis(1));
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
    help::within(&shared.desk, || serve(k, shared, parker));
}

/// A worker's life: each job it takes part in, and between them the pieces others offer.
fn serve(k: usize, shared: &Shared, parker: &Parker) {
    let mut seen = 0u64;
    loop {
        let mut spin_until = Instant::now() + shared.spin;
        let participants = loop {
            if shared.shutdown.load(Ordering::Acquire) {
                return;
            }
            let state = shared.state.load(Ordering::Acquire);
            let epoch = state >> PARTICIPANT_BITS;
            if epoch != seen {
                seen = epoch;
                break (state & ((1 << PARTICIPANT_BITS) - 1)) as usize;
            }
            if shared.desk.help_once() {
                spin_until = Instant::now() + shared.spin;
                continue;
            }
            let now = Instant::now();
            let held = (now - shared.origin).as_nanos() as u64
                <= shared.hold_until_ns.load(Ordering::Acquire);
            if now < spin_until || held {
                std::hint::spin_loop();
            } else {
                parker.park();
            }
        };
        if k >= participants {
            // Not part of this job (it saw the epoch while spinning): the caller does not wait
            // for it, and the job pointer may already be gone.
            continue;
        }
        let ptr = shared.job.load(Ordering::Relaxed) as *const &Job<'_>;
        // SAFETY: we participate in this epoch, so the caller stored a pointer to a live `&Job`
        // before publishing it (Release/Acquire on `state`) and keeps it alive, and publishes
        // no other, until we decrement `remaining`.
        let job: &Job<'_> = unsafe { *ptr };
        if catch_unwind(AssertUnwindSafe(|| job(k))).is_err() {
            shared.panicked.store(true, Ordering::Release);
        }
        if shared.remaining.fetch_sub(1, Ordering::AcqRel) == 1 {
            shared.caller.unpark();
        }
    }
}

impl crate::parallel::Parallel for WorkerPool {
    fn workers(&self) -> usize {
        WorkerPool::workers(self)
    }
    fn run(&self, participants: usize, job: &(dyn Fn(usize) + Sync)) {
        WorkerPool::run(self, job, participants);
    }
}

impl Drop for WorkerPool {
    fn drop(&mut self) {
        let Some((shared, _)) = &self.shared else {
            return;
        };
        shared.shutdown.store(true, Ordering::Release);
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

    /// A pool of one starts no thread: its job and every piece the job offers run on the
    /// caller, also inside another pool's job (a batch's world stepped by the batch's pool),
    /// whose threads take none of them.
    #[test]
    fn a_pool_of_one_runs_its_job_and_its_pieces_on_the_caller() {
        let outer = WorkerPool::new(2).unwrap();
        let mut parts = vec![Vec::<std::thread::ThreadId>::new(); 2];
        outer.for_each_mut(&mut parts, &|_, seen| {
            let one = WorkerPool::new(1).unwrap();
            assert_eq!(one.workers(), 1);
            let here = std::thread::current().id();
            let mut mine = vec![Vec::new()];
            one.for_each_mut(&mut mine, &|_, ids| {
                let pieces = std::sync::Mutex::new(Vec::new());
                crate::help::share(64, &|_| {
                    pieces.lock().unwrap().push(std::thread::current().id())
                });
                ids.extend(pieces.into_inner().unwrap());
            });
            assert_eq!(mine[0].len(), 64);
            assert!(mine[0].iter().all(|&id| id == here));
            seen.extend(mine.remove(0));
        });
        assert!(parts.iter().all(|p| p.len() == 64));
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
        for n in [1usize, 2, 3, 4, 1, 4, 2] {
            let mut parts = vec![1u32; n];
            for _ in 0..50 {
                pool.for_each_mut(&mut parts, &|_, p| *p += 1);
            }
            assert_eq!(parts, vec![51; n]);
        }
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
