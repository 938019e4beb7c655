//! Plugin instances: a library's `create` and `destroy`, and the adapters that make its drivers,
//! sensors and extensions ordinary [`Driver`]s, [`Sensor`]s and [`SimulationExtension`]s.

use std::ffi::{CStr, CString, c_void};
use std::sync::Arc;

use ssx_sdk::abi::*;

use super::host::{Frame, FrameKind, HOST_API, with_frame};
use super::load::PluginLibrary;
use crate::plugin::{
    BatchMember, CommandBuffer, Driver, DriverContext, ExtensionContext, ExtensionInit, PluginInit,
    Reading, RunRequest, Sensor, SensorContext, SimulationExtension,
};

impl PluginLibrary {
    /// A driver instance of plugin `name`.
    pub fn new_driver(
        self: &Arc<Self>,
        name: &str,
        descriptor: &serde_json::Value,
        init: &PluginInit,
    ) -> Result<Box<dyn Driver>, String> {
        Ok(Box::new(AbiDriver(
            self.create("driver", name, descriptor, init)?,
        )))
    }

    /// A sensor instance of plugin `name`.
    pub fn new_sensor(
        self: &Arc<Self>,
        name: &str,
        descriptor: &serde_json::Value,
        init: &PluginInit,
    ) -> Result<Box<dyn Sensor>, String> {
        Ok(Box::new(AbiSensor(
            self.create("sensor", name, descriptor, init)?,
        )))
    }

    /// An extension instance of plugin `name`, created (the library's `create`) when the
    /// Environment initialises it.
    pub(super) fn new_extension(
        self: &Arc<Self>,
        name: &str,
        instance_name: &str,
        descriptor: &serde_json::Value,
    ) -> Box<dyn SimulationExtension> {
        Box::new(AbiExtension {
            lib: Arc::clone(self),
            plugin: name.to_string(),
            instance_name: instance_name.to_string(),
            metrics: Vec::new(),
            overlays: Vec::new(),
            descriptor: descriptor.clone(),
            instance: None,
        })
    }

    pub(super) fn create(
        self: &Arc<Self>,
        kind: &'static str,
        name: &str,
        descriptor: &serde_json::Value,
        init: &PluginInit,
    ) -> Result<Instance, String> {
        let desc = self.find(kind, name)?;
        let json = CString::new(descriptor.to_string())
            .map_err(|_| "descriptor contains a NUL byte".to_string())?;
        let artifact = CString::new(init.artifact.as_str())
            .map_err(|_| "artifact name contains a NUL byte".to_string())?;
        let directory = CString::new(
            init.directory
                .as_deref()
                .map(|d| d.to_string_lossy().into_owned())
                .unwrap_or_default(),
        )
        .map_err(|_| "the descriptor's directory contains a NUL byte".to_string())?;
        let sinit = SsxInit {
            struct_size: std::mem::size_of::<SsxInit>() as u32,
            artifact_name: artifact.as_ptr(),
            artifact: init.artifact_index,
            seed: init.seed,
            timestep: init.timestep,
            body_count: init.body_count,
            joint_count: init.joint_count,
            world: init.world,
            directory: directory.as_ptr(),
        };
        let mut err = error_arg();
        let mut instance: *mut c_void = std::ptr::null_mut();
        let create = desc.create.expect("checked at open");
        // SAFETY: arguments are valid for the call; the host table is a static.
        let status = unsafe { create(&HOST_API, json.as_ptr(), &sinit, &mut instance, &mut err) };
        if status != SSX_OK {
            return Err(error_message(status));
        }
        if instance.is_null() {
            return Err("create returned success but no instance".into());
        }
        Ok(Instance {
            instance,
            desc,
            _lib: Arc::clone(self),
        })
    }
}

const ERROR_CAPACITY: usize = 512;

thread_local! {
    /// The error buffer of every plugin call made on this thread: one call at a time uses it
    /// (a plugin's calls never nest on a thread; an extension's service, which a driver may
    /// call, has a buffer of its own on the stack), and its message is read as soon as the call
    /// fails. Initialised once: the bytes after a message's NUL are an older message's, never
    /// uninitialised memory. One buffer a thread, not one an instance (512 bytes each, held by
    /// every world of a batch). On the heap, freed when the thread ends: the thread-local slot
    /// itself is a pointer, because a library loaded into a process that loads others (the
    /// Python module beside torch's libgomp) must take little of the process's static TLS.
    static ERROR: std::cell::OnceCell<Box<std::cell::UnsafeCell<[u8; ERROR_CAPACITY]>>> =
        const { std::cell::OnceCell::new() };
}

/// This thread's buffer's first byte.
fn error_bytes() -> *mut u8 {
    ERROR.with(|b| {
        b.get_or_init(|| Box::new(std::cell::UnsafeCell::new([0; ERROR_CAPACITY])))
            .get()
            .cast::<u8>()
    })
}

/// This thread's error buffer for a call, its message cleared: valid for as long as the thread
/// lives. Reached only through this pointer while a plugin call runs.
fn error_buffer() -> *mut u8 {
    let first = error_bytes();
    // SAFETY: this thread's buffer, used by no call now (calls do not nest on a thread).
    unsafe { first.write(0) };
    first
}

/// The message the last failed call on this thread wrote into its buffer.
pub(super) fn error_message(status: SsxStatus) -> String {
    // SAFETY: this thread's buffer, ERROR_CAPACITY initialised bytes, read between plugin calls
    // on this thread, when nothing writes it.
    let bytes = unsafe { std::slice::from_raw_parts(error_bytes(), ERROR_CAPACITY) };
    error_text(bytes, status)
}

/// A call's error buffer: this thread's, its message cleared.
pub(super) fn error_arg() -> SsxErrorBuf {
    SsxErrorBuf {
        data: error_buffer().cast(),
        capacity: ERROR_CAPACITY,
    }
}

/// The message a plugin wrote into an error buffer (up to its NUL), or the status's meaning
/// when it wrote none.
fn error_text(data: &[u8], status: SsxStatus) -> String {
    let end = data.iter().position(|&b| b == 0).unwrap_or(data.len());
    let text = String::from_utf8_lossy(&data[..end]);
    if text.is_empty() {
        format!("{} (status {status})", status_message(status))
    } else {
        crate::text::escape_controls(&text).into_owned()
    }
}

/// One live plugin instance. Destroyed exactly once, in `Drop`, before its library can unload.
pub(super) struct Instance {
    instance: *mut c_void,
    desc: SsxPluginDesc,
    // Last: the library outlives the instance.
    _lib: Arc<PluginLibrary>,
}

// SAFETY: the ABI lets an instance be called from any one thread at a time; the Environment
// never calls one instance from two threads at once.
unsafe impl Send for Instance {}

impl Instance {
    fn step(&mut self, frame: &mut Frame<'_>) -> Result<(), String> {
        let step = self.desc.step.expect("checked at open");
        let instance = self.instance;
        // SAFETY: the instance is live; the frame outlives the call.
        self.call_guarded(frame, |ctx, err| unsafe { step(instance, ctx, err) })
    }

    /// What a batch call needs of this instance, when its plugin has `step_many`.
    fn member(&mut self) -> Option<BatchMember> {
        Some(BatchMember {
            key: self.desc.name as usize,
            step_many: self.desc.step_many?,
            instance: self.instance,
        })
    }

    /// The state the plugin hands over to a new build (its `save` entry), if it has one.
    fn save(&mut self) -> Result<Option<Vec<u8>>, String> {
        /// Largest state taken, per instance.
        const MAX_STATE: usize = 16 << 20;
        let Some(save) = self.desc.save else {
            return Ok(None);
        };
        let mut buf = vec![0u8; 4096];
        loop {
            let mut len = 0usize;
            let mut err = error_arg();
            // SAFETY: the instance is live; `buf` holds `buf.len()` bytes for the call.
            let status = unsafe {
                save(
                    self.instance,
                    buf.as_mut_ptr(),
                    buf.len(),
                    &mut len,
                    &mut err,
                )
            };
            match status {
                SSX_OK if len <= buf.len() => {
                    buf.truncate(len);
                    return Ok(Some(buf));
                }
                SSX_ERR_NOT_FOUND => return Ok(None),
                SSX_ERR_OUT_OF_RANGE if len > buf.len() && len <= MAX_STATE => buf.resize(len, 0),
                SSX_ERR_OUT_OF_RANGE | SSX_OK => {
                    return Err(format!(
                        "save: a state of {len} bytes (at most {MAX_STATE} are taken)"
                    ));
                }
                _ => return Err(format!("save: {}", error_message(status))),
            }
        }
    }

    /// Hands `state` to the plugin's `restore` entry (ignored when it has none).
    fn restore(&mut self, state: &[u8]) -> Result<(), String> {
        let Some(restore) = self.desc.restore else {
            return Ok(());
        };
        let mut err = error_arg();
        // SAFETY: the instance is live; `state` holds `state.len()` bytes for the call.
        let status = unsafe { restore(self.instance, state.as_ptr(), state.len(), &mut err) };
        match status {
            SSX_OK => Ok(()),
            _ => Err(format!("restore: {}", error_message(status))),
        }
    }

    /// Runs one entry of this instance with `frame` current and this thread's error buffer.
    fn call_guarded(
        &mut self,
        frame: &mut Frame<'_>,
        call: impl FnOnce(SsxCtx, *mut SsxErrorBuf) -> SsxStatus,
    ) -> Result<(), String> {
        let mut err = error_arg();
        let status = with_frame(frame, |ctx| call(ctx, &mut err));
        if status == SSX_OK {
            Ok(())
        } else {
            Err(error_message(status))
        }
    }
}

impl Drop for Instance {
    fn drop(&mut self) {
        let destroy = self.desc.destroy.expect("checked at open");
        // SAFETY: created by this library's `create`, destroyed once, never used after.
        unsafe { destroy(self.instance) };
    }
}

pub(super) struct AbiDriver(pub(super) Instance);
pub(super) struct AbiSensor(pub(super) Instance);

/// An extension from a library: created in `init`, destroyed in `shutdown`.
pub(super) struct AbiExtension {
    pub(super) lib: Arc<PluginLibrary>,
    pub(super) plugin: String,
    pub(super) instance_name: String,
    pub(super) descriptor: serde_json::Value,
    pub(super) instance: Option<Instance>,
    pub(super) metrics: crate::plugin::Metrics,
    pub(super) overlays: Vec<crate::render::Overlay>,
}

// SAFETY: `init`, `after_step` and `shutdown` run on the stepping thread with `&mut self`;
// `call` takes `&self` from worker threads, which the ABI requires a library's `call` to allow.
unsafe impl Sync for AbiExtension {}

impl SimulationExtension for AbiExtension {
    fn init(&mut self, init: &ExtensionInit) -> Result<(), String> {
        let plugin_init = PluginInit {
            artifact: self.instance_name.clone(),
            artifact_index: u32::MAX,
            seed: init.seed,
            timestep: init.timestep,
            body_count: 0,
            joint_count: 0,
            world: 0,
            directory: None,
        };
        self.instance =
            Some(
                self.lib
                    .create("extension", &self.plugin, &self.descriptor, &plugin_init)?,
            );
        Ok(())
    }

    fn after_step(&mut self, ctx: &ExtensionContext<'_>) -> Result<(), String> {
        let Some(instance) = &mut self.instance else {
            return Ok(());
        };
        let mut frame = Frame {
            world: ctx.world,
            artifact: None,
            kind: FrameKind::Extension {
                readings: ctx.readings,
                stats: ctx.stats,
                metrics: Some(&mut self.metrics),
                overlays: Some(&mut self.overlays),
                overlays_wanted: ctx.overlays_wanted,
                swaps: ctx.swaps,
                control: false,
            },
            label: None,
        };
        instance.step(&mut frame)
    }

    fn control(&mut self, ctx: &ExtensionContext<'_>) -> Result<RunRequest, String> {
        let Some(instance) = &mut self.instance else {
            return Ok(RunRequest::None);
        };
        let Some(control) = instance.desc.control else {
            return Ok(RunRequest::None);
        };
        let mut frame = Frame {
            world: ctx.world,
            artifact: None,
            kind: FrameKind::Extension {
                readings: ctx.readings,
                stats: ctx.stats,
                metrics: None,
                overlays: None,
                overlays_wanted: false,
                swaps: ctx.swaps,
                control: true,
            },
            label: None,
        };
        let mut request = SsxControl::default();
        let handle = instance.instance;
        // SAFETY: the instance is live; `request` and the error buffer outlive the call.
        instance.call_guarded(&mut frame, |ctx, err| unsafe {
            control(handle, ctx, &mut request, err)
        })?;
        Ok(match request.command {
            SSX_CONTROL_PAUSE => RunRequest::Pause,
            SSX_CONTROL_RESUME => RunRequest::Resume,
            SSX_CONTROL_STEP if request.steps > 0 => RunRequest::Step(request.steps),
            SSX_CONTROL_RESET => RunRequest::Reset(None),
            SSX_CONTROL_RESET_SEED => RunRequest::Reset(Some(request.steps)),
            SSX_CONTROL_NONE | SSX_CONTROL_STEP => RunRequest::None,
            other => return Err(format!("control asked for unknown command {other}")),
        })
    }

    /// The library's `reset` entry; without one (or when it says it keeps nothing), the
    /// instance is destroyed and created anew from its descriptor: an extension always
    /// starts over.
    fn reset(&mut self, init: &ExtensionInit) -> Option<Result<(), String>> {
        if let Some(instance) = &mut self.instance
            && let Some(reset) = instance.desc.reset
        {
            let mut err = error_arg();
            // SAFETY: the instance is live; called on the stepping thread between steps.
            match unsafe { reset(instance.instance, init.seed, &mut err) } {
                SSX_OK => return Some(Ok(())),
                SSX_ERR_NOT_FOUND => {}
                status => return Some(Err(format!("reset: {}", error_message(status)))),
            }
        }
        self.instance = None;
        self.metrics.clear();
        self.overlays.clear();
        Some(self.init(init))
    }

    fn shutdown(&mut self) {
        self.instance = None;
    }

    fn call(&self, service: &str, request: &[u8], response: &mut [u8]) -> Result<usize, String> {
        let instance = self
            .instance
            .as_ref()
            .ok_or("the extension is not running")?;
        let call = instance
            .desc
            .call
            .ok_or_else(|| format!("extension '{}' offers no services", self.plugin))?;
        // The service name back as a C string, on the stack for any reasonable name.
        let mut name_buf = [0u8; 128];
        let heap;
        let service_c: &CStr = if service.len() < name_buf.len() && !service.contains('\0') {
            name_buf[..service.len()].copy_from_slice(service.as_bytes());
            CStr::from_bytes_until_nul(&name_buf).map_err(|e| e.to_string())?
        } else {
            heap = CString::new(service)
                .map_err(|_| "service name contains a NUL byte".to_string())?;
            &heap
        };
        // A per-call buffer: calls may run on several threads at once.
        let mut text = [0u8; 256];
        let mut err = SsxErrorBuf {
            data: text.as_mut_ptr().cast(),
            capacity: text.len(),
        };
        let mut len = 0usize;
        // SAFETY: the instance is live while `self.instance` is Some; buffers are valid for
        // their lengths for the call.
        let status = unsafe {
            call(
                instance.instance,
                service_c.as_ptr(),
                request.as_ptr(),
                request.len(),
                response.as_mut_ptr(),
                response.len(),
                &mut len,
                &mut err,
            )
        };
        if status == SSX_OK {
            Ok(len)
        } else {
            let end = text.iter().position(|&b| b == 0).unwrap_or(text.len());
            let m = String::from_utf8_lossy(&text[..end]).into_owned();
            Err(if m.is_empty() {
                status_message(status).to_string()
            } else {
                m
            })
        }
    }

    fn metrics(&self) -> &[(String, f64)] {
        &self.metrics
    }

    fn overlays(&self) -> &[crate::render::Overlay] {
        &self.overlays
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

impl Driver for AbiDriver {
    fn drive(&mut self, ctx: &DriverContext<'_>, out: &mut CommandBuffer) -> Result<(), String> {
        let mut frame = Frame {
            world: ctx.world,
            artifact: Some(ctx.artifact),
            kind: FrameKind::Driver {
                commands: out,
                readings: ctx.readings,
            },
            label: None,
        };
        crate::counters::add(crate::counters::Work::DriverCall, 1);
        self.0.step(&mut frame)
    }
    fn batch_member(&mut self) -> Option<BatchMember> {
        self.0.member()
    }
    fn save_state(&mut self) -> Result<Option<Vec<u8>>, String> {
        self.0.save()
    }
    fn restore_state(&mut self, state: &[u8]) -> Result<(), String> {
        self.0.restore(state)
    }
}

impl Sensor for AbiSensor {
    fn sense(&mut self, ctx: &SensorContext<'_>, out: &mut Reading) -> Result<(), String> {
        let mut frame = Frame {
            world: ctx.world,
            artifact: Some(ctx.artifact),
            kind: FrameKind::Sensor { out },
            label: None,
        };
        crate::counters::add(crate::counters::Work::SensorCall, 1);
        self.0.step(&mut frame)
    }
    fn batch_member(&mut self) -> Option<BatchMember> {
        self.0.member()
    }
    fn save_state(&mut self) -> Result<Option<Vec<u8>>, String> {
        self.0.save()
    }
    fn restore_state(&mut self, state: &[u8]) -> Result<(), String> {
        self.0.restore(state)
    }
}
