//! Large, randomly read buffers (node arenas, cache tables) on 2 MiB pages where the kernel
//! offers them. A search of a few gigabytes touches its nodes in no order, and with 4 KiB pages
//! nearly every such read also misses the address-translation cache; with 2 MiB pages the
//! translations of the whole graph fit in it. Linux backs memory with huge pages only where a
//! program asks (the usual `madvise` setting of transparent huge pages), so we ask, for the
//! buffers that matter. Only a hint: no content or result depends on it.

/// Smallest buffer worth asking for: it must hold a whole aligned 2 MiB page to gain anything.
const MIN_BYTES: usize = 4 << 20;

/// Asks for huge pages for the capacity of `buffer` (its spare capacity included, since
/// memory is backed when first written). Call it before filling the buffer: pages already
/// written stay small.
pub fn advise<T>(buffer: &Vec<T>) {
    let bytes = buffer.capacity() * std::mem::size_of::<T>();
    if bytes >= MIN_BYTES {
        advise_range(buffer.as_ptr() as usize, bytes);
    }
}

#[cfg(target_os = "linux")]
#[allow(unsafe_code)]
fn advise_range(start: usize, bytes: usize) {
    const PAGE: usize = 4096;
    const MADV_HUGEPAGE: i32 = 14;
    extern "C" {
        fn madvise(addr: *mut std::ffi::c_void, len: usize, advice: i32) -> i32;
    }
    // Whole pages inside the buffer only: the advice must not reach anyone else's memory.
    let first = start.next_multiple_of(PAGE);
    let end = (start + bytes) / PAGE * PAGE;
    if end > first {
        // SAFETY: the range lies within a live allocation of ours, and MADV_HUGEPAGE changes
        // how the kernel backs it, never its contents. Failure (another page size, huge pages
        // disabled) leaves everything as it was, so its result is ignored.
        unsafe {
            madvise(first as *mut std::ffi::c_void, end - first, MADV_HUGEPAGE);
        }
    }
}

#[cfg(not(target_os = "linux"))]
fn advise_range(_start: usize, _bytes: usize) {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn advice_leaves_contents_alone() {
        let mut v: Vec<u64> = Vec::with_capacity(MIN_BYTES / 8 + 1000);
        advise(&v);
        v.extend(0..(MIN_BYTES / 8) as u64);
        advise(&v);
        assert!(v.iter().enumerate().all(|(i, &x)| x == i as u64));
        advise(&Vec::<u8>::new()); // nothing to advise
    }
}
