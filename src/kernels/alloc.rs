//! An allocator that asks for transparent huge pages on large blocks, as NumPy does for its
//! arrays (`numpy/_core/src/multiarray/alloc.c`, `indicate_hugepages`: `madvise` with
//! `MADV_HUGEPAGE` on every block of at least 4 MiB).
//!
//! Where the kernel gives huge pages only on request (`/sys/kernel/mm/transparent_hugepage/
//! enabled` = `madvise`, the common default), an array of a few megabytes otherwise lives on
//! 4 KiB pages and a pass over it misses the TLB on most of them: on this project's machine
//! int8 + int8 at 1e7 elements, in cache, ran 10 % slower than NumPy's over hugepage-advised
//! arrays. The `typejoin` binary installs [`HugePages`] as its global allocator; a program
//! using the kernels as a library can do the same:
//!
//! ```
//! #[global_allocator]
//! static ALLOC: typejoin::HugePages = typejoin::HugePages;
//! # fn main() {}
//! ```

use std::alloc::{GlobalAlloc, Layout, System};

/// The system allocator, with `madvise(MADV_HUGEPAGE)` on blocks of at least 4 MiB (`HUGE_MIN`)
/// bytes (Linux; elsewhere the system allocator alone). The advice is given before the block
/// is first written, so its aligned 2 MiB stretches are faulted in as huge pages.
#[derive(Clone, Copy, Debug, Default)]
pub struct HugePages;

/// NumPy's threshold: 4 MiB.
pub const HUGE_MIN: usize = 4 << 20;

// SAFETY: every method forwards to `System` with the same arguments and returns its result;
// the advice only changes how the kernel backs memory the block already owns.
unsafe impl GlobalAlloc for HugePages {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract for `alloc`, passed on.
        let p = unsafe { System.alloc(layout) };
        advise(p, layout.size());
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract for `alloc_zeroed`, passed on.
        let p = unsafe { System.alloc_zeroed(layout) };
        advise(p, layout.size());
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: the caller's contract for `dealloc`, passed on (`ptr` came from `System`).
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: the caller's contract for `realloc`, passed on.
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if new_size > layout.size() {
            advise(p, new_size);
        }
        p
    }
}

/// `MADV_HUGEPAGE` over the whole pages inside `size` bytes at `p`, when the block is large.
/// Advice the kernel refuses (THP disabled, an old kernel) changes nothing, so its result is
/// not needed.
fn advise(p: *mut u8, size: usize) {
    #[cfg(target_os = "linux")]
    if size >= HUGE_MIN && !p.is_null() {
        // SAFETY: sysconf has no preconditions.
        let page = match unsafe { libc::sysconf(libc::_SC_PAGESIZE) } {
            n if n > 0 => n as usize,
            _ => return,
        };
        let start = (p as usize).next_multiple_of(page);
        let end = (p as usize + size) / page * page;
        if end > start {
            // SAFETY: [start, end) lies inside the block just allocated, which this process
            // owns; MADV_HUGEPAGE neither reads nor changes its contents.
            unsafe { libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_HUGEPAGE) };
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = (p, size);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A large block is advised: `/proc/self/smaps` lists its mapping with the `hg` flag
    /// ("huge page advise"); a small one is not touched.
    #[cfg(target_os = "linux")]
    #[test]
    fn large_blocks_are_advised_for_huge_pages() {
        if !std::path::Path::new("/sys/kernel/mm/transparent_hugepage").exists() {
            return; // a kernel built without transparent huge pages refuses the advice
        }
        let flags_of = |addr: usize| -> Option<String> {
            let smaps = std::fs::read_to_string("/proc/self/smaps").ok()?;
            let mut inside = false;
            for line in smaps.lines() {
                if let Some((range, _)) = line.split_once(' ')
                    && let Some((lo, hi)) = range.split_once('-')
                    && let (Ok(lo), Ok(hi)) =
                        (usize::from_str_radix(lo, 16), usize::from_str_radix(hi, 16))
                {
                    inside = (lo..hi).contains(&addr);
                } else if inside && let Some(flags) = line.strip_prefix("VmFlags:") {
                    return Some(flags.trim().to_string());
                }
            }
            None
        };
        let layout = Layout::from_size_align(HUGE_MIN + 12345, 8).unwrap();
        // SAFETY: a non-zero size; the block is freed below with the same layout.
        let p = unsafe { HugePages.alloc_zeroed(layout) };
        assert!(!p.is_null());
        let middle = p as usize + layout.size() / 2;
        let flags = flags_of(middle).expect("the block's mapping in smaps");
        // SAFETY: allocated above with this layout.
        unsafe { HugePages.dealloc(p, layout) };
        assert!(
            flags.split_whitespace().any(|f| f == "hg"),
            "VmFlags of a {} byte block: {flags}",
            layout.size()
        );
    }
}
