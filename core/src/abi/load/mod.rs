//! Finding and opening plugin libraries (SSX's ClassLoader): the path rules, the checks of a
//! library's table, and the loader that opens each library once.

use std::collections::HashMap;
use std::ffi::{CStr, c_char};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use ssx_sdk::abi::*;

use crate::plugin::{Driver, PluginInit, Sensor, SimulationExtension};

mod error;

pub use error::{ElfProblem, LoadError};

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
    /// The private copy it was opened from ([`PluginLibrary::open_copy`]), removed on drop,
    /// and its folder, kept while the copy is read ([`PluginLibrary::bytes`]).
    copy: Option<PathBuf>,
    folder: Option<Arc<tempfile::TempDir>>,
    abi_version: u32,
    plugins: Vec<(PluginInfo, SsxPluginDesc)>,
    /// The SHA-256 of the bytes opened, once asked for ([`PluginLibrary::sha256`]).
    sha256: std::sync::OnceLock<Result<String, String>>,
    // Last: dropped (dlclose) after everything above.
    _lib: libloading::Library,
}

// SAFETY: the table is immutable static data of the library, and the function pointers in it are
// callable from any thread per the ABI rules.
unsafe impl Send for PluginLibrary {}
unsafe impl Sync for PluginLibrary {}

impl Drop for PluginLibrary {
    fn drop(&mut self) {
        // Unlinking a mapped file is fine: the mapping stays until dlclose, just after.
        if let Some(copy) = &self.copy {
            let _ = std::fs::remove_file(copy);
        }
    }
}

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
fn pin(path: &Path) -> Result<(), LoadError> {
    use libloading::os::unix::Library;
    // SAFETY: the library is already loaded (RTLD_NOLOAD): no initialiser runs again; this only
    // marks it RTLD_NODELETE. The extra handle is forgotten, the mapping stays.
    let handle = unsafe {
        Library::open(
            Some(path),
            libc::RTLD_NOW | libc::RTLD_NOLOAD | libc::RTLD_NODELETE,
        )
    }
    .map_err(|e| LoadError::Pin {
        path: path.to_path_buf(),
        why: e.to_string(),
    })?;
    std::mem::forget(handle);
    Ok(())
}

fn c_text(p: *const c_char) -> Result<String, &'static str> {
    if p.is_null() {
        return Err("is null");
    }
    // SAFETY: non-null, NUL-terminated per the ABI; the library stays loaded while we read.
    unsafe { CStr::from_ptr(p) }
        .to_str()
        .map(str::to_owned)
        .map_err(|_| "is not UTF-8")
}

/// `path` made absolute (dlopen reads a name without a '/' as a library to search for in the
/// system paths, not as this file), if it is a regular file; otherwise what it is.
fn checked(path: &Path) -> Result<PathBuf, LoadError> {
    let path = crate::files::absolute(path);
    match std::fs::metadata(&path) {
        Ok(m) if m.is_file() => Ok(path),
        Ok(m) => Err(LoadError::NotRegular(crate::files::not_regular(
            &path.display().to_string(),
            &m,
        ))),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Err(LoadError::NoSuchFile(path)),
        Err(source) => Err(LoadError::Unreadable { path, source }),
    }
}

/// Whether an ELF file holds every byte its headers point at: a file still being written (or
/// cut short) can pass dlopen's checks and fault later, when the missing pages are touched.
fn whole_elf(file: &Path) -> Result<(), ElfProblem> {
    use std::io::Read;
    let bytes =
        |what: &'static str, source: std::io::Error| ElfProblem::Unreadable { what, source };
    let len = std::fs::metadata(file).map_err(|e| bytes("size", e))?.len();
    let mut header = [0u8; 64];
    let mut f = std::fs::File::open(file).map_err(|e| bytes("open", e))?;
    if len < 64 || f.read_exact(&mut header).is_err() || &header[..4] != b"\x7fELF" {
        return Err(ElfProblem::NotElf { len });
    }
    if header[4] != 2 || header[5] != 1 {
        return Err(ElfProblem::Class);
    }
    let u16_at = |o: usize| u64::from(u16::from_le_bytes([header[o], header[o + 1]]));
    let u64_at = |o: usize| u64::from_le_bytes(header[o..o + 8].try_into().expect("8 bytes"));
    let (phoff, shoff) = (u64_at(0x20), u64_at(0x28));
    let (phsize, phnum, shsize, shnum) = (u16_at(0x36), u16_at(0x38), u16_at(0x3a), u16_at(0x3c));
    let short = |what: &'static str, end: u64| Err(ElfProblem::Short { what, end, len });
    let ph_end = phoff.saturating_add(phsize * phnum);
    if ph_end > len {
        return short("program headers", ph_end);
    }
    let sh_end = shoff.saturating_add(shsize * shnum);
    if sh_end > len {
        return short("section headers", sh_end);
    }
    let mut ph = vec![0u8; (phsize * phnum) as usize];
    use std::io::Seek;
    f.seek(std::io::SeekFrom::Start(phoff))
        .and_then(|_| f.read_exact(&mut ph))
        .map_err(|e| bytes("program headers", e))?;
    for entry in ph.chunks_exact(phsize.max(1) as usize) {
        const PT_LOAD: u32 = 1;
        let kind = u32::from_le_bytes(entry[0..4].try_into().expect("4 bytes"));
        if kind != PT_LOAD || entry.len() < 40 {
            continue;
        }
        let offset = u64::from_le_bytes(entry[8..16].try_into().expect("8 bytes"));
        let size = u64::from_le_bytes(entry[32..40].try_into().expect("8 bytes"));
        if offset.saturating_add(size) > len {
            return short("loadable segments", offset.saturating_add(size));
        }
    }
    Ok(())
}

impl PluginLibrary {
    /// Opens a library (RTLD_NOW | RTLD_LOCAL) and checks its table: the ABI version and struct
    /// size first, then each plugin's entry. Messages say what was found against what the host
    /// expects.
    pub fn open(path: &Path) -> Result<Arc<Self>, LoadError> {
        let path = &checked(path)?;
        Self::open_file(path, path, None)
    }

    /// As [`PluginLibrary::open`], but from a private copy of the file made in `dir` first:
    /// the running code must not change when someone writes a new build over the file (`cp`
    /// writes into the same inode, which the mapping would follow), and a rebuilt file must
    /// not be served from the dynamic loader's cache of the old one. Messages name `path`.
    pub fn open_copy(path: &Path, dir: &Arc<tempfile::TempDir>) -> Result<Arc<Self>, LoadError> {
        Self::open_copy_of(path, path, dir)
    }

    /// As [`PluginLibrary::open_copy`], but the copy is made of `build`, another file (a
    /// replay's copy of the build a run used, taken from its recording); messages name `path`.
    pub fn open_copy_of(
        path: &Path,
        build: &Path,
        folder: &Arc<tempfile::TempDir>,
    ) -> Result<Arc<Self>, LoadError> {
        let dir = folder.path();
        let path = &checked(path)?;
        let build = &checked(build)?;
        static COPIES: AtomicU64 = AtomicU64::new(0);
        let n = COPIES.fetch_add(1, Ordering::Relaxed);
        let file_name = path.file_name().unwrap_or_default().to_string_lossy();
        let copy = dir.join(format!("{n}-{file_name}"));
        std::fs::copy(build, &copy).map_err(|source| LoadError::Copy {
            path: path.clone(),
            copy: copy.clone(),
            source,
        })?;
        let opened = whole_elf(&copy)
            .map_err(|problem| LoadError::Elf {
                path: path.clone(),
                problem,
            })
            .and_then(|()| Self::open_file(path, &copy, Some(copy.clone())));
        match opened {
            Ok(mut lib) => {
                Arc::get_mut(&mut lib).expect("just made").folder = Some(Arc::clone(folder));
                Ok(lib)
            }
            Err(e) => {
                let _ = std::fs::remove_file(&copy);
                Err(e)
            }
        }
    }

    /// Opens `file`, named `path` in every message and in [`PluginLibrary::path`]; `copy` is
    /// removed when the library is dropped.
    fn open_file(path: &Path, file: &Path, copy: Option<PathBuf>) -> Result<Arc<Self>, LoadError> {
        let at = || path.to_path_buf();
        use libloading::os::unix::{Library, RTLD_LOCAL, RTLD_NOW};
        // SAFETY: loading runs the library's initialisers; that is the contract of a plugin.
        let lib: libloading::Library = unsafe { Library::open(Some(file), RTLD_NOW | RTLD_LOCAL) }
            .map_err(|e| {
                let why =
                    std::error::Error::source(&e).map_or_else(|| e.to_string(), |s| s.to_string());
                LoadError::NotLoadable { path: at(), why }
            })?
            .into();
        // SAFETY: the symbol's type is fixed by the ABI.
        let entry: SsxEntryFn = match unsafe { lib.get::<SsxEntryFn>(SSX_ENTRY_SYMBOL) } {
            Ok(sym) => *sym,
            Err(_) => return Err(LoadError::NoEntry(at())),
        };
        // SAFETY: calling the entry point is what loading a plugin means.
        let table = unsafe { entry() };
        if table.is_null() {
            return Err(LoadError::NullTable(at()));
        }
        // Read the version and the size before anything else: a table of another version may
        // have another layout.
        // SAFETY: every table version starts with these two u32 fields.
        let (version, size) = unsafe { (*(table as *const u32), *(table as *const u32).add(1)) };
        if version != SSX_ABI_VERSION {
            return Err(LoadError::Version {
                path: at(),
                host: SSX_ABI_VERSION,
                plugin: version,
            });
        }
        let expected = std::mem::size_of::<SsxPluginTable>();
        if (size as usize) < expected {
            return Err(LoadError::TableSize {
                path: at(),
                host: expected,
                plugin: size,
            });
        }
        // SAFETY: version and size checked: the table has the layout we know.
        let t = unsafe { *table };
        if t.plugin_count > 0 && t.plugins.is_null() {
            return Err(LoadError::NullList(at()));
        }
        let mut plugins = Vec::with_capacity(t.plugin_count as usize);
        // The entries are an array of the plugin's `SsxPluginDesc`, which may be older (shorter)
        // than the host's: step by the plugin's size, read what it has, zero the rest (fields
        // appended since are optional entries, null when absent).
        let stride = match t.plugin_count {
            0 => 0,
            // SAFETY: at least one entry; every version starts with `struct_size`.
            _ => (unsafe { *(t.plugins as *const u32) }) as usize,
        };
        for i in 0..t.plugin_count as usize {
            // SAFETY: `plugins` points at `plugin_count` entries of `stride` bytes (checked
            // below to be at least the version-3 size before anything else is read).
            let entry = unsafe { (t.plugins as *const u8).add(i * stride) };
            let size = unsafe { *(entry as *const u32) } as usize;
            let expected = SSX_PLUGIN_DESC_V3_SIZE;
            if size < expected {
                return Err(LoadError::EntrySize {
                    path: at(),
                    index: i,
                    host: expected,
                    plugin: size,
                });
            }
            if size != stride {
                return Err(LoadError::MixedEntries {
                    path: at(),
                    index: i,
                    size,
                    first: stride,
                });
            }
            let mut d = std::mem::MaybeUninit::<SsxPluginDesc>::zeroed();
            let known = size.min(std::mem::size_of::<SsxPluginDesc>());
            // SAFETY: the entry has `size` readable bytes; the host's struct has room for
            // `known`; all-zero is a valid `SsxPluginDesc` (null pointers, `None` functions).
            let d = unsafe {
                std::ptr::copy_nonoverlapping(entry, d.as_mut_ptr().cast::<u8>(), known);
                d.assume_init()
            };
            let name = c_text(d.name).map_err(|why| LoadError::Name {
                path: at(),
                index: i,
                why,
            })?;
            let kind = match d.kind {
                SSX_KIND_DRIVER => "driver",
                SSX_KIND_SENSOR => "sensor",
                SSX_KIND_EXTENSION => "extension",
                kind => {
                    return Err(LoadError::Kind {
                        path: at(),
                        name,
                        kind,
                    });
                }
            };
            if d.create.is_none() || d.destroy.is_none() || d.step.is_none() {
                return Err(LoadError::Entries { path: at(), name });
            }
            if plugins
                .iter()
                .any(|(p, _): &(PluginInfo, _)| p.name == name)
            {
                return Err(LoadError::Twice { path: at(), name });
            }
            let description = c_text(d.description).unwrap_or_default();
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
            pin(file)?;
        }
        Ok(Arc::new(Self {
            path: path.to_path_buf(),
            copy,
            folder: None,
            abi_version: version,
            plugins,
            sha256: std::sync::OnceLock::new(),
            _lib: lib,
        }))
    }

    /// The library's path.
    pub fn path(&self) -> &Path {
        &self.path
    }
    /// Whether it was opened from a private copy (a driver or sensor library, which can be
    /// swapped), not from the file itself (an extension's).
    pub fn is_copy(&self) -> bool {
        self.copy.is_some()
    }
    /// The bytes it was opened from (its private copy's, which nothing writes over).
    pub fn bytes(&self) -> std::io::Result<Vec<u8>> {
        std::fs::read(self.copy.as_ref().unwrap_or(&self.path))
    }
    /// The SHA-256 of the bytes it was opened from, lowercase hex: read and hashed on the first
    /// call (milliseconds a megabyte: not on a stepping thread), kept after.
    pub fn sha256(&self) -> Result<&str, String> {
        let hashed = self.sha256.get_or_init(|| {
            use sha2::Digest;
            let bytes = self
                .bytes()
                .map_err(|e| format!("cannot read '{}' to hash it: {e}", self.path.display()))?;
            Ok(crate::text::hex(&sha2::Sha256::digest(&bytes)))
        });
        hashed.as_deref().map_err(Clone::clone)
    }
    /// The ABI version it speaks.
    pub fn abi_version(&self) -> u32 {
        self.abi_version
    }
    /// Its plugins.
    pub fn plugins(&self) -> impl Iterator<Item = &PluginInfo> {
        self.plugins.iter().map(|(i, _)| i)
    }

    /// The plugin `name` of kind `kind` ("driver", "sensor", "extension").
    pub fn plugin(&self, kind: &'static str, name: &str) -> Result<&PluginInfo, LoadError> {
        self.entry(kind, name).map(|(i, _)| i)
    }

    /// The table entry of plugin `name` of kind `kind`.
    pub(super) fn find(&self, kind: &'static str, name: &str) -> Result<SsxPluginDesc, LoadError> {
        self.entry(kind, name).map(|(_, d)| *d)
    }

    fn entry(
        &self,
        kind: &'static str,
        name: &str,
    ) -> Result<&(PluginInfo, SsxPluginDesc), LoadError> {
        match self.plugins.iter().find(|(i, _)| i.name == name) {
            Some(e) if e.0.kind == kind => Ok(e),
            Some((i, _)) => Err(LoadError::WrongKind {
                name: name.to_string(),
                path: self.path.clone(),
                is: i.kind,
                wanted: kind,
            }),
            None => Err(LoadError::NoPlugin {
                kind,
                name: name.to_string(),
                path: self.path.clone(),
                has: self
                    .plugins
                    .iter()
                    .map(|(i, _)| format!("{} {}", i.kind, i.name))
                    .collect(),
            }),
        }
    }
}

/// Finds a library named in a scene: as given if absolute; otherwise relative to `dir` (the
/// directory of the file that names it), then in each directory of `SSX_PLUGIN_PATH`, then next
/// to the running executable. The path it returns is absolute (see [`crate::files::absolute`]).
pub fn find_library(named: &Path, dir: &Path) -> Result<PathBuf, LoadError> {
    let mut search: Vec<PathBuf> = std::env::var_os("SSX_PLUGIN_PATH")
        .map(|p| {
            std::env::split_paths(&p)
                .filter(|d| !d.as_os_str().is_empty())
                .collect()
        })
        .unwrap_or_default();
    let program_dir = PROGRAM_DIR.get().cloned().or_else(|| {
        std::env::current_exe()
            .ok()
            .and_then(|e| e.parent().map(Path::to_path_buf))
    });
    search.extend(program_dir);
    find_library_in(named, dir, &search)
}

/// The program's own directory for [`find_library`], when it is not the executable's.
static PROGRAM_DIR: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();

/// Makes `dir` the last place [`find_library`] looks, in place of the running executable's
/// directory ("next to ssxd"): for a program that embeds ssx-core and ships the plugin
/// libraries elsewhere (the Python package keeps them beside its module). The first call wins;
/// returns whether it did.
pub fn set_program_dir(dir: PathBuf) -> bool {
    PROGRAM_DIR.set(dir).is_ok()
}

/// As [`find_library`], with the directories after `dir` given explicitly.
pub fn find_library_in(named: &Path, dir: &Path, search: &[PathBuf]) -> Result<PathBuf, LoadError> {
    // The first candidate that exists is the one: a directory or a device of that name is
    // reported as what it is, not skipped (a later, different library would be a surprise).
    let found = |p: &Path| -> Option<Result<PathBuf, LoadError>> {
        let meta = std::fs::metadata(p).ok()?;
        let shown = crate::files::absolute(p);
        Some(if meta.is_file() {
            Ok(shown)
        } else {
            Err(LoadError::NotRegularLibrary(crate::files::not_regular(
                &shown.display().to_string(),
                &meta,
            )))
        })
    };
    if named.is_absolute() {
        return found(named).unwrap_or_else(|| Err(LoadError::NotFound(named.to_path_buf())));
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
    Err(LoadError::NotFoundIn {
        named: named.to_path_buf(),
        looked_in: list,
    })
}

/// Opens each library once and keeps it for the instances created from it. A clone shares the
/// libraries opened so far (and the directory of their copies): the worlds of a batch open
/// each library once between them, not once a world. Its maps are shared too, until a clone
/// changes one (each world of a batch keeps a clone: copies of the maps took 0.6 KiB a world).
#[derive(Clone, Default)]
pub struct PluginLoader {
    /// By the file's canonical path.
    libraries: Arc<HashMap<PathBuf, Arc<PluginLibrary>>>,
    /// Each path asked for so far, with its canonical path: a library asked for again by the
    /// same path (every instance a world creates, at build and at each reset) is found without
    /// resolving the path again (`canonicalize` was about a third of a reset). Forgotten at a
    /// swap, when a path may have come to name another file.
    resolved: Arc<HashMap<PathBuf, PathBuf>>,
    /// Where driver and sensor libraries are copied before they are opened (made on first use,
    /// removed with the loader).
    copies: Option<Arc<tempfile::TempDir>>,
    /// Builds to open in place of the files found, by file name ([`PluginLoader::use_build`]).
    builds: Arc<HashMap<std::ffi::OsString, PathBuf>>,
}

impl std::fmt::Debug for PluginLoader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PluginLoader")
            .field("libraries", &self.libraries.keys().collect::<Vec<_>>())
            .finish()
    }
}

impl PluginLoader {
    /// A library, opened on first use from the file itself (extensions: their libraries are
    /// pinned and never swapped).
    pub fn library(&mut self, path: &Path) -> Result<Arc<PluginLibrary>, LoadError> {
        let key = self.key(path);
        if let Some(l) = self.libraries.get(&key) {
            return Ok(Arc::clone(l));
        }
        let lib = PluginLibrary::open(path)?;
        Arc::make_mut(&mut self.libraries).insert(key, Arc::clone(&lib));
        Ok(lib)
    }

    /// A library for drivers and sensors, opened on first use from a private copy (see
    /// [`PluginLibrary::open_copy`]), so that it can be swapped for a new build of the file.
    pub fn swappable(&mut self, path: &Path) -> Result<Arc<PluginLibrary>, LoadError> {
        let key = self.key(path);
        if let Some(l) = self.libraries.get(&key) {
            return Ok(Arc::clone(l));
        }
        let dir = self.copy_dir()?;
        let build = path.file_name().and_then(|n| self.builds.get(n));
        let lib = PluginLibrary::open_copy_of(path, build.map_or(path, |b| b), &dir)?;
        Arc::make_mut(&mut self.libraries).insert(key, Arc::clone(&lib));
        Ok(lib)
    }

    /// From now on a driver or sensor library whose file is named `file_name` is opened from
    /// `build` instead of the file the scene's path finds (which must still be there): a
    /// replay's way to run the build a run used, kept in its recording.
    pub fn use_build(&mut self, file_name: &std::ffi::OsStr, build: PathBuf) {
        Arc::make_mut(&mut self.builds).insert(file_name.to_os_string(), build);
    }

    /// The libraries opened so far.
    pub fn opened(&self) -> impl Iterator<Item = &Arc<PluginLibrary>> {
        self.libraries.values()
    }

    /// The directory copies go to.
    pub fn copy_dir(&mut self) -> Result<Arc<tempfile::TempDir>, LoadError> {
        if let Some(d) = &self.copies {
            return Ok(Arc::clone(d));
        }
        let dir = tempfile::Builder::new()
            .prefix(&format!(
                "{}{}-",
                super::leftovers::PREFIX,
                std::process::id()
            ))
            .tempdir()
            .map_err(LoadError::CopyDir)?;
        // Once a process: the copies of processes that died without removing theirs.
        static SWEEP: std::sync::Once = std::sync::Once::new();
        SWEEP.call_once(|| super::leftovers::sweep_beside(dir.path()));
        Ok(Arc::clone(self.copies.insert(Arc::new(dir))))
    }

    /// Replaces the library kept for `path` (after a swap: the old one unloads once its last
    /// instance is gone).
    pub fn replace(&mut self, path: &Path, lib: Arc<PluginLibrary>) -> Option<Arc<PluginLibrary>> {
        self.resolved = Arc::default();
        let key = self.key(path);
        Arc::make_mut(&mut self.libraries).insert(key, lib)
    }

    /// The key of `path`'s library: its canonical path, resolved once (a path that cannot be
    /// resolved stands for itself, and is tried again next time).
    fn key(&mut self, path: &Path) -> PathBuf {
        if let Some(k) = self.resolved.get(path) {
            return k.clone();
        }
        match std::fs::canonicalize(path) {
            Ok(k) => {
                Arc::make_mut(&mut self.resolved).insert(path.to_path_buf(), k.clone());
                k
            }
            Err(_) => path.to_path_buf(),
        }
    }

    /// Creates a driver from a library.
    pub fn driver(
        &mut self,
        path: &Path,
        name: &str,
        descriptor: &serde_json::Value,
        init: &PluginInit,
    ) -> Result<Box<dyn Driver>, String> {
        self.swappable(path)?.new_driver(name, descriptor, init)
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
        Ok(lib.new_extension(name, instance_name, descriptor))
    }

    /// Creates a sensor from a library.
    pub fn sensor(
        &mut self,
        path: &Path,
        name: &str,
        descriptor: &serde_json::Value,
        init: &PluginInit,
    ) -> Result<Box<dyn Sensor>, String> {
        self.swappable(path)?.new_sensor(name, descriptor, init)
    }
}
