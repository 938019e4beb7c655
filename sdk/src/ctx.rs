//! The host as a plugin sees it during one call: every host function, checked, as a method of
//! [`Ctx`].

use std::ffi::{CStr, CString, c_char};

use crate::abi::*;
use crate::error::{check, shown};
use crate::{BodyState, Bounds, Contact, Error, Held, MapInfo, Pose, RayHit, Stats};

/// The host, as seen during one `step` call. Every method is a host call checked by the host
/// (handle, phase, indices); failures come back as [`Error`].
pub struct Ctx<'a> {
    pub(crate) host: &'a SsxHostApi,
    pub(crate) ctx: SsxCtx,
    pub(crate) artifact: u32,
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
    /// What joint `joint` of `artifact` is and where it stands (any phase); `None` past the
    /// artifact's last joint (so counting from 0 finds them all) and on hosts that predate it.
    pub fn joint_state(&self, artifact: u32, joint: u32) -> Result<Option<SsxJointState>, Error> {
        if !self.host_has(std::mem::offset_of!(SsxHostApi, joint_state)) {
            return Ok(None);
        }
        let mut state = SsxJointState::default();
        match unsafe { (self.host.joint_state)(self.ctx, artifact, joint, &mut state) } {
            SSX_ERR_OUT_OF_RANGE => Ok(None),
            s => check(s).map(|()| Some(state)),
        }
    }
    /// The name of joint `joint` of `artifact` (`SSX_ERR_OUT_OF_RANGE` past its last joint).
    /// `SSX_ERR_NOT_FOUND` on hosts that predate it.
    pub fn joint_name(&self, artifact: u32, joint: u32) -> Result<String, Error> {
        if !self.host_has(std::mem::offset_of!(SsxHostApi, joint_name)) {
            return Err(Error(SSX_ERR_NOT_FOUND));
        }
        read_name(|buf, cap, len| unsafe {
            (self.host.joint_name)(self.ctx, artifact, joint, buf, cap, len)
        })
    }
    /// `artifact`'s robot model as JSON (see [`SsxHostApi::robot_model`]); `None` for an
    /// artifact not made from a model file and on hosts that predate it.
    pub fn robot_model(&self, artifact: u32) -> Result<Option<&str>, Error> {
        if !self.host_has(std::mem::offset_of!(SsxHostApi, robot_model)) {
            return Ok(None);
        }
        let (mut text, mut len) = (std::ptr::null(), 0usize);
        match unsafe { (self.host.robot_model)(self.ctx, artifact, &mut text, &mut len) } {
            SSX_ERR_NOT_FOUND => Ok(None),
            s => {
                check(s)?;
                // SAFETY: the host hands `len` bytes of UTF-8 that live until this call
                // returns (the borrow of `self`).
                let bytes = unsafe { crate::abi::slice(text.cast::<u8>(), len) };
                std::str::from_utf8(bytes)
                    .map(Some)
                    .map_err(|_| Error(SSX_ERR_INVALID_ARGUMENT))
            }
        }
    }
    /// Drives one of the artifact's revolute or prismatic joints with these gains towards a
    /// position and rate (stiffness 0: the rate alone); driver phase. `SSX_ERR_NOT_FOUND` on
    /// hosts that predate it.
    pub fn set_joint_motor(
        &self,
        joint: u32,
        position: f64,
        velocity: f64,
        stiffness: f64,
        damping: f64,
    ) -> Result<(), Error> {
        if !self.host_has(std::mem::offset_of!(SsxHostApi, set_joint_motor)) {
            return Err(Error(SSX_ERR_NOT_FOUND));
        }
        check(unsafe {
            (self.host.set_joint_motor)(self.ctx, joint, position, velocity, stiffness, damping)
        })
    }
    /// An effort (N·m or N) on one of the artifact's revolute or prismatic joints for the next
    /// step; driver phase. `SSX_ERR_NOT_FOUND` on hosts that predate it.
    pub fn add_joint_effort(&self, joint: u32, effort: f64) -> Result<(), Error> {
        if !self.host_has(std::mem::offset_of!(SsxHostApi, add_joint_effort)) {
            return Err(Error(SSX_ERR_NOT_FOUND));
        }
        check(unsafe { (self.host.add_joint_effort)(self.ctx, joint, effort) })
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
    /// [`crate::abi::SSX_MAX_DESCRIPTION`] bytes) for bridges and views (sensor phase). Once, on the
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
