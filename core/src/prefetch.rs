//! Hints that bring memory into the cache ahead of its use: a batch of worlds steps one world
//! while the next one's data is fetched (issue 60: a world in a batch of 4096 took 2.6 times as
//! long as the same world alone, most of it waiting on memory). A hint changes no result and
//! cannot fault, whatever the address.

/// At most this many bytes of one block are hinted (a world's hot blocks are a few hundred
/// bytes; a long list would only push out what the step is using).
const MOST: usize = 1024;

/// The levels of blocks [`crate::Environment::prefetch`] hints, 1 to `LEVELS`.
pub const LEVELS: usize = 4;

/// Hints the cache lines of `len` bytes from `p` (at most the first KiB).
#[inline]
pub fn bytes(p: *const u8, len: usize) {
    #[cfg(target_arch = "x86_64")]
    for at in (0..len.min(MOST)).step_by(64) {
        // SAFETY: a prefetch reads nothing the program sees and cannot fault, whatever the
        // address (Intel SDM, PREFETCHh); `wrapping_add` makes no claim about the pointer.
        unsafe {
            use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
            _mm_prefetch::<_MM_HINT_T0>(p.wrapping_add(at).cast());
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (p, len);
}

/// Hints the lines `v` lies on.
#[inline]
pub fn value<T: ?Sized>(v: &T) {
    bytes((v as *const T).cast(), std::mem::size_of_val(v));
}
