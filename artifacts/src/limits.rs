//! What a scene may ask for, checked before anything is allocated for it. A scene beyond these
//! is refused with one located message (exit status 2), never a run out of memory or time.
//! docs/scenes.md lists them with the reasons.

/// Bodies in a scene, all artifacts and replicas together. 200,000 Rapier boxes resting on the
/// ground take 1.2 GiB and up to 2.3 s for their first step on 2 cores (0.5 s each after it).
pub const MAX_BODIES: usize = 250_000;
/// Bytes of any one name.
pub const MAX_NAME: usize = 128;
/// Bytes of one scene, include or artifact file.
pub const MAX_FILE_BYTES: u64 = 16 << 20;
/// Bytes of all the files of one scene together.
pub const MAX_TOTAL_BYTES: u64 = 256 << 20;
/// Nesting of arrays and objects in a file.
pub const MAX_DEPTH: usize = 64;
/// Nesting of includes (a scene that includes a scene that includes ...).
pub const MAX_INCLUDE_DEPTH: usize = 16;
/// Distance from the origin of any body's initial position (m): beyond it, single precision
/// positions lose centimetres.
pub const MAX_POSITION: f64 = 1e5;
