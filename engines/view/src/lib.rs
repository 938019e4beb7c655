//! ssx-view: the [`RenderEngine`] backend that lets people watch a run and keep it.
//!
//! - a live stream over the Foxglove WebSocket protocol (the `foxglove` crate's server and
//!   built-in schemas), which Foxglove (or Lichtblick) and the built-in three.js page both show;
//! - MCAP recordings of the same channels, with a snapshot every N steps.
//!
//! The stepping thread only copies a snapshot (body poses, fresh readings) into a free buffer at
//! the view rate or the recording's step divider; encoding, network and disk work happen on
//! threads of their own. When their consumer is behind, snapshots are dropped and counted, and
//! the step goes on (`frame.rs`). Channels and their schemas: `docs/view.md`.
#![warn(missing_docs)]

mod camera;
mod convert;
mod error;
mod frame;
mod hub;
pub mod inputs;
mod live;
mod log_layer;
mod mesh;
mod overlays;
mod page;
mod playback;
pub mod plot;
mod publish;
mod pull;
mod rays;
mod record;
mod scene;

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use ssx_core::{ArtifactId, RenderEngine, RenderFrame, RenderNode, RenderReset, RenderScene};

pub use frame::PipeCounters;
pub use hub::{Hub, Report};
pub use live::ViewOptions;
pub use log_layer::LogLayer;
pub use playback::{Event, Events, Playback, RecordedReset, Snapshot};
pub use publish::{Side, topics};
pub use record::{RecordOptions, RunRecord};
pub use scene::{CameraGeometry, RangeGeometry, SceneInfo, SensorKind, WORLD_FRAME};

pub use error::ViewError;
use frame::{Pipe, ResetEvent};
use live::Live;
use record::Recorder;

/// Snapshots in flight to the live publisher: a few frames; more would only show old ones.
const LIVE_BUFFERS: usize = 4;
/// Snapshots in flight to the recorder: enough for a few hundred milliseconds at 1 kHz.
const RECORD_BUFFERS: usize = 512;
/// The recorder is woken when this many snapshots wait (it also polls every 20 ms), so that it
/// writes in batches instead of taking a core from the step a thousand times a second.
const RECORD_WAKE_AT: usize = RECORD_BUFFERS / 4;

struct LiveSink {
    server: Live,
    pipe: Pipe,
    schedule: Schedule,
}

/// Frames at a fixed rate on a clock: due at the first call, then every period; after falling a
/// period or more behind (a pause, a stall) the schedule starts afresh instead of catching up.
struct Schedule {
    period: Duration,
    next_at: Option<Duration>,
}

impl Schedule {
    fn due(&mut self, now: Duration) -> bool {
        if self.next_at.is_some_and(|t| now < t) {
            return false;
        }
        let next = self.next_at.unwrap_or(now) + self.period;
        self.next_at = Some(if next <= now { now + self.period } else { next });
        true
    }
}

struct RecordSink {
    recorder: Recorder,
    pipe: Pipe,
    every: u64,
    lossless: bool,
    /// Each step's inputs to the recorder (never dropped), with their log time.
    inputs: crossbeam::channel::Sender<inputs::Pending>,
    /// The step's answers, until its `sync` gives their time.
    pending: Option<(u64, Vec<ssx_core::tape::Answer>)>,
    /// The swaps made at the step's start, until its `sync`.
    swaps: Vec<ssx_core::SwappedBuild>,
}

/// The view and recording backend. Build it before the Environment (so a busy port or an
/// existing file is refused before anything runs), hand it over as the render engine, and read
/// the counts through the [`Hub`] after the Environment is dropped (dropping it finishes the
/// recording).
pub struct Output {
    nodes: Vec<RenderNode>,
    hub: Hub,
    live: Option<LiveSink>,
    record: Option<RecordSink>,
    /// Every sensor as (artifact, index), in scene order: the frames' reading slots.
    slots: Vec<(ArtifactId, usize)>,
    /// Resets so far.
    episode: u64,
    /// Log time (ns) of the current world's simulated time 0: the simulated time at each
    /// reset, summed.
    offset_ns: u64,
}

impl Output {
    /// Binds the live view's ports and creates the recording's file, as asked.
    pub fn new(
        hub: Hub,
        view: Option<&ViewOptions>,
        record: Option<&RecordOptions>,
    ) -> Result<Self, ViewError> {
        let live = match view {
            Some(o) => {
                if !(o.rate.is_finite() && o.rate > 0.0 && o.rate <= 1000.0) {
                    return Err(ViewError::Rate(o.rate));
                }
                let server = Live::bind(o)?;
                *hub.0.live_endpoints.lock().expect("not poisoned") =
                    Some((server.ws_url.clone(), server.page_url.clone()));
                Some(LiveSink {
                    server,
                    pipe: Pipe::new(LIVE_BUFFERS, 1, Arc::clone(&hub.0.live_frames)),
                    schedule: Schedule {
                        period: Duration::from_secs_f64(1.0 / o.rate),
                        next_at: None,
                    },
                })
            }
            None => None,
        };
        let record = match record {
            Some(o) => {
                if o.every == 0 {
                    return Err(ViewError::RecordEvery);
                }
                let recorder = Recorder::create(o)?;
                *hub.0.recording.lock().expect("not poisoned") = Some(recorder.state());
                Some(RecordSink {
                    inputs: recorder.inputs(),
                    pending: None,
                    swaps: Vec::new(),
                    recorder,
                    pipe: Pipe::new(
                        RECORD_BUFFERS,
                        RECORD_WAKE_AT,
                        Arc::clone(&hub.0.record_frames),
                    ),
                    every: o.every,
                    lossless: o.lossless,
                })
            }
            None => None,
        };
        Ok(Self {
            nodes: Vec::new(),
            hub,
            live,
            record,
            slots: Vec::new(),
            episode: 0,
            offset_ns: 0,
        })
    }

    /// The live view's WebSocket and page URLs, when it runs.
    pub fn endpoints(&self) -> Option<(&str, &str)> {
        self.live
            .as_ref()
            .map(|l| (l.server.ws_url.as_str(), l.server.page_url.as_str()))
    }
}

impl RenderEngine for Output {
    fn name(&self) -> &'static str {
        "view"
    }

    fn add_node(&mut self, node: RenderNode) -> usize {
        self.nodes.push(node);
        self.nodes.len() - 1
    }

    fn start(&mut self, scene: &RenderScene<'_>) -> Result<(), String> {
        let info = Arc::new(SceneInfo::new(scene, &self.nodes));
        self.slots = info.sensors.iter().map(|s| (s.artifact, s.index)).collect();
        if let Some(l) = &mut self.live {
            let t = l
                .server
                .start(Arc::clone(&info), l.pipe.queues(), self.hub.clone())?;
            l.pipe.set_consumer(t);
            self.hub.0.live.on.store(true, Ordering::Relaxed);
        }
        if let Some(r) = &mut self.record {
            let t = r.recorder.start(
                Arc::clone(&info),
                r.pipe.queues(),
                self.hub.clone(),
                scene.libraries.to_vec(),
            )?;
            r.pipe.set_consumer(t);
            self.hub.0.record.on.store(true, Ordering::Relaxed);
        }
        Ok(())
    }

    fn reset(&mut self, reset: &RenderReset<'_>) {
        reset.nodes.clone_into(&mut self.nodes);
        self.episode += 1;
        // Log times go on from where the old run stopped: a file's never go back.
        self.offset_ns += frame::nanos(reset.time_before);
        self.hub.0.sim_ns.store(self.offset_ns, Ordering::Relaxed);
        if self.live.is_none() && self.record.is_none() {
            return;
        }
        let info = Arc::new(SceneInfo::new(&reset.scene, &self.nodes));
        self.slots = info.sensors.iter().map(|s| (s.artifact, s.index)).collect();
        let event = Arc::new(ResetEvent {
            episode: self.episode,
            info,
            seed: reset.seed,
            steps_before: reset.steps_before,
            time_before: reset.time_before,
            offset_ns: self.offset_ns,
        });
        tracing::debug!(
            "view: reset {} (step {} at {} s, seed {}), log time goes on from {} ns",
            event.episode,
            event.steps_before,
            event.time_before,
            event.seed,
            event.offset_ns
        );
        if let Some(l) = &mut self.live {
            l.pipe.reset(Arc::clone(&event));
            // The new world's first step is shown at once.
            l.schedule.next_at = None;
        }
        if let Some(r) = &mut self.record {
            r.pipe.reset(event);
        }
    }

    fn sync(&mut self, frame: &RenderFrame<'_>) {
        self.hub
            .0
            .sim_ns
            .store(self.offset_ns + frame::nanos(frame.time), Ordering::Relaxed);
        if let Some(l) = &mut self.live {
            // The view rate is in wall time (the Environment's clock): a fast run is shown at
            // the same rate as a real-time one.
            if l.schedule.due(frame.now) {
                l.pipe.offer(frame, &self.slots);
            }
        }
        if let Some(r) = &mut self.record
            && (r.pending.is_some() || !r.swaps.is_empty())
        {
            let (step, answers) = r.pending.take().unwrap_or((frame.step, Vec::new()));
            let swaps = std::mem::take(&mut r.swaps);
            let pending = inputs::Pending {
                at: self.offset_ns + frame::nanos(frame.time),
                episode: self.episode,
                step,
                answers,
                swaps,
            };
            // The recorder's thread outlives the stepping: it takes them until it ends.
            let _ = r.inputs.send(pending);
        }
        if let Some(r) = &mut self.record
            && frame.step.is_multiple_of(r.every)
        {
            if r.lossless {
                r.pipe.offer_waiting(frame, &self.slots);
            } else {
                r.pipe.offer(frame, &self.slots);
            }
        }
    }

    fn wants_overlays(&self) -> bool {
        self.live.is_some() || self.record.is_some()
    }

    fn wants_answers(&self) -> bool {
        self.record.is_some()
    }

    fn answers(&mut self, step: u64, answers: Vec<ssx_core::tape::Answer>) {
        if let Some(r) = &mut self.record {
            r.pending = Some((step, answers));
        }
    }

    fn swapped(&mut self, _step: u64, swap: ssx_core::SwappedBuild) {
        // The step's `sync` (the same step) sends it with the step's answers.
        if let Some(r) = &mut self.record {
            r.swaps.push(swap);
        }
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

impl Drop for Output {
    fn drop(&mut self) {
        self.hub.0.live.on.store(false, Ordering::Relaxed);
        self.hub.0.record.on.store(false, Ordering::Relaxed);
        // Fields drop next: the live publisher and servers stop, the recorder writes what is
        // queued and finishes its file.
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thirty_frames_a_second_of_one_millisecond_steps_and_no_burst_after_a_stall() {
        let mut s = Schedule {
            period: Duration::from_secs_f64(1.0 / 30.0),
            next_at: None,
        };
        let ms = Duration::from_millis;
        let due: Vec<u64> = (0..1000).filter(|&k| s.due(ms(k))).collect();
        assert_eq!(due.len(), 30);
        assert_eq!(&due[..4], &[0, 34, 67, 100]);
        // A 200 ms stall: one frame when it ends, then the rate again, not six to catch up.
        assert!(s.due(ms(1200)));
        assert!(!s.due(ms(1201)));
        assert!(!s.due(ms(1233)));
        assert!(s.due(ms(1234)));
    }
}
