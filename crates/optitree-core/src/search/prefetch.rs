//! Cache prefetch hints. A search that looks up many cached subproblems in a row waits on one
//! cache miss after another; asking for all their memory first, and reading it after, lets the
//! misses overlap.

/// Starts loading the cache line that holds `*value` into the cache: a hint, with no effect on
/// any result.
#[inline]
#[allow(unsafe_code)]
pub fn prefetch<T>(value: &T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch reads nothing into the program and never faults; the pointer comes
    // from a valid reference in any case.
    unsafe {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        _mm_prefetch::<_MM_HINT_T0>((value as *const T).cast::<i8>());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = value;
}
