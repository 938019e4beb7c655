//! How a Rust plugin becomes a C plugin: the instance behind each handle, the trampolines that
//! turn every host call into a Rust method call (catching panics), and [`export_plugins!`].

use std::ffi::{CStr, c_char, c_void};
use std::panic::{AssertUnwindSafe, catch_unwind};

use crate::abi::*;
use crate::*;

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
unsafe fn appended<T: Copy>(init: *const SsxInit, offset: usize) -> Option<T> {
    // SAFETY: `struct_size` leads every version of the record; the field is read only when the
    // host's record covers it.
    let size = unsafe { (*init).struct_size } as usize;
    (size >= offset + std::mem::size_of::<T>())
        .then(|| unsafe { init.cast::<u8>().add(offset).cast::<T>().read_unaligned() })
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
            body_count: unsafe { appended(raw_init, std::mem::offset_of!(SsxInit, body_count)) },
            joint_count: unsafe { appended(raw_init, std::mem::offset_of!(SsxInit, joint_count)) },
            // SAFETY: as above.
            world: unsafe { appended(raw_init, std::mem::offset_of!(SsxInit, world)) }.unwrap_or(0),
            // SAFETY: as above; a non-null directory is a NUL-terminated string the host keeps
            // for the call.
            directory: unsafe {
                appended::<*const c_char>(raw_init, std::mem::offset_of!(SsxInit, directory))
            }
            .filter(|p| !p.is_null())
            .map(|p| unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned())
            .filter(|d| !d.is_empty())
            .map(std::path::PathBuf::from),
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

/// `step` for each instance in turn, stopping at the first that fails (the ABI's
/// `SsxStepManyFn`): one call from the host for many instances.
unsafe fn step_many_impl<M: Make>(
    instances: *const *mut c_void,
    ctxs: *const SsxCtx,
    count: usize,
    failed: *mut usize,
    error: *mut SsxErrorBuf,
) -> SsxStatus {
    let at = |k: usize| {
        // SAFETY: the host passes a valid out pointer or null.
        if let Some(f) = unsafe { failed.as_mut() } {
            *f = k;
        }
    };
    if count > 0 && (instances.is_null() || ctxs.is_null()) {
        at(0);
        write_error(error, "null argument to step_many");
        return SSX_ERR_INVALID_ARGUMENT;
    }
    // SAFETY: `count` instances and handles per the ABI, null checked above.
    let (instances, ctxs) = unsafe { (abi::slice(instances, count), abi::slice(ctxs, count)) };
    for (k, (&instance, &ctx)) in instances.iter().zip(ctxs).enumerate() {
        // SAFETY: each is a live instance of `M` with its handle for this call (the ABI).
        let status = unsafe { step_impl::<M>(instance, ctx, error) };
        if status != SSX_OK {
            at(k);
            return status;
        }
    }
    SSX_OK
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
    ($bound:ident, $wrap:ident, $create:ident, $step:ident, $destroy:ident, $save:ident, $restore:ident, $step_many:ident) => {
        trampolines!($bound, $wrap, $create, $step, $destroy);
        #[doc(hidden)]
        pub unsafe extern "C" fn $step_many<T: $bound>(
            instances: *const *mut c_void,
            ctxs: *const SsxCtx,
            count: usize,
            failed: *mut usize,
            e: *mut SsxErrorBuf,
        ) -> SsxStatus {
            unsafe { step_many_impl::<$wrap<T>>(instances, ctxs, count, failed, e) }
        }
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
    __driver_restore,
    __driver_step_many
);
trampolines!(
    Sensor,
    AsSensor,
    __sensor_create,
    __sensor_step,
    __sensor_destroy,
    __sensor_save,
    __sensor_restore,
    __sensor_step_many
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
            step_many: Some($crate::__driver_step_many::<$ty>),
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
            step_many: None,
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
            step_many: Some($crate::__sensor_step_many::<$ty>),
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
