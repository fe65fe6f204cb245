//! A cache prefetch hint. Apply and seal touch per-vertex state at random; issuing the loads
//! a few updates ahead lets their cache misses overlap instead of queueing one by one.

/// Hints that the cache line holding `*p` will be read soon. Never faults.
#[inline(always)]
pub fn prefetch<T>(p: *const T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: prefetch is a hint; it does not dereference `p` architecturally and cannot
    // fault, whatever the address.
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(p as *const i8);
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}
