//! Why a plugin library cannot be found, opened or used: one type for the loader, its messages
//! the ones users read (each names the library's path, and says what was found against what
//! the host expects).

use std::path::PathBuf;

/// A library that cannot be found, opened or used, or a plugin it does not have.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// The named file does not exist.
    #[error("'{}': no such file", .0.display())]
    NoSuchFile(PathBuf),
    /// A directory, a device, a socket... (the message says which).
    #[error("{0}")]
    NotRegular(String),
    /// The file's metadata cannot be read.
    #[error("'{}': {source}", path.display())]
    Unreadable {
        /// The library.
        path: PathBuf,
        /// What the system said.
        source: std::io::Error,
    },
    /// The private copy (see `PluginLibrary::open_copy`) cannot be made.
    #[error("'{}': cannot copy it to '{}' before loading: {source}", path.display(), copy.display())]
    Copy {
        /// The library.
        path: PathBuf,
        /// Where the copy was to go.
        copy: PathBuf,
        /// What the system said.
        source: std::io::Error,
    },
    /// The file is not a whole 64-bit little-endian ELF file.
    #[error("'{}' {problem}", path.display())]
    Elf {
        /// The library.
        path: PathBuf,
        /// What is wrong with it.
        problem: ElfProblem,
    },
    /// The dynamic loader refused it.
    #[error("'{}' is not a loadable shared library: {why}", path.display())]
    NotLoadable {
        /// The library.
        path: PathBuf,
        /// The dynamic loader's message.
        why: String,
    },
    /// A shared library, but not an ssx plugin library.
    #[error("'{}' has no entry symbol 'ssx_plugin_entry': not an ssx plugin library", .0.display())]
    NoEntry(PathBuf),
    /// `ssx_plugin_entry` returned null.
    #[error("'{}': ssx_plugin_entry returned null", .0.display())]
    NullTable(PathBuf),
    /// Built against another ABI version.
    #[error("'{}': plugin ABI version mismatch: host = {host}, plugin = {plugin} (rebuild the plugin against this ssx-sdk)", path.display())]
    Version {
        /// The library.
        path: PathBuf,
        /// The host's version.
        host: u32,
        /// The library's.
        plugin: u32,
    },
    /// The plugin table is smaller than this ABI version's.
    #[error("'{}': plugin table too small: host = {host} bytes, plugin = {plugin} bytes", path.display())]
    TableSize {
        /// The library.
        path: PathBuf,
        /// The host's size.
        host: usize,
        /// The library's.
        plugin: u32,
    },
    /// Plugins counted, but no list.
    #[error("'{}': the plugin list is null", .0.display())]
    NullList(PathBuf),
    /// An entry of the plugin list smaller than the oldest layout this host reads.
    #[error("'{}': plugin #{index} entry too small: host = {host} bytes, plugin = {plugin} bytes", path.display())]
    EntrySize {
        /// The library.
        path: PathBuf,
        /// The entry.
        index: usize,
        /// The smallest size the host reads.
        host: usize,
        /// The entry's.
        plugin: usize,
    },
    /// Entries of different sizes in one list.
    #[error("'{}': plugin #{index} entry is {size} bytes, the first is {first}: one array has one entry size", path.display())]
    MixedEntries {
        /// The library.
        path: PathBuf,
        /// The entry.
        index: usize,
        /// Its size.
        size: usize,
        /// The first entry's.
        first: usize,
    },
    /// A plugin's name is null or not UTF-8.
    #[error("'{}': plugin #{index}'s name {why}", path.display())]
    Name {
        /// The library.
        path: PathBuf,
        /// The entry.
        index: usize,
        /// "is null" or "is not UTF-8".
        why: &'static str,
    },
    /// A kind that is not driver, sensor or extension.
    #[error("'{}': plugin '{name}' has unknown kind {kind}", path.display())]
    Kind {
        /// The library.
        path: PathBuf,
        /// The plugin.
        name: String,
        /// The kind it gave.
        kind: u32,
    },
    /// A plugin without one of its three required entries.
    #[error("'{}': plugin '{name}' lacks create, destroy or step", path.display())]
    Entries {
        /// The library.
        path: PathBuf,
        /// The plugin.
        name: String,
    },
    /// Two plugins of one name.
    #[error("'{}': two plugins are named '{name}'", path.display())]
    Twice {
        /// The library.
        path: PathBuf,
        /// The name.
        name: String,
    },
    /// The library could not be kept mapped for good (libraries with extensions are).
    #[error("'{}': cannot pin the library: {why}", path.display())]
    Pin {
        /// The library.
        path: PathBuf,
        /// The dynamic loader's message.
        why: String,
    },
    /// The library has the plugin, as another kind.
    #[error("'{name}' in '{}' is a {is}, not a {wanted}", path.display())]
    WrongKind {
        /// The plugin.
        name: String,
        /// The library.
        path: PathBuf,
        /// Its kind.
        is: &'static str,
        /// The kind asked for.
        wanted: &'static str,
    },
    /// The library has no plugin of that name.
    #[error("no {kind} named '{name}' in '{}' (it has: {})", path.display(), if has.is_empty() { "nothing".into() } else { has.join(", ") })]
    NoPlugin {
        /// The kind asked for.
        kind: &'static str,
        /// The name asked for.
        name: String,
        /// The library.
        path: PathBuf,
        /// What it has, "kind name" each.
        has: Vec<String>,
    },
    /// A library named by an absolute path that does not exist.
    #[error("library '{}' not found", .0.display())]
    NotFound(PathBuf),
    /// A library named by a relative path found in none of the places looked in.
    #[error("library '{}' not found (looked in: {})", named.display(), looked_in.join(", "))]
    NotFoundIn {
        /// The name as given.
        named: PathBuf,
        /// The directories, in order.
        looked_in: Vec<String>,
    },
    /// The first candidate of that name is not a regular file (the message says what it is).
    #[error("library {0}")]
    NotRegularLibrary(String),
    /// The directory for the private copies cannot be made.
    #[error("cannot make a directory for plugin copies: {0}")]
    CopyDir(std::io::Error),
}

/// What is wrong with a file that should be a whole ELF library.
#[derive(Debug, thiserror::Error)]
pub enum ElfProblem {
    /// Reading it failed.
    #[error("cannot be read ({what}): {source}")]
    Unreadable {
        /// What was being read.
        what: &'static str,
        /// What the system said.
        source: std::io::Error,
    },
    /// No ELF header.
    #[error("is not a loadable shared library: not ELF ({len} bytes)")]
    NotElf {
        /// The file's length.
        len: u64,
    },
    /// ELF, but not 64-bit little-endian.
    #[error("is not a 64-bit little-endian ELF file")]
    Class,
    /// The headers point past the file's end.
    #[error(
        "is cut short: its {what} end at byte {end}, the file has {len} (still being written?)"
    )]
    Short {
        /// Which part.
        what: &'static str,
        /// Where it ends.
        end: u64,
        /// The file's length.
        len: u64,
    },
}

/// For the paths that carry plain messages (scene errors, swap refusals, the plugin traits).
impl From<LoadError> for String {
    fn from(e: LoadError) -> String {
        e.to_string()
    }
}
