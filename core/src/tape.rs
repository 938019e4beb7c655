//! What the extensions answered the drivers and sensors, step by step: the one way the outside
//! (Zenoh and ROS 2 messages, a haptic handle, a real robot's pose, `ssx.Sim.command`) reaches
//! a world's plugins is an extension's service, so a run whose answers are recorded can be
//! simulated again without its network, its devices or its program (issue 62; docs/replay.md).
//!
//! Recording: each answer an extension gives a driver or sensor during a step (its service, the
//! request, the response, its status) is kept; after the step the Environment hands the step's
//! answers to the render engine (the recording), in artifact order. An artifact's sensors run on
//! one worker one after the other, and so does its driver, so each artifact's answers come in
//! the order its plugins asked whatever the number of workers.
//!
//! Replaying: before each step the replay loads that step's recorded answers; each call of a
//! driver or sensor then gets the next answer recorded for its artifact and phase instead of
//! reaching the extension. A call the recording does not have, or one that asks something else
//! (another service or request), is the replay's first difference, kept for [`Tape::finish_step`].

use std::collections::{BTreeMap, VecDeque};
use std::sync::Mutex;

/// The plugin phase a call came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum CallPhase {
    /// A sensor's step.
    Sensors,
    /// A driver's step.
    Drivers,
}

impl CallPhase {
    /// Its name in recordings: `sensors`, `drivers`.
    pub fn name(self) -> &'static str {
        match self {
            CallPhase::Sensors => "sensors",
            CallPhase::Drivers => "drivers",
        }
    }

    /// The phase a recording names.
    pub fn parse(name: &str) -> Option<Self> {
        match name {
            "sensors" => Some(CallPhase::Sensors),
            "drivers" => Some(CallPhase::Drivers),
            _ => None,
        }
    }
}

/// How an extension call ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Answered: `len` bytes, all in the caller's buffer.
    Answered,
    /// The answer (`len` bytes) was longer than the caller's buffer, which holds its start.
    TooLong,
    /// The service failed.
    Failed,
}

impl Outcome {
    /// Its name in recordings: `ok`, `too_long`, `failed`.
    pub fn name(self) -> &'static str {
        match self {
            Outcome::Answered => "ok",
            Outcome::TooLong => "too_long",
            Outcome::Failed => "failed",
        }
    }

    /// The outcome a recording names.
    pub fn parse(name: &str) -> Option<Self> {
        match name {
            "ok" => Some(Outcome::Answered),
            "too_long" => Some(Outcome::TooLong),
            "failed" => Some(Outcome::Failed),
            _ => None,
        }
    }
}

/// One extension call of a driver or sensor during a step, and what it got.
#[derive(Clone, Debug, PartialEq)]
pub struct Answer {
    /// The phase it came from.
    pub phase: CallPhase,
    /// The calling plugin's artifact (scene order).
    pub artifact: u32,
    /// The extension called, by name.
    pub extension: String,
    /// The service.
    pub service: String,
    /// The request's bytes.
    pub request: Vec<u8>,
    /// The bytes written into the caller's buffer.
    pub response: Vec<u8>,
    /// The answer's length as the extension gave it (more than `response` when too long).
    pub len: u64,
    /// How it ended.
    pub outcome: Outcome,
}

/// A world's tape: off, recording, or replaying (module docs).
#[derive(Debug, Default)]
pub struct Tape {
    mode: Mode,
}

#[derive(Debug, Default)]
enum Mode {
    #[default]
    Off,
    Recording(Mutex<Vec<Answer>>),
    Replaying(Mutex<Replaying>),
}

/// The answers loaded for the step being replayed, by artifact and phase, and the first call
/// that found none or another.
#[derive(Debug, Default)]
struct Replaying {
    step: u64,
    queued: BTreeMap<(u32, CallPhase), VecDeque<Answer>>,
    difference: Option<String>,
    /// The answers given this step, for a recording of the replay ([`Tape::take`]).
    given: Vec<Answer>,
}

impl Tape {
    /// Starts recording (what was recorded before is dropped).
    pub fn record(&mut self) {
        self.mode = Mode::Recording(Mutex::default());
    }

    /// Starts replaying: calls get the answers [`Tape::load`] gives, and no extension is called.
    pub fn replay(&mut self) {
        self.mode = Mode::Replaying(Mutex::default());
    }

    /// Whether calls are answered from the tape.
    pub fn replaying(&self) -> bool {
        matches!(self.mode, Mode::Replaying(_))
    }

    /// Whether answers are being recorded.
    pub fn recording(&self) -> bool {
        matches!(self.mode, Mode::Recording(_))
    }

    /// Whether [`Tape::take`] has the step's answers (recording, or replaying: a replay's
    /// recording has the answers it gave).
    pub fn keeps(&self) -> bool {
        !matches!(self.mode, Mode::Off)
    }

    /// Keeps an answer (recording only; a worker's call, so it takes `&self`).
    pub fn keep(&self, answer: Answer) {
        if let Mode::Recording(list) = &self.mode {
            list.lock().expect("not poisoned").push(answer);
        }
    }

    /// The answers kept since the last call, in artifact order, then phase (each artifact's
    /// in the order its plugins asked: module docs).
    pub fn take(&self) -> Vec<Answer> {
        let mut answers = match &self.mode {
            Mode::Off => return Vec::new(),
            Mode::Recording(list) => std::mem::take(&mut *list.lock().expect("not poisoned")),
            Mode::Replaying(r) => std::mem::take(&mut r.lock().expect("not poisoned").given),
        };
        answers.sort_by_key(|a| (a.artifact, a.phase));
        answers
    }

    /// Replaying: the answers for step `step`, before it is taken (what is left of the step
    /// before is dropped, and was reported by [`Tape::finish_step`]).
    pub fn load(&self, step: u64, answers: impl IntoIterator<Item = Answer>) {
        let Mode::Replaying(r) = &self.mode else {
            return;
        };
        let mut r = r.lock().expect("not poisoned");
        r.step = step;
        r.queued.clear();
        for a in answers {
            r.queued
                .entry((a.artifact, a.phase))
                .or_default()
                .push_back(a);
        }
    }

    /// Replaying: the recorded answer to this call, or `None` where the recording has none for
    /// it or one from another extension or service. The first call that differs from the
    /// recording is kept as the difference, also one that only sent another request (it still
    /// gets the recorded answer, so that the step ends as in the run's plugin's eyes).
    pub fn answer(
        &self,
        phase: CallPhase,
        artifact: u32,
        extension: &str,
        service: &str,
        request: &[u8],
    ) -> Option<Answer> {
        let Mode::Replaying(r) = &self.mode else {
            return None;
        };
        let mut r = r.lock().expect("not poisoned");
        let next = r
            .queued
            .get_mut(&(artifact, phase))
            .and_then(VecDeque::pop_front);
        match next {
            Some(a) if a.extension == extension && a.service == service && a.request == request => {
                r.given.push(a.clone());
                Some(a)
            }
            other => {
                let same_service = other
                    .as_ref()
                    .is_some_and(|a| a.extension == extension && a.service == service);
                if r.difference.is_none() {
                    let asked = format!(
                        "artifact {artifact}'s {} asked extension '{extension}' for '{service}' ({} bytes of request)",
                        phase.name(),
                        request.len()
                    );
                    let recorded = match &other {
                        None => "the recording has no more answers for it in this step".into(),
                        Some(a) if a.extension == extension && a.service == service => {
                            let at = (a.request.iter().zip(request))
                                .position(|(x, y)| x != y)
                                .unwrap_or(a.request.len().min(request.len()));
                            format!(
                                "the run's request there was another ({} bytes; the two differ from byte {at} on)",
                                a.request.len()
                            )
                        }
                        Some(a) => format!(
                            "the recording has a call to '{}' for '{}' ({} bytes of request) there",
                            a.extension,
                            a.service,
                            a.request.len()
                        ),
                    };
                    r.difference = Some(format!("at step {}, {asked}; {recorded}", r.step));
                }
                let a = other.filter(|_| same_service)?;
                r.given.push(a.clone());
                Some(a)
            }
        }
    }

    /// Replaying: after a step, the first call that did not match the recording, or the first
    /// recorded answer nobody asked for (the plugins asked less than in the run). Cleared.
    pub fn finish_step(&self) -> Option<String> {
        let Mode::Replaying(r) = &self.mode else {
            return None;
        };
        let mut r = r.lock().expect("not poisoned");
        if let Some(d) = r.difference.take() {
            return Some(d);
        }
        let step = r.step;
        let unasked = r.queued.values().find_map(|q| q.front()).map(|a| {
            format!(
                "at step {step}, artifact {}'s {} did not ask extension '{}' for '{}' as the recording has",
                a.artifact,
                a.phase.name(),
                a.extension,
                a.service
            )
        });
        r.queued.clear();
        unasked
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer(artifact: u32, phase: CallPhase, request: u8) -> Answer {
        Answer {
            phase,
            artifact,
            extension: "zenoh".into(),
            service: "read".into(),
            request: vec![request],
            response: vec![request, 1],
            len: 2,
            outcome: Outcome::Answered,
        }
    }

    #[test]
    fn answers_come_back_in_artifact_order_and_are_given_again_in_the_order_asked() {
        let mut tape = Tape::default();
        tape.record();
        // As two workers might interleave them: each artifact's own in the order asked.
        for a in [
            answer(3, CallPhase::Drivers, 1),
            answer(1, CallPhase::Sensors, 2),
            answer(3, CallPhase::Drivers, 3),
            answer(1, CallPhase::Drivers, 4),
            answer(0, CallPhase::Drivers, 5),
        ] {
            tape.keep(a);
        }
        let taken = tape.take();
        let order: Vec<u8> = taken.iter().map(|a| a.request[0]).collect();
        assert_eq!(order, [5, 2, 4, 1, 3]);
        assert!(tape.take().is_empty());

        let mut replay = Tape::default();
        replay.replay();
        replay.load(7, taken);
        let ask = |artifact, phase, request| {
            replay
                .answer(phase, artifact, "zenoh", "read", &[request])
                .map(|a| a.response)
        };
        assert_eq!(ask(3, CallPhase::Drivers, 1), Some(vec![1, 1]));
        assert_eq!(ask(1, CallPhase::Sensors, 2), Some(vec![2, 1]));
        assert_eq!(ask(3, CallPhase::Drivers, 3), Some(vec![3, 1]));
        assert_eq!(ask(0, CallPhase::Drivers, 5), Some(vec![5, 1]));
        // Artifact 1's driver never asks: the step says so.
        assert_eq!(
            replay.finish_step().as_deref(),
            Some(
                "at step 7, artifact 1's drivers did not ask extension 'zenoh' for 'read' as the recording has"
            )
        );
        assert_eq!(replay.finish_step(), None);
    }

    #[test]
    fn a_call_the_recording_does_not_have_is_the_first_difference() {
        let mut replay = Tape::default();
        replay.replay();
        replay.load(12, [answer(2, CallPhase::Drivers, 9)]);
        // Another request to the same service still gets the recorded answer.
        assert_eq!(
            replay
                .answer(CallPhase::Drivers, 2, "zenoh", "read", &[8])
                .map(|a| a.request),
            Some(vec![9])
        );
        // Only the first difference is kept.
        assert_eq!(
            replay.answer(CallPhase::Sensors, 4, "zenoh", "publish", &[]),
            None
        );
        assert_eq!(
            replay.finish_step().as_deref(),
            Some(
                "at step 12, artifact 2's drivers asked extension 'zenoh' for 'read' (1 bytes of request); the run's request there was another (1 bytes; the two differ from byte 0 on)"
            )
        );
    }
}
