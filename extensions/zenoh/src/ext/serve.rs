//! The control commands as the stepping thread serves them: pause, resume, step N (answered
//! when its last step is done), reset, stats, list and reload, between steps and while paused.

use std::sync::OnceLock;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use ssx_sdk::{Control, Ctx};

use super::{Awaiting, Zenoh};
use crate::codec::JsonOut;
use crate::control::{self, Command, Observed};
use crate::publisher::{Answer, Asker, write_metrics, write_stats};

/// How often a paused run sends the ROS 2 node's `/clock` again.
const CLOCK_AGAIN: Duration = Duration::from_millis(500);

impl Zenoh {
    /// After a step: answers `step` once its last step is done, after that step's publications.
    pub(super) fn answer_step_when_done(&mut self, ctx: &Ctx<'_>, step: u64, time: f64) {
        if let Some(Awaiting::Step(_, target, _, _)) = &self.awaiting
            && step >= *target
            && let Some(Awaiting::Step(q, _, observed, binary)) = self.awaiting.take()
        {
            self.answer_step(ctx, q, (step, time), &observed, 0, binary);
        }
    }

    /// Answers a `pause` or `resume` once the run is in that state.
    pub(super) fn answer_state_when_reached(&mut self, ctx: &Ctx<'_>) -> Result<(), String> {
        if let Some(Awaiting::Reset(q)) = self.awaiting.take_if(|a| matches!(a, Awaiting::Reset(_)))
        {
            // Asked for in the last poll: the run has reset since, or refused (a seed whose
            // scene cannot be made; ssxd logs why).
            let text = match self.reset_seed.take() {
                Some(seed) => {
                    let s = ctx.stats()?;
                    self.paused = s.paused != 0;
                    control::reset_answer(self.paused, s.steps, s.sim_time, seed)
                }
                None => control::error(
                    "reset refused: the scene could not be made for that seed (the daemon's log says why); the run goes on",
                ),
            };
            self.reply(q, text);
            return Ok(());
        }
        let Some(Awaiting::Paused(_) | Awaiting::Running(_)) = &self.awaiting else {
            return Ok(());
        };
        let s = ctx.stats()?;
        self.paused = s.paused != 0;
        let reached = matches!(
            (&self.awaiting, self.paused),
            (Some(Awaiting::Paused(_)), true) | (Some(Awaiting::Running(_)), false)
        );
        if reached && let Some(Awaiting::Paused(q) | Awaiting::Running(q)) = self.awaiting.take() {
            self.reply(
                q,
                control::run_state(self.paused, s.steps, s.sim_time, |_| {}),
            );
        }
        Ok(())
    }

    /// A `pause` or `resume` cuts a `step` in progress short: its answer says where it stopped.
    pub(super) fn interrupt_step(&mut self, ctx: &Ctx<'_>) -> Result<(), String> {
        if let Some(Awaiting::Step(q, target, observed, binary)) =
            self.awaiting.take_if(|a| matches!(a, Awaiting::Step(..)))
        {
            let (time, step) = ctx.time()?;
            self.answer_step(ctx, q, (step, time), &observed, target - step, binary);
        }
        Ok(())
    }

    /// A `step`'s answer, as JSON or in the binary layout it asked for.
    pub(super) fn answer_step(
        &mut self,
        ctx: &Ctx<'_>,
        q: Asker,
        (step, time): (u64, f64),
        observed: &[Observed],
        remaining: u64,
        binary: bool,
    ) {
        let answer = if binary {
            Answer::Binary(control::step_answer_binary(
                ctx, step, time, observed, remaining,
            ))
        } else {
            Answer::Json(control::step_answer(ctx, step, time, observed, remaining))
        };
        self.shared.outbound.reply(q, answer);
        self.send_queued();
    }

    pub(super) fn reply(&mut self, q: Asker, text: String) {
        // A full reply queue (16 unanswered) drops the query: the client's get times out.
        self.shared.outbound.reply(q, Answer::Json(text));
        self.send_queued();
    }

    /// Wakes the publisher thread for what is queued. (Sending from here while paused, where
    /// there is no deadline to keep, was measured slower: Zenoh hands the bytes to its own
    /// transmit thread either way.)
    pub(super) fn send_queued(&mut self) {
        self.pending = false;
        if let Some((t, _)) = &self.publisher {
            t.unpark();
        }
    }

    /// Paused and idle: the ROS 2 node's `/clock` again, at once when the run has stepped since
    /// it was last sent from here, then twice a second. `/clock` is best effort (rclcpp's
    /// ClockQoS) and a burst of steps (`step_n`) can lose its last message to Zenoh's congestion
    /// control; without this a subscriber would keep an old time for as long as the run stays
    /// paused.
    fn clock_again(&mut self, ctx: &Ctx<'_>) -> Result<(), String> {
        let Some(plan) = &self.ros_plan else {
            return Ok(());
        };
        let (time, step) = ctx.time()?;
        let (last, at) = self.clock_again;
        if step == last && at.elapsed() < CLOCK_AGAIN || !self.shared.outbound.grown() {
            return Ok(());
        }
        let out = &self.shared.outbound;
        if plan.clock_again(time, |topic, write| out.send_ros(topic, write)) {
            self.clock_again = (step, Instant::now());
            self.send_queued();
        }
        Ok(())
    }

    /// Between steps, and while paused whenever a query arrives: the next control query.
    /// `stats` and `list` are answered at once, also while a `step` runs; `pause` and `resume`
    /// cut a running `step` short.
    pub fn control(&mut self, ctx: &Ctx<'_>) -> Result<Control, String> {
        // Polled after every step: with nothing to do it costs one queue check (the statistics'
        // percentiles are not computed unless needed).
        if !self.paused
            && self.awaiting.is_none()
            && self.reloads.is_empty()
            && self.shared.queries.is_empty()
        {
            return Ok(Control::None);
        }
        self.answer_reloads(ctx)?;
        self.answer_state_when_reached(ctx)?;
        if matches!(
            self.awaiting,
            Some(Awaiting::Paused(_) | Awaiting::Running(_))
        ) {
            return Ok(Control::None);
        }
        let stepping = self.awaiting.is_some();
        if self.paused && !stepping {
            // Paused and idle: no step publishes anything, so warnings and statistics go out
            // from here.
            self.log_warnings(ctx);
            self.clock_again(ctx)?;
            if self.stats_every > 0
                && self.stats_wall.elapsed().as_secs_f64() >= self.desc.stats.period
            {
                self.publish_stats(ctx)?;
                self.send_queued();
            }
        }
        let Some((query, command)) = self.shared.queries.pop() else {
            return Ok(Control::None);
        };
        Ok(match command {
            Command::Pause => {
                self.interrupt_step(ctx)?;
                self.awaiting = Some(Awaiting::Paused(query));
                Control::Pause
            }
            Command::Resume => {
                self.interrupt_step(ctx)?;
                self.awaiting = Some(Awaiting::Running(query));
                Control::Resume
            }
            Command::Step { .. } if stepping => {
                self.reply(
                    query,
                    control::error("busy: a step is running; wait for its answer, or pause"),
                );
                Control::None
            }
            Command::Step { n, observe, binary } => {
                if !self.paused {
                    // Another extension may have paused the run.
                    self.paused = ctx.stats()?.paused != 0;
                }
                if !self.paused {
                    self.reply(
                        query,
                        control::error("step needs a paused run: pause first"),
                    );
                    return Ok(Control::None);
                }
                match control::resolve(ctx, &observe) {
                    Ok(observed) => {
                        let (_, steps) = ctx.time()?;
                        self.awaiting = Some(Awaiting::Step(query, steps + n, observed, binary));
                        Control::Step(n)
                    }
                    Err(e) => {
                        self.reply(query, control::error(&e));
                        Control::None
                    }
                }
            }
            Command::Reset { seed } => {
                self.interrupt_step(ctx)?;
                self.reset_seed = None;
                self.awaiting = Some(Awaiting::Reset(query));
                Control::Reset(seed)
            }
            Command::Stats => {
                let s = ctx.stats()?;
                self.paused = s.paused != 0;
                write_metrics(ctx, &mut self.metrics_json, &mut self.metric_name)?;
                let text = self.stats_reply(&s);
                self.reply(query, text);
                Control::None
            }
            Command::List => {
                let text = control::list(ctx)?;
                self.reply(query, text);
                Control::None
            }
            Command::Reload { library } => {
                match ctx.swap(&library) {
                    Ok(Some(ticket)) => self.reloads.push((query, ticket)),
                    Ok(None) => self.reply(
                        query,
                        control::error("reload: this ssxd cannot swap libraries"),
                    ),
                    Err(_) => self.reply(
                        query,
                        control::error(&format!(
                            "reload: no driver or sensor of this run comes from '{}'",
                            ssx_sdk::text::clip(&library, 128)
                        )),
                    ),
                }
                Control::None
            }
        })
    }

    /// Answers each `reload` whose swap is decided: swapped in (with the step it ran from) or
    /// refused (with why).
    pub(super) fn answer_reloads(&mut self, ctx: &Ctx<'_>) -> Result<(), String> {
        let mut i = 0;
        while i < self.reloads.len() {
            let Some(outcome) = ctx.swap_outcome(self.reloads[i].1)? else {
                i += 1;
                continue;
            };
            let (query, _) = self.reloads.swap_remove(i);
            let text = match outcome {
                Ok(library) => {
                    let (_, step) = ctx.time()?;
                    let mut b = Vec::new();
                    let mut j = crate::codec::JsonOut(&mut b);
                    j.open();
                    j.bool("ok", true);
                    j.str("swapped", &library);
                    j.u64("from_step", step);
                    j.close();
                    String::from_utf8(b).expect("JSON is UTF-8")
                }
                Err(reason) => control::error(&format!("reload refused: {reason}")),
            };
            self.reply(query, text);
        }
        Ok(())
    }

    pub(super) fn stats_reply(&self, s: &ssx_sdk::Stats) -> String {
        let mut b = Vec::with_capacity(1024);
        write_stats(&mut b, s, self.shared.counters(), &self.metrics_json);
        b.pop(); // the closing brace: add the inputs
        let reg = self.shared.registry.lock().map(|r| r.0).unwrap_or(0);
        b.extend_from_slice(b",\"ok\":true,\"inputs\":[");
        for (i, inbox) in self.shared.inboxes[..reg]
            .iter()
            .filter_map(OnceLock::get)
            .enumerate()
        {
            if i > 0 {
                b.push(b',');
            }
            let mut j = JsonOut(&mut b);
            j.open();
            j.str("key", &inbox.key);
            j.u64("accepted", inbox.accepted.load(Ordering::Relaxed));
            j.u64("malformed", inbox.malformed.load(Ordering::Relaxed));
            j.u64("overflow", inbox.overflow.load(Ordering::Relaxed));
            j.close();
        }
        b.extend_from_slice(b"]}");
        String::from_utf8(b).expect("JSON is UTF-8")
    }
}
