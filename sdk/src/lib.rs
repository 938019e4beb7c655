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
pub mod intern;
pub mod random;
pub mod text;

pub use abi::SsxBodyState as BodyState;
pub use abi::SsxContact as Contact;
pub use abi::SsxMapInfo as MapInfo;
pub use abi::SsxRayHit as RayHit;
pub use abi::SsxStats as Stats;

mod ctx;
mod error;
mod export;
mod init;
pub mod limits;
mod plugin;
mod pose;
mod rate;

pub use ctx::Ctx;
pub use error::{Error, descriptor_error, number, within};
pub use export::*;
pub use init::{Init, Waker};
pub use plugin::{Control, Driver, Extension, Sensor};
pub use pose::{Bounds, Held, Pose};
pub use rate::Rate;
