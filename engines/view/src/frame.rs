//! Snapshots of the world and the bounded pipe that carries them off the stepping thread.
//!
//! The stepping thread takes a free buffer, copies poses and fresh readings into it and queues it;
//! a consumer thread publishes it and hands the buffer back. Buffers are reused, so after the
//! first few frames a snapshot allocates nothing. When every buffer is in use (the consumer is
//! behind) the frame is dropped and counted; the stepping thread never waits.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::thread::Thread;

use crossbeam::queue::ArrayQueue;
use ssx_core::{ArtifactId, RenderFrame};

use crate::scene::SceneInfo;

/// Seconds as nanoseconds (a simulated time as a log time, before the offset of resets).
pub fn nanos(t: f64) -> u64 {
    (t * 1e9).round().max(0.0) as u64
}

/// One body's pose: position, then the rotation as x, y, z, w.
pub(crate) type PoseArray = [f64; 7];

/// A reset, as it travels to a consumer among the frames: the frames before it are of the old
/// world, the frames after it of the new one.
pub(crate) struct ResetEvent {
    /// Resets so far, this one included (the run's first world is episode 0).
    pub episode: u64,
    /// The new world.
    pub info: Arc<SceneInfo>,
    /// The seed it was made with.
    pub seed: u64,
    /// Steps done and simulated time (s) when the reset came.
    pub steps_before: u64,
    /// See `steps_before`.
    pub time_before: f64,
    /// Log time (ns) at which the new run's simulated time 0 falls.
    pub offset_ns: u64,
}

/// The world at one step, as copied for a consumer (or a reset between two of them).
#[derive(Default)]
pub(crate) struct Frame {
    pub step: u64,
    pub time: f64,
    /// Resets before this frame's world.
    pub episode: u64,
    /// Log time (ns) of this world's simulated time 0: log times go on across resets.
    pub offset_ns: u64,
    /// Set on the pipe's reset markers only (no world then).
    pub reset: Option<Arc<ResetEvent>>,
    /// Unix time (s) at which the snapshot was taken: a viewer's lag behind the simulation.
    pub wall: f64,
    pub poses: Vec<PoseArray>,
    /// Fresh readings: (sensor slot, start, length) into `values`.
    pub readings: Vec<(u32, u32, u32)>,
    pub values: Vec<f64>,
    /// Overlays that changed since the pipe last carried them: their buffers are reused.
    pub overlays: Vec<FrameOverlay>,
    /// How many of `overlays` this frame carries.
    pub overlay_count: usize,
}

/// An extension's overlay, as copied for a consumer.
#[derive(Default)]
pub(crate) struct FrameOverlay {
    /// `<extension>/<name>`.
    pub path: String,
    pub width: u32,
    pub height: u32,
    pub resolution: f64,
    pub origin: [f64; 3],
    pub time: f64,
    pub rgba: Vec<u8>,
    pub kind: ssx_core::OverlayKind,
    pub values: Vec<f64>,
    pub color: [f32; 4],
}

impl Frame {
    /// Copies the bodies and every reading taken after step `since` (slots: artifact, sensor).
    fn fill(&mut self, frame: &RenderFrame<'_>, slots: &[(ArtifactId, usize)], since: u64) {
        self.step = frame.step;
        self.time = frame.time;
        self.reset = None;
        self.wall = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0.0, |d| d.as_secs_f64());
        self.poses.clear();
        self.poses.extend(frame.bodies.iter().map(|b| {
            let t = b.pose.translation.vector;
            let q = b.pose.rotation.quaternion();
            [t.x, t.y, t.z, q.i, q.j, q.k, q.w]
        }));
        self.readings.clear();
        self.values.clear();
        for (slot, &(artifact, sensor)) in slots.iter().enumerate() {
            let Some(r) = frame.reading(artifact, sensor) else {
                continue;
            };
            if r.step() > since {
                let start = self.values.len() as u32;
                self.values.extend_from_slice(r.values());
                self.readings
                    .push((slot as u32, start, r.values().len() as u32));
            }
        }
    }

    /// Copies the overlays whose version is newer than `sent` has, and notes their versions.
    fn fill_overlays(&mut self, frame: &RenderFrame<'_>, sent: &mut Vec<(String, u64)>) {
        self.overlay_count = 0;
        frame.overlays(&mut |extension, o| {
            let seen = sent.iter_mut().find(|(p, _)| {
                p.len() == extension.len() + 1 + o.name.len()
                    && p.starts_with(extension)
                    && p.ends_with(o.name.as_str())
            });
            match seen {
                Some((_, v)) if *v == o.version => return,
                Some((_, v)) => *v = o.version,
                None => sent.push((format!("{extension}/{}", o.name), o.version)),
            }
            if self.overlays.len() == self.overlay_count {
                self.overlays.push(FrameOverlay::default());
            }
            let slot = &mut self.overlays[self.overlay_count];
            self.overlay_count += 1;
            slot.path.clear();
            slot.path.push_str(extension);
            slot.path.push('/');
            slot.path.push_str(&o.name);
            (
                slot.width,
                slot.height,
                slot.resolution,
                slot.origin,
                slot.time,
            ) = (o.width, o.height, o.resolution, o.origin, o.time);
            slot.rgba.clear();
            slot.rgba.extend_from_slice(&o.rgba);
            (slot.kind, slot.color) = (o.kind, o.color);
            slot.values.clear();
            slot.values.extend_from_slice(&o.values);
        });
    }

    /// The overlays this frame carries.
    pub fn overlays(&self) -> &[FrameOverlay] {
        &self.overlays[..self.overlay_count]
    }

    /// The log time (ns) of this frame: the world's offset and its simulated time.
    pub fn log_ns(&self) -> u64 {
        self.offset_ns + nanos(self.time)
    }

    /// The values of one fresh reading.
    pub fn values(&self, start: u32, len: u32) -> &[f64] {
        &self.values[start as usize..(start + len) as usize]
    }
}

/// Counters of one pipe, shared with whoever reports them.
#[derive(Debug, Default)]
pub struct PipeCounters {
    /// Frames handed to the consumer.
    pub taken: AtomicU64,
    /// Frames dropped because every buffer was in use.
    pub dropped: AtomicU64,
}

/// The buffers of one pipe: free ones and queued ones. Shared by both ends.
pub(crate) struct Queues {
    free: ArrayQueue<Box<Frame>>,
    full: ArrayQueue<Box<Frame>>,
    pub counters: Arc<PipeCounters>,
}

impl Queues {
    /// Consumer: the next queued frame.
    pub fn next(&self) -> Option<Box<Frame>> {
        self.full.pop()
    }

    /// Consumer: gives a published frame's buffer back (a reset marker's is kept as a spare
    /// when there is room, else freed).
    pub fn recycle(&self, mut frame: Box<Frame>) {
        frame.reset = None;
        let _ = self.free.push(frame);
    }
}

/// The producer end: a fixed set of frame buffers circulating between the stepping thread and
/// one consumer thread.
pub(crate) struct Pipe {
    queues: Arc<Queues>,
    /// Wake the consumer once this many frames wait: a consumer woken for every frame at 1 kHz
    /// would take a core from the step on a two-core machine; it polls between wake-ups.
    wake_at: usize,
    /// The last step whose readings went into a frame (readings up to it are not copied again).
    since: u64,
    /// Each overlay's version last carried (`<extension>/<name>`, version).
    overlays_sent: Vec<(String, u64)>,
    consumer: Option<Thread>,
    /// The world's episode and log-time offset, stamped on every frame.
    episode: u64,
    offset_ns: u64,
}

/// Places in the queue beyond the buffers, for reset markers: a reset is never dropped.
const RESET_PLACES: usize = 8;

impl Pipe {
    pub fn new(buffers: usize, wake_at: usize, counters: Arc<PipeCounters>) -> Self {
        let free = ArrayQueue::new(buffers);
        for _ in 0..buffers {
            let _ = free.push(Box::default());
        }
        let queues = Queues {
            free,
            full: ArrayQueue::new(buffers + RESET_PLACES),
            counters,
        };
        Self {
            wake_at: wake_at.clamp(1, buffers),
            queues: Arc::new(queues),
            since: 0,
            overlays_sent: Vec::new(),
            consumer: None,
            episode: 0,
            offset_ns: 0,
        }
    }

    /// Stepping thread: the world started over. Queues a marker after the frames of the old
    /// world (a buffer of its own: it is never dropped for want of one) and stamps the frames
    /// that follow with the new episode. Waits (at most 1 s) only when the consumer has left
    /// eight resets unread.
    pub fn reset(&mut self, event: Arc<ResetEvent>) {
        self.since = 0;
        self.overlays_sent.clear();
        (self.episode, self.offset_ns) = (event.episode, event.offset_ns);
        let mut marker = Box::new(Frame {
            episode: event.episode,
            offset_ns: event.offset_ns,
            reset: Some(event),
            ..Frame::default()
        });
        let q = &*self.queues;
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(1);
        loop {
            match q.full.push(marker) {
                Ok(()) => break,
                Err(back) if std::time::Instant::now() < deadline => {
                    marker = back;
                    if let Some(t) = &self.consumer {
                        t.unpark();
                    }
                    std::thread::sleep(std::time::Duration::from_micros(200));
                }
                Err(_) => {
                    tracing::warn!(
                        "view: a reset marker was dropped: the consumer has not read the last {RESET_PLACES}"
                    );
                    q.counters.dropped.fetch_add(1, Ordering::Relaxed);
                    break;
                }
            }
        }
        if let Some(t) = &self.consumer {
            t.unpark();
        }
    }

    /// The consumer's end.
    pub fn queues(&self) -> Arc<Queues> {
        Arc::clone(&self.queues)
    }

    /// The thread to wake when a frame is queued.
    pub fn set_consumer(&mut self, t: Thread) {
        self.consumer = Some(t);
    }

    /// Stepping thread: snapshot `frame` into a free buffer and queue it, or count a drop.
    /// Readings taken since the last frame sent are carried into the next one that is sent.
    pub fn offer(&mut self, frame: &RenderFrame<'_>, slots: &[(ArtifactId, usize)]) {
        let q = &*self.queues;
        let buf = q.free.pop();
        self.queue(frame, slots, buf);
    }

    /// Like [`Pipe::offer`], but waits for a free buffer instead of dropping: for runs without
    /// deadlines (fast mode), where a complete recording matters more than the step rate.
    pub fn offer_waiting(&mut self, frame: &RenderFrame<'_>, slots: &[(ArtifactId, usize)]) {
        let q = &*self.queues;
        let buf = loop {
            if let Some(b) = q.free.pop() {
                break b;
            }
            if let Some(t) = &self.consumer {
                t.unpark();
            }
            std::thread::sleep(std::time::Duration::from_micros(50));
        };
        self.queue(frame, slots, Some(buf));
    }

    fn queue(
        &mut self,
        frame: &RenderFrame<'_>,
        slots: &[(ArtifactId, usize)],
        buf: Option<Box<Frame>>,
    ) {
        let q = &*self.queues;
        match buf {
            Some(mut buf) => {
                buf.fill(frame, slots, self.since);
                (buf.episode, buf.offset_ns) = (self.episode, self.offset_ns);
                buf.fill_overlays(frame, &mut self.overlays_sent);
                self.since = frame.step;
                // Cannot fail: there are only as many buffers as places in the queue.
                let _ = q.full.push(buf);
                q.counters.taken.fetch_add(1, Ordering::Relaxed);
                if q.full.len() >= self.wake_at
                    && let Some(t) = &self.consumer
                {
                    t.unpark();
                }
            }
            None => {
                q.counters.dropped.fetch_add(1, Ordering::Relaxed);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ssx_core::{BodyState, Reading, ReadingSource};
    use std::time::Duration;

    struct NoReadings;
    impl ReadingSource for NoReadings {
        fn reading(&self, _: ArtifactId, _: usize) -> Option<&Reading> {
            None
        }
    }

    struct OneOverlay(ssx_core::Overlay);
    impl ssx_core::OverlaySource for OneOverlay {
        fn visit(&self, each: &mut dyn FnMut(&str, &ssx_core::Overlay)) {
            each("explore", &self.0);
        }
    }

    #[test]
    fn an_overlay_is_carried_once_per_change_and_not_lost_with_a_dropped_frame() {
        let mut pipe = Pipe::new(1, 1, Arc::new(PipeCounters::default()));
        let q = pipe.queues();
        let bodies = vec![BodyState::default(); 1];
        let mut src = OneOverlay(ssx_core::Overlay {
            name: "explored".into(),
            width: 1,
            height: 1,
            resolution: 0.5,
            rgba: vec![9; 4],
            version: 1,
            ..Default::default()
        });
        let offer = |pipe: &mut Pipe, src: &OneOverlay, step| {
            let f = RenderFrame::new(step, 0.0, Duration::ZERO, &bodies, &NoReadings)
                .with_overlays(src);
            pipe.offer(&f, &[]);
        };
        let carried = |q: &Queues| {
            let f = q.next().expect("a frame");
            let paths: Vec<String> = f.overlays().iter().map(|o| o.path.clone()).collect();
            q.recycle(f);
            paths
        };
        offer(&mut pipe, &src, 1);
        assert_eq!(carried(&q), ["explore/explored"]);
        offer(&mut pipe, &src, 2);
        assert!(carried(&q).is_empty(), "unchanged: not copied again");
        // Changed while the only buffer is taken: the frame is dropped, the change is kept.
        src.0.version = 2;
        offer(&mut pipe, &src, 3);
        offer(&mut pipe, &src, 4);
        assert_eq!(carried(&q), ["explore/explored"]);
        offer(&mut pipe, &src, 5);
        assert!(carried(&q).is_empty());
    }

    #[test]
    fn a_consumer_that_takes_nothing_makes_frames_drop_and_be_counted_never_wait() {
        let counters = Arc::new(PipeCounters::default());
        let mut pipe = Pipe::new(4, 1, Arc::clone(&counters));
        let bodies = vec![BodyState::default(); 3];
        for step in 1..=10 {
            let f = RenderFrame::new(step, 0.0, Duration::ZERO, &bodies, &NoReadings);
            pipe.offer(&f, &[]);
        }
        assert_eq!(counters.taken.load(Ordering::Relaxed), 4);
        assert_eq!(counters.dropped.load(Ordering::Relaxed), 6);
        // The consumer catches up: the oldest queued frame comes first, and its buffer is
        // reused for the next offer.
        let q = pipe.queues();
        let first = q.next().expect("a queued frame");
        assert_eq!(first.step, 1);
        assert_eq!(first.poses.len(), 3);
        q.recycle(first);
        let f = RenderFrame::new(11, 0.011, Duration::ZERO, &bodies, &NoReadings);
        pipe.offer(&f, &[]);
        assert_eq!(counters.taken.load(Ordering::Relaxed), 5);
        let steps: Vec<u64> = std::iter::from_fn(|| q.next()).map(|f| f.step).collect();
        assert_eq!(steps, vec![2, 3, 4, 11]);
    }
}
