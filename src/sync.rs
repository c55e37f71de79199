//! The only import site of atomics, fences, locks and spin hints.
//!
//! Under `--cfg cuckoo_loom` every primitive comes from loom so the models in
//! `loom-tests/` can explore all interleavings; otherwise from `std`, `parking_lot` and
//! `crossbeam-utils`. Both sides export the same names with the same shapes, so the rest
//! of the crate never mentions loom.

#[cfg(cuckoo_loom)]
pub(crate) use loom::sync::atomic::{AtomicU32, AtomicU64, AtomicUsize, Ordering, fence};
#[cfg(not(cuckoo_loom))]
pub(crate) use std::sync::atomic::{AtomicU32, AtomicU64, AtomicUsize, Ordering, fence};

/// A mutex that guards nothing but its own state: the stripe it stands for is the data.
#[derive(Debug, Default)]
pub(crate) struct Lock {
    #[cfg(not(cuckoo_loom))]
    inner: parking_lot::Mutex<()>,
    #[cfg(cuckoo_loom)]
    inner: loom::sync::Mutex<()>,
}

/// Held while a stripe is locked; unlocks on drop, so every early return unlocks.
#[cfg(not(cuckoo_loom))]
pub(crate) type LockGuard<'a> = parking_lot::MutexGuard<'a, ()>;
#[cfg(cuckoo_loom)]
pub(crate) type LockGuard<'a> = loom::sync::MutexGuard<'a, ()>;

impl Lock {
    #[inline]
    pub(crate) fn lock(&self) -> LockGuard<'_> {
        #[cfg(not(cuckoo_loom))]
        return self.inner.lock();
        // loom's mutex poisons like std's; nothing here panics while holding one, and a
        // poisoned stripe would still hold consistent words, so take the guard either way.
        #[cfg(cuckoo_loom)]
        return self
            .inner
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
    }
}

/// Exponential backoff for a reader that found a kick move in progress.
///
/// Under loom a spinning thread must yield, or the model never lets the mover finish.
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
