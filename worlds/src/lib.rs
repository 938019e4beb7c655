//! ssx worlds made from a scene file inside one program, without the daemon.
//!
//! - [`open`]: one world as `ssxd run` builds it, with the in-process command bus ([`bus`]) in
//!   place of the scene's Zenoh extension: what the Python package's `Sim` is.
//! - [`Worlds`]: K copies of one scene stepped together on every core, with their states,
//!   readings and commands as arrays over the batch: what the Python package's `Worlds` and its
//!   vector environments are.
//!
//! - [`replay`]: a recorded run simulated again from its recording, and checked against it.
//!
//! This crate sits beside the programs (ssxd, the Python module): above ssx-core, the scene
//! loader (ssx-artifacts) and the built-in engines.

pub mod batch;
pub mod bus;
mod error;
pub mod open;
pub mod replay;
pub mod rows;

pub use batch::{Act, BatchOptions, Commands, MAX_WORLDS, Observe, Reward, TaskAct, Worlds};
pub use error::WorldsError;
pub use rows::{STATE_WIDTH, state_row};
pub use ssx_tasks as tasks;
