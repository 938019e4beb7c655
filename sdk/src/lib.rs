//! ssx-sdk: write ssx drivers and sensors as shared libraries the daemon loads at run time.
//!
//! The C ABI is in [`abi`] (and, generated from it, `sdk/include/ssx.h` for C and C++ authors).
//! Rust authors implement [`Driver`] or [`Sensor`] and export them with [`export_plugins!`]; every
//! call from the host goes through a trampoline that catches panics and turns them into an error
//! status, so a plugin author writes no `unsafe` and a panic never unwinds into the host.
//!
//! ```ignore
//! struct Hold;
//! impl ssx_sdk::Driver for Hold {
//!     fn create(_descriptor: &str, _init: &ssx_sdk::Init) -> Result<Self, String> { Ok(Hold) }
//!     fn step(&mut self, ctx: &ssx_sdk::Ctx<'_>) -> Result<(), String> {
//!         let mass = ctx.body_mass(ctx.artifact(), 0)?;
//!         let g = ctx.gravity()?;
//!         ctx.add_force(0, [-g[0] * mass, -g[1] * mass, -g[2] * mass])?;
//!         Ok(())
//!     }
//! }
//! ssx_sdk::export_plugins!(driver "hold" "cancels gravity" => Hold);
//! ```
#![warn(missing_docs)]

pub mod abi;
pub mod bus;
pub mod camera;
pub mod explore;
pub mod geometry;
pub mod gripper;
pub mod random;
pub mod text;

use std::ffi::{CStr, CString, c_char, c_void};
use std::panic::{AssertUnwindSafe, catch_unwind};

pub use abi::SsxBodyState as BodyState;
pub use abi::SsxContact as Contact;
pub use abi::SsxMapInfo as MapInfo;
pub use abi::SsxRayHit as RayHit;
pub use abi::SsxStats as Stats;
use abi::*;

/// A failed host call: the status the host returned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Error(pub SsxStatus);

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} (status {})", status_message(self.0), self.0)
    }
}

impl std::error::Error for Error {}

impl From<Error> for String {
    fn from(e: Error) -> String {
        e.to_string()
    }
}

/// An overlay call's status: shown (true), nothing shows overlays (false), or the error.
fn shown(status: SsxStatus) -> Result<bool, Error> {
    match status {
        SSX_ERR_NOT_FOUND => Ok(false),
        s => check(s).map(|()| true),
    }
}

fn check(status: SsxStatus) -> Result<(), Error> {
    if status == SSX_OK {
        Ok(())
    } else {
        Err(Error(status))
    }
}

/// `"invalid descriptor: <parser message>"`, without a `" at line L column C"` suffix: the host
/// hands plugins a re-serialised descriptor, so a position in it means nothing to the user, and
/// the host's own message already says where the descriptor is written.
pub fn descriptor_error(e: impl std::fmt::Display) -> String {
    let text = e.to_string();
    let text = text
        .rfind(" at line ")
        .map_or(text.as_str(), |i| &text[..i]);
    format!("invalid descriptor: {text}")
}

/// Limits for descriptor values that every built-in plugin shares (docs/plugins.md): beyond
/// them a value is not a physical setting but an overflow waiting to happen at step 1.
pub mod limits {
    /// A coordinate or a height (m).
    pub const COORDINATE: f64 = 1e5;
    /// A distance, range or size (m).
    pub const DISTANCE: f64 = 1e4;
    /// A speed (m/s or rad/s), an acceleration or a gain.
    pub const RATE: f64 = 1e6;
    /// Rays of one range sensor.
    pub const RAYS: u32 = 4096;
    /// Steps of latency a sensor may buffer.
    pub const LATENCY: u32 = 10_000;
    /// A sensor's rate divider.
    pub const DIVIDER: u32 = 1_000_000;
}

/// A number as a person reads it: plain between 0.001 and 1e6, in exponent form beyond (Rust
/// prints 1e-300 as three hundred digits).
pub fn number(v: f64) -> String {
    if v == 0.0 || !v.is_finite() || (1e-3..1e6).contains(&v.abs()) {
        format!("{v}")
    } else {
        format!("{v:e}")
    }
}

/// `v` if it lies in `[lo, hi]`, else `"invalid descriptor: 'key' must be from lo to hi, got v"`.
pub fn within(key: &str, v: f64, lo: f64, hi: f64) -> Result<f64, String> {
    if (lo..=hi).contains(&v) {
        Ok(v)
    } else {
        Err(format!(
            "invalid descriptor: '{key}' must be from {} to {}, got {}",
            number(lo),
            number(hi),
            number(v)
        ))
    }
}

/// Runs something every `divider`-th step (a 500 Hz IMU in a 1 kHz world has divider 2), at a
/// fixed phase: `due()` is true on steps `phase, phase + divider, ...` counted from the first
/// call. Staggering the phase across instances spreads a swarm's sensing over the steps.
#[derive(Clone, Copy, Debug)]
pub struct Rate {
    divider: u32,
    countdown: u32,
}

impl Rate {
    /// Every `divider` steps (0 is taken as 1), first at call `phase % divider` (0-based).
    pub fn new(divider: u32, phase: u32) -> Self {
        let divider = divider.max(1);
        Rate {
            divider,
            countdown: phase % divider,
        }
    }
    /// As [`Rate::due`], and tells the host of the quiet steps that follow (`Ctx::idle`), so
    /// that it does not call the sensor on them. Call once per call of `step`.
    pub fn due_idle(&mut self, ctx: &Ctx<'_>) -> bool {
        let due = self.due();
        if self.countdown > 0 && ctx.idle(self.countdown) {
            // The host skips the quiet steps: the next call is the next sampling step.
            self.countdown = 0;
        }
        due
    }
    /// Whether this call's step is a sampling step; call exactly once per step.
    pub fn due(&mut self) -> bool {
        if self.countdown == 0 {
            self.countdown = self.divider - 1;
            true
        } else {
            self.countdown -= 1;
            false
        }
    }
    /// The divider.
    pub fn divider(&self) -> u32 {
        self.divider
    }
}

/// A box in a body's own frame: least and greatest corner (m).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Bounds {
    /// Least corner.
    pub min: [f64; 3],
    /// Greatest corner.
    pub max: [f64; 3],
}

/// A pose: position (m) and orientation (unit quaternion, w x y z), as body states give them.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Pose {
    /// Position.
    pub position: [f64; 3],
    /// Orientation, w x y z.
    pub orientation: [f64; 4],
}

impl Default for Pose {
    fn default() -> Self {
        Pose {
            position: [0.0; 3],
            orientation: [1.0, 0.0, 0.0, 0.0],
        }
    }
}

impl Pose {
    /// A body's pose from its state.
    pub fn of(state: &BodyState) -> Pose {
        Pose {
            position: state.position,
            orientation: state.orientation,
        }
    }
    /// `self · other`: `other` (given in this pose's frame) in the frame this pose is given in.
    pub fn compose(&self, other: &Pose) -> Pose {
        let p = geometry::rotate(self.orientation, other.position);
        Pose {
            position: [0, 1, 2].map(|i| self.position[i] + p[i]),
            orientation: geometry::quat_mul(self.orientation, other.orientation),
        }
    }
    /// The inverse pose.
    pub fn inverse(&self) -> Pose {
        let q = geometry::quat_conj(self.orientation);
        let p = geometry::rotate(q, self.position);
        Pose {
            position: p.map(|x| -x),
            orientation: q,
        }
    }
    /// A point given in this pose's frame, in the frame the pose is given in.
    pub fn transform(&self, point: [f64; 3]) -> [f64; 3] {
        self.compose(&Pose {
            position: point,
            ..Pose::default()
        })
        .position
    }
}

/// Where a held body is: which artifact's body holds it, and its pose in that body's frame.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Held {
    /// The carrier's artifact.
    pub artifact: u32,
    /// The carrier's body index within its artifact.
    pub body: u32,
    /// The held body's pose in the carrier's frame.
    pub pose: Pose,
}

/// What an instance is told when it is created.
#[derive(Clone, Debug)]
pub struct Init {
    /// Its artifact's name.
    pub artifact_name: String,
    /// Its artifact's index.
    pub artifact: u32,
    /// A seed for repeatable noise, distinct per instance.
    pub seed: u64,
    /// The timestep (s).
    pub timestep: f64,
    /// How many bodies the artifact has; `None` from a host too old to say.
    pub body_count: Option<u32>,
    /// How many joints the artifact has; `None` from a host too old to say.
    pub joint_count: Option<u32>,
    /// Wakes a paused run (for extensions: see [`Waker`]).
    pub waker: Waker,
}

impl Init {
    /// Checks a body index a descriptor gives under `key` against the artifact's bodies, so that
    /// `create` (and with it `ssxd check`) refuses what would fail at the first step:
    /// `"invalid descriptor: 'body' is 3, but artifact 'bot' has 1 body (index 0)"`. A host too
    /// old to tell the count lets every index through (the step then reports it).
    pub fn body_index(&self, key: &str, index: u32) -> Result<u32, String> {
        match self.body_count {
            Some(n) if index >= n => Err(format!(
                "invalid descriptor: '{key}' is {index}, but artifact '{}' has {}",
                self.artifact_name,
                match n {
                    0 => "no body".to_string(),
                    1 => "1 body (index 0)".to_string(),
                    n => format!("{n} bodies (indexes 0 to {})", n - 1),
                }
            )),
            _ => Ok(index),
        }
    }

    /// For a plugin that acts on or measures the artifact's first body: refuses an artifact
    /// without bodies (`"artifact 'bot' has no body to act on"`).
    pub fn root_body(&self) -> Result<(), String> {
        match self.body_count {
            Some(0) => Err(format!(
                "artifact '{}' has no body to act on",
                self.artifact_name
            )),
            _ => Ok(()),
        }
    }
}

/// Wakes a paused run so it asks every extension's `control` at once: what an extension calls
/// from its own thread (a network callback) when a control request has arrived, so that a
/// paused run answers in microseconds rather than at its next poll. Any thread; cheap to clone.
#[derive(Clone, Copy)]
pub struct Waker {
    host: Option<&'static SsxHostApi>,
}

impl std::fmt::Debug for Waker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.host.is_some() {
            "Waker"
        } else {
            "Waker(none)"
        })
    }
}

impl Waker {
    /// The host's `wake`, when the host's table has it (hosts of version 3 built before it
    /// was added do not: then waking does nothing and the run finds requests at its next poll).
    fn of(host: &'static SsxHostApi) -> Waker {
        let needed = std::mem::offset_of!(SsxHostApi, wake) + std::mem::size_of::<usize>();
        Waker {
            host: (host.struct_size as usize >= needed).then_some(host),
        }
    }

    /// Wakes the run if it is paused; does nothing otherwise.
    pub fn wake(&self) {
        if let Some(h) = self.host {
            // SAFETY: the host's table outlives every instance, and `struct_size` says it has
            // the field; `wake` takes no arguments and may be called from any thread.
            unsafe { (h.wake)() }
        }
    }
}

/// The host, as seen during one `step` call. Every method is a host call checked by the host
/// (handle, phase, indices); failures come back as [`Error`].
pub struct Ctx<'a> {
    host: &'a SsxHostApi,
    ctx: SsxCtx,
    artifact: u32,
}

impl Ctx<'_> {
    /// The calling instance's artifact.
    pub fn artifact(&self) -> u32 {
        self.artifact
    }
    /// Simulated time (s) and steps completed.
    pub fn time(&self) -> Result<(f64, u64), Error> {
        let (mut t, mut n) = (0.0, 0);
        check(unsafe { (self.host.time)(self.ctx, &mut t, &mut n) })?;
        Ok((t, n))
    }
    /// Gravity (m/s²).
    pub fn gravity(&self) -> Result<[f64; 3], Error> {
        let mut g = [0.0; 3];
        check(unsafe { (self.host.gravity)(self.ctx, g.as_mut_ptr()) })?;
        Ok(g)
    }
    /// Number of artifacts.
    pub fn artifact_count(&self) -> Result<u32, Error> {
        let mut n = 0;
        check(unsafe { (self.host.artifact_count)(self.ctx, &mut n) })?;
        Ok(n)
    }
    /// An artifact by name.
    pub fn artifact_by_name(&self, name: &str) -> Result<u32, Error> {
        let name = CString::new(name).map_err(|_| Error(SSX_ERR_INVALID_ARGUMENT))?;
        let mut a = 0;
        check(unsafe { (self.host.artifact_by_name)(self.ctx, name.as_ptr(), &mut a) })?;
        Ok(a)
    }
    /// Number of bodies of an artifact.
    pub fn body_count(&self, artifact: u32) -> Result<u32, Error> {
        let mut n = 0;
        check(unsafe { (self.host.body_count)(self.ctx, artifact, &mut n) })?;
        Ok(n)
    }
    /// State of a body.
    pub fn body_state(&self, artifact: u32, body: u32) -> Result<BodyState, Error> {
        let mut s = BodyState::default();
        check(unsafe { (self.host.body_state)(self.ctx, artifact, body, &mut s) })?;
        Ok(s)
    }
    /// Mass of a body (kg).
    pub fn body_mass(&self, artifact: u32, body: u32) -> Result<f64, Error> {
        let mut m = 0.0;
        check(unsafe { (self.host.body_mass)(self.ctx, artifact, body, &mut m) })?;
        Ok(m)
    }
    /// Principal moments of inertia of a body (kg·m²).
    pub fn body_inertia(&self, artifact: u32, body: u32) -> Result<[f64; 3], Error> {
        let mut i = [0.0; 3];
        check(unsafe { (self.host.body_inertia)(self.ctx, artifact, body, i.as_mut_ptr()) })?;
        Ok(i)
    }
    /// The bodies touching body `body` of `artifact`, into `out` (one entry per touched body).
    pub fn contacts(&self, artifact: u32, body: u32, out: &mut Vec<Contact>) -> Result<(), Error> {
        out.clear();
        loop {
            let mut count = 0usize;
            check(unsafe {
                (self.host.contacts)(
                    self.ctx,
                    artifact,
                    body,
                    out.as_mut_ptr(),
                    out.capacity(),
                    &mut count,
                )
            })?;
            if count <= out.capacity() {
                // SAFETY: the host wrote `count` entries into the buffer.
                unsafe { out.set_len(count) };
                return Ok(());
            }
            out.reserve(count);
        }
    }
    /// A force on one of the artifact's own bodies for the next step (driver phase).
    pub fn add_force(&self, body: u32, force: [f64; 3]) -> Result<(), Error> {
        check(unsafe { (self.host.add_force)(self.ctx, body, force.as_ptr()) })
    }
    /// A force at a point (driver phase).
    pub fn add_force_at_point(
        &self,
        body: u32,
        force: [f64; 3],
        point: [f64; 3],
    ) -> Result<(), Error> {
        check(unsafe {
            (self.host.add_force_at_point)(self.ctx, body, force.as_ptr(), point.as_ptr())
        })
    }
    /// A torque (driver phase).
    pub fn add_torque(&self, body: u32, torque: [f64; 3]) -> Result<(), Error> {
        check(unsafe { (self.host.add_torque)(self.ctx, body, torque.as_ptr()) })
    }
    /// The velocity of a kinematic body (driver phase).
    pub fn set_velocity(
        &self,
        body: u32,
        linear: [f64; 3],
        angular: [f64; 3],
    ) -> Result<(), Error> {
        check(unsafe {
            (self.host.set_velocity)(self.ctx, body, linear.as_ptr(), angular.as_ptr())
        })
    }
    /// Index of one of the artifact's joints by name.
    pub fn joint_index(&self, name: &str) -> Result<u32, Error> {
        let name = CString::new(name).map_err(|_| Error(SSX_ERR_INVALID_ARGUMENT))?;
        let mut j = 0;
        check(unsafe { (self.host.joint_index)(self.ctx, name.as_ptr(), &mut j) })?;
        Ok(j)
    }
    /// Drives one of the artifact's motorised revolute joints towards an angle and angular
    /// velocity (driver phase).
    pub fn set_joint_target(&self, joint: u32, position: f64, velocity: f64) -> Result<(), Error> {
        check(unsafe { (self.host.set_joint_target)(self.ctx, joint, position, velocity) })
    }
    /// Casts a ray.
    pub fn ray_cast(
        &self,
        origin: [f64; 3],
        direction: [f64; 3],
        max_distance: f64,
        ignore_own: bool,
    ) -> Result<Option<RayHit>, Error> {
        let mut hit = RayHit::default();
        check(unsafe {
            (self.host.ray_cast)(
                self.ctx,
                origin.as_ptr(),
                direction.as_ptr(),
                max_distance,
                u32::from(ignore_own),
                &mut hit,
            )
        })?;
        Ok((hit.hit != 0).then_some(hit))
    }
    /// Casts one ray from `origin` per direction in `directions`, into `hits` (as long as
    /// `directions`; `hit == 0` where nothing was hit), in one host call on hosts that have
    /// `ray_cast_many`, else one `ray_cast` each.
    pub fn ray_cast_many(
        &self,
        origin: [f64; 3],
        directions: &[[f64; 3]],
        max_distance: f64,
        ignore_own: bool,
        hits: &mut [RayHit],
    ) -> Result<(), Error> {
        if hits.len() != directions.len() {
            return Err(Error(SSX_ERR_INVALID_ARGUMENT));
        }
        if !self.host_has(std::mem::offset_of!(SsxHostApi, ray_cast_many)) {
            for (d, h) in directions.iter().zip(hits.iter_mut()) {
                *h = self
                    .ray_cast(origin, *d, max_distance, ignore_own)?
                    .unwrap_or_default();
            }
            return Ok(());
        }
        check(unsafe {
            (self.host.ray_cast_many)(
                self.ctx,
                origin.as_ptr(),
                directions.as_ptr().cast::<f64>(),
                directions.len(),
                max_distance,
                u32::from(ignore_own),
                hits.as_mut_ptr(),
            )
        })
    }
    /// The colour (RGBA 0 to 1) body `body` of `artifact` is drawn in; mid grey on hosts that
    /// predate `body_color`.
    pub fn body_color(&self, artifact: u32, body: u32) -> Result<[f32; 4], Error> {
        if !self.host_has(std::mem::offset_of!(SsxHostApi, body_color)) {
            return Ok([0.7, 0.7, 0.7, 1.0]);
        }
        let mut rgba = [0f32; 4];
        check(unsafe { (self.host.body_color)(self.ctx, artifact, body, rgba.as_mut_ptr()) })?;
        Ok(rgba)
    }
    /// The artifacts with a body within `radius` of `center` (own excluded), into `out`.
    pub fn neighbours(
        &self,
        center: [f64; 3],
        radius: f64,
        out: &mut Vec<u32>,
    ) -> Result<(), Error> {
        let mut count = 0usize;
        out.clear();
        check(unsafe {
            (self.host.neighbours)(
                self.ctx,
                center.as_ptr(),
                radius,
                out.as_mut_ptr(),
                out.capacity(),
                &mut count,
            )
        })?;
        if count > out.capacity() {
            out.reserve(count);
            check(unsafe {
                (self.host.neighbours)(
                    self.ctx,
                    center.as_ptr(),
                    radius,
                    out.as_mut_ptr(),
                    out.capacity(),
                    &mut count,
                )
            })?;
        }
        // SAFETY: the host wrote `min(count, capacity)` ids into the buffer.
        unsafe { out.set_len(count.min(out.capacity())) };
        Ok(())
    }
    /// Index of an artifact's sensor by name.
    pub fn sensor_index(&self, artifact: u32, name: &str) -> Result<u32, Error> {
        let name = CString::new(name).map_err(|_| Error(SSX_ERR_INVALID_ARGUMENT))?;
        let mut s = 0;
        check(unsafe { (self.host.sensor_index)(self.ctx, artifact, name.as_ptr(), &mut s) })?;
        Ok(s)
    }
    /// Index of one of the calling artifact's own sensors by name; the error says the plugin
    /// needs it (resolve once, at the first step: the lookup allocates a C string).
    pub fn own_sensor(&self, name: &str) -> Result<u32, String> {
        self.sensor_index(self.artifact, name)
            .map_err(|e| format!("needs a sensor named '{name}' on its artifact: {e}"))
    }
    /// Publishes this sensor's reading (sensor phase).
    pub fn publish(&self, values: &[f64]) -> Result<(), Error> {
        check(unsafe { (self.host.publish)(self.ctx, values.as_ptr(), values.len()) })
    }
    /// A sensor reading of any artifact, without copying, and the step it was taken at (driver
    /// phase).
    pub fn reading(&self, artifact: u32, sensor: u32) -> Result<(&[f64], u64), Error> {
        let (mut ptr, mut len, mut step) = (std::ptr::null(), 0usize, 0u64);
        check(unsafe {
            (self.host.reading)(self.ctx, artifact, sensor, &mut ptr, &mut len, &mut step)
        })?;
        if len == 0 || ptr.is_null() {
            return Ok((&[], step));
        }
        // SAFETY: the host guarantees `len` values at `ptr` until this step call returns, which
        // outlives `&self`.
        Ok((unsafe { std::slice::from_raw_parts(ptr, len) }, step))
    }
    /// A simulation extension by name.
    pub fn extension(&self, name: &str) -> Result<u32, Error> {
        let name = CString::new(name).map_err(|_| Error(SSX_ERR_INVALID_ARGUMENT))?;
        let mut e = 0;
        check(unsafe { (self.host.extension)(self.ctx, name.as_ptr(), &mut e) })?;
        Ok(e)
    }
    /// Calls an extension's service; returns the response's full length (an
    /// `SSX_ERR_OUT_OF_RANGE` error when it did not fit in `response`).
    pub fn call_extension(
        &self,
        extension: u32,
        service: &str,
        request: &[u8],
        response: &mut [u8],
    ) -> Result<usize, Error> {
        // The service name as a C string on the stack (a call every step must not allocate).
        let mut name = [0u8; 64];
        let heap;
        let service_c: &CStr = if service.len() < name.len() && !service.contains('\0') {
            name[..service.len()].copy_from_slice(service.as_bytes());
            CStr::from_bytes_until_nul(&name).map_err(|_| Error(SSX_ERR_INVALID_ARGUMENT))?
        } else {
            heap = CString::new(service).map_err(|_| Error(SSX_ERR_INVALID_ARGUMENT))?;
            &heap
        };
        let mut len = 0usize;
        check(unsafe {
            (self.host.call_extension)(
                self.ctx,
                extension,
                service_c.as_ptr(),
                request.as_ptr(),
                request.len(),
                response.as_mut_ptr(),
                response.len(),
                &mut len,
            )
        })?;
        Ok(len)
    }
    /// The run's live deadline statistics (extensions only).
    pub fn stats(&self) -> Result<Stats, Error> {
        let mut s = Stats::default();
        check(unsafe { (self.host.stats)(self.ctx, &mut s) })?;
        Ok(s)
    }
    /// Sets one of this extension's figures, reported in the run's summary and stats JSON as
    /// `<extension>.<name>` (extensions, in `after_step`). Does nothing on hosts that predate it.
    pub fn metric(&self, name: &str, value: f64) -> Result<(), Error> {
        if !self.host_has(std::mem::offset_of!(SsxHostApi, metric)) {
            return Ok(());
        }
        let mut buf = [0u8; 72];
        if name.len() >= buf.len() || name.contains('\0') {
            return Err(Error(SSX_ERR_INVALID_ARGUMENT));
        }
        buf[..name.len()].copy_from_slice(name.as_bytes());
        check(unsafe { (self.host.metric)(self.ctx, buf.as_ptr().cast(), value) })
    }
    /// Calls `each(name, value)` with every extension's figures (`<extension>.<name>`) as of the
    /// end of the previous step (extensions). Nothing on hosts that predate it. `name` is
    /// scratch space, kept between calls so that a call every step does not allocate.
    pub fn metrics(
        &self,
        name: &mut Vec<u8>,
        mut each: impl FnMut(&str, f64),
    ) -> Result<(), Error> {
        if !self.host_has(std::mem::offset_of!(SsxHostApi, metric_at)) {
            return Ok(());
        }
        if name.len() < 80 {
            name.resize(80, 0);
        }
        let mut index = 0;
        loop {
            let (mut len, mut value) = (0usize, 0.0);
            let status = unsafe {
                (self.host.metric_at)(
                    self.ctx,
                    index,
                    name.as_mut_ptr().cast(),
                    name.len(),
                    &mut len,
                    &mut value,
                )
            };
            match status {
                SSX_ERR_NOT_FOUND => return Ok(()),
                SSX_ERR_OUT_OF_RANGE if len + 1 > name.len() => {
                    name.resize(len + 1, 0);
                    continue;
                }
                _ => check(status)?,
            }
            if let Ok(text) = std::str::from_utf8(&name[..len]) {
                each(text, value);
            }
            index += 1;
        }
    }
    /// Whether the host's table reaches the end of the field at `offset` (functions appended
    /// after the ABI version's release are checked before they are called).
    fn host_has(&self, offset: usize) -> bool {
        self.host.struct_size as usize >= offset + std::mem::size_of::<usize>()
    }
    /// Describes this sensor's reading (a JSON object, at most
    /// [`abi::SSX_MAX_DESCRIPTION`] bytes) for bridges and views (sensor phase). Once, on the
    /// first step, is enough: the description stays. Does nothing on hosts that predate it.
    pub fn describe(&self, json: &str) -> Result<(), Error> {
        if !self.host_has(std::mem::offset_of!(SsxHostApi, describe)) {
            return Ok(());
        }
        let text = CString::new(json).map_err(|_| Error(SSX_ERR_INVALID_ARGUMENT))?;
        check(unsafe { (self.host.describe)(self.ctx, text.as_ptr()) })
    }
    /// The description a sensor gave its reading (JSON; `None` when it gave none, or on hosts
    /// that predate descriptions). Not copied; valid for this call of `step`.
    pub fn reading_description(&self, artifact: u32, sensor: u32) -> Result<Option<&str>, Error> {
        if !self.host_has(std::mem::offset_of!(SsxHostApi, reading_description)) {
            return Ok(None);
        }
        let (mut ptr, mut len) = (std::ptr::null(), 0usize);
        check(unsafe {
            (self.host.reading_description)(self.ctx, artifact, sensor, &mut ptr, &mut len)
        })?;
        if len == 0 || ptr.is_null() {
            return Ok(None);
        }
        // SAFETY: the host guarantees `len` bytes at `ptr` until this step call returns.
        let bytes = unsafe { std::slice::from_raw_parts(ptr.cast::<u8>(), len) };
        Ok(std::str::from_utf8(bytes).ok())
    }
    /// The box around a body's colliders in its own frame, as (least, greatest) corner; `None`
    /// when it has no collider with bounds (a plane). Hosts that predate it answer
    /// `SSX_ERR_NOT_FOUND` for every body.
    pub fn body_bounds(&self, artifact: u32, body: u32) -> Result<Option<Bounds>, Error> {
        if !self.host_has(std::mem::offset_of!(SsxHostApi, body_bounds)) {
            return Err(Error(SSX_ERR_NOT_FOUND));
        }
        let (mut min, mut max) = ([0.0; 3], [0.0; 3]);
        let status = unsafe {
            (self.host.body_bounds)(self.ctx, artifact, body, min.as_mut_ptr(), max.as_mut_ptr())
        };
        match status {
            SSX_ERR_NOT_FOUND => Ok(None),
            s => check(s).map(|()| Some(Bounds { min, max })),
        }
    }
    /// Holds `artifact`'s dynamic `body` with this artifact's `carrier`-th body from the next
    /// step on, at `pose` in the carrier's frame; moves it there when held already (driver
    /// phase). `SSX_ERR_NOT_FOUND` on hosts that predate it.
    pub fn attach(&self, carrier: u32, artifact: u32, body: u32, pose: Pose) -> Result<(), Error> {
        if !self.host_has(std::mem::offset_of!(SsxHostApi, attach)) {
            return Err(Error(SSX_ERR_NOT_FOUND));
        }
        check(unsafe {
            (self.host.attach)(
                self.ctx,
                carrier,
                artifact,
                body,
                pose.position.as_ptr(),
                pose.orientation.as_ptr(),
            )
        })
    }
    /// Releases a body this artifact holds, from the next step on (driver phase).
    pub fn detach(&self, artifact: u32, body: u32) -> Result<(), Error> {
        if !self.host_has(std::mem::offset_of!(SsxHostApi, detach)) {
            return Err(Error(SSX_ERR_NOT_FOUND));
        }
        check(unsafe { (self.host.detach)(self.ctx, artifact, body) })
    }
    /// What holds `artifact`'s `body` (as of this step's physics): the carrier's artifact, its
    /// body index within that artifact and the held body's pose in the carrier's frame; `None`
    /// when nothing holds it or the host predates holding.
    pub fn attachment(&self, artifact: u32, body: u32) -> Result<Option<Held>, Error> {
        if !self.host_has(std::mem::offset_of!(SsxHostApi, attachment)) {
            return Ok(None);
        }
        let mut held = Held {
            artifact: 0,
            body: 0,
            pose: Pose::default(),
        };
        let status = unsafe {
            (self.host.attachment)(
                self.ctx,
                artifact,
                body,
                &mut held.artifact,
                &mut held.body,
                held.pose.position.as_mut_ptr(),
                held.pose.orientation.as_mut_ptr(),
            )
        };
        match status {
            SSX_ERR_NOT_FOUND => Ok(None),
            s => check(s).map(|()| Some(held)),
        }
    }
    /// Lays a picture over the floor for views and recordings (extensions, `after_step`):
    /// `rgba` holds `info.width × info.height` cells of 4 bytes, row 0 at `info.origin`.
    /// `Ok(false)` when nothing in the run shows overlays (no view, no recording) or the host
    /// predates them: drawing more is wasted.
    pub fn overlay(&self, name: &str, info: &MapInfo, rgba: &[u8]) -> Result<bool, Error> {
        if !self.host_has(std::mem::offset_of!(SsxHostApi, overlay)) {
            return Ok(false);
        }
        let name = CString::new(name).map_err(|_| Error(SSX_ERR_INVALID_ARGUMENT))?;
        shown(unsafe {
            (self.host.overlay)(self.ctx, name.as_ptr(), info, rgba.as_ptr(), rgba.len())
        })
    }
    /// Tells the host that this sensor has nothing to measure on the next `steps` steps: it is
    /// not called on them (sensor phase). `false` when the host did not take it (it predates
    /// it, or this is not a sensor's step): the sensor is then called on every step as before.
    pub fn idle(&self, steps: u32) -> bool {
        self.host_has(std::mem::offset_of!(SsxHostApi, idle))
            && unsafe { (self.host.idle)(self.ctx, steps) } == SSX_OK
    }
    /// Lays boxes or line segments over the world for views (extensions, `after_step`):
    /// `kind` `SSX_OVERLAY_BOXES` (centre, size) or `SSX_OVERLAY_LINES` (two ends), 6 numbers a
    /// shape in `values`, all in `color` (RGBA 0 to 1). `Ok(false)` as for [`Ctx::overlay`].
    pub fn overlay_shapes(
        &self,
        name: &str,
        kind: SsxOverlayKind,
        values: &[f64],
        color: [f32; 4],
    ) -> Result<bool, Error> {
        if !self.host_has(std::mem::offset_of!(SsxHostApi, overlay_shapes)) {
            return Ok(false);
        }
        let name = CString::new(name).map_err(|_| Error(SSX_ERR_INVALID_ARGUMENT))?;
        shown(unsafe {
            (self.host.overlay_shapes)(
                self.ctx,
                name.as_ptr(),
                kind,
                values.as_ptr(),
                values.len(),
                color.as_ptr(),
            )
        })
    }
    /// The scene's map: its size and placement, and its cells into `cells` (row 0 at the
    /// origin; 1 = wall). `None` when the scene has no map, or on hosts that predate maps.
    pub fn map(&self, cells: &mut Vec<u8>) -> Result<Option<MapInfo>, Error> {
        if !self.host_has(std::mem::offset_of!(SsxHostApi, map)) {
            return Ok(None);
        }
        let mut info = MapInfo::default();
        match unsafe { (self.host.map)(self.ctx, &mut info, std::ptr::null_mut(), 0) } {
            SSX_ERR_NOT_FOUND => return Ok(None),
            status => check(status)?,
        }
        let n = info.width as usize * info.height as usize;
        cells.clear();
        cells.resize(n, 0);
        check(unsafe { (self.host.map)(self.ctx, &mut info, cells.as_mut_ptr(), n) })?;
        Ok(Some(info))
    }
    /// The name of an artifact.
    pub fn artifact_name(&self, artifact: u32) -> Result<String, Error> {
        read_name(|buf, cap, len| unsafe {
            (self.host.artifact_name)(self.ctx, artifact, buf, cap, len)
        })
    }
    /// The name of an artifact's sensor (`SSX_ERR_OUT_OF_RANGE` past its last sensor, so
    /// counting from 0 finds them all). `None` on hosts that predate it.
    pub fn sensor_name(&self, artifact: u32, sensor: u32) -> Result<Option<String>, Error> {
        if !self.host_has(std::mem::offset_of!(SsxHostApi, sensor_name)) {
            return Ok(None);
        }
        read_name(|buf, cap, len| unsafe {
            (self.host.sensor_name)(self.ctx, artifact, sensor, buf, cap, len)
        })
        .map(Some)
    }
    /// Asks for the run's drivers and sensors from `library` to be swapped for a new build of
    /// its file (extensions' `control` only); the ticket for [`Ctx::swap_outcome`]. `None` on
    /// hosts that predate swapping; `SSX_ERR_NOT_FOUND` when nothing comes from `library`.
    pub fn swap(&self, library: &str) -> Result<Option<u64>, Error> {
        if !self.host_has(std::mem::offset_of!(SsxHostApi, swap)) {
            return Ok(None);
        }
        let name = CString::new(library).map_err(|_| Error(SSX_ERR_INVALID_ARGUMENT))?;
        let mut ticket = 0u64;
        check(unsafe { (self.host.swap)(self.ctx, name.as_ptr(), &mut ticket) })?;
        Ok(Some(ticket))
    }
    /// The outcome of swap request `ticket` once decided: `Ok(library)` swapped in, or
    /// `Err(reason)` refused; `None` while it is pending (or on hosts without swapping).
    pub fn swap_outcome(&self, ticket: u64) -> Result<Option<Result<String, String>>, Error> {
        if !self.host_has(std::mem::offset_of!(SsxHostApi, swap_outcome)) {
            return Ok(None);
        }
        let mut swapped = 0u32;
        let text = read_name(|buf, cap, len| unsafe {
            (self.host.swap_outcome)(self.ctx, ticket, &mut swapped, buf, cap, len)
        });
        match text {
            Ok(t) if swapped == 1 => Ok(Some(Ok(t))),
            Ok(t) => Ok(Some(Err(t))),
            Err(Error(SSX_ERR_NOT_FOUND)) => Ok(None),
            Err(e) => Err(e),
        }
    }
    /// Logs a message.
    pub fn log(&self, level: SsxLogLevel, message: &str) {
        if let Ok(m) = CString::new(message.replace('\0', " ")) {
            unsafe { (self.host.log)(self.ctx, level, m.as_ptr()) };
        }
    }
}

/// A name the host writes into a buffer (`artifact_name`, `sensor_name`), grown to fit.
fn read_name(
    mut call: impl FnMut(*mut c_char, usize, &mut usize) -> SsxStatus,
) -> Result<String, Error> {
    let mut buf = vec![0u8; 64];
    loop {
        let mut len = 0usize;
        let status = call(buf.as_mut_ptr().cast(), buf.len(), &mut len);
        if status == SSX_ERR_OUT_OF_RANGE && len + 1 > buf.len() {
            buf.resize(len + 1, 0);
            continue;
        }
        check(status)?;
        buf.truncate(len);
        return String::from_utf8(buf).map_err(|_| Error(SSX_ERR_INVALID_ARGUMENT));
    }
}

/// A driver: an artifact's behaviour.
pub trait Driver: Sized + Send + 'static {
    /// Creates an instance from its JSON descriptor.
    fn create(descriptor: &str, init: &Init) -> Result<Self, String>;
    /// One step: read the world and readings, write commands.
    fn step(&mut self, ctx: &Ctx<'_>) -> Result<(), String>;
    /// The state a new build of this library continues from when the run swaps it in
    /// (docs/plugins.md "Swapping a library"); `None` (the default): the new instance starts
    /// fresh. The format is yours: put a version in it.
    fn save(&self) -> Option<Vec<u8>> {
        None
    }
    /// Continues from what the previous build's [`save`](Self::save) wrote. An error refuses
    /// the whole swap (the old build keeps running). The default ignores the state.
    fn restore(&mut self, state: &[u8]) -> Result<(), String> {
        let _ = state;
        Ok(())
    }
}

/// A sensor: measures the world for an artifact and publishes a reading.
pub trait Sensor: Sized + Send + 'static {
    /// Creates an instance from its JSON descriptor.
    fn create(descriptor: &str, init: &Init) -> Result<Self, String>;
    /// One step: measure and [`Ctx::publish`].
    fn step(&mut self, ctx: &Ctx<'_>) -> Result<(), String>;
    /// The state a new build of this library continues from when the run swaps it in
    /// (docs/plugins.md "Swapping a library"); `None` (the default): the new instance starts
    /// fresh. The format is yours: put a version in it.
    fn save(&self) -> Option<Vec<u8>> {
        None
    }
    /// Continues from what the previous build's [`save`](Self::save) wrote. An error refuses
    /// the whole swap (the old build keeps running). The default ignores the state.
    fn restore(&mut self, state: &[u8]) -> Result<(), String> {
        let _ = state;
        Ok(())
    }
}

/// A simulation extension: a bridge to the outside (a middleware, a recorder). Created before the
/// engines start, destroyed after they stop; `after_step` runs after every step on the main
/// thread; `call` serves drivers and sensors, from several worker threads at once.
pub trait Extension: Sized + Send + Sync + 'static {
    /// Creates (starts) the extension from its JSON descriptor. `init.artifact_name` is the
    /// extension's instance name in the scene.
    fn create(descriptor: &str, init: &Init) -> Result<Self, String>;
    /// After every step: read the world and readings (commands are refused).
    fn after_step(&mut self, _ctx: &Ctx<'_>) -> Result<(), String> {
        Ok(())
    }
    /// Serves a request: write as much of the response as fits, return its full length.
    fn call(&self, service: &str, _request: &[u8], _response: &mut [u8]) -> Result<usize, String> {
        Err(format!("no service '{service}'"))
    }
    /// What the run should do next: polled on the main thread after every step; while paused,
    /// whenever [`Waker::wake`] is called and at least every 50 ms. Read the world and
    /// [`Ctx::stats`] here as in `after_step`.
    fn control(&mut self, _ctx: &Ctx<'_>) -> Result<Control, String> {
        Ok(Control::None)
    }
    /// The run starts over from step 0 with `seed` as the scene's seed. `None` (the default):
    /// the extension keeps nothing across a reset, and the host creates it anew from its
    /// descriptor; `Some(Ok(()))`: it started over itself and is kept (a network session stays
    /// open).
    fn reset(&mut self, _seed: u64) -> Option<Result<(), String>> {
        None
    }
}

/// A change of run state an extension asks for (see [`Extension::control`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Control {
    /// Keep the run state.
    None,
    /// Pause after the current step.
    Pause,
    /// Resume a paused run.
    Resume,
    /// While paused, run this many steps and stay paused.
    Step(u64),
    /// Start the run over (step 0), with the scene's seed or a new one.
    Reset(Option<u64>),
}

impl Control {
    /// The C form.
    pub fn to_abi(self) -> SsxControl {
        let (command, steps) = match self {
            Control::None => (SSX_CONTROL_NONE, 0),
            Control::Pause => (SSX_CONTROL_PAUSE, 0),
            Control::Resume => (SSX_CONTROL_RESUME, 0),
            Control::Step(n) => (SSX_CONTROL_STEP, n),
            Control::Reset(None) => (SSX_CONTROL_RESET, 0),
            Control::Reset(Some(seed)) => (SSX_CONTROL_RESET_SEED, seed),
        };
        SsxControl { command, steps }
    }
}

#[doc(hidden)]
pub struct Instance<T> {
    host: &'static SsxHostApi,
    artifact: u32,
    value: T,
}

fn write_error(error: *mut SsxErrorBuf, message: &str) {
    // SAFETY: the host passes a valid buffer or null.
    let Some(buf) = (unsafe { error.as_mut() }) else {
        return;
    };
    if buf.data.is_null() || buf.capacity == 0 {
        return;
    }
    let bytes = message.as_bytes();
    let mut n = bytes.len().min(buf.capacity - 1);
    while n > 0 && !message.is_char_boundary(n) {
        n -= 1;
    }
    // SAFETY: `n + 1 <= capacity` bytes into the host's buffer.
    unsafe {
        std::ptr::copy_nonoverlapping(bytes.as_ptr(), buf.data.cast::<u8>(), n);
        *buf.data.add(n) = 0;
    }
}

fn panic_text(p: &(dyn std::any::Any + Send)) -> String {
    let m = p
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| p.downcast_ref::<String>().cloned());
    format!("panicked: {}", m.unwrap_or_else(|| "(no message)".into()))
}

/// Runs `f` behind the panic boundary and turns its outcome into a status.
fn guarded(error: *mut SsxErrorBuf, f: impl FnOnce() -> Result<(), String>) -> SsxStatus {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(())) => SSX_OK,
        Ok(Err(message)) => {
            write_error(error, &message);
            SSX_ERR_PLUGIN
        }
        Err(p) => {
            write_error(error, &panic_text(&*p));
            SSX_ERR_PANIC
        }
    }
}

/// Shared by drivers and sensors.
trait Make: Sized + Send + 'static {
    fn make(descriptor: &str, init: &Init) -> Result<Self, String>;
    fn run(&mut self, ctx: &Ctx<'_>) -> Result<(), String>;
    fn save(&self) -> Option<Vec<u8>> {
        None
    }
    fn restore(&mut self, _state: &[u8]) -> Result<(), String> {
        Ok(())
    }
}

struct AsDriver<T>(T);
struct AsSensor<T>(T);
struct AsExtension<T>(T);

impl<T: Extension> Make for AsExtension<T> {
    fn make(d: &str, i: &Init) -> Result<Self, String> {
        T::create(d, i).map(AsExtension)
    }
    fn run(&mut self, ctx: &Ctx<'_>) -> Result<(), String> {
        self.0.after_step(ctx)
    }
}

impl<T: Driver> Make for AsDriver<T> {
    fn make(d: &str, i: &Init) -> Result<Self, String> {
        T::create(d, i).map(AsDriver)
    }
    fn run(&mut self, ctx: &Ctx<'_>) -> Result<(), String> {
        self.0.step(ctx)
    }
    fn save(&self) -> Option<Vec<u8>> {
        self.0.save()
    }
    fn restore(&mut self, state: &[u8]) -> Result<(), String> {
        self.0.restore(state)
    }
}

impl<T: Sensor> Make for AsSensor<T> {
    fn make(d: &str, i: &Init) -> Result<Self, String> {
        T::create(d, i).map(AsSensor)
    }
    fn run(&mut self, ctx: &Ctx<'_>) -> Result<(), String> {
        self.0.step(ctx)
    }
    fn save(&self) -> Option<Vec<u8>> {
        self.0.save()
    }
    fn restore(&mut self, state: &[u8]) -> Result<(), String> {
        self.0.restore(state)
    }
}

/// A `u32` field appended to [`SsxInit`] after the first version, if the host's record holds it.
///
/// # Safety
/// `init` points at a host's `SsxInit` of `struct_size` bytes.
unsafe fn appended_u32(init: *const SsxInit, offset: usize) -> Option<u32> {
    // SAFETY: `struct_size` leads every version of the record; the field is read only when the
    // host's record covers it.
    let size = unsafe { (*init).struct_size } as usize;
    (size >= offset + std::mem::size_of::<u32>())
        .then(|| unsafe { init.cast::<u8>().add(offset).cast::<u32>().read_unaligned() })
}

unsafe fn create_impl<M: Make>(
    host: *const SsxHostApi,
    descriptor: *const c_char,
    init: *const SsxInit,
    instance: *mut *mut c_void,
    error: *mut SsxErrorBuf,
) -> SsxStatus {
    guarded(error, || {
        // SAFETY: the host passes a table that outlives every instance, a NUL-terminated
        // descriptor, an init record and an out pointer; null is checked.
        let raw_init = init;
        let (host, init, out) = unsafe { (host.as_ref(), init.as_ref(), instance.as_mut()) };
        let (Some(host), Some(init), Some(out)) = (host, init, out) else {
            return Err("null argument to create".into());
        };
        if descriptor.is_null() || init.artifact_name.is_null() {
            return Err("null string argument to create".into());
        }
        let host: &'static SsxHostApi = unsafe { &*(host as *const SsxHostApi) };
        let descriptor = unsafe { CStr::from_ptr(descriptor) }
            .to_str()
            .map_err(|e| e.to_string())?;
        let info = Init {
            artifact_name: unsafe { CStr::from_ptr(init.artifact_name) }
                .to_string_lossy()
                .into_owned(),
            artifact: init.artifact,
            seed: init.seed,
            timestep: init.timestep,
            // SAFETY: `raw_init` is the non-null record checked above.
            body_count: unsafe {
                appended_u32(raw_init, std::mem::offset_of!(SsxInit, body_count))
            },
            joint_count: unsafe {
                appended_u32(raw_init, std::mem::offset_of!(SsxInit, joint_count))
            },
            waker: Waker::of(host),
        };
        let value = M::make(descriptor, &info)?;
        *out = Box::into_raw(Box::new(Instance {
            host,
            artifact: info.artifact,
            value,
        }))
        .cast();
        Ok(())
    })
}

unsafe fn step_impl<M: Make>(
    instance: *mut c_void,
    ctx: SsxCtx,
    error: *mut SsxErrorBuf,
) -> SsxStatus {
    guarded(error, || {
        // SAFETY: `instance` is what `create_impl::<M>` returned and not yet destroyed; the host
        // never calls one instance on two threads at once.
        let inst = unsafe { instance.cast::<Instance<M>>().as_mut() }.ok_or("null instance")?;
        let c = Ctx {
            host: inst.host,
            ctx,
            artifact: inst.artifact,
        };
        inst.value.run(&c)
    })
}

unsafe fn destroy_impl<M: Make>(instance: *mut c_void) {
    if instance.is_null() {
        return;
    }
    // SAFETY: `instance` came from `Box::into_raw` in `create_impl::<M>`, destroyed once.
    let boxed = unsafe { Box::from_raw(instance.cast::<Instance<M>>()) };
    // A panicking Drop must not unwind into the host.
    let _ = catch_unwind(AssertUnwindSafe(move || drop(boxed)));
}

/// The `extern "C"` entry points of one plugin kind, instantiated per plugin type by
/// [`export_plugins!`].
macro_rules! trampolines {
    ($bound:ident, $wrap:ident, $create:ident, $step:ident, $destroy:ident) => {
        #[doc(hidden)]
        pub unsafe extern "C" fn $create<T: $bound>(
            h: *const SsxHostApi,
            d: *const c_char,
            i: *const SsxInit,
            o: *mut *mut c_void,
            e: *mut SsxErrorBuf,
        ) -> SsxStatus {
            unsafe { create_impl::<$wrap<T>>(h, d, i, o, e) }
        }
        #[doc(hidden)]
        pub unsafe extern "C" fn $step<T: $bound>(
            inst: *mut c_void,
            ctx: SsxCtx,
            e: *mut SsxErrorBuf,
        ) -> SsxStatus {
            unsafe { step_impl::<$wrap<T>>(inst, ctx, e) }
        }
        #[doc(hidden)]
        pub unsafe extern "C" fn $destroy<T: $bound>(inst: *mut c_void) {
            unsafe { destroy_impl::<$wrap<T>>(inst) }
        }
    };
    ($bound:ident, $wrap:ident, $create:ident, $step:ident, $destroy:ident, $save:ident, $restore:ident) => {
        trampolines!($bound, $wrap, $create, $step, $destroy);
        #[doc(hidden)]
        pub unsafe extern "C" fn $save<T: $bound>(
            inst: *mut c_void,
            state: *mut u8,
            capacity: usize,
            len: *mut usize,
            e: *mut SsxErrorBuf,
        ) -> SsxStatus {
            unsafe { save_impl::<$wrap<T>>(inst, state, capacity, len, e) }
        }
        #[doc(hidden)]
        pub unsafe extern "C" fn $restore<T: $bound>(
            inst: *mut c_void,
            state: *const u8,
            len: usize,
            e: *mut SsxErrorBuf,
        ) -> SsxStatus {
            unsafe { restore_impl::<$wrap<T>>(inst, state, len, e) }
        }
    };
}

unsafe fn save_impl<M: Make>(
    instance: *mut c_void,
    state: *mut u8,
    capacity: usize,
    len: *mut usize,
    error: *mut SsxErrorBuf,
) -> SsxStatus {
    let mut status = SSX_OK;
    let guarded_status = guarded(error, || {
        // SAFETY: a live instance of `M`, called on the main thread between steps.
        let inst = unsafe { instance.cast::<Instance<M>>().as_ref() }.ok_or("null instance")?;
        let len = unsafe { len.as_mut() }.ok_or("null len")?;
        let Some(bytes) = inst.value.save() else {
            status = SSX_ERR_NOT_FOUND;
            return Ok(());
        };
        *len = bytes.len();
        if bytes.len() > capacity || (state.is_null() && !bytes.is_empty()) {
            status = SSX_ERR_OUT_OF_RANGE;
            return Ok(());
        }
        // SAFETY: `state` holds `capacity` >= `bytes.len()` bytes per the ABI.
        unsafe { abi::slice_mut(state, capacity)[..bytes.len()].copy_from_slice(&bytes) };
        Ok(())
    });
    if guarded_status == SSX_OK {
        status
    } else {
        guarded_status
    }
}

unsafe fn restore_impl<M: Make>(
    instance: *mut c_void,
    state: *const u8,
    len: usize,
    error: *mut SsxErrorBuf,
) -> SsxStatus {
    guarded(error, || {
        // SAFETY: a live instance of `M`, called on the main thread between steps.
        let inst = unsafe { instance.cast::<Instance<M>>().as_mut() }.ok_or("null instance")?;
        if state.is_null() && len > 0 {
            return Err("null state".into());
        }
        // SAFETY: `len` bytes at `state` per the ABI, null checked above.
        inst.value.restore(unsafe { abi::slice(state, len) })
    })
}

trampolines!(
    Driver,
    AsDriver,
    __driver_create,
    __driver_step,
    __driver_destroy,
    __driver_save,
    __driver_restore
);
trampolines!(
    Sensor,
    AsSensor,
    __sensor_create,
    __sensor_step,
    __sensor_destroy,
    __sensor_save,
    __sensor_restore
);
trampolines!(
    Extension,
    AsExtension,
    __extension_create,
    __extension_step,
    __extension_destroy
);

#[doc(hidden)]
#[allow(clippy::too_many_arguments)] // the C signature
pub unsafe extern "C" fn __extension_call<T: Extension>(
    inst: *mut c_void,
    service: *const c_char,
    request: *const u8,
    request_len: usize,
    response: *mut u8,
    capacity: usize,
    response_len: *mut usize,
    error: *mut SsxErrorBuf,
) -> SsxStatus {
    guarded(error, || {
        // SAFETY: a live instance from `__extension_create::<T>`; `call` only takes `&`, and the
        // host never runs `after_step` (the only `&mut`) during the phases that call.
        let inst =
            unsafe { inst.cast::<Instance<AsExtension<T>>>().as_ref() }.ok_or("null instance")?;
        if service.is_null()
            || response_len.is_null()
            || (request.is_null() && request_len > 0)
            || (response.is_null() && capacity > 0)
        {
            return Err("null argument to call".into());
        }
        let service = unsafe { CStr::from_ptr(service) }
            .to_str()
            .map_err(|e| e.to_string())?;
        // SAFETY: buffers of the given lengths per the ABI, null checked above.
        let (req, resp) = unsafe {
            (
                abi::slice(request, request_len),
                abi::slice_mut(response, capacity),
            )
        };
        let n = inst.value.0.call(service, req, resp)?;
        unsafe { *response_len = n };
        Ok(())
    })
}

#[doc(hidden)]
pub unsafe extern "C" fn __extension_control<T: Extension>(
    inst: *mut c_void,
    ctx: SsxCtx,
    control: *mut SsxControl,
    error: *mut SsxErrorBuf,
) -> SsxStatus {
    guarded(error, || {
        // SAFETY: a live instance from `__extension_create::<T>`, polled on the main thread
        // between steps, when nothing else runs it.
        let inst =
            unsafe { inst.cast::<Instance<AsExtension<T>>>().as_mut() }.ok_or("null instance")?;
        let out = unsafe { control.as_mut() }.ok_or("null control")?;
        let c = Ctx {
            host: inst.host,
            ctx,
            artifact: inst.artifact,
        };
        *out = inst.value.0.control(&c)?.to_abi();
        Ok(())
    })
}

#[doc(hidden)]
pub unsafe extern "C" fn __extension_reset<T: Extension>(
    inst: *mut c_void,
    seed: u64,
    error: *mut SsxErrorBuf,
) -> SsxStatus {
    let mut kept = true;
    let status = guarded(error, || {
        // SAFETY: a live instance from `__extension_create::<T>`, called on the main thread
        // between steps, when nothing else runs it.
        let inst =
            unsafe { inst.cast::<Instance<AsExtension<T>>>().as_mut() }.ok_or("null instance")?;
        match inst.value.0.reset(seed) {
            Some(r) => r,
            None => {
                kept = false;
                Ok(())
            }
        }
    });
    if status == SSX_OK && !kept {
        SSX_ERR_NOT_FOUND
    } else {
        status
    }
}

#[doc(hidden)]
#[macro_export]
macro_rules! __ssx_desc {
    (driver, $name:literal, $desc:literal, $ty:ty) => {
        $crate::abi::SsxPluginDesc {
            struct_size: ::core::mem::size_of::<$crate::abi::SsxPluginDesc>() as u32,
            kind: $crate::abi::SSX_KIND_DRIVER,
            name: concat!($name, "\0").as_ptr().cast(),
            description: concat!($desc, "\0").as_ptr().cast(),
            create: Some($crate::__driver_create::<$ty>),
            destroy: Some($crate::__driver_destroy::<$ty>),
            step: Some($crate::__driver_step::<$ty>),
            call: None,
            control: None,
            save: Some($crate::__driver_save::<$ty>),
            restore: Some($crate::__driver_restore::<$ty>),
            reset: None,
        }
    };
    (extension, $name:literal, $desc:literal, $ty:ty) => {
        $crate::abi::SsxPluginDesc {
            struct_size: ::core::mem::size_of::<$crate::abi::SsxPluginDesc>() as u32,
            kind: $crate::abi::SSX_KIND_EXTENSION,
            name: concat!($name, "\0").as_ptr().cast(),
            description: concat!($desc, "\0").as_ptr().cast(),
            create: Some($crate::__extension_create::<$ty>),
            destroy: Some($crate::__extension_destroy::<$ty>),
            step: Some($crate::__extension_step::<$ty>),
            call: Some($crate::__extension_call::<$ty>),
            control: Some($crate::__extension_control::<$ty>),
            save: None,
            restore: None,
            reset: Some($crate::__extension_reset::<$ty>),
        }
    };
    (sensor, $name:literal, $desc:literal, $ty:ty) => {
        $crate::abi::SsxPluginDesc {
            struct_size: ::core::mem::size_of::<$crate::abi::SsxPluginDesc>() as u32,
            kind: $crate::abi::SSX_KIND_SENSOR,
            name: concat!($name, "\0").as_ptr().cast(),
            description: concat!($desc, "\0").as_ptr().cast(),
            create: Some($crate::__sensor_create::<$ty>),
            destroy: Some($crate::__sensor_destroy::<$ty>),
            step: Some($crate::__sensor_step::<$ty>),
            call: None,
            control: None,
            save: Some($crate::__sensor_save::<$ty>),
            restore: Some($crate::__sensor_restore::<$ty>),
            reset: None,
        }
    };
}

/// Exports plugins from a `cdylib`: one line per plugin, `kind "name" "description" => Type`,
/// where kind is `driver` (Type: [`Driver`]), `sensor` ([`Sensor`]) or `extension`
/// ([`Extension`]).
#[macro_export]
macro_rules! export_plugins {
    ($($kind:ident $name:literal $desc:literal => $ty:ty),+ $(,)?) => {
        static __SSX_PLUGINS: $crate::abi::SyncStatic<[$crate::abi::SsxPluginDesc; [$(stringify!($ty)),+].len()]> =
            $crate::abi::SyncStatic([$($crate::__ssx_desc!($kind, $name, $desc, $ty)),+]);
        static __SSX_TABLE: $crate::abi::SyncStatic<$crate::abi::SsxPluginTable> =
            $crate::abi::SyncStatic($crate::abi::SsxPluginTable {
                abi_version: $crate::abi::SSX_ABI_VERSION,
                struct_size: ::core::mem::size_of::<$crate::abi::SsxPluginTable>() as u32,
                plugin_count: [$(stringify!($ty)),+].len() as u32,
                plugins: &__SSX_PLUGINS.0 as *const _ as *const $crate::abi::SsxPluginDesc,
            });
        /// The library's entry point: the table of its plugins.
        #[unsafe(no_mangle)]
        pub extern "C" fn ssx_plugin_entry() -> *const $crate::abi::SsxPluginTable {
            &__SSX_TABLE.0
        }
    };
}
