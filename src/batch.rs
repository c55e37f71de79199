//! Batched lookups: many keys' memory accesses in flight at once.
//!
//! A single lookup waits for its two buckets, and out of cache that wait is the whole
//! cost: the core cannot look far enough ahead to start the next keys' loads while one
//! lookup's misses are outstanding. A batch locates each key [`LOOKAHEAD`] keys before
//! it is probed and prefetches both its buckets then, so by the time a key is probed
//! its buckets are (usually) in cache and the misses of the keys in between overlap.
//!
//! Each key is then probed exactly as [`RawFilter::contains`] probes it (stamp, load,
//! validate), so a batch gives every key the guarantees of a single lookup. A prefetch
//! is only a cache hint: it reads nothing the answer depends on.

use crate::fingerprint::Fingerprint;
use crate::index::Candidates;
use crate::raw::RawFilter;

/// Keys per block. A block is located and prefetched while the previous one is probed,
/// so 16 to 32 keys' buckets are in flight: enough to cover a DRAM miss (hundreds of
/// cycles) with the tens of cycles each probe takes, within the core's capacity for
/// outstanding misses. The answers of a block fit one `u32` bit mask.
pub(crate) const BLOCK: usize = 16;

/// Tables smaller than this are probed key by key, without prefetching. Such a table
/// stays in the core's L2 cache, where a lookup is bound by its instruction count, and
/// the locate-prefetch-probe pipeline adds about 30 instructions to the 70 of a lookup.
/// Measured on the 2-core dev VM (Ice Lake server, 1.25 MiB L2 per core), default
/// configuration at 95% load, positive lookups, pipelined against key by key in one
/// process (median of 9 passes, ns per key): 12.6 / 9.6 at 128 K items (a 0.26 MB
/// table), 13.0 / 10.0 at 256 K (0.55 MB), 14.2 / 14.9 at 512 K (1.1 MB), 15.3 / 17.5 at
/// 1 M, 15.1 / 22.3 at 2 M.
#[cfg(not(cuckoo_loom))]
const PIPELINE_FROM_TABLE_BYTES: usize = 1 << 20;
/// The loom models' tables are tiny: pipeline them anyway, so the models check that path.
#[cfg(cuckoo_loom)]
const PIPELINE_FROM_TABLE_BYTES: usize = 0;

/// The answers of [`RawFilter::contains`] for a stream of hashes, each key's buckets
/// fetched a block ahead of its probe (or key by key for a cache-sized table).
pub(crate) struct ContainsMany<'a, F, const B: usize, H> {
    raw: &'a RawFilter<F, B>,
    hashes: H,
    /// Whether the table is large enough for the pipeline to pay off.
    pipelined: bool,
    /// Two blocks of located keys: `blocks[located][..located_len]` is prefetched and
    /// not yet probed; the other is filled next. (Swapping an index, not copying 16
    /// entries.)
    blocks: [[Candidates; BLOCK]; 2],
    located: usize,
    located_len: usize,
    /// Answers of the last probed block not yet yielded, lowest bit next.
    answers: u32,
    answers_len: usize,
    /// `hashes` returned `None` (it is not called again: it need not be fused).
    exhausted: bool,
}

impl<'a, F: Fingerprint, const B: usize, H: Iterator<Item = u64>> ContainsMany<'a, F, B, H> {
    pub(crate) fn new(raw: &'a RawFilter<F, B>, hashes: H) -> Self {
        Self {
            raw,
            hashes,
            pipelined: raw.table.memory_usage() >= PIPELINE_FROM_TABLE_BYTES,
            blocks: [[Candidates::default(); BLOCK]; 2],
            located: 0,
            located_len: 0,
            answers: 0,
            answers_len: 0,
            exhausted: false,
        }
    }

    /// Locates the next block and starts fetching its buckets, then probes the block
    /// located last time (whose buckets have had a block's worth of work to arrive).
    fn advance(&mut self) {
        let raw = self.raw;
        let [first, second] = &mut self.blocks;
        let (probe, next) = if self.located == 0 {
            (&*first, second)
        } else {
            (&*second, first)
        };
        let mut next_len = 0;
        if !self.exhausted {
            for slot in next.iter_mut() {
                let Some(hash) = self.hashes.next() else {
                    self.exhausted = true;
                    break;
                };
                let c = raw.locate(hash);
                raw.prefetch(c);
                *slot = c;
                next_len += 1;
            }
        }
        let mut answers = 0;
        for (k, &c) in probe[..self.located_len].iter().enumerate() {
            answers |= u32::from(raw.contains_at(c)) << k;
        }
        self.answers = answers;
        self.answers_len = self.located_len;
        self.located ^= 1;
        self.located_len = next_len;
    }

    /// No answer is pending and no key is left.
    #[inline]
    fn is_done(&self) -> bool {
        self.located_len == 0 && self.exhausted
    }
}

impl<F: Fingerprint, const B: usize, H: Iterator<Item = u64>> Iterator
    for ContainsMany<'_, F, B, H>
{
    type Item = bool;

    #[inline]
    fn next(&mut self) -> Option<bool> {
        if !self.pipelined {
            return self.hashes.next().map(|hash| self.raw.contains(hash));
        }
        while self.answers_len == 0 {
            if self.is_done() {
                return None;
            }
            self.advance();
        }
        let answer = self.answers & 1 != 0;
        self.answers >>= 1;
        self.answers_len -= 1;
        Some(answer)
    }

    /// Block by block, without `next`'s bookkeeping per answer: `count`, `for_each`,
    /// `collect` and the other consuming adapters go through here.
    #[inline]
    fn fold<Acc, G: FnMut(Acc, bool) -> Acc>(mut self, mut acc: Acc, mut g: G) -> Acc {
        if !self.pipelined {
            let raw = self.raw;
            return self
                .hashes
                .fold(acc, |acc, hash| g(acc, raw.contains(hash)));
        }
        loop {
            for k in 0..self.answers_len {
                acc = g(acc, self.answers >> k & 1 != 0);
            }
            if self.is_done() {
                return acc;
            }
            self.advance();
        }
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let pending = self.answers_len + self.located_len;
        let (low, high) = if self.exhausted {
            (0, Some(0))
        } else {
            self.hashes.size_hint()
        };
        (
            low.saturating_add(pending),
            high.and_then(|high| high.checked_add(pending)),
        )
    }
}
