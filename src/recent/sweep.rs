//! Emptying a forgotten generation's slots, a chunk of table lines at a time, paid by the
//! writers while lookups go on.
//!
//! After a close (`window.rs`) the forgotten generation's slots still hold their
//! fingerprints; lookups and writers already treat them as empty. Before its tag can be
//! given to a new generation, every one of them must be emptied. Each write made while
//! the window is sweeping (after its own pair lock is released) claims the next chunk
//! and empties it: at most `CHUNK_LINES` table lines, one column of 8 words in as many
//! rows, under the locks of the column's stripes (at most 8) and no others. (A table of
//! at most `WHOLE_TABLE_WORDS` is one chunk, swept under every stripe lock.) So a writer
//! waits for a sweep only while a chunk holds one of its stripes, and the whole sweep is
//! spread over as many writes as it has chunks (the current generation takes them: see
//! `window.rs`).
//!
//! **Rows and columns.** Stripe `s` covers table words `w` with `w mod S = s` (a
//! bucket's words by its first one). Cut the table into rows of `R = max(S, 8)` words:
//! a word's stripe depends only on its column, so the 8 words of one cache line in any
//! row belong to the same (at most) 8 stripes, and a chunk locks those once for all its
//! lines. Lines are whole, so each is loaded once per sweep.
//!
//! **Rounds.** The chunks are claimed in order through one word (`round << 32 | next`),
//! and counted when swept through another (`round << 32 | swept`); whoever sweeps the
//! last chunk of a round ends it. Normally the forgotten generation's count is then zero
//! and the window opens. A kick that carried one of its keys from a line not yet swept
//! into a line already swept leaves it behind; the count then says so, and a new round
//! sweeps the table again (`RecentStats::repeated_sweeps`). Writers about to kick while
//! sweeping empty the forgotten slots around their buckets first, which makes that rare
//! (`RecentFilter::reclaim_around`).

use std::hash::BuildHasher;

use crossbeam_utils::CachePadded;

use super::window::Window;
use super::{RecentFilter, SLOTS};
use crate::fingerprint::Fingerprint;
use crate::stripe::{Locked, PairGuard};
use crate::sync::{AtomicU64, Ordering};
use crate::table::Table;

/// Table lines one chunk spans at most: 32 lines (256 words, each line a row apart)
/// take a writer 1–2 µs alone and 4–8 µs while another thread writes, on the 2-core VM
/// (128 lines took 12 µs and more, so that 0.1% of the inserts of two threads into a
/// 4 M window took over 12 µs; BENCHMARKS.md, "Admission on many threads").
const CHUNK_LINES: usize = 32;

/// Words of a table small enough to be swept whole, under every stripe lock, by the
/// write that closes a generation (a few microseconds, 4 chunks' worth): a small
/// window's generations then take exactly their share, as no write comes between the
/// close and the open.
const WHOLE_TABLE_WORDS: usize = 1024;

/// Words of a 64-byte cache line; the table starts on a bucket boundary, and a line is a
/// multiple of every bucket size.
const LINE_WORDS: usize = 8;

const LOW: u64 = (1 << 32) - 1;

/// A chunk of the sweep: which round it belongs to, and which chunk of the table.
#[derive(Clone, Copy)]
pub(crate) struct Chunk {
    round: u64,
    index: u64,
}

/// `[claimed, swept]`: each `round << 32 | chunks`.
type Progress = [AtomicU64; 2];

/// Where the sweep's progress is kept.
enum ProgressWords {
    /// A table swept in chunks: every sweeping writer writes these words, so they have a
    /// line of their own, away from the window that every lookup reads.
    Padded(Box<CachePadded<Progress>>),
    /// A table swept whole: only the write that closes a generation touches them, and
    /// padding would take 112 bytes from a window of a few hundred keys (a fifth of its
    /// fixed part).
    Unpadded(Box<Progress>),
}

impl ProgressWords {
    /// Round 0, with all its `chunks` claimed and none swept: nothing to do.
    fn new(chunks: u64, padded: bool) -> Self {
        let words = [AtomicU64::new(chunks), AtomicU64::new(0)];
        if padded {
            Self::Padded(Box::new(CachePadded::new(words)))
        } else {
            Self::Unpadded(Box::new(words))
        }
    }

    fn words(&self) -> &Progress {
        match self {
            Self::Padded(words) => words,
            Self::Unpadded(words) => words,
        }
    }

    fn memory_usage(&self) -> usize {
        match self {
            Self::Padded(_) => std::mem::size_of::<CachePadded<Progress>>(),
            Self::Unpadded(_) => std::mem::size_of::<Progress>(),
        }
    }
}

/// The table's cut into chunks, and the sweep's progress through them.
pub(crate) struct SweepSchedule {
    progress: ProgressWords,
    /// Words in a row: `max(S, 8)`, a multiple of both.
    row_words: usize,
    /// Columns of 8 words that hold table words.
    columns: usize,
    rows: usize,
    /// Lines a chunk spans: [`CHUNK_LINES`] (fewer only in the loom models, whose tables
    /// are too small for a second chunk of that many).
    chunk_lines: usize,
    chunks: u64,
    table_words: usize,
    /// A table of at most [`WHOLE_TABLE_WORDS`] is swept whole, under every stripe lock,
    /// as one chunk.
    whole: bool,
}

impl SweepSchedule {
    /// The schedule for a table of `table_words` words in `stripes` stripes. No round is
    /// under way.
    pub(crate) fn new(table_words: usize, stripes: usize) -> Self {
        let row_words = stripes.max(LINE_WORDS);
        let columns = table_words.min(row_words).div_ceil(LINE_WORDS);
        let rows = table_words.div_ceil(row_words);
        let whole = table_words <= WHOLE_TABLE_WORDS;
        let chunks = if whole {
            1
        } else {
            (columns * rows.div_ceil(CHUNK_LINES)) as u64
        };
        Self {
            progress: ProgressWords::new(chunks, !whole),
            row_words,
            columns,
            rows,
            chunk_lines: CHUNK_LINES,
            chunks,
            table_words,
            whole,
        }
    }

    pub(crate) fn memory_usage(&self) -> usize {
        self.progress.memory_usage()
    }

    /// Whether the table is swept whole, under every stripe lock, by the write that
    /// closes a generation.
    pub(crate) fn swept_whole(&self) -> bool {
        self.whole
    }

    /// Chunks in a round (1 for a table swept whole).
    pub(crate) fn chunks(&self) -> u64 {
        self.chunks
    }

    /// Sweeps in columns even a table of one chunk, in chunks of `chunk_lines` lines (for
    /// the loom models, whose tables are all that small: one line a chunk gives a table
    /// of two rows two chunks).
    #[cfg(feature = "test-hooks")]
    pub(crate) fn in_columns(&mut self, chunk_lines: usize) {
        self.whole = false;
        self.chunk_lines = chunk_lines.clamp(1, CHUNK_LINES);
        self.chunks = (self.columns * self.rows.div_ceil(self.chunk_lines)) as u64;
        self.progress = ProgressWords::new(self.chunks, true);
    }

    /// Starts a new round: every chunk to claim. Called by the writer that closed the
    /// window, or that ended a round that left keys behind; only one can be either.
    pub(crate) fn start(&self) {
        let [claimed, swept] = self.progress.words();
        let round = ((claimed.load(Ordering::Relaxed) >> 32) + 1) & LOW;
        swept.store(round << 32, Ordering::Relaxed);
        // Release: a writer that claims from the new round sees the closed window and
        // the reset count.
        claimed.store(round << 32, Ordering::Release);
    }

    /// The next chunk of the round under way, if one is left.
    pub(crate) fn claim(&self) -> Option<Chunk> {
        let claimed = &self.progress.words()[0];
        let mut seen = claimed.load(Ordering::Acquire);
        loop {
            let (round, next) = (seen >> 32, seen & LOW);
            if next >= self.chunks {
                return None;
            }
            match claimed.compare_exchange(seen, seen + 1, Ordering::Acquire, Ordering::Acquire) {
                Ok(_) => return Some(Chunk { round, index: next }),
                Err(now) => seen = now,
            }
        }
    }

    /// `chunk` is swept; true if it was the round's last. `AcqRel`: the writer that ends
    /// the round sees every chunk's stores and counts.
    pub(crate) fn finish(&self, chunk: Chunk) -> bool {
        let before = self.progress.words()[1].fetch_add(1, Ordering::AcqRel);
        debug_assert_eq!(
            before >> 32,
            chunk.round,
            "a round ended with a chunk unswept"
        );
        (before & LOW) + 1 == self.chunks
    }

    /// The chunk's column and its rows.
    fn place(&self, chunk: Chunk) -> (usize, std::ops::Range<usize>) {
        let column = (chunk.index % self.columns as u64) as usize;
        let first_row = (chunk.index / self.columns as u64) as usize * self.chunk_lines;
        (
            column,
            first_row..(first_row + self.chunk_lines).min(self.rows),
        )
    }
}

impl<F: Fingerprint, S: BuildHasher> RecentFilter<F, S> {
    /// Sweeps one chunk of the forgotten generation, if one is left to claim, and ends
    /// the round if it was the last; true if it swept one. Called by writers with no
    /// lock held.
    #[cold]
    #[inline(never)]
    pub(super) fn help_sweep(&self) -> bool {
        let Some(chunk) = self.sweep.claim() else {
            return false;
        };
        // The claim saw the round that the close started, so this is that close's
        // window: it cannot open before this chunk is swept.
        let window = self.position();
        let dead = window.dead_tag().expect("a round runs only while sweeping");
        self.sweep_chunk(chunk, dead);
        if self.sweep.finish(chunk) {
            self.end_round(window);
        }
        true
    }

    /// Empties every slot tagged `dead` in `chunk`, under its column's stripe locks.
    fn sweep_chunk(&self, chunk: Chunk, dead: u64) {
        if self.sweep.whole {
            return self.sweep_whole_table(dead);
        }
        let (column, rows) = self.sweep.place(chunk);
        // The stripe of each lane of the column; the column's stripes are locked once
        // each, in ascending order (the order every multi-stripe lock takes).
        let lane_stripe: [usize; LINE_WORDS] = std::array::from_fn(|lane| {
            let word = column * LINE_WORDS + lane;
            self.raw
                .stripes
                .of_word(Table::<F, SLOTS>::bucket_word_of(word))
        });
        let mut stripes = lane_stripe;
        stripes.sort_unstable();
        let guards: [Option<PairGuard<'_>>; LINE_WORDS] = std::array::from_fn(|k| {
            (k == 0 || stripes[k] != stripes[k - 1])
                .then(|| self.raw.stripes.lock_pair(stripes[k], stripes[k]))
        });
        // Slots emptied per lane, counted out of each lane's stripe once the rows are done.
        let mut emptied = [0u32; LINE_WORDS];
        for row in rows {
            let first = row * self.sweep.row_words + column * LINE_WORDS;
            let last = (first + LINE_WORDS).min(self.sweep.table_words);
            for (index, emptied) in (first..last).zip(&mut emptied) {
                // Stored whether or not a slot was dead: whether one was is a coin toss
                // at a full window's load, and the branch on it cost each insert half a
                // misprediction (callgrind's branch simulation). The line is written
                // anyway: one of its words almost always changes.
                let word = self.raw.table.load_word(index);
                let kept = self.tags.clear_tag::<F>(word, dead);
                self.raw.table.store_word(index, kept);
                *emptied += Table::<F, SLOTS>::emptied_in_word(word, kept);
            }
        }
        for (&stripe, &count) in lane_stripe.iter().zip(&emptied) {
            let held = stripes.partition_point(|&s| s < stripe);
            let guard = guards[held]
                .as_ref()
                .expect("a stripe's first place holds its guard");
            for _ in 0..count {
                guard.count_removed(stripe);
            }
        }
        // Before the chunk counts as swept: the writer that ends the round reads the
        // generation's count after it.
        let total: u32 = emptied.iter().sum();
        if total > 0 {
            self.fill.removed(dead, u64::from(total));
        }
    }

    /// Empties every slot tagged `dead` in a table of one chunk, under every stripe lock.
    fn sweep_whole_table(&self, dead: u64) {
        let all = self.raw.stripes.lock_all();
        let mut emptied = 0;
        for index in 0..self.raw.table.words() {
            let word = self.raw.table.load_word(index);
            let kept = self.tags.clear_tag::<F>(word, dead);
            if kept != word {
                self.raw.table.store_word(index, kept);
                let n = Table::<F, SLOTS>::emptied_in_word(word, kept) as usize;
                let stripe = self
                    .raw
                    .stripes
                    .of_word(Table::<F, SLOTS>::bucket_word_of(index));
                all.count_removed(stripe, n);
                emptied += n as u64;
            }
        }
        if emptied > 0 {
            self.fill.removed(dead, emptied);
        }
    }

    /// The round's last chunk is swept: opens the window if the forgotten generation is
    /// gone, or starts another round if a kick carried one of its keys past the sweep.
    #[cold]
    fn end_round(&self, window: Window) {
        let dead = window.dead_tag().expect("a round runs only while sweeping");
        if self.fill.held(dead) > 0 {
            self.repeated_sweeps.fetch_add(1, Ordering::Relaxed);
            self.sweep.start();
            return;
        }
        // Nothing else moves a sweeping window, and only the end of the round's last
        // chunk opens it.
        let opened = self.window.compare_exchange(
            window.0,
            window.opened_next().0,
            Ordering::SeqCst,
            Ordering::Relaxed,
        );
        debug_assert!(opened.is_ok(), "a sweeping window moved under its sweep");
    }
}
