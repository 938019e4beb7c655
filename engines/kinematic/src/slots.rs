//! Values that the workers of a move pass write in place (motion.rs): each body's motion and
//! each prim. Outside a pass they are read and written like a `Vec`'s elements.

use std::cell::UnsafeCell;

/// A list of `Copy` values that may be written through a shared reference by code that
/// guarantees, as [`Slots::set_shared`] asks, that nobody else touches the slot meanwhile.
pub(crate) struct Slots<T>(Vec<UnsafeCell<T>>);

// SAFETY: through `&Slots` a slot is only read (threads share `&T`, hence `T: Sync`), except by
// `set_shared`, whose callers promise that no other thread reads or writes that slot until they
// are done with it (values cross threads that way, hence `T: Send`).
unsafe impl<T: Send + Sync> Sync for Slots<T> {}

impl<T> Default for Slots<T> {
    fn default() -> Self {
        Self(Vec::new())
    }
}

impl<T: Copy> Slots<T> {
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Hints the cache to fetch the values (see `ssx_core::prefetch`).
    pub fn prefetch(&self) {
        ssx_core::prefetch::value(self.0.as_slice());
    }

    /// Gives back the room beyond its length.
    pub fn shrink_to_fit(&mut self) {
        self.0.shrink_to_fit();
    }

    pub fn push(&mut self, value: T) {
        self.0.push(UnsafeCell::new(value));
    }

    /// Slot `i`'s value.
    #[inline]
    pub fn get(&self, i: usize) -> T {
        // SAFETY: a shared reference only writes through `set_shared`, which promises that no
        // other thread reads slot `i` meanwhile.
        unsafe { *self.0[i].get() }
    }

    /// Slot `i`, borrowed: for reading a large value in place. The borrow must end before this
    /// thread writes slot `i` with [`Slots::set_shared`].
    #[inline]
    pub fn get_ref(&self, i: usize) -> &T {
        // SAFETY: as `get`; and this thread does not write the slot while the borrow lives
        // (above).
        unsafe { &*self.0[i].get() }
    }

    #[inline]
    pub fn get_mut(&mut self, i: usize) -> &mut T {
        self.0[i].get_mut()
    }

    /// Writes slot `i` through a shared reference.
    ///
    /// # Safety
    /// No other thread may read or write slot `i` from this call until the caller's exclusive
    /// claim on it ends (for motion.rs, the end of the pass), and no borrow of slot `i` from
    /// [`Slots::get_ref`] may be alive.
    #[inline]
    pub unsafe fn set_shared(&self, i: usize, value: T) {
        // SAFETY: the caller has slot `i` to itself (above).
        unsafe { *self.0[i].get() = value }
    }

    /// The slots themselves, for splitting among threads that each take theirs `&mut`.
    pub fn cells_mut(&mut self) -> &mut [UnsafeCell<T>] {
        &mut self.0
    }

    /// Every value, in order.
    pub fn iter(&self) -> impl Iterator<Item = T> + '_ {
        (0..self.len()).map(|i| self.get(i))
    }
}
