//! Who is running what: the record the crash handler and the watchdog read.
//!
//! Every thread that calls into a plugin or the physics engine holds a `Slot` in a fixed,
//! static table. Around each call it marks the slot busy with a [`Label`] (prepared text naming
//! the plugin, its library and its artifact), the phase and the step: a handful of relaxed
//! atomic stores, no clock read, no allocation. Two readers use the table:
//!
//! - the crash handler ([`install_crash_handler`]): on SIGSEGV, SIGBUS, SIGFPE, SIGILL or
//!   SIGABRT it writes (with `write(2)` only, from text prepared beforehand) which plugin the
//!   faulting thread was running, then lets the process die with the signal's usual status;
//! - the [`Watchdog`] thread: it samples the table and reports a call that has not returned
//!   within a limit, and, once a stop was asked for, ends a process whose step cannot finish.

use std::cell::Cell;
use std::collections::HashMap;
use std::sync::atomic::{
    AtomicBool, AtomicI32, AtomicPtr, AtomicU8, AtomicU32, AtomicU64, Ordering,
};
use std::sync::{Arc, Mutex, Once};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Prepared text naming what runs, e.g. `driver 'hover' (libssx_driver_hover.so), artifact
/// 'drone'`. Labels are interned and never freed, so a pointer to one stays valid for the
/// crash handler and the watchdog whatever the Environment does meanwhile.
#[derive(Debug)]
pub struct Label {
    text: Box<str>,
}

impl Label {
    /// The text.
    pub fn text(&self) -> &str {
        &self.text
    }
}

/// The interned label for `text` (control characters escaped).
pub fn label(text: &str) -> &'static Label {
    static LABELS: Mutex<Option<HashMap<&'static str, &'static Label>>> = Mutex::new(None);
    let text = crate::text::escape_controls(text);
    let mut labels = LABELS.lock().unwrap_or_else(|e| e.into_inner());
    let labels = labels.get_or_insert_with(HashMap::new);
    if let Some(l) = labels.get(&*text) {
        return l;
    }
    let l: &'static Label = Box::leak(Box::new(Label {
        text: text.into_owned().into_boxed_str(),
    }));
    labels.insert(&l.text, l);
    l
}

/// What a busy thread is doing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Phase {
    /// Creating a plugin from its descriptor.
    Create = 1,
    /// The engine taking the scene's bodies and joints.
    Build,
    /// An extension's `init`.
    Init,
    /// The physics engine's step.
    Physics,
    /// A sensor's `sense`.
    Sense,
    /// A driver's `step`.
    Drive,
    /// An extension's `after_step`.
    AfterStep,
    /// An extension's `control`.
    Control,
    /// A service call into an extension.
    Service,
    /// Destroying a plugin.
    Destroy,
    /// An extension's `shutdown`.
    Shutdown,
}

impl Phase {
    /// The phase's name in messages.
    pub fn name(self) -> &'static str {
        match self {
            Phase::Create => "create",
            Phase::Build => "build",
            Phase::Init => "init",
            Phase::Physics => "physics",
            Phase::Sense => "sense",
            Phase::Drive => "drive",
            Phase::AfterStep => "after_step",
            Phase::Control => "control",
            Phase::Service => "service call",
            Phase::Destroy => "destroy",
            Phase::Shutdown => "shutdown",
        }
    }

    fn from_u8(v: u8) -> Option<Phase> {
        use Phase::*;
        [
            Create, Build, Init, Physics, Sense, Drive, AfterStep, Control, Service, Destroy,
            Shutdown,
        ]
        .into_iter()
        .find(|p| *p as u8 == v)
    }
}

/// One thread's record, alone on its cache lines: its owner writes it at every plugin call, and
/// two workers' records on one line made that line travel between the cores at every call (at
/// 100 robots the stores of these records were the drivers phase's costliest instructions;
/// BENCHMARKS.md, "Swarm speed, third round"). 128 bytes: a line and the one the prefetcher
/// pairs with it, as crossbeam's `CachePadded` on x86-64.
#[repr(align(128))]
struct Slot {
    /// Kernel thread id of the owner, 0 when free.
    tid: AtomicI32,
    /// Nested calls in progress (an extension service called from a driver's step).
    depth: AtomicU32,
    /// Bumped at every enter and exit: unchanged while busy means the same call is running.
    seq: AtomicU64,
    label: AtomicPtr<Label>,
    phase: AtomicU8,
    step: AtomicU64,
}

impl Slot {
    const fn new() -> Self {
        Self {
            tid: AtomicI32::new(0),
            depth: AtomicU32::new(0),
            seq: AtomicU64::new(0),
            label: AtomicPtr::new(std::ptr::null_mut()),
            phase: AtomicU8::new(0),
            step: AtomicU64::new(0),
        }
    }
}

/// Threads that can be tracked at once; more run untracked (no name in a crash report).
const SLOTS: usize = 512;
static TABLE: [Slot; SLOTS] = [const { Slot::new() }; SLOTS];

fn gettid() -> i32 {
    // SAFETY: gettid has no arguments and cannot fail; it is async-signal-safe.
    unsafe { libc::syscall(libc::SYS_gettid) as i32 }
}

/// Frees the thread's slot when the thread ends.
struct Release(&'static Slot);

impl Drop for Release {
    fn drop(&mut self) {
        self.0.depth.store(0, Ordering::Relaxed);
        self.0.tid.store(0, Ordering::Release);
    }
}

thread_local! {
    static MINE: Cell<Option<&'static Slot>> = const { Cell::new(None) };
    static RELEASE: Cell<Option<Release>> = const { Cell::new(None) };
}

fn my_slot() -> Option<&'static Slot> {
    if let Some(s) = MINE.with(Cell::get) {
        return Some(s);
    }
    let tid = gettid();
    let slot = TABLE.iter().find(|s| {
        s.tid
            .compare_exchange(0, tid, Ordering::AcqRel, Ordering::Relaxed)
            .is_ok()
    })?;
    MINE.with(|m| m.set(Some(slot)));
    // During thread teardown the destructor list may be gone: then the slot stays claimed.
    let _ = RELEASE.try_with(|r| r.set(Some(Release(slot))));
    Some(slot)
}

/// A call in progress; the thread's previous activity comes back when it is dropped.
#[must_use = "the activity ends when this is dropped"]
pub struct Activity {
    slot: Option<&'static Slot>,
    /// The outer call's label, phase and step, when this one is nested in it.
    outer: Option<(*mut Label, u8, u64)>,
}

/// Marks the calling thread as running `label` in `phase` of `step` until the returned guard
/// is dropped. Costs a thread-local read and a few plain stores (no read-modify-write).
pub fn enter(label: &'static Label, phase: Phase, step: u64) -> Activity {
    let Some(slot) = my_slot() else {
        return Activity {
            slot: None,
            outer: None,
        };
    };
    // Only the owning thread writes its slot.
    let depth = slot.depth.load(Ordering::Relaxed);
    let outer = (depth > 0).then(|| {
        (
            slot.label.load(Ordering::Relaxed),
            slot.phase.load(Ordering::Relaxed),
            slot.step.load(Ordering::Relaxed),
        )
    });
    slot.label
        .store(label as *const Label as *mut Label, Ordering::Relaxed);
    slot.phase.store(phase as u8, Ordering::Relaxed);
    slot.step.store(step, Ordering::Relaxed);
    slot.depth.store(depth.wrapping_add(1), Ordering::Relaxed);
    bump_seq(slot);
    Activity {
        slot: Some(slot),
        outer,
    }
}

/// Names another plugin as running in the calling thread's current activity (a batch call
/// moving on to its next instance), so that a crash or a hang names the instance last seen;
/// nothing when the thread runs no activity.
pub fn relabel(label: &'static Label) {
    let Some(slot) = MINE.with(Cell::get) else {
        return;
    };
    if slot.depth.load(Ordering::Relaxed) == 0 {
        return;
    }
    slot.label
        .store(label as *const Label as *mut Label, Ordering::Relaxed);
    bump_seq(slot);
}

/// Publishes a change of the slot: the watchdog reads `seq` around its reads.
fn bump_seq(slot: &Slot) {
    slot.seq.store(
        slot.seq.load(Ordering::Relaxed).wrapping_add(1),
        Ordering::Release,
    );
}

impl Drop for Activity {
    fn drop(&mut self) {
        let Some(slot) = self.slot else { return };
        if let Some((label, phase, step)) = self.outer {
            slot.label.store(label, Ordering::Relaxed);
            slot.phase.store(phase, Ordering::Relaxed);
            slot.step.store(step, Ordering::Relaxed);
        }
        let depth = slot.depth.load(Ordering::Relaxed);
        slot.depth.store(depth.wrapping_sub(1), Ordering::Relaxed);
        bump_seq(slot);
    }
}

/// A snapshot of one busy thread.
#[derive(Clone, Debug, PartialEq)]
pub struct Busy {
    /// What runs.
    pub label: &'static str,
    /// In which phase.
    pub phase: Phase,
    /// Of which step (0: while building or shutting down).
    pub step: u64,
}

impl std::fmt::Display for Busy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}, phase {}", self.label, self.phase.name())?;
        if self.step > 0 {
            write!(f, ", step {}", self.step)?;
        }
        Ok(())
    }
}

/// Reads a slot: (seq, what it runs) when busy and read without a race.
fn sample(slot: &Slot) -> Option<(u64, Busy)> {
    let seq = slot.seq.load(Ordering::Acquire);
    if slot.tid.load(Ordering::Acquire) == 0 || slot.depth.load(Ordering::Relaxed) == 0 {
        return None;
    }
    let label = slot.label.load(Ordering::Relaxed);
    let phase = Phase::from_u8(slot.phase.load(Ordering::Relaxed));
    let step = slot.step.load(Ordering::Relaxed);
    if slot.seq.load(Ordering::Acquire) != seq || label.is_null() {
        return None;
    }
    // SAFETY: labels are interned and never freed (see `label`).
    let label: &'static Label = unsafe { &*label };
    Some((
        seq,
        Busy {
            label: &label.text,
            phase: phase?,
            step,
        },
    ))
}

/// What the calling thread is running, if anything.
pub fn running() -> Option<Busy> {
    MINE.with(Cell::get).and_then(sample).map(|(_, b)| b)
}

/// What every tracked thread is running now.
pub fn busy() -> Vec<Busy> {
    TABLE.iter().filter_map(sample).map(|(_, b)| b).collect()
}

// ---------------------------------------------------------------------------------------------
// The crash handler.

const FATAL: [(libc::c_int, &str); 5] = [
    (libc::SIGSEGV, "SIGSEGV (invalid memory reference)"),
    (libc::SIGBUS, "SIGBUS (bus error)"),
    (libc::SIGFPE, "SIGFPE (arithmetic fault)"),
    (libc::SIGILL, "SIGILL (illegal instruction)"),
    (libc::SIGABRT, "SIGABRT (abort)"),
];

/// The actions that were installed before ours (Rust's stack-overflow reporter for SIGSEGV and
/// SIGBUS), put back before a fault is re-raised.
static mut PREVIOUS: [libc::sigaction; 5] = unsafe { std::mem::zeroed() };

/// Installs the crash handler for SIGSEGV, SIGBUS, SIGFPE, SIGILL and SIGABRT (once per
/// process). See the module docs.
pub fn install_crash_handler() -> std::io::Result<()> {
    static ONCE: Once = Once::new();
    let mut result = Ok(());
    ONCE.call_once(|| {
        for (i, (sig, _)) in FATAL.iter().enumerate() {
            // SAFETY: a plain sigaction call with a zeroed, then filled struct; PREVIOUS is
            // written here once, before the handler can run for this signal.
            unsafe {
                let mut action: libc::sigaction = std::mem::zeroed();
                action.sa_sigaction = on_fatal_signal as *const () as usize;
                action.sa_flags = libc::SA_SIGINFO | libc::SA_ONSTACK;
                libc::sigemptyset(&mut action.sa_mask);
                let previous = &raw mut PREVIOUS[i];
                if libc::sigaction(*sig, &action, previous) != 0 {
                    result = Err(std::io::Error::last_os_error());
                    return;
                }
            }
        }
    });
    result
}

/// A fixed buffer for building the report without allocating.
struct Text {
    buf: [u8; 2048],
    len: usize,
}

impl Text {
    fn push(&mut self, s: &str) {
        let room = self.buf.len() - self.len;
        let n = s.len().min(room);
        self.buf[self.len..self.len + n].copy_from_slice(&s.as_bytes()[..n]);
        self.len += n;
    }
    fn number(&mut self, mut v: u64) {
        let mut digits = [0u8; 20];
        let mut i = digits.len();
        loop {
            i -= 1;
            digits[i] = b'0' + (v % 10) as u8;
            v /= 10;
            if v == 0 {
                break;
            }
        }
        // The digits are ASCII.
        self.push(std::str::from_utf8(&digits[i..]).unwrap_or("?"));
    }
    fn busy(&mut self, slot: &Slot) -> bool {
        let label = slot.label.load(Ordering::Relaxed);
        if slot.depth.load(Ordering::Relaxed) == 0 || label.is_null() {
            return false;
        }
        // SAFETY: labels are interned and never freed.
        self.push(unsafe { &(*label).text });
        if let Some(p) = Phase::from_u8(slot.phase.load(Ordering::Relaxed)) {
            self.push(", phase ");
            self.push(p.name());
        }
        let step = slot.step.load(Ordering::Relaxed);
        if step > 0 {
            self.push(", step ");
            self.number(step);
        }
        true
    }
}

extern "C" fn on_fatal_signal(sig: libc::c_int, info: *mut libc::siginfo_t, _: *mut libc::c_void) {
    // Async-signal-safe only from here on: no allocation, no locks, no formatting machinery.
    let index = FATAL.iter().position(|(s, _)| *s == sig).unwrap_or(0);
    let mut t = Text {
        buf: [0; 2048],
        len: 0,
    };
    t.push("\nssxd: fatal signal ");
    t.push(FATAL[index].1);
    let tid = gettid();
    let mine = TABLE.iter().find(|s| s.tid.load(Ordering::Relaxed) == tid);
    t.push(" while running ");
    if !mine.is_some_and(|s| t.busy(s)) {
        t.push("no plugin on this thread (ssx itself, or a thread a plugin or library started)");
        let mut others = 0;
        for s in TABLE.iter().filter(|s| s.tid.load(Ordering::Relaxed) != 0) {
            if s.depth.load(Ordering::Relaxed) > 0 {
                t.push(if others == 0 {
                    "; in progress elsewhere: "
                } else {
                    "; "
                });
                t.busy(s);
                others += 1;
            }
        }
    }
    t.push("\n");
    // SAFETY: write(2) to stderr from a stack buffer; the result is ignored (nothing to do).
    unsafe {
        libc::write(2, t.buf.as_ptr().cast(), t.len);
    }
    // Die with the signal's usual status. A fault the kernel raised (si_code > 0) comes back
    // when the faulting instruction re-runs, so the previous action (Rust's stack-overflow
    // reporter, or the default) takes it from here; a signal sent by kill() or abort() is
    // raised again with the default action.
    // SAFETY: sigaction, sigprocmask and raise are async-signal-safe; PREVIOUS is only read.
    unsafe {
        let code = if info.is_null() { 0 } else { (*info).si_code };
        if code > 0 && sig != libc::SIGABRT {
            libc::sigaction(sig, &raw const PREVIOUS[index], std::ptr::null_mut());
            return;
        }
        let mut action: libc::sigaction = std::mem::zeroed();
        action.sa_sigaction = libc::SIG_DFL;
        libc::sigaction(sig, &action, std::ptr::null_mut());
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, sig);
        libc::pthread_sigmask(libc::SIG_UNBLOCK, &set, std::ptr::null_mut());
        libc::raise(sig);
    }
}

// ---------------------------------------------------------------------------------------------
// The watchdog.

/// A call that has not returned.
#[derive(Clone, Debug)]
pub struct Stuck {
    /// What runs.
    pub busy: Busy,
    /// For at least this long.
    pub running: Duration,
}

impl std::fmt::Display for Stuck {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} has not returned for {:.1} s",
            self.busy,
            self.running.as_secs_f64()
        )
    }
}

/// The watchdog's settings.
pub struct WatchdogOptions {
    /// A call running longer than this is reported.
    pub limit: Duration,
    /// A report is repeated this often while the call goes on.
    pub repeat: Duration,
    /// The run's stop flag (set by SIGINT/SIGTERM).
    pub stop: Arc<AtomicBool>,
    /// Once `stop` is set, a call still running this long after it is given up on.
    pub grace: Duration,
    /// Called (on the watchdog thread) when a call is given up on; it should end the process.
    pub give_up: Box<dyn Fn(&Stuck) + Send>,
}

/// The watchdog's default limit for a timestep: max(1 s, 100 τ).
pub fn default_limit(timestep: f64) -> Duration {
    Duration::from_secs_f64((100.0 * timestep).max(1.0))
}

/// A thread that watches the slot table. Stops when dropped.
pub struct Watchdog {
    quit: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Watchdog {
    /// Starts watching.
    pub fn start(o: WatchdogOptions) -> std::io::Result<Self> {
        let quit = Arc::new(AtomicBool::new(false));
        let q = Arc::clone(&quit);
        let thread = std::thread::Builder::new()
            .name("ssx-watchdog".into())
            .spawn(move || watch(o, &q))?;
        Ok(Self {
            quit,
            thread: Some(thread),
        })
    }
}

impl Drop for Watchdog {
    fn drop(&mut self) {
        self.quit.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            t.thread().unpark();
            let _ = t.join();
        }
    }
}

/// Per slot: the call being followed (its seq), when it was first seen, when last reported.
#[derive(Clone, Copy)]
struct Seen {
    seq: u64,
    since: Instant,
    reported: Option<Instant>,
}

fn watch(o: WatchdogOptions, quit: &AtomicBool) {
    let tick = (o.limit / 10)
        .min(o.grace / 4)
        .clamp(Duration::from_millis(10), Duration::from_millis(250));
    let mut seen: Vec<Option<Seen>> = vec![None; SLOTS];
    let mut stop_at: Option<Instant> = None;
    while !quit.load(Ordering::Relaxed) {
        std::thread::park_timeout(tick);
        let now = Instant::now();
        if stop_at.is_none() && o.stop.load(Ordering::Relaxed) {
            stop_at = Some(now);
        }
        for (i, slot) in TABLE.iter().enumerate() {
            let Some((seq, busy)) = sample(slot) else {
                seen[i] = None;
                continue;
            };
            let s = match seen[i] {
                Some(s) if s.seq == seq => s,
                _ => Seen {
                    seq,
                    since: now,
                    reported: None,
                },
            };
            let running = now - s.since;
            let mut next = s;
            let stuck = Stuck { busy, running };
            // Once a stop was asked for, a call that has run for the grace period and kept
            // the run from stopping for as long is given up on.
            if let Some(at) = stop_at
                && now >= at + o.grace
                && running >= o.grace
            {
                (o.give_up)(&stuck);
            }
            let due = match s.reported {
                None => running >= o.limit,
                Some(r) => now >= r + o.repeat,
            };
            if due {
                tracing::error!(
                    target: "ssx::watchdog",
                    "{stuck} (watchdog limit {:.1} s); the run waits for it; a SIGTERM now ends ssxd after {:.0} s",
                    o.limit.as_secs_f64(),
                    o.grace.as_secs_f64()
                );
                next.reported = Some(now);
            }
            seen[i] = Some(next);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nested_calls_restore_the_outer_one_and_labels_are_interned() {
        let a = label("driver 'a' (built in), artifact 'x'");
        let b = label("extension 'z' (built in)");
        assert!(std::ptr::eq(
            a,
            label("driver 'a' (built in), artifact 'x'")
        ));
        let outer = enter(a, Phase::Drive, 7);
        let mine =
            |b: &Busy| b.label.starts_with("driver 'a'") || b.label.starts_with("extension 'z'");
        {
            let _inner = enter(b, Phase::Service, 7);
            let now: Vec<Busy> = busy().into_iter().filter(mine).collect();
            assert_eq!(now.len(), 1);
            assert_eq!(
                now[0].to_string(),
                "extension 'z' (built in), phase service call, step 7"
            );
        }
        let now: Vec<Busy> = busy().into_iter().filter(mine).collect();
        assert_eq!(
            now[0].to_string(),
            "driver 'a' (built in), artifact 'x', phase drive, step 7"
        );
        drop(outer);
        assert!(!busy().iter().any(mine));
    }

    #[test]
    fn control_characters_in_labels_are_escaped() {
        assert_eq!(label("a\u{1b}[2Jb\n").text(), "a\\u{1b}[2Jb\\n");
    }

    #[test]
    fn the_watchdog_names_a_call_that_does_not_return_and_gives_up_after_a_stop() {
        let l = label("sensor 'slow' (built in), artifact 'watchdog-test'");
        let stop = Arc::new(AtomicBool::new(false));
        let (tx, rx) = std::sync::mpsc::channel();
        let _dog = Watchdog::start(WatchdogOptions {
            limit: Duration::from_millis(50),
            repeat: Duration::from_secs(10),
            stop: Arc::clone(&stop),
            grace: Duration::from_millis(50),
            give_up: Box::new(move |s| {
                let _ = tx.send(s.busy.clone());
            }),
        })
        .unwrap();
        let release = Arc::new(AtomicBool::new(false));
        let r = Arc::clone(&release);
        let (entered, is_in) = std::sync::mpsc::channel();
        let worker = std::thread::spawn(move || {
            let _a = enter(l, Phase::Sense, 3);
            entered.send(()).unwrap();
            while !r.load(Ordering::Relaxed) {
                std::thread::sleep(Duration::from_millis(1));
            }
        });
        is_in.recv().unwrap();
        stop.store(true, Ordering::Relaxed);
        let busy = rx.recv_timeout(Duration::from_secs(20)).expect("gave up");
        release.store(true, Ordering::Relaxed);
        worker.join().unwrap();
        assert_eq!(
            busy.to_string(),
            "sensor 'slow' (built in), artifact 'watchdog-test', phase sense, step 3"
        );
    }
}
