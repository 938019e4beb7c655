//! Taking a lock that another Python thread may hold while it steps with the GIL released:
//! waiting for it with the GIL held would deadlock the interpreter (the holder needs the GIL to
//! return), so the wait happens with the GIL released.

use std::sync::{Mutex, MutexGuard, TryLockError};

use pyo3::prelude::*;

/// `m`'s guard; while another thread holds it, waits with the GIL released.
pub(crate) fn lock<'a, T: Send>(py: Python<'_>, m: &'a Mutex<T>) -> MutexGuard<'a, T> {
    loop {
        match m.try_lock() {
            Ok(g) => return g,
            // A panic while holding it cannot leave the world half-changed across a call.
            Err(TryLockError::Poisoned(e)) => return e.into_inner(),
            // Wait until it is free, then try again with the GIL (another thread may win).
            Err(TryLockError::WouldBlock) => py.detach(|| drop(m.lock())),
        }
    }
}
