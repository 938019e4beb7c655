//! The host side of the plugin C ABI (`ssx-sdk`): loading libraries (SSX's ClassLoader), the
//! table of host functions plugins call, and adapters that make a library's drivers and sensors
//! ordinary [`Driver`]s and [`Sensor`]s.
//!
//! This module and the worker pool are the only places with `unsafe` in the host. Here it is
//! needed to call into libraries and to let host functions reach the frame of the current call.

use std::cell::Cell;
use std::collections::HashMap;
use std::ffi::{CStr, CString, c_char, c_void};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use ssx_sdk::abi::*;

use crate::engine::{BodyId, Contact};
use crate::math::{Point3, Vec3};
use crate::plugin::{
    CommandBuffer, Driver, DriverContext, ExtensionContext, ExtensionInit, PluginInit, Reading,
    ReadingSource, RunRequest, Sensor, SensorContext, SimulationExtension,
};
use crate::stats::StatsView;
use crate::world::{ArtifactId, World};

/// One plugin a library exports.
#[derive(Clone, Debug)]
pub struct PluginInfo {
    /// `driver` or `sensor`.
    pub kind: &'static str,
    /// Name scenes use.
    pub name: String,
    /// One line.
    pub description: String,
}

/// A loaded plugin library. Instances hold an `Arc` of it, so it is unloaded only after the last
/// instance has been destroyed.
pub struct PluginLibrary {
    path: PathBuf,
    abi_version: u32,
    plugins: Vec<(PluginInfo, SsxPluginDesc)>,
    // Last: dropped (dlclose) after everything above.
    _lib: libloading::Library,
}

// SAFETY: the table is immutable static data of the library, and the function pointers in it are
// callable from any thread per the ABI rules.
unsafe impl Send for PluginLibrary {}
unsafe impl Sync for PluginLibrary {}

impl std::fmt::Debug for PluginLibrary {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PluginLibrary")
            .field("path", &self.path)
            .finish()
    }
}

/// Keeps a library mapped until the process exits. Extensions start threads of their own (a
/// network stack's runtime, for one) that may outlive their instance; unmapping the code under
/// them would crash the daemon at exit, so libraries with extensions are never unloaded.
fn pin(path: &Path) -> Result<(), String> {
    use libloading::os::unix::Library;
    // SAFETY: the library is already loaded (RTLD_NOLOAD): no initialiser runs again; this only
    // marks it RTLD_NODELETE. The extra handle is forgotten, the mapping stays.
    let handle = unsafe {
        Library::open(
            Some(path),
            libc::RTLD_NOW | libc::RTLD_NOLOAD | libc::RTLD_NODELETE,
        )
    }
    .map_err(|e| format!("'{}': cannot pin the library: {e}", path.display()))?;
    std::mem::forget(handle);
    Ok(())
}

fn c_text(p: *const c_char, what: &str) -> Result<String, String> {
    if p.is_null() {
        return Err(format!("{what} is null"));
    }
    // SAFETY: non-null, NUL-terminated per the ABI; the library stays loaded while we read.
    unsafe { CStr::from_ptr(p) }
        .to_str()
        .map(str::to_owned)
        .map_err(|_| format!("{what} is not UTF-8"))
}

impl PluginLibrary {
    /// Opens a library (RTLD_NOW | RTLD_LOCAL) and checks its table: the ABI version and struct
    /// size first, then each plugin's entry. Messages say what was found against what the host
    /// expects.
    pub fn open(path: &Path) -> Result<Arc<Self>, String> {
        // dlopen reads a name without a '/' as a library to search for in the system paths, not
        // as this file: hand it an absolute path, always.
        let path = &crate::files::absolute(path);
        match std::fs::metadata(path) {
            Ok(m) if m.is_file() => {}
            Ok(m) => return Err(crate::files::not_regular(&path.display().to_string(), &m)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(format!("'{}': no such file", path.display()));
            }
            Err(e) => return Err(format!("'{}': {e}", path.display())),
        }
        use libloading::os::unix::{Library, RTLD_LOCAL, RTLD_NOW};
        // SAFETY: loading runs the library's initialisers; that is the contract of a plugin.
        let lib: libloading::Library = unsafe { Library::open(Some(path), RTLD_NOW | RTLD_LOCAL) }
            .map_err(|e| {
                let why =
                    std::error::Error::source(&e).map_or_else(|| e.to_string(), |s| s.to_string());
                format!(
                    "'{}' is not a loadable shared library: {why}",
                    path.display()
                )
            })?
            .into();
        // SAFETY: the symbol's type is fixed by the ABI.
        let entry: SsxEntryFn = match unsafe { lib.get::<SsxEntryFn>(SSX_ENTRY_SYMBOL) } {
            Ok(sym) => *sym,
            Err(_) => {
                return Err(format!(
                    "'{}' has no entry symbol 'ssx_plugin_entry': not an ssx plugin library",
                    path.display()
                ));
            }
        };
        // SAFETY: calling the entry point is what loading a plugin means.
        let table = unsafe { entry() };
        if table.is_null() {
            return Err(format!(
                "'{}': ssx_plugin_entry returned null",
                path.display()
            ));
        }
        // Read the version and the size before anything else: a table of another version may
        // have another layout.
        // SAFETY: every table version starts with these two u32 fields.
        let (version, size) = unsafe { (*(table as *const u32), *(table as *const u32).add(1)) };
        if version != SSX_ABI_VERSION {
            return Err(format!(
                "'{}': plugin ABI version mismatch: host = {SSX_ABI_VERSION}, plugin = {version} (rebuild the plugin against this ssx-sdk)",
                path.display()
            ));
        }
        let expected = std::mem::size_of::<SsxPluginTable>();
        if (size as usize) < expected {
            return Err(format!(
                "'{}': plugin table too small: host = {expected} bytes, plugin = {size} bytes",
                path.display()
            ));
        }
        // SAFETY: version and size checked: the table has the layout we know.
        let t = unsafe { *table };
        if t.plugin_count > 0 && t.plugins.is_null() {
            return Err(format!("'{}': the plugin list is null", path.display()));
        }
        let mut plugins = Vec::with_capacity(t.plugin_count as usize);
        for i in 0..t.plugin_count as usize {
            // SAFETY: `plugins` points at `plugin_count` entries; check each size first.
            let entry = unsafe { t.plugins.add(i) };
            let size = unsafe { *(entry as *const u32) } as usize;
            let expected = std::mem::size_of::<SsxPluginDesc>();
            if size < expected {
                return Err(format!(
                    "'{}': plugin #{i} entry too small: host = {expected} bytes, plugin = {size} bytes",
                    path.display()
                ));
            }
            let d = unsafe { *entry };
            let name = c_text(d.name, &format!("plugin #{i}'s name"))
                .map_err(|m| format!("'{}': {m}", path.display()))?;
            let kind = match d.kind {
                SSX_KIND_DRIVER => "driver",
                SSX_KIND_SENSOR => "sensor",
                SSX_KIND_EXTENSION => "extension",
                k => {
                    return Err(format!(
                        "'{}': plugin '{name}' has unknown kind {k}",
                        path.display()
                    ));
                }
            };
            if d.create.is_none() || d.destroy.is_none() || d.step.is_none() {
                return Err(format!(
                    "'{}': plugin '{name}' lacks create, destroy or step",
                    path.display()
                ));
            }
            if plugins
                .iter()
                .any(|(p, _): &(PluginInfo, _)| p.name == name)
            {
                return Err(format!(
                    "'{}': two plugins are named '{name}'",
                    path.display()
                ));
            }
            let description = c_text(d.description, "description").unwrap_or_default();
            plugins.push((
                PluginInfo {
                    kind,
                    name,
                    description,
                },
                d,
            ));
        }
        if plugins.iter().any(|(i, _)| i.kind == "extension") {
            pin(path)?;
        }
        Ok(Arc::new(Self {
            path: path.to_path_buf(),
            abi_version: version,
            plugins,
            _lib: lib,
        }))
    }

    /// The library's path.
    pub fn path(&self) -> &Path {
        &self.path
    }
    /// The ABI version it speaks.
    pub fn abi_version(&self) -> u32 {
        self.abi_version
    }
    /// Its plugins.
    pub fn plugins(&self) -> impl Iterator<Item = &PluginInfo> {
        self.plugins.iter().map(|(i, _)| i)
    }

    fn find(&self, kind: &'static str, name: &str) -> Result<SsxPluginDesc, String> {
        match self.plugins.iter().find(|(i, _)| i.name == name) {
            Some((i, d)) if i.kind == kind => Ok(*d),
            Some((i, _)) => Err(format!(
                "'{name}' in '{}' is a {}, not a {kind}",
                self.path.display(),
                i.kind
            )),
            None => {
                let names: Vec<String> = self
                    .plugins
                    .iter()
                    .map(|(i, _)| format!("{} {}", i.kind, i.name))
                    .collect();
                Err(format!(
                    "no {kind} named '{name}' in '{}' (it has: {})",
                    self.path.display(),
                    if names.is_empty() {
                        "nothing".into()
                    } else {
                        names.join(", ")
                    }
                ))
            }
        }
    }

    fn create(
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
        let sinit = SsxInit {
            struct_size: std::mem::size_of::<SsxInit>() as u32,
            artifact_name: artifact.as_ptr(),
            artifact: init.artifact_index,
            seed: init.seed,
            timestep: init.timestep,
            body_count: init.body_count,
            joint_count: init.joint_count,
        };
        let mut err = ErrorBuf::new();
        let mut instance: *mut c_void = std::ptr::null_mut();
        let create = desc.create.expect("checked at open");
        // SAFETY: arguments are valid for the call; the host table is a static.
        let status = unsafe { create(&HOST_API, json.as_ptr(), &sinit, &mut instance, err.raw()) };
        if status != SSX_OK {
            return Err(err.message(status));
        }
        if instance.is_null() {
            return Err("create returned success but no instance".into());
        }
        Ok(Instance {
            instance,
            desc,
            err: ErrorBuf::new(),
            _lib: Arc::clone(self),
        })
    }
}

/// Finds a library named in a scene: as given if absolute; otherwise relative to `dir` (the
/// directory of the file that names it), then in each directory of `SSX_PLUGIN_PATH`, then next
/// to the running executable. The path it returns is absolute (see [`crate::files::absolute`]).
pub fn find_library(named: &Path, dir: &Path) -> Result<PathBuf, String> {
    let mut search: Vec<PathBuf> = std::env::var_os("SSX_PLUGIN_PATH")
        .map(|p| {
            std::env::split_paths(&p)
                .filter(|d| !d.as_os_str().is_empty())
                .collect()
        })
        .unwrap_or_default();
    if let Some(exe_dir) = std::env::current_exe()
        .ok()
        .and_then(|e| e.parent().map(Path::to_path_buf))
    {
        search.push(exe_dir);
    }
    find_library_in(named, dir, &search)
}

/// As [`find_library`], with the directories after `dir` given explicitly.
pub fn find_library_in(named: &Path, dir: &Path, search: &[PathBuf]) -> Result<PathBuf, String> {
    // The first candidate that exists is the one: a directory or a device of that name is
    // reported as what it is, not skipped (a later, different library would be a surprise).
    let found = |p: &Path| -> Option<Result<PathBuf, String>> {
        let meta = std::fs::metadata(p).ok()?;
        let shown = crate::files::absolute(p);
        Some(if meta.is_file() {
            Ok(shown)
        } else {
            Err(format!(
                "library {}",
                crate::files::not_regular(&shown.display().to_string(), &meta)
            ))
        })
    };
    if named.is_absolute() {
        return found(named)
            .unwrap_or_else(|| Err(format!("library '{}' not found", named.display())));
    }
    let tried: Vec<&Path> = std::iter::once(dir)
        .chain(search.iter().map(PathBuf::as_path))
        .collect();
    for d in &tried {
        if let Some(result) = found(&d.join(named)) {
            return result;
        }
    }
    let list: Vec<String> = tried
        .iter()
        .map(|p| match p.as_os_str().is_empty() {
            true => ".".to_string(),
            false => p.display().to_string(),
        })
        .collect();
    Err(format!(
        "library '{}' not found (looked in: {})",
        named.display(),
        list.join(", ")
    ))
}

/// Opens each library once and keeps it for the instances created from it.
#[derive(Default)]
pub struct PluginLoader {
    libraries: HashMap<PathBuf, Arc<PluginLibrary>>,
}

impl PluginLoader {
    /// A library, opened on first use.
    pub fn library(&mut self, path: &Path) -> Result<Arc<PluginLibrary>, String> {
        let key = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
        if let Some(l) = self.libraries.get(&key) {
            return Ok(Arc::clone(l));
        }
        let lib = PluginLibrary::open(path)?;
        self.libraries.insert(key, Arc::clone(&lib));
        Ok(lib)
    }

    /// Creates a driver from a library.
    pub fn driver(
        &mut self,
        path: &Path,
        name: &str,
        descriptor: &serde_json::Value,
        init: &PluginInit,
    ) -> Result<Box<dyn Driver>, String> {
        let lib = self.library(path)?;
        Ok(Box::new(AbiDriver(
            lib.create("driver", name, descriptor, init)?,
        )))
    }

    /// An extension from a library. It is created (the library's `create`) when the
    /// Environment initialises it, before the engines start, and destroyed at shutdown.
    pub fn extension(
        &mut self,
        path: &Path,
        name: &str,
        instance_name: &str,
        descriptor: &serde_json::Value,
    ) -> Result<Box<dyn SimulationExtension>, String> {
        let lib = self.library(path)?;
        lib.find("extension", name)?;
        Ok(Box::new(AbiExtension {
            lib,
            plugin: name.to_string(),
            instance_name: instance_name.to_string(),
            metrics: Vec::new(),
            descriptor: descriptor.clone(),
            instance: None,
        }))
    }

    /// Creates a sensor from a library.
    pub fn sensor(
        &mut self,
        path: &Path,
        name: &str,
        descriptor: &serde_json::Value,
        init: &PluginInit,
    ) -> Result<Box<dyn Sensor>, String> {
        let lib = self.library(path)?;
        Ok(Box::new(AbiSensor(
            lib.create("sensor", name, descriptor, init)?,
        )))
    }
}

const ERROR_CAPACITY: usize = 512;

/// A host-owned error buffer, allocated once per instance.
struct ErrorBuf {
    data: Box<[u8; ERROR_CAPACITY]>,
    raw: SsxErrorBuf,
}

impl ErrorBuf {
    fn new() -> Self {
        Self {
            data: Box::new([0; ERROR_CAPACITY]),
            raw: SsxErrorBuf {
                data: std::ptr::null_mut(),
                capacity: 0,
            },
        }
    }
    fn raw(&mut self) -> *mut SsxErrorBuf {
        self.data[0] = 0;
        self.raw = SsxErrorBuf {
            data: self.data.as_mut_ptr().cast(),
            capacity: ERROR_CAPACITY,
        };
        &mut self.raw
    }
    fn message(&self, status: SsxStatus) -> String {
        let end = self
            .data
            .iter()
            .position(|&b| b == 0)
            .unwrap_or(ERROR_CAPACITY);
        let text = String::from_utf8_lossy(&self.data[..end]);
        if text.is_empty() {
            format!("{} (status {status})", status_message(status))
        } else {
            crate::text::escape_controls(&text).into_owned()
        }
    }
}

/// One live plugin instance. Destroyed exactly once, in `Drop`, before its library can unload.
struct Instance {
    instance: *mut c_void,
    desc: SsxPluginDesc,
    err: ErrorBuf,
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

    /// Runs one entry of this instance with `frame` current and this instance's error buffer.
    fn call_guarded(
        &mut self,
        frame: &mut Frame<'_>,
        call: impl FnOnce(SsxCtx, *mut SsxErrorBuf) -> SsxStatus,
    ) -> Result<(), String> {
        let err = self.err.raw();
        let status = with_frame(frame, |ctx| call(ctx, err));
        if status == SSX_OK {
            Ok(())
        } else {
            Err(self.err.message(status))
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

struct AbiDriver(Instance);
struct AbiSensor(Instance);

/// An extension from a library: created in `init`, destroyed in `shutdown`.
struct AbiExtension {
    lib: Arc<PluginLibrary>,
    plugin: String,
    instance_name: String,
    descriptor: serde_json::Value,
    instance: Option<Instance>,
    metrics: crate::plugin::Metrics,
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
            },
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
            },
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
            SSX_CONTROL_NONE | SSX_CONTROL_STEP => RunRequest::None,
            other => return Err(format!("control asked for unknown command {other}")),
        })
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
        };
        self.0.step(&mut frame)
    }
}

impl Sensor for AbiSensor {
    fn sense(&mut self, ctx: &SensorContext<'_>, out: &mut Reading) -> Result<(), String> {
        let mut frame = Frame {
            world: ctx.world,
            artifact: Some(ctx.artifact),
            kind: FrameKind::Sensor { out },
        };
        self.0.step(&mut frame)
    }
}

/// What the current call may touch.
enum FrameKind<'a> {
    Sensor {
        out: &'a mut Reading,
    },
    Driver {
        commands: &'a mut CommandBuffer,
        readings: &'a dyn ReadingSource,
    },
    Extension {
        readings: &'a dyn ReadingSource,
        stats: StatsView<'a>,
        /// Where `metric` writes (after_step only).
        metrics: Option<&'a mut crate::plugin::Metrics>,
    },
}

struct Frame<'a> {
    world: &'a World<'a>,
    /// The calling plugin's artifact (none for extensions).
    artifact: Option<ArtifactId>,
    kind: FrameKind<'a>,
}

thread_local! {
    /// The handle and frame of the plugin call running on this thread (0 / null: none).
    static CURRENT: Cell<(SsxCtx, *mut ())> = const { Cell::new((0, std::ptr::null_mut())) };
    /// Handles are unique across threads: a per-thread tag in the high bits, a counter below.
    static NEXT: Cell<u64> = Cell::new(THREAD_TAG.fetch_add(1, Ordering::Relaxed) << 40);
}
static THREAD_TAG: AtomicU64 = AtomicU64::new(1);

/// Makes `frame` current for the duration of `call`, which gets a fresh handle.
fn with_frame(frame: &mut Frame<'_>, call: impl FnOnce(SsxCtx) -> SsxStatus) -> SsxStatus {
    let ctx = NEXT.with(|n| {
        let v = n.get() + 1;
        n.set(v);
        v
    });
    let previous = CURRENT.with(|c| c.replace((ctx, frame as *mut Frame<'_> as *mut ())));
    let status = call(ctx);
    CURRENT.with(|c| c.set(previous));
    status
}

/// Runs a host function's body against the current frame, checking the handle. Panics are
/// caught: a host function never unwinds into a plugin.
fn host<F>(ctx: SsxCtx, body: F) -> SsxStatus
where
    F: FnOnce(&mut Frame<'_>) -> Result<(), SsxStatus>,
{
    let (current, ptr) = CURRENT.with(Cell::get);
    if ctx == 0 || ctx != current || ptr.is_null() {
        return SSX_ERR_INVALID_HANDLE;
    }
    // SAFETY: `ptr` is the frame `with_frame` installed for this very handle on this thread; it
    // lives until that call returns, and host functions do not nest.
    let frame = unsafe { &mut *(ptr as *mut Frame<'_>) };
    match catch_unwind(AssertUnwindSafe(|| body(frame))) {
        Ok(Ok(())) => SSX_OK,
        Ok(Err(s)) => s,
        Err(_) => SSX_ERR_INVALID_ARGUMENT,
    }
}

/// `*mut T` to `&mut T`, null refused.
fn out<'p, T>(p: *mut T) -> Result<&'p mut T, SsxStatus> {
    // SAFETY: the caller promises a valid pointer or null.
    unsafe { p.as_mut() }.ok_or(SSX_ERR_INVALID_ARGUMENT)
}

/// A `double[3]`, null and non-finite refused.
fn vec3(p: *const f64) -> Result<Vec3, SsxStatus> {
    if p.is_null() {
        return Err(SSX_ERR_INVALID_ARGUMENT);
    }
    // SAFETY: a non-null `double[3]` per the ABI.
    let v = unsafe { std::slice::from_raw_parts(p, 3) };
    let v = Vec3::new(v[0], v[1], v[2]);
    if v.iter().all(|x| x.is_finite()) {
        Ok(v)
    } else {
        Err(SSX_ERR_INVALID_ARGUMENT)
    }
}

fn name<'p>(p: *const c_char) -> Result<&'p str, SsxStatus> {
    if p.is_null() {
        return Err(SSX_ERR_INVALID_ARGUMENT);
    }
    // SAFETY: NUL-terminated per the ABI.
    unsafe { CStr::from_ptr(p) }
        .to_str()
        .map_err(|_| SSX_ERR_INVALID_ARGUMENT)
}

fn body_of(world: &World<'_>, artifact: u32, body: u32) -> Result<BodyId, SsxStatus> {
    if artifact as usize >= world.artifact_count() {
        return Err(SSX_ERR_OUT_OF_RANGE);
    }
    world
        .artifact(ArtifactId(artifact))
        .body(body as usize)
        .ok_or(SSX_ERR_OUT_OF_RANGE)
}

fn commands<'f>(frame: &'f mut Frame<'_>) -> Result<&'f mut CommandBuffer, SsxStatus> {
    match &mut frame.kind {
        FrameKind::Driver { commands, .. } => Ok(commands),
        FrameKind::Sensor { .. } | FrameKind::Extension { .. } => Err(SSX_ERR_WRONG_PHASE),
    }
}

fn command(r: Result<(), String>) -> Result<(), SsxStatus> {
    r.map_err(|m| {
        if m.starts_with("body index") {
            SSX_ERR_OUT_OF_RANGE
        } else {
            SSX_ERR_INVALID_ARGUMENT
        }
    })
}

unsafe extern "C" fn host_time(ctx: SsxCtx, time: *mut f64, step: *mut u64) -> SsxStatus {
    host(ctx, |f| {
        *out(time)? = f.world.time;
        *out(step)? = f.world.step;
        Ok(())
    })
}

unsafe extern "C" fn host_gravity(ctx: SsxCtx, gravity: *mut f64) -> SsxStatus {
    host(ctx, |f| {
        if gravity.is_null() {
            return Err(SSX_ERR_INVALID_ARGUMENT);
        }
        // SAFETY: a `double[3]` per the ABI.
        unsafe { std::slice::from_raw_parts_mut(gravity, 3) }
            .copy_from_slice(f.world.gravity.as_slice());
        Ok(())
    })
}

unsafe extern "C" fn host_artifact_count(ctx: SsxCtx, count: *mut u32) -> SsxStatus {
    host(ctx, |f| {
        *out(count)? = f.world.artifact_count() as u32;
        Ok(())
    })
}

unsafe extern "C" fn host_artifact_by_name(
    ctx: SsxCtx,
    n: *const c_char,
    artifact: *mut u32,
) -> SsxStatus {
    host(ctx, |f| {
        *out(artifact)? = f
            .world
            .artifact_by_name(name(n)?)
            .ok_or(SSX_ERR_NOT_FOUND)?
            .0;
        Ok(())
    })
}

unsafe extern "C" fn host_artifact_name(
    ctx: SsxCtx,
    artifact: u32,
    buf: *mut c_char,
    capacity: usize,
    len: *mut usize,
) -> SsxStatus {
    host(ctx, |f| {
        if artifact as usize >= f.world.artifact_count() {
            return Err(SSX_ERR_OUT_OF_RANGE);
        }
        copy_name(
            &f.world.artifact(ArtifactId(artifact)).name,
            buf,
            capacity,
            len,
        )
    })
}

unsafe extern "C" fn host_sensor_name(
    ctx: SsxCtx,
    artifact: u32,
    sensor: u32,
    buf: *mut c_char,
    capacity: usize,
    len: *mut usize,
) -> SsxStatus {
    host(ctx, |f| {
        if artifact as usize >= f.world.artifact_count() {
            return Err(SSX_ERR_OUT_OF_RANGE);
        }
        let name = f
            .world
            .artifact(ArtifactId(artifact))
            .sensor_names
            .get(sensor as usize)
            .ok_or(SSX_ERR_OUT_OF_RANGE)?;
        copy_name(name, buf, capacity, len)
    })
}

/// Writes `name` and a NUL into the caller's `capacity` bytes at `buf`, and its length (NUL
/// excluded) into `len`; `SSX_ERR_OUT_OF_RANGE` when it does not fit.
fn copy_name(
    name: &str,
    buf: *mut c_char,
    capacity: usize,
    len: *mut usize,
) -> Result<(), SsxStatus> {
    let name = name.as_bytes();
    *out(len)? = name.len();
    if capacity < name.len() + 1 {
        return Err(SSX_ERR_OUT_OF_RANGE);
    }
    if buf.is_null() {
        return Err(SSX_ERR_INVALID_ARGUMENT);
    }
    // SAFETY: `capacity` bytes at `buf` per the ABI, and the name plus NUL fit.
    unsafe {
        std::ptr::copy_nonoverlapping(name.as_ptr(), buf.cast::<u8>(), name.len());
        *buf.add(name.len()) = 0;
    }
    Ok(())
}

unsafe extern "C" fn host_stats(ctx: SsxCtx, stats: *mut SsxStats) -> SsxStatus {
    host(ctx, |f| {
        let FrameKind::Extension { stats: view, .. } = &f.kind else {
            return Err(SSX_ERR_WRONG_PHASE);
        };
        let l = view.live();
        *out(stats)? = SsxStats {
            struct_size: std::mem::size_of::<SsxStats>() as u32,
            paused: u32::from(l.paused),
            steps: l.steps,
            sim_time: l.sim_time,
            wall_time: l.wall_time,
            deadline_misses: l.deadline_misses,
            miss_bursts: l.miss_bursts,
            late_wakeups: l.late_wakeups,
            plugin_faults: l.plugin_faults,
            step_p50_us: l.step_p50_us,
            step_p99_us: l.step_p99_us,
            step_max_us: l.step_max_us,
            lateness_p99_us: l.lateness_p99_us,
            lateness_max_us: l.lateness_max_us,
        };
        Ok(())
    })
}

unsafe extern "C" fn host_body_count(ctx: SsxCtx, artifact: u32, count: *mut u32) -> SsxStatus {
    host(ctx, |f| {
        if artifact as usize >= f.world.artifact_count() {
            return Err(SSX_ERR_OUT_OF_RANGE);
        }
        *out(count)? = f.world.artifact(ArtifactId(artifact)).bodies.len() as u32;
        Ok(())
    })
}

unsafe extern "C" fn host_body_state(
    ctx: SsxCtx,
    artifact: u32,
    body: u32,
    state: *mut SsxBodyState,
) -> SsxStatus {
    host(ctx, |f| {
        let s = f.world.body(body_of(f.world, artifact, body)?);
        let p = s.pose.translation.vector;
        let q = s.pose.rotation.quaternion();
        *out(state)? = SsxBodyState {
            position: [p.x, p.y, p.z],
            orientation: [q.w, q.i, q.j, q.k],
            linear_velocity: [s.linvel.x, s.linvel.y, s.linvel.z],
            angular_velocity: [s.angvel.x, s.angvel.y, s.angvel.z],
        };
        Ok(())
    })
}

unsafe extern "C" fn host_body_mass(
    ctx: SsxCtx,
    artifact: u32,
    body: u32,
    mass: *mut f64,
) -> SsxStatus {
    host(ctx, |f| {
        *out(mass)? = f.world.mass(body_of(f.world, artifact, body)?);
        Ok(())
    })
}

unsafe extern "C" fn host_body_inertia(
    ctx: SsxCtx,
    artifact: u32,
    body: u32,
    inertia: *mut f64,
) -> SsxStatus {
    host(ctx, |f| {
        let i = f.world.inertia(body_of(f.world, artifact, body)?);
        if inertia.is_null() {
            return Err(SSX_ERR_INVALID_ARGUMENT);
        }
        // SAFETY: `inertia` points at three doubles per the ABI, null checked above.
        unsafe { slice_mut(inertia, 3) }.copy_from_slice(i.as_slice());
        Ok(())
    })
}

unsafe extern "C" fn host_contacts(
    ctx: SsxCtx,
    artifact: u32,
    body: u32,
    contacts: *mut SsxContact,
    capacity: usize,
    count: *mut usize,
) -> SsxStatus {
    host(ctx, |f| {
        let id = body_of(f.world, artifact, body)?;
        if contacts.is_null() && capacity > 0 {
            return Err(SSX_ERR_INVALID_ARGUMENT);
        }
        // A per-thread scratch list, as for neighbours: no allocation once grown.
        thread_local! {
            static TOUCH: std::cell::RefCell<Vec<Contact>> = const { std::cell::RefCell::new(Vec::new()) };
        }
        let mut found = TOUCH.with(|slot| std::mem::take(&mut *slot.borrow_mut()));
        found.clear();
        f.world.contacts(id, &mut found);
        for (i, c) in found.iter().take(capacity).enumerate() {
            let owner = f.world.owner(c.other);
            let first = f.world.artifact(owner).bodies.start;
            let entry = SsxContact {
                artifact: owner.0,
                body: c.other.0 - first,
                point: [c.point.x, c.point.y, c.point.z],
                force: [c.force.x, c.force.y, c.force.z],
            };
            // SAFETY: `contacts` holds `capacity` slots per the ABI and `i < capacity`.
            unsafe { *contacts.add(i) = entry };
        }
        let n = found.len();
        TOUCH.with(|slot| *slot.borrow_mut() = found);
        *out(count)? = n;
        Ok(())
    })
}

unsafe extern "C" fn host_add_force(ctx: SsxCtx, body: u32, force: *const f64) -> SsxStatus {
    host(ctx, |f| {
        let force = vec3(force)?;
        command(commands(f)?.force(body as usize, force))
    })
}

unsafe extern "C" fn host_add_force_at_point(
    ctx: SsxCtx,
    body: u32,
    force: *const f64,
    point: *const f64,
) -> SsxStatus {
    host(ctx, |f| {
        let (force, point) = (vec3(force)?, Point3::from(vec3(point)?));
        command(commands(f)?.force_at_point(body as usize, force, point))
    })
}

unsafe extern "C" fn host_add_torque(ctx: SsxCtx, body: u32, torque: *const f64) -> SsxStatus {
    host(ctx, |f| {
        let torque = vec3(torque)?;
        command(commands(f)?.torque(body as usize, torque))
    })
}

unsafe extern "C" fn host_set_velocity(
    ctx: SsxCtx,
    body: u32,
    linear: *const f64,
    angular: *const f64,
) -> SsxStatus {
    host(ctx, |f| {
        let (l, a) = (vec3(linear)?, vec3(angular)?);
        command(commands(f)?.velocity(body as usize, l, a))
    })
}

unsafe extern "C" fn host_joint_index(ctx: SsxCtx, n: *const c_char, joint: *mut u32) -> SsxStatus {
    host(ctx, |f| {
        let artifact = f.artifact.ok_or(SSX_ERR_WRONG_PHASE)?;
        let idx = f
            .world
            .artifact(artifact)
            .joint_index(name(n)?)
            .ok_or(SSX_ERR_NOT_FOUND)?;
        *out(joint)? = idx as u32;
        Ok(())
    })
}

unsafe extern "C" fn host_set_joint_target(
    ctx: SsxCtx,
    joint: u32,
    position: f64,
    velocity: f64,
) -> SsxStatus {
    host(ctx, |f| {
        let commands = commands(f)?;
        commands
            .joint_target(joint as usize, position, velocity)
            .map_err(|m| {
                if m.starts_with("joint index") {
                    SSX_ERR_OUT_OF_RANGE
                } else {
                    SSX_ERR_INVALID_ARGUMENT
                }
            })
    })
}

unsafe extern "C" fn host_ray_cast(
    ctx: SsxCtx,
    origin: *const f64,
    direction: *const f64,
    max_distance: f64,
    ignore_own: u32,
    hit: *mut SsxRayHit,
) -> SsxStatus {
    host(ctx, |f| {
        let (o, d) = (vec3(origin)?, vec3(direction)?);
        if !(max_distance.is_finite() && max_distance > 0.0) || d.norm() == 0.0 {
            return Err(SSX_ERR_INVALID_ARGUMENT);
        }
        let ignore = if ignore_own != 0 { f.artifact } else { None };
        let result = f.world.cast_ray(Point3::from(o), d, max_distance, ignore);
        *out(hit)? = match result {
            None => SsxRayHit::default(),
            Some(h) => {
                let owner = f.world.owner(h.body);
                let first = f.world.artifact(owner).bodies.start;
                SsxRayHit {
                    hit: 1,
                    artifact: owner.0,
                    body: h.body.0 - first,
                    distance: h.distance,
                    normal: [h.normal.x, h.normal.y, h.normal.z],
                }
            }
        };
        Ok(())
    })
}

unsafe extern "C" fn host_neighbours(
    ctx: SsxCtx,
    center: *const f64,
    radius: f64,
    artifacts: *mut u32,
    capacity: usize,
    count: *mut usize,
) -> SsxStatus {
    host(ctx, |f| {
        let c = vec3(center)?;
        if !(radius.is_finite() && radius >= 0.0) || (artifacts.is_null() && capacity > 0) {
            return Err(SSX_ERR_INVALID_ARGUMENT);
        }
        // A per-thread scratch list: no allocation once it has grown to the largest answer.
        thread_local! {
            static NEAR: std::cell::RefCell<Vec<BodyId>> = const { std::cell::RefCell::new(Vec::new()) };
        }
        let mut bodies = NEAR.with(|slot| std::mem::take(&mut *slot.borrow_mut()));
        bodies.clear();
        f.world.bodies_within(Point3::from(c), radius, &mut bodies);
        let mut n = 0usize;
        let mut last: Option<u32> = None;
        // An artifact's bodies have consecutive ids, so its bodies come together.
        for &b in &bodies {
            let a = f.world.owner(b).0;
            if Some(ArtifactId(a)) == f.artifact || last == Some(a) {
                continue;
            }
            last = Some(a);
            if n < capacity {
                // SAFETY: `artifacts` holds `capacity` slots per the ABI.
                unsafe { *artifacts.add(n) = a };
            }
            n += 1;
        }
        NEAR.with(|slot| *slot.borrow_mut() = bodies);
        *out(count)? = n;
        Ok(())
    })
}

unsafe extern "C" fn host_sensor_index(
    ctx: SsxCtx,
    artifact: u32,
    n: *const c_char,
    sensor: *mut u32,
) -> SsxStatus {
    host(ctx, |f| {
        if artifact as usize >= f.world.artifact_count() {
            return Err(SSX_ERR_OUT_OF_RANGE);
        }
        let idx = f
            .world
            .artifact(ArtifactId(artifact))
            .sensor_index(name(n)?)
            .ok_or(SSX_ERR_NOT_FOUND)?;
        *out(sensor)? = idx as u32;
        Ok(())
    })
}

unsafe extern "C" fn host_publish(ctx: SsxCtx, values: *const f64, len: usize) -> SsxStatus {
    host(ctx, |f| {
        let FrameKind::Sensor { out } = &mut f.kind else {
            return Err(SSX_ERR_WRONG_PHASE);
        };
        if values.is_null() && len > 0 {
            return Err(SSX_ERR_INVALID_ARGUMENT);
        }
        // SAFETY: `len` doubles at `values` per the ABI (or none), null checked above.
        let v = unsafe { slice(values, len) };
        out.set(v);
        Ok(())
    })
}

unsafe extern "C" fn host_reading(
    ctx: SsxCtx,
    artifact: u32,
    sensor: u32,
    values: *mut *const f64,
    len: *mut usize,
    step: *mut u64,
) -> SsxStatus {
    host(ctx, |f| {
        let readings = match &f.kind {
            FrameKind::Driver { readings, .. } | FrameKind::Extension { readings, .. } => *readings,
            FrameKind::Sensor { .. } => return Err(SSX_ERR_WRONG_PHASE),
        };
        if artifact as usize >= f.world.artifact_count() {
            return Err(SSX_ERR_OUT_OF_RANGE);
        }
        // An index past the artifact's sensors (or an artifact with none): out of range, like
        // every other index.
        let r = readings
            .reading(ArtifactId(artifact), sensor as usize)
            .ok_or(SSX_ERR_OUT_OF_RANGE)?;
        *out(values)? = r.values().as_ptr();
        *out(len)? = r.values().len();
        *out(step)? = r.step();
        Ok(())
    })
}

unsafe extern "C" fn host_describe(ctx: SsxCtx, json: *const c_char) -> SsxStatus {
    host(ctx, |f| {
        let FrameKind::Sensor { out } = &mut f.kind else {
            return Err(SSX_ERR_WRONG_PHASE);
        };
        let text = name(json)?;
        if text.len() > SSX_MAX_DESCRIPTION {
            return Err(SSX_ERR_OUT_OF_RANGE);
        }
        out.describe(text);
        Ok(())
    })
}

unsafe extern "C" fn host_reading_description(
    ctx: SsxCtx,
    artifact: u32,
    sensor: u32,
    text: *mut *const c_char,
    len: *mut usize,
) -> SsxStatus {
    host(ctx, |f| {
        let readings = match &f.kind {
            FrameKind::Driver { readings, .. } | FrameKind::Extension { readings, .. } => *readings,
            FrameKind::Sensor { .. } => return Err(SSX_ERR_WRONG_PHASE),
        };
        if artifact as usize >= f.world.artifact_count() {
            return Err(SSX_ERR_OUT_OF_RANGE);
        }
        let r = readings
            .reading(ArtifactId(artifact), sensor as usize)
            .ok_or(SSX_ERR_OUT_OF_RANGE)?;
        *out(text)? = r.description().as_ptr().cast();
        *out(len)? = r.description().len();
        Ok(())
    })
}

unsafe extern "C" fn host_map(
    ctx: SsxCtx,
    info: *mut SsxMapInfo,
    cells: *mut u8,
    capacity: usize,
) -> SsxStatus {
    host(ctx, |f| {
        if matches!(f.kind, FrameKind::Sensor { .. }) {
            return Err(SSX_ERR_WRONG_PHASE);
        }
        let info = out(info)?;
        let map = f.world.map().ok_or(SSX_ERR_NOT_FOUND)?;
        *info = SsxMapInfo {
            width: map.width,
            height: map.height,
            resolution: map.resolution,
            origin: map.origin,
        };
        if cells.is_null() {
            return Ok(());
        }
        if capacity < map.cells.len() {
            return Err(SSX_ERR_OUT_OF_RANGE);
        }
        // SAFETY: `capacity` writable bytes at `cells` per the ABI, checked to hold them all.
        unsafe { std::ptr::copy_nonoverlapping(map.cells.as_ptr(), cells, map.cells.len()) };
        Ok(())
    })
}

unsafe extern "C" fn host_log(
    ctx: SsxCtx,
    level: SsxLogLevel,
    message: *const c_char,
) -> SsxStatus {
    if ctx == 0 {
        // Outside a step (from `create` or `destroy`, or a plugin's own thread): no handle,
        // so the message is attributed to what the calling thread is running, if anything.
        let Ok(m) = name(message) else {
            return SSX_ERR_INVALID_ARGUMENT;
        };
        let m = crate::text::escape_controls(m);
        let who =
            crate::guard::running().map_or_else(|| "(no step)".to_string(), |b| b.to_string());
        match level {
            SSX_LOG_ERROR => tracing::error!(target: "ssx::plugin", plugin = %who, "{m}"),
            SSX_LOG_WARN => tracing::warn!(target: "ssx::plugin", plugin = %who, "{m}"),
            SSX_LOG_INFO => tracing::info!(target: "ssx::plugin", plugin = %who, "{m}"),
            _ => tracing::debug!(target: "ssx::plugin", plugin = %who, "{m}"),
        }
        return SSX_OK;
    }
    host(ctx, |f| {
        // Plugin text reaches terminals and logs: no escape sequences, no forged lines.
        let m = crate::text::escape_controls(name(message)?);
        let a = f
            .artifact
            .map_or("(extension)", |a| f.world.artifact(a).name.as_str());
        match level {
            SSX_LOG_ERROR => tracing::error!(target: "ssx::plugin", artifact = %a, "{m}"),
            SSX_LOG_WARN => tracing::warn!(target: "ssx::plugin", artifact = %a, "{m}"),
            SSX_LOG_INFO => tracing::info!(target: "ssx::plugin", artifact = %a, "{m}"),
            _ => tracing::debug!(target: "ssx::plugin", artifact = %a, "{m}"),
        }
        Ok(())
    })
}

unsafe extern "C" fn host_extension(
    ctx: SsxCtx,
    n: *const c_char,
    extension: *mut u32,
) -> SsxStatus {
    host(ctx, |f| {
        *out(extension)? = f.world.extension_index(name(n)?).ok_or(SSX_ERR_NOT_FOUND)? as u32;
        Ok(())
    })
}

#[allow(clippy::too_many_arguments)] // the C signature
unsafe extern "C" fn host_call_extension(
    ctx: SsxCtx,
    extension: u32,
    service: *const c_char,
    request: *const u8,
    request_len: usize,
    response: *mut u8,
    capacity: usize,
    response_len: *mut usize,
) -> SsxStatus {
    host(ctx, |f| {
        let ext = f
            .world
            .extension_at(extension as usize)
            .ok_or(SSX_ERR_OUT_OF_RANGE)?;
        let service = name(service)?;
        if (request.is_null() && request_len > 0) || (response.is_null() && capacity > 0) {
            return Err(SSX_ERR_INVALID_ARGUMENT);
        }
        // SAFETY: buffers of the given lengths per the ABI, null checked above.
        let (req, resp) = unsafe { (slice(request, request_len), slice_mut(response, capacity)) };
        let _doing = f
            .world
            .extension_labels
            .get(extension as usize)
            .map(|l| crate::guard::enter(l, crate::guard::Phase::Service, f.world.step));
        let len = ext.call(service, req, resp).map_err(|m| {
            tracing::debug!(target: "ssx::plugin", "extension service '{service}' failed: {m}");
            SSX_ERR_PLUGIN
        })?;
        *out(response_len)? = len;
        if len > capacity {
            Err(SSX_ERR_OUT_OF_RANGE)
        } else {
            Ok(())
        }
    })
}

unsafe extern "C" fn host_metric(ctx: SsxCtx, name: *const c_char, value: f64) -> SsxStatus {
    host(ctx, |f| {
        let FrameKind::Extension {
            metrics: Some(metrics),
            ..
        } = &mut f.kind
        else {
            return Err(SSX_ERR_WRONG_PHASE);
        };
        crate::plugin::set_metric(metrics, self::name(name)?, value).map_err(|why| {
            tracing::debug!(target: "ssx::plugin", "metric refused: {why}");
            SSX_ERR_INVALID_ARGUMENT
        })
    })
}

unsafe extern "C" fn host_metric_at(
    ctx: SsxCtx,
    index: u32,
    name: *mut c_char,
    capacity: usize,
    len: *mut usize,
    value: *mut f64,
) -> SsxStatus {
    host(ctx, |f| {
        let FrameKind::Extension { stats, .. } = &f.kind else {
            return Err(SSX_ERR_WRONG_PHASE);
        };
        let (key, v) = stats
            .metrics()
            .get(index as usize)
            .ok_or(SSX_ERR_NOT_FOUND)?;
        *out(value)? = *v;
        copy_name(key, name, capacity, len)
    })
}

unsafe extern "C" fn host_wake() {
    crate::wake::ring();
}

unsafe extern "C" fn host_status_message(status: SsxStatus) -> *const c_char {
    status_message_c(status).as_ptr()
}

/// The host functions, as plugins see them. Static: it outlives every instance.
pub static HOST_API: SsxHostApi = SsxHostApi {
    struct_size: std::mem::size_of::<SsxHostApi>() as u32,
    abi_version: SSX_ABI_VERSION,
    time: host_time,
    gravity: host_gravity,
    artifact_count: host_artifact_count,
    artifact_by_name: host_artifact_by_name,
    body_count: host_body_count,
    body_state: host_body_state,
    body_mass: host_body_mass,
    add_force: host_add_force,
    add_force_at_point: host_add_force_at_point,
    add_torque: host_add_torque,
    set_velocity: host_set_velocity,
    joint_index: host_joint_index,
    set_joint_target: host_set_joint_target,
    ray_cast: host_ray_cast,
    neighbours: host_neighbours,
    sensor_index: host_sensor_index,
    publish: host_publish,
    reading: host_reading,
    extension: host_extension,
    call_extension: host_call_extension,
    log: host_log,
    status_message: host_status_message,
    body_inertia: host_body_inertia,
    contacts: host_contacts,
    stats: host_stats,
    artifact_name: host_artifact_name,
    wake: host_wake,
    metric: host_metric,
    metric_at: host_metric_at,
    describe: host_describe,
    reading_description: host_reading_description,
    map: host_map,
    sensor_name: host_sensor_name,
};
