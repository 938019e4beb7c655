//! Instances stepped many to a call: a library plugin that exports the ABI's `step_many` lets
//! the host step consecutive instances of it in one call instead of one call each.

use std::ffi::c_void;

use ssx_sdk::abi::SsxStepManyFn;

/// A library plugin instance that can step with others of its plugin in one call. Kept in the
/// instance's slot from its creation (or swap) on, so that a step asks nothing of the instance
/// to gather it.
#[derive(Clone, Copy, Debug)]
pub struct BatchMember {
    /// Which plugin (its library's entry): only members with the same key step together.
    pub(crate) key: usize,
    pub(crate) step_many: SsxStepManyFn,
    pub(crate) instance: *mut c_void,
}

impl BatchMember {
    /// Whether the two step together (instances of one plugin of one library).
    pub fn joins(&self, other: &BatchMember) -> bool {
        self.key == other.key
    }
}

// SAFETY: the pointer is one instance's state, fixed in memory for its life; the ABI lets an
// instance be called from any one thread at a time, and only the worker that steps the
// instance's slot passes it to the plugin. Sharing a member only shares the address: nothing
// reaches through it without `unsafe`.
unsafe impl Send for BatchMember {}
// SAFETY: as above.
unsafe impl Sync for BatchMember {}
