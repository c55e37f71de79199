//! The only import site of atomics, fences, locks and spin hints, and the home of the
//! prefetch hint, the crate's one `unsafe` block.
//!
//! Under `--cfg cuckoo_loom` every primitive comes from loom so the models in
//! `loom-tests/` can explore all interleavings (the stripe lock below is built from
//! these, so loom checks it too); otherwise from `std` and `crossbeam-utils`. Both
//! sides export the same names with the same shapes, so the rest of the crate never
//! mentions loom.

#[cfg(cuckoo_loom)]
pub(crate) use loom::sync::atomic::{
    AtomicBool, AtomicPtr, AtomicU8, AtomicU32, AtomicU64, AtomicUsize, Ordering, fence,
};
#[cfg(not(cuckoo_loom))]
pub(crate) use std::sync::atomic::{
    AtomicBool, AtomicPtr, AtomicU8, AtomicU32, AtomicU64, AtomicUsize, Ordering, fence,
};

/// A one-byte spin lock for a writer stripe; it guards nothing but itself (the stripe's
/// table words are the data).
///
/// Not `parking_lot::Mutex`: its unlock must be a compare-exchange (to find parked
/// waiters), which doubles the locked instructions of every write; here unlock is a
/// plain release store. Measured on the 2-core dev VM when inserts still took two
/// stripe locks (256 K keys to 90% load, single thread, median of 5): 73 ns per insert
/// against 86 ns. Spinning is safe because every critical section is a few table words
/// long and never blocks; waiters back off and then yield (crossbeam's `Backoff`), so an
/// oversubscribed machine does not burn a time slice spinning on a preempted holder.
#[derive(Debug, Default)]
pub(crate) struct Lock {
    locked: AtomicBool,
}

/// Held while a stripe is locked; unlocks on drop, so every early return unlocks.
#[must_use]
pub(crate) struct LockGuard<'a>(&'a Lock);

impl Lock {
    #[inline]
    pub(crate) fn lock(&self) -> LockGuard<'_> {
        if self
            .locked
            .compare_exchange_weak(false, true, Ordering::Acquire, Ordering::Relaxed)
            .is_err()
        {
            self.lock_contended();
        }
        LockGuard(self)
    }

    #[cold]
    #[inline(never)]
    fn lock_contended(&self) {
        let backoff = Backoff::new();
        loop {
            // Wait on a plain load, so waiters share the line instead of bouncing it.
            while self.locked.load(Ordering::Relaxed) {
                backoff.snooze();
            }
            if self
                .locked
                .compare_exchange_weak(false, true, Ordering::Acquire, Ordering::Relaxed)
                .is_ok()
            {
                return;
            }
        }
    }
}

impl LockGuard<'_> {
    /// Keeps the lock locked past the guard, for a guard of many locks that unlocks
    /// them all at once ([`Lock::unlock_held`]).
    #[inline]
    pub(crate) fn keep_locked(self) {
        std::mem::forget(self);
    }
}

impl Lock {
    /// Unlocks a lock whose guard was kept ([`LockGuard::keep_locked`]); only its
    /// holder may.
    #[inline]
    pub(crate) fn unlock_held(&self) {
        self.locked.store(false, Ordering::Release);
    }
}

impl Drop for LockGuard<'_> {
    #[inline]
    fn drop(&mut self) {
        self.0.unlock_held();
    }
}

/// Exponential backoff for a reader that found a kick move in progress, or a writer
/// waiting for a stripe.
///
/// Under loom a spinning thread must yield, or the model never lets the other finish.
pub(crate) struct Backoff {
    #[cfg(not(cuckoo_loom))]
    inner: crossbeam_utils::Backoff,
}

impl Backoff {
    #[inline]
    pub(crate) fn new() -> Self {
        Self {
            #[cfg(not(cuckoo_loom))]
            inner: crossbeam_utils::Backoff::new(),
        }
    }

    #[inline]
    pub(crate) fn snooze(&self) {
        #[cfg(not(cuckoo_loom))]
        self.inner.snooze();
        #[cfg(cuckoo_loom)]
        loom::thread::yield_now();
    }
}

/// `len` zeroed words from the allocator's zeroed memory, where a large block comes
/// from fresh pages that the kernel zeroes as they are first touched (see
/// `Table::untouched`). `None` if the allocator refused, and always under loom, whose
/// atomics are not plain memory (the caller then builds the words one by one).
pub(crate) fn zeroed_words(len: usize) -> Option<Box<[AtomicU64]>> {
    #[cfg(not(cuckoo_loom))]
    return bytemuck::allocation::try_zeroed_slice_box(len).ok();
    #[cfg(cuckoo_loom)]
    {
        let _ = len;
        None
    }
}

/// Asks the CPU to start loading the cache line at `address`, without waiting for it.
/// A hint only: it never faults, whatever the address, and changes nothing the program
/// can observe, so it needs no synchronisation and no bounds check. Under loom, and on
/// targets other than x86_64, it does nothing.
///
/// A plain (safe) load of the word cannot stand in for it: a load that misses holds up
/// the core's in-order retirement until its line arrives, so it overlaps no more misses
/// than key-by-key lookups already do (measured with `contains_many` at 8 M items: no
/// faster than `contains` in a loop), while a prefetch retires at once.
#[inline(always)]
pub(crate) fn prefetch<T>(address: *const T) {
    #[cfg(all(target_arch = "x86_64", not(cuckoo_loom)))]
    #[allow(unsafe_code)]
    // SAFETY: `_mm_prefetch` needs SSE, which every x86_64 CPU has (it is part of the
    // target's baseline). The instruction does not dereference its operand: it cannot
    // fault, and it reads or writes nothing the program can observe.
    unsafe {
        use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
        _mm_prefetch::<_MM_HINT_T0>(address.cast::<i8>());
    }
    #[cfg(any(not(target_arch = "x86_64"), cuckoo_loom))]
    let _ = address;
}

/// A number of the calling thread's own: the same on every call from one thread, and
/// distinct for threads that ask one after another (0, 1, 2, … in the order of their first
/// call), so that threads of a pool spread over a power of two of shards with none
/// shared until there are more threads than shards. A `RecentFilter` picks its count
/// shard by it (`recent/fill.rs`). Not an atomic of any protocol: any number is correct,
/// only the spread matters.
#[cfg(not(cuckoo_loom))]
#[inline]
pub(crate) fn thread_hint() -> usize {
    use std::cell::Cell;
    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    thread_local! {
        static HINT: Cell<usize> = const { Cell::new(usize::MAX) };
    }
    HINT.with(|hint| match hint.get() {
        usize::MAX => {
            let assigned = NEXT.fetch_add(1, Ordering::Relaxed) & (usize::MAX >> 1);
            hint.set(assigned);
            assigned
        }
        assigned => assigned,
    })
}

/// Under loom, the model thread's own number (0 for `main`, then in spawn order), so
/// that each execution of a model picks the same shards, and two model threads two
/// different ones; reading it is no step of the model.
#[cfg(cuckoo_loom)]
pub(crate) fn thread_hint() -> usize {
    let id = format!("{:?}", loom::thread::current().id());
    id.trim_start_matches("ThreadId(")
        .trim_end_matches(')')
        .parse()
        .unwrap_or(0)
}
