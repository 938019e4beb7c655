//! The host side of the plugin C ABI (`ssx-sdk`), in three parts: `load` finds and opens
//! libraries (SSX's ClassLoader), `instance` wraps what they create as ordinary drivers,
//! sensors and extensions, and `host` is the table of functions plugins call back into;
//! [`leftovers`] removes the plugin copies of processes that died without removing theirs.
//!
//! This module and the worker pool are the only places with `unsafe` in the host. Here it is
//! needed to call into libraries and to let host functions reach the frame of the current call.

pub(crate) mod batch;
mod host;
mod instance;
pub mod leftovers;
mod load;

pub use host::HOST_API;
pub use load::{
    ElfProblem, LoadError, PluginInfo, PluginLibrary, PluginLoader, find_library, find_library_in,
    set_program_dir,
};
