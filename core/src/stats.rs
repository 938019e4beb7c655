//! Deadline statistics: HDR histograms of step time, lateness and each phase, a rate-limited
//! report of violations, and the summary written at exit (`--stats-json`).

use std::path::Path;
use std::time::Duration;

use hdrhistogram::Histogram;
use serde::Serialize;

use crate::error::SsxError;

const MAX_TRACKED_NS: u64 = 600_000_000_000; // 10 minutes: anything longer saturates

fn histogram() -> Histogram<u64> {
    // Allocated once, here; recording never allocates.
    Histogram::new_with_bounds(1, MAX_TRACKED_NS, 3).expect("static histogram bounds are valid")
}

/// The run's statistics as extensions see them while it runs (the C ABI's `SsxStats`).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct LiveStats {
    /// The run is paused.
    pub paused: bool,
    /// Steps completed.
    pub steps: u64,
    /// Simulated time (s).
    pub sim_time: f64,
    /// Wall time since the first step (s), pauses included.
    pub wall_time: f64,
    /// Steps that ended after their deadline.
    pub deadline_misses: u64,
    /// Runs of consecutive misses.
    pub miss_bursts: u64,
    /// Late wake-ups (see [`StatsSummary::late_wakeups`]).
    pub late_wakeups: u64,
    /// Plugins disabled after a failure.
    pub plugin_faults: u64,
    /// Step compute time percentiles (µs).
    pub step_p50_us: f64,
    /// See `step_p50_us`.
    pub step_p99_us: f64,
    /// See `step_p50_us`.
    pub step_max_us: f64,
    /// Lateness 99th percentile (µs).
    pub lateness_p99_us: f64,
    /// Largest lateness (µs).
    pub lateness_max_us: f64,
}

/// What an extension may ask about the statistics during a call: computed only when asked.
#[derive(Clone, Copy)]
pub struct StatsView<'a> {
    pub(crate) stats: &'a Stats,
    pub(crate) paused: bool,
    pub(crate) sim_time: f64,
    pub(crate) wall_time: f64,
    /// Every extension's figures as of the end of the previous step (`<extension>.<name>`).
    pub(crate) metrics: &'a [(String, f64)],
}

impl<'a> StatsView<'a> {
    /// Every extension's figures as of the end of the previous step, in the order first set.
    pub fn metrics(&self) -> &'a [(String, f64)] {
        self.metrics
    }
}

impl StatsView<'_> {
    /// The live statistics.
    pub fn live(&self) -> LiveStats {
        self.stats.live(self.paused, self.sim_time, self.wall_time)
    }
}

/// Per-phase compute times of one step.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PhaseTimes {
    /// Applying commands and stepping the engine.
    pub physics: Duration,
    /// The sensor phase.
    pub sensors: Duration,
    /// The driver phase.
    pub drivers: Duration,
    /// The whole step's compute time, pacing excluded.
    pub total: Duration,
}

impl PhaseTimes {
    /// The phase that took longest, by name.
    pub fn slowest(&self) -> (&'static str, Duration) {
        let mut best = ("physics", self.physics);
        for (name, d) in [("sensors", self.sensors), ("drivers", self.drivers)] {
            if d > best.1 {
                best = (name, d);
            }
        }
        best
    }
}

/// Percentiles of one histogram, in microseconds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct Percentiles {
    /// Median.
    pub p50: f64,
    /// 90th percentile.
    pub p90: f64,
    /// 99th percentile.
    pub p99: f64,
    /// 99.9th percentile.
    pub p999: f64,
    /// Largest value.
    pub max: f64,
    /// Mean.
    pub mean: f64,
}

impl Percentiles {
    fn of(h: &Histogram<u64>) -> Self {
        if h.is_empty() {
            return Self::default();
        }
        let us = |ns: u64| ns as f64 / 1000.0;
        Self {
            p50: us(h.value_at_quantile(0.5)),
            p90: us(h.value_at_quantile(0.9)),
            p99: us(h.value_at_quantile(0.99)),
            p999: us(h.value_at_quantile(0.999)),
            max: us(h.max()),
            mean: h.mean() / 1000.0,
        }
    }
}

/// Phase percentiles, as the stats JSON names them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct PhasePercentiles {
    /// Commands and engine step.
    pub physics: Percentiles,
    /// Sensor phase.
    pub sensors: Percentiles,
    /// Driver phase.
    pub drivers: Percentiles,
}

/// The run summary: the stats JSON of DESIGN.md and what the daemon prints at exit.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct StatsSummary {
    /// Steps completed.
    pub steps: u64,
    /// Simulated seconds per step.
    pub timestep_s: f64,
    /// Simulated time reached.
    pub sim_time_s: f64,
    /// Wall time from the first step's start to the last step's end.
    pub wall_time_s: f64,
    /// `realtime` or `fast`.
    pub mode: String,
    /// Real-time factor asked for (realtime mode), or null.
    pub rt_factor: Option<f64>,
    /// Real-time factor achieved: sim_time_s / wall_time_s.
    pub achieved_rt_factor: f64,
    /// Worker threads.
    pub workers: usize,
    /// Steps that ended after their deadline.
    pub deadline_misses: u64,
    /// Runs of consecutive missed steps.
    pub miss_bursts: u64,
    /// Largest lateness of any step (µs).
    pub max_lateness_us: f64,
    /// Step compute time (µs), pacing excluded.
    pub step_time_us: Percentiles,
    /// Time past each deadline at which the next step started (µs); 0 for fast mode.
    pub lateness_us: Percentiles,
    /// Compute time of each phase (µs).
    pub phase_time_us: PhasePercentiles,
    /// Steps whose compute was on time but whose wait returned more than a tenth of a period
    /// after the deadline (the machine or the scheduler stalled).
    pub late_wakeups: u64,
    /// Plugins disabled after a failure.
    pub plugin_faults: u64,
    /// Extensions' figures, `<extension>.<name>`: the last value each set (empty when none).
    pub metrics: std::collections::BTreeMap<String, f64>,
}

impl StatsSummary {
    /// Writes the summary as JSON: to a temporary file beside `path`, then renamed over it, so
    /// a reader never sees half a file.
    pub fn write_json_atomic(&self, path: &Path) -> Result<(), SsxError> {
        let mut text = serde_json::to_vec_pretty(self).map_err(|e| SsxError::Io {
            path: path.into(),
            message: e.to_string(),
        })?;
        text.push(b'\n');
        write_atomic(path, &text)
    }

    /// The human summary printed at exit.
    pub fn render_text(&self) -> String {
        let p = |x: &Percentiles| {
            format!(
                "p50 {:>9.1}  p90 {:>9.1}  p99 {:>9.1}  p99.9 {:>9.1}  max {:>9.1}",
                x.p50, x.p90, x.p99, x.p999, x.max
            )
        };
        let factor = self.rt_factor.map(|f| format!(" x{f}")).unwrap_or_default();
        format!(
            "ssx run summary\n  steps {} of {} s = {:.3} s simulated in {:.3} s wall ({}{}, achieved x{:.2}, {} workers)\n  \
             deadline misses {} ({:.3}% of steps, {} bursts), late wake-ups {}, max lateness {:.1} us\n  \
             step time (us)   {}\n  lateness (us)    {}\n  physics (us)     {}\n  sensors (us)     {}\n  drivers (us)     {}\n  plugin faults {}",
            self.steps,
            self.timestep_s,
            self.sim_time_s,
            self.wall_time_s,
            self.mode,
            factor,
            self.achieved_rt_factor,
            self.workers,
            self.deadline_misses,
            if self.steps > 0 {
                100.0 * self.deadline_misses as f64 / self.steps as f64
            } else {
                0.0
            },
            self.miss_bursts,
            self.late_wakeups,
            self.max_lateness_us,
            p(&self.step_time_us),
            p(&self.lateness_us),
            p(&self.phase_time_us.physics),
            p(&self.phase_time_us.sensors),
            p(&self.phase_time_us.drivers),
            self.plugin_faults,
        ) + &self
            .metrics
            .iter()
            .map(|(k, v)| format!("\n  {k} {v}"))
            .collect::<String>()
    }
}

/// The step times of timed [`Stats`].
struct Times {
    step: Histogram<u64>,
    lateness: Histogram<u64>,
    physics: Histogram<u64>,
    sensors: Histogram<u64>,
    drivers: Histogram<u64>,
}

/// Accumulates per-step timings. Recording never allocates.
pub struct Stats {
    /// `None` for [`Stats::untimed`].
    times: Option<Box<Times>>,
    steps: u64,
    misses: u64,
    bursts: u64,
    in_burst: bool,
    max_lateness: Duration,
    late_wakeups: u64,
    plugin_faults: u64,
}

impl Default for Stats {
    fn default() -> Self {
        Self::new()
    }
}

impl Stats {
    /// Empty statistics.
    pub fn new() -> Self {
        Self::with(Some(Box::new(Times {
            step: histogram(),
            lateness: histogram(),
            physics: histogram(),
            sensors: histogram(),
            drivers: histogram(),
        })))
    }

    /// Statistics that count steps, misses and faults but keep no step times: the five
    /// histograms of [`Stats::new`] take about 1.2 MB, which a batch of a thousand small worlds
    /// (`ssx-worlds`) would pay a thousand times, and again at every reset. Percentiles read 0.
    pub fn untimed() -> Self {
        Self::with(None)
    }

    /// Empty statistics of the same kind (timed or not): what a reset starts from.
    pub fn fresh(&self) -> Self {
        if self.timed() {
            Self::new()
        } else {
            Self::untimed()
        }
    }

    fn with(times: Option<Box<Times>>) -> Self {
        Self {
            times,
            steps: 0,
            misses: 0,
            bursts: 0,
            in_burst: false,
            max_lateness: Duration::ZERO,
            late_wakeups: 0,
            plugin_faults: 0,
        }
    }

    /// Whether step times are kept.
    pub fn timed(&self) -> bool {
        self.times.is_some()
    }

    /// Records one step: its phase times, its lateness (None in fast mode), whether it missed
    /// its deadline, and whether its wait returned late.
    pub fn record(
        &mut self,
        times: &PhaseTimes,
        lateness: Option<Duration>,
        missed: bool,
        late_wakeup: bool,
    ) {
        self.late_wakeups += u64::from(late_wakeup);
        if let Some(h) = &mut self.times {
            let ns = |d: Duration| (d.as_nanos() as u64).max(1);
            h.step.saturating_record(ns(times.total));
            h.physics.saturating_record(ns(times.physics));
            h.sensors.saturating_record(ns(times.sensors));
            h.drivers.saturating_record(ns(times.drivers));
            if let Some(late) = lateness {
                h.lateness.saturating_record(ns(late));
            }
        }
        if let Some(late) = lateness {
            self.max_lateness = self.max_lateness.max(late);
        }
        self.steps += 1;
        if missed {
            self.misses += 1;
            if !self.in_burst {
                self.bursts += 1;
            }
        }
        self.in_burst = missed;
    }

    /// Counts a plugin disabled after a failure.
    pub fn record_plugin_fault(&mut self) {
        self.plugin_faults += 1;
    }

    /// Steps recorded.
    pub fn steps(&self) -> u64 {
        self.steps
    }

    /// Deadline misses so far.
    pub fn misses(&self) -> u64 {
        self.misses
    }

    /// The live figures extensions publish. Reads three quantiles from two histograms (a few
    /// µs); the caller decides how often.
    pub fn live(&self, paused: bool, sim_time: f64, wall_time: f64) -> LiveStats {
        let us = |ns: u64| ns as f64 / 1000.0;
        let q = |h: Option<&Histogram<u64>>, q: f64| match h {
            Some(h) if !h.is_empty() => us(h.value_at_quantile(q)),
            _ => 0.0,
        };
        let step = self.times.as_ref().map(|t| &t.step);
        LiveStats {
            paused,
            steps: self.steps,
            sim_time,
            wall_time,
            deadline_misses: self.misses,
            miss_bursts: self.bursts,
            late_wakeups: self.late_wakeups,
            plugin_faults: self.plugin_faults,
            step_p50_us: q(step, 0.5),
            step_p99_us: q(step, 0.99),
            step_max_us: match step {
                Some(h) if !h.is_empty() => us(h.max()),
                _ => 0.0,
            },
            lateness_p99_us: q(self.times.as_ref().map(|t| &t.lateness), 0.99),
            lateness_max_us: self.max_lateness.as_nanos() as f64 / 1000.0,
        }
    }

    /// The summary, given what the stats do not know themselves.
    pub fn summary(
        &self,
        timestep_s: f64,
        sim_time_s: f64,
        wall: Duration,
        mode: crate::pacer::Mode,
        workers: usize,
    ) -> StatsSummary {
        let wall_time_s = wall.as_secs_f64();
        let of = |h: fn(&Times) -> &Histogram<u64>| {
            self.times
                .as_deref()
                .map_or_else(Percentiles::default, |t| Percentiles::of(h(t)))
        };
        StatsSummary {
            steps: self.steps,
            timestep_s,
            sim_time_s,
            wall_time_s,
            mode: mode.name().to_string(),
            rt_factor: match mode {
                crate::pacer::Mode::Realtime { factor } => Some(factor),
                crate::pacer::Mode::Fast => None,
            },
            achieved_rt_factor: if wall_time_s > 0.0 {
                sim_time_s / wall_time_s
            } else {
                0.0
            },
            workers,
            deadline_misses: self.misses,
            miss_bursts: self.bursts,
            max_lateness_us: self.max_lateness.as_nanos() as f64 / 1000.0,
            step_time_us: of(|t| &t.step),
            lateness_us: of(|t| &t.lateness),
            phase_time_us: PhasePercentiles {
                physics: of(|t| &t.physics),
                sensors: of(|t| &t.sensors),
                drivers: of(|t| &t.drivers),
            },
            late_wakeups: self.late_wakeups,
            plugin_faults: self.plugin_faults,
            metrics: Default::default(),
        }
    }
}

/// One deadline violation, with where the step's time went.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Miss {
    /// The step that missed.
    pub step: u64,
    /// How late it ended.
    pub lateness: Duration,
    /// Its phase times.
    pub times: PhaseTimes,
    /// The slowest artifact of the slowest plugin phase (index and time), if any ran.
    pub slowest_artifact: Option<(u32, Duration)>,
}

/// A report line's worth of violations: the first miss since the last line, and a count.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MissReport {
    /// The miss that opened this report.
    pub first: Miss,
    /// Misses since the previous report, this one included.
    pub count: u64,
    /// The worst lateness among them.
    pub worst: Duration,
}

impl MissReport {
    /// `"; N <what> since the last report, worst X ms<suffix>"` when the report stands for more
    /// than one event, else empty.
    /// Formats lazily: the report is logged from the stepping thread, which must not allocate.
    pub fn since_last<'a>(&'a self, what: &'a str, suffix: &'a str) -> impl std::fmt::Display + 'a {
        DisplayFn(move |f: &mut std::fmt::Formatter<'_>| {
            if self.count > 1 {
                write!(
                    f,
                    "; {} {what} since the last report, worst {:.3} ms{suffix}",
                    self.count,
                    self.worst.as_secs_f64() * 1e3
                )
            } else {
                Ok(())
            }
        })
    }
}

/// Something displayed by a closure, formatted only when written (no intermediate `String`).
pub(crate) struct DisplayFn<F>(pub F);

impl<F: Fn(&mut std::fmt::Formatter<'_>) -> std::fmt::Result> std::fmt::Display for DisplayFn<F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        (self.0)(f)
    }
}

/// Rate limiter for deadline warnings: at most one report per `interval`, each carrying the
/// count and the worst lateness of the misses it stands for. Never one line per step.
#[derive(Debug)]
pub struct MissReporter {
    interval: Duration,
    last_report: Option<Duration>,
    /// The report being gathered (`pending`), in a box kept from report to report: boxed, for
    /// a report is 130-odd bytes and every world of a batch holds two reporters that fast mode
    /// never fills; kept, so that a miss allocates nothing on the stepping thread (a paced
    /// world makes it up front, [`MissReporter::paced`]).
    report: Option<Box<MissReport>>,
    pending: bool,
}

impl MissReporter {
    /// At most one report per `interval`; the report's box is made at the first miss.
    pub fn new(interval: Duration) -> Self {
        Self {
            interval,
            last_report: None,
            report: None,
            pending: false,
        }
    }

    /// [`MissReporter::new`] for a world that can miss (a paced one): the report's box made
    /// now, so that no miss allocates; one that cannot (`paced` false) makes none.
    pub fn paced(interval: Duration, paced: bool) -> Self {
        let blank = Miss {
            step: 0,
            lateness: Duration::ZERO,
            times: PhaseTimes::default(),
            slowest_artifact: None,
        };
        Self {
            report: paced.then(|| {
                Box::new(MissReport {
                    first: blank,
                    count: 0,
                    worst: Duration::ZERO,
                })
            }),
            ..Self::new(interval)
        }
    }

    /// Notes a miss at wall time `now`; returns a report when one is due.
    pub fn on_miss(&mut self, now: Duration, miss: Miss) -> Option<MissReport> {
        let opened = MissReport {
            first: miss,
            count: 0,
            worst: Duration::ZERO,
        };
        let pending = match &mut self.report {
            Some(r) if self.pending => r,
            Some(r) => {
                **r = opened;
                r
            }
            None => self.report.insert(Box::new(opened)),
        };
        self.pending = true;
        pending.count += 1;
        pending.worst = pending.worst.max(miss.lateness);
        self.poll(now)
    }

    /// Returns the pending report if one is due at `now` (call it on quiet steps too, so a
    /// burst is reported about a second after it began even if no miss follows).
    pub fn poll(&mut self, now: Duration) -> Option<MissReport> {
        if !self.pending {
            return None;
        }
        let due = match self.last_report {
            None => true,
            Some(last) => now >= last + self.interval,
        };
        if due {
            self.last_report = Some(now);
            self.flush()
        } else {
            None
        }
    }

    /// Whatever is pending, regardless of time (at the end of a run).
    pub fn flush(&mut self) -> Option<MissReport> {
        let report = self.report.as_deref().copied().filter(|_| self.pending);
        self.pending = false;
        report
    }
}

/// Writes a file whole or not at all: a temporary file in the same directory, synced, then
/// renamed over `path`. A reader never sees a half-written file.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), SsxError> {
    use std::io::Write;
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let mut tmp = tempfile::NamedTempFile::new_in(dir).map_err(|e| SsxError::io(path, &e))?;
    tmp.write_all(bytes).map_err(|e| SsxError::io(path, &e))?;
    tmp.as_file()
        .sync_all()
        .map_err(|e| SsxError::io(path, &e))?;
    tmp.persist(path)
        .map_err(|e| SsxError::io(path, &e.error))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn miss(step: u64, late_us: u64) -> Miss {
        Miss {
            step,
            lateness: Duration::from_micros(late_us),
            times: PhaseTimes::default(),
            slowest_artifact: None,
        }
    }

    /// The same with the report's box made at the first miss and made up front (a paced
    /// world's); a burst after a report opens a new one, and nothing is pending after a flush.
    #[test]
    fn a_thousand_misses_in_a_second_make_two_lines_with_every_miss_counted() {
        let second = Duration::from_secs(1);
        for mut r in [MissReporter::new(second), MissReporter::paced(second, true)] {
            let mut reports = vec![];
            for i in 0..1000u64 {
                let now = Duration::from_millis(i);
                reports.extend(r.on_miss(now, miss(i, 10 + i % 7)));
            }
            reports.extend(r.poll(Duration::from_millis(1000)));
            reports.extend(r.flush());
            assert_eq!(reports.len(), 2);
            assert_eq!(reports[0].count, 1, "the first miss is reported at once");
            assert_eq!(reports[1].count, 999);
            assert_eq!(reports[1].first.step, 1);
            assert_eq!(reports[1].worst, Duration::from_micros(16));
            assert_eq!(r.flush(), None);
            assert_eq!(r.poll(Duration::from_secs(5)), None);
            let late = r.on_miss(Duration::from_millis(2500), miss(2000, 3));
            assert_eq!(late.map(|l| (l.count, l.first.step)), Some((1, 2000)));
        }
        assert!(MissReporter::paced(second, false).report.is_none());
    }

    #[test]
    fn bursts_and_misses_are_counted_separately() {
        let mut s = Stats::new();
        let t = PhaseTimes {
            total: Duration::from_micros(100),
            ..Default::default()
        };
        for missed in [false, true, true, false, true, false] {
            s.record(
                &t,
                Some(Duration::from_micros(if missed { 50 } else { 2 })),
                missed,
                false,
            );
        }
        let sum = s.summary(
            0.001,
            0.006,
            Duration::from_millis(6),
            crate::pacer::Mode::Realtime { factor: 1.0 },
            1,
        );
        assert_eq!(sum.deadline_misses, 3);
        assert_eq!(sum.miss_bursts, 2);
        assert_eq!(sum.max_lateness_us, 50.0);
        assert!((sum.step_time_us.p50 - 100.0).abs() < 0.1);
    }

    #[test]
    fn untimed_statistics_count_steps_and_misses_and_keep_no_times() {
        let times = PhaseTimes {
            physics: Duration::from_millis(5),
            sensors: Duration::from_millis(1),
            drivers: Duration::from_millis(1),
            total: Duration::from_millis(7),
        };
        let mut timed = Stats::new();
        let mut untimed = Stats::untimed();
        assert!(timed.timed() && !untimed.timed());
        for i in 0..10 {
            let late = Some(Duration::from_micros(100 * i));
            timed.record(&times, late, i % 3 == 0, false);
            untimed.record(&times, late, i % 3 == 0, false);
        }
        let a = timed.summary(
            0.01,
            0.1,
            Duration::from_millis(70),
            crate::pacer::Mode::Fast,
            1,
        );
        let b = untimed.summary(
            0.01,
            0.1,
            Duration::from_millis(70),
            crate::pacer::Mode::Fast,
            1,
        );
        assert_eq!(
            (b.steps, b.deadline_misses, b.miss_bursts),
            (a.steps, a.deadline_misses, a.miss_bursts)
        );
        assert_eq!((b.steps, b.deadline_misses, b.miss_bursts), (10, 4, 4));
        assert_eq!(b.max_lateness_us, a.max_lateness_us);
        assert!(
            (a.step_time_us.p50 - 7000.0).abs() < 10.0,
            "{}",
            a.step_time_us.p50
        );
        assert_eq!(b.step_time_us.p50, 0.0);
        // An untimed record keeps no histograms, not the 245 KiB of a timed one's.
        assert!(untimed.times.is_none());
        assert!(timed.times.as_ref().unwrap().step.distinct_values() > 10_000);
    }

    #[test]
    fn summary_json_is_written_whole_with_the_design_fields() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.json");
        let sum = Stats::new().summary(0.01, 0.0, Duration::ZERO, crate::pacer::Mode::Fast, 2);
        sum.write_json_atomic(&path).unwrap();
        let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        for key in [
            "steps",
            "timestep_s",
            "sim_time_s",
            "wall_time_s",
            "mode",
            "deadline_misses",
            "max_lateness_us",
        ] {
            assert!(v.get(key).is_some(), "missing {key}");
        }
        for key in ["p50", "p90", "p99", "p999", "max"] {
            assert!(v["step_time_us"].get(key).is_some());
            for phase in ["physics", "sensors", "drivers"] {
                assert!(v["phase_time_us"][phase].get(key).is_some());
            }
        }
        assert_eq!(
            std::fs::read_dir(dir.path()).unwrap().count(),
            1,
            "no temporary file left"
        );
    }
}
