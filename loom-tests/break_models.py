#!/usr/bin/env python3
"""Breaks the crate on purpose, once per loom model or guarded test, and checks that it fails.

Each mutation edits a scratch copy of the crate (never the working tree), runs the one
loom model or integration test it targets, and expects a failure. A mutation that
survives is reported and makes the script exit non-zero: that model or test would not
catch the bug it exists for.

A target `tests/FILE.rs::TEST` is the test `TEST` of that integration test, built with
the release profile; any other name is a loom model in `loom-tests/` (`module::name` for
a model in its own file).

    python3 loom-tests/break_models.py            # all of them
    python3 loom-tests/break_models.py a c        # some
"""
import os
import shutil
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# letter -> (loom model or `tests/FILE.rs::TEST`, what is broken, file, old text, new text).
# A letter in LIVELOCKS breaks a wait so that it spins forever: its model catches it when
# loom stops the spinning execution at its branch limit (which the model, passing with a
# few hundred executions unbroken, never reaches).
# A mutant that livelocks must not hang CI (a model takes seconds; its build a minute).
MUTANT_TIMEOUT_S = 900

MUTATIONS = {
    "a": (
        "lookup_during_kick_move_of_its_key",
        "kick move without the seqlock window, clearing the old slot before writing the new",
        "src/kick.rs",
        """    guard.while_moving(L::GROWS, || {""",
        """    // Broken: no seqlock window, and the old slot is cleared first.
    layout.set_slot_in_window(era, step.from, step.from_slot, 0);
    ({""",
    ),
    "a2": (
        "lookup_during_kick_move_of_its_key",
        "reader drops the acquire fence between reading the buckets and re-reading the versions",
        "src/stripe.rs",
        """        fence(Ordering::Acquire);
        // Combined without short-circuit""",
        """        // Combined without short-circuit""",
    ),
    "a4": (
        "lookup_during_kick_move_of_its_key",
        "reader accepts a stamp taken while a move was in progress (odd version)",
        "src/stripe.rs",
        """        (changed | stamp.odd_bit()) == 0""",
        """        changed == 0""",
    ),
    "a3": (
        "lookup_during_kick_move_of_its_key",
        "mover drops the release fence between the odd stamp and the rewritten words",
        "src/stripe.rs",
        """        fence(Ordering::Release);
        rewrite();
        for &s in stripes {
            let v = versions[s].load(Ordering::Relaxed);""",
        """        rewrite();
        for &s in stripes {
            let v = versions[s].load(Ordering::Relaxed);""",
    ),
    "b": (
        "two_inserts_into_one_bucket_pair",
        "stripe locks lock nothing (writers store without mutual exclusion)",
        "src/sync.rs",
        """        if self
            .locked
            .compare_exchange_weak(false, true, Ordering::Acquire, Ordering::Relaxed)
            .is_err()
        {
            self.lock_contended();
        }
        LockGuard(self)""",
        """        LockGuard(self)""",
    ),
    "c": (
        "two_insert_unique_of_one_key",
        "insert_unique checks presence before taking the pair lock (check, then insert)",
        "src/engine.rs",
        """        let pair = layout.load_pair(era, &c);
        let empty = match_pair::<L::F>(&pair, 0, B);""",
        """        if unique && L::holds(&layout.load_pair(era, &c), &c) {
            return Some(Ok(false));
        }
        let unique = false;
        let pair = layout.load_pair(era, &c);
        let empty = match_pair::<L::F>(&pair, 0, B);""",
    ),
    "d": (
        "remove_during_lookup_of_a_neighbour",
        "slot store tears the word: zeroes it, then writes the new value",
        "src/table.rs",
        """        word.store(new, order);
    }""",
        """        word.store(0, order);
        word.store(new, order);
    }""",
    ),
    "e": (
        "kick_path_invalidated_by_concurrent_writer",
        "kick move does not re-check that the target slot is still empty",
        "src/kick.rs",
        """            || layout.slot(era, step.to, step.to_slot) != 0""",
        """            || false""",
    ),
    "f": (
        "batched_lookup_during_kick_move",
        "batched lookup compares its keys' buckets without the seqlock stamp and validation",
        "src/filter.rs",
        """.map(|c| raw.contains_at(c))""",
        """.map(|c| {
            let pair = raw.table.load_pair(c.i1, c.i2);
            crate::fingerprint::pair_holds::<F>(&pair, c.fp, B)
        })""",
    ),
    "g": (
        "remove_during_kick_move_of_its_key",
        "remove clears the slot it saw the key in without re-checking it under the lock",
        "src/engine.rs",
        """            if let Ok(true) = replace_in_bucket(layout, access, era, bucket, stripe, code, 0) {""",
        """            let _ = (access, code);
            let guard = layout.stripes(era).lock_pair(stripe, stripe);
            layout.set_slot_in_window(era, bucket, hit % B, 0);
            guard.count_removed(stripe);
            if true {""",
    ),
    "h": (
        "snapshot::snapshot_during_kick_move",
        "a snapshot does not wait for the kick moves already under way",
        "src/stripe.rs",
        """            drop(stripe.lock.lock());""",
        """            let _ = stripe;""",
    ),
    "i2": (
        "tests/legacy.rs::a_chains_keys_are_found_removed_and_counted_in_every_sub_filter",
        "a growable filter's frozen chain asks only its newest sub-filter",
        "src/legacy.rs",
        """        self.subs.iter().rev().any(|sub| sub.contains(hash))""",
        """        self.subs.iter().rev().take(1).any(|sub| sub.contains(hash))""",
    ),
    "j": (
        "recent::a_take_empties_forgotten_slots_while_the_window_opens",
        "a RecentFilter writer reads the window before taking its pair lock",
        "src/recent/mod.rs",
        """            let guard = self.raw.lock_candidates(c);
            // At least as new as every write to these buckets, which all passed this
            // lock.
            let seen = self.position();""",
        """            let seen = self.position();
            let guard = self.raw.lock_candidates(c);""",
    ),
    "j2": (
        "recent::lookup_races_a_refresh_across_an_open",
        "a RecentFilter lookup judges the slots by the window it read before them, unchecked",
        "src/recent/mod.rs",
        """        fence(Ordering::Acquire);
        if self.window.load(Ordering::Relaxed) == before {
            return hit;
        }
        self.contains_while_sliding(hash)
    }""",
        """        let _ = Self::contains_while_sliding;
        hit
    }""",
    ),
    "j3": (
        "recent::two_count_shards_fill_a_generation",
        "a RecentFilter writer looks at its own count shard instead of the sum",
        "src/recent/fill.rs",
        """        let sum = self.held(tag);""",
        """        let sum = self.own().held[tag as usize].load(Ordering::SeqCst) as i64;""",
    ),
    "j5": (
        "recent::two_count_shards_fill_a_generation",
        "a RecentFilter writer looks at the count shards without the SeqCst fence after its add",
        "src/recent/fill.rs",
        """        fence(Ordering::SeqCst);
        let sum = self.held(tag);""",
        """        let sum = self.held(tag);""",
    ),
    "j6": (
        "recent::slide_during_inserts_and_a_lookup",
        "a RecentFilter close forgets the generation it closes instead of the oldest",
        "src/recent/window.rs",
        """        let oldest = (self.tag() + 1) % generations as u64;""",
        """        let oldest = self.tag() % generations as u64;""",
    ),
    "j7": (
        "recent::two_writers_share_a_sweep_of_two_chunks",
        "a RecentFilter sweep chunk locks only some of its column's stripes (lane k's as k mod 2)",
        "src/recent/sweep.rs",
        """            self.raw
                .stripes
                .of_word(Table::<F, SLOTS>::bucket_word_of(word))
        });""",
        """            self.raw
                .stripes
                .of_word(Table::<F, SLOTS>::bucket_word_of(word))
                & 1
        });""",
    ),
    "j8": (
        "recent::a_writer_past_the_overflow_limit_waits_for_the_sweep",
        "a RecentFilter writer past the overflow limit waits for a chunk to claim, not for the open",
        "src/recent/mod.rs",
        """        while self.position() == window && !self.help_sweep() {""",
        """        while !self.help_sweep() {""",
    ),
    "j9": (
        "recent::a_writer_finds_the_open_generation_full",
        "a RecentFilter writer refused by a full generation closes whatever window it reads next",
        "src/recent/mod.rs",
        """        if window.is_sweeping() {
            self.wait_for_open(window);
        } else {
            self.close_if_full(window);
        }""",
        """        if window.is_sweeping() {
            self.wait_for_open(window);
        } else {
            self.close(window, false);
        }""",
    ),
    "j10": (
        "recent::two_admits_of_one_key_across_a_close",
        "a RecentFilter forget counts the key out of the current generation, not its slot's",
        "src/recent/mod.rs",
        """        let tag = self.tags.tag_of(self.raw.table.slot(bucket, slot));
        self.fill.removed(tag, 1);""",
        """        let tag = self.position().tag();
        self.fill.removed(tag, 1);""",
    ),
    "j11": (
        "recent::a_kick_while_the_window_sweeps",
        "a RecentFilter kick empties forgotten slots around its buckets without reading the window again under their lock",
        "src/recent/mod.rs",
        """                if self.position().dead_tag() == Some(dead) {
                    self.reclaim_bucket(&guard, next, dead);
                }""",
        """                self.reclaim_bucket(&guard, next, dead);""",
    ),
    "j12": (
        "recent::a_kick_while_the_window_sweeps",
        "a RecentFilter writer empties forgotten slots of its buckets without counting them out",
        "src/recent/mod.rs",
        """                self.fill.removed(dead, u64::from(emptied));
                self.raw.table.store_word(index, kept);""",
        """                self.raw.table.store_word(index, kept);""",
    ),
    "j14": (
        "recent::two_writers_find_no_room",
        "a RecentFilter writer that found no room closes the window as it reads it now, not the one it searched",
        "src/recent/mod.rs",
        """            self.close(searched, true);""",
        """            self.close(self.position(), true);""",
    ),
    "j15": (
        "recent::two_writers_find_no_room",
        "a RecentFilter writer that found no room while the window sweeps closes it again instead of helping the sweep",
        "src/recent/mod.rs",
        """        if searched.is_sweeping() {
            if !self.help_sweep() {""",
        """        if false && searched.is_sweeping() {
            if !self.help_sweep() {""",
    ),
    "j16": (
        "recent::two_writers_find_no_room",
        "a RecentFilter close counts a slide whose compare-and-swap failed",
        "src/recent/mod.rs",
        """            .compare_exchange(open.0, closed.0, Ordering::SeqCst, Ordering::Relaxed)
            .is_err()""",
        """            .compare_exchange(open.0, closed.0, Ordering::SeqCst, Ordering::Relaxed)
            .is_err()
            && false""",
    ),
    "j17": (
        "recent::two_writers_find_no_room",
        "a RecentFilter writer reads the window it searches under Relaxed (its search may miss the sweep's room)",
        "src/recent/mod.rs",
        """            let searched = Window(self.window.load(Ordering::Acquire));""",
        """            let searched = Window(self.window.load(Ordering::Relaxed));""",
    ),
    "j13": (
        "recent::three_generations_go_round_their_tags",
        "a RecentFilter close takes the oldest tag modulo the tags' bit mask (a power of two), not the generations",
        "src/recent/window.rs",
        """        let oldest = (self.tag() + 1) % generations as u64;""",
        """        let oldest = (self.tag() + 1) & (generations.next_power_of_two() as u64 - 1);""",
    ),
    "t9": (
        "tests/recent.rs::keys_within_the_guaranteed_window_are_found_and_old_ones_forgotten",
        "a close forgets a generation still inside the window instead of the oldest",
        "src/recent/window.rs",
        """        let oldest = (self.tag() + 1) % generations as u64;""",
        """        let oldest = (self.tag() + 2) % generations as u64;""",
    ),
    "t18": (
        "tests/recent.rs::a_forgotten_generation_is_absent_while_it_is_swept",
        "RecentFilter lookups match the forgotten generation's slots while they are swept",
        "src/recent/mod.rs",
        """        let hit = if Window(before).is_sweeping() {""",
        """        let hit = if false {""",
    ),
    "t19": (
        "tests/recent.rs::no_key_of_a_forgotten_generation_outlives_its_sweep",
        "a RecentFilter window opens while a kick has left forgotten keys behind the sweep",
        "src/recent/sweep.rs",
        """        if self.fill.held(dead) > 0 {""",
        """        if false && self.fill.held(dead) > 0 {""",
    ),
    "t20": (
        "tests/recent.rs::small_windows_do_not_slide_early_with_one_writer",
        "a small RecentFilter window gets a table sized for it alone, a dozen buckets",
        "src/recent/builder.rs",
        """.max(self.min_buckets),""",
        """.max(0),""",
    ),
    "t21": (
        "tests/recent.rs::many_writers_on_small_windows_do_not_slide_early",
        "a RecentFilter table swept whole counts a key after storing it, as a chunked one does",
        "src/recent/mod.rs",
        """        if !(self.sweep.swept_whole() && self.fill.is_one_shard()) {""",
        """        if true {""",
    ),
    "t22": (
        "tests/recent.rs::many_writers_on_small_windows_do_not_slide_early",
        "a RecentFilter insert whose kick paths other writers keep breaking forgets a generation after one round",
        "src/recent/mod.rs",
        """                if no_paths >= NO_PATH_SEARCHES || contended_rounds >= MAX_CONTENDED_ROUNDS {""",
        """                if no_paths >= NO_PATH_SEARCHES || contended_rounds < MAX_CONTENDED_ROUNDS {""",
    ),
    "t1": (
        "tests/format.rs::snapshots_under_concurrent_writers_hold_every_acknowledged_key_once",
        "kick moves ignore a running snapshot (no gate)",
        "src/kick.rs",
        """        if !guard.moves_paused() {""",
        """        if true {""",
    ),
    "t2": (
        "tests/format.rs::every_bit_flip_is_an_error",
        "the decoder skips the checksum",
        "src/format/decode.rs",
        """    if crc32fast::hash(body).to_le_bytes() != checksum {""",
        """    if false && crc32fast::hash(body).to_le_bytes() != checksum {""",
    ),
    "t3": (
        "tests/format_alloc.rs::a_huge_claimed_table_is_never_allocated",
        "the decoder allocates the table before checking the input's length",
        "src/format/decode.rs",
        """    header.check_geometry::<F, B>()?;""",
        """    header.check_geometry::<F, B>()?;
    let _ = RawFilter::<F, B>::new(header.buckets as usize, header.stripes as usize)
        .map_err(|_| DecodeError::OutOfMemory)?;""",
    ),
    "t4": (
        "tests/format.rs::each_header_field_is_checked_past_the_checksum",
        "the decoder trusts the recorded item count",
        "src/format/decode.rs",
        """    if recorded == counted {""",
        """    if true || recorded == counted {""",
    ),
    "t5": (
        "tests/format.rs::missing_repeated_reordered_and_late_chunks_are_refused_and_change_nothing",
        "the chunk loader does not check sequence numbers",
        "src/format/chunks.rs",
        """        if self.complete || sequence != self.next_sequence {""",
        """        if self.complete {""",
    ),
    "t7": (
        "tests/format.rs::a_view_checks_its_bytes_once",
        "a view trusts the recorded item count",
        "src/format/view.rs",
        """        check_count(bytes, counted)?;""",
        """        let _ = check_count;""",
    ),
    "t11": (
        "tests/format.rs::a_view_answers_as_the_filter_in_every_geometry",
        "a view reads an 8-bit, 8-slot snapshot as 16-bit, 4-slot (the same words)",
        "src/format/view.rs",
        """            (8, 8) => Self::U8x8(TableBytes::new(table, indexer)),""",
        """            (8, 8) => Self::U16x4(TableBytes::new(table, indexer)),""",
    ),
    "t8": (
        "tests/format.rs::serde_carries_the_snapshot_format",
        "serde writes an empty encoding",
        "src/format/serde.rs",
        """    /// A snapshot (see [`CuckooFilter::to_bytes`]) as serde bytes.
    fn serialize<T: Serializer>(&self, serializer: T) -> Result<T::Ok, T::Error> {
        serializer.serialize_bytes(&self.to_bytes())""",
        """    /// A snapshot (see [`CuckooFilter::to_bytes`]) as serde bytes.
    fn serialize<T: Serializer>(&self, serializer: T) -> Result<T::Ok, T::Error> {
        serializer.serialize_bytes(&[])""",
    ),
    "k": (
        "doubling::lookup_races_a_stripe_split",
        "a stripe's split rewrites its buckets outside its seqlock window (marking it split after)",
        "src/expand/engine.rs",
        """        record.stripes.split_window::<A>(&[stripe], || {
            let mut bucket = stripe as u64 * Self::PER_WORD;
            let mut spot = self.spot_of(bucket);
            while bucket < parents {
                voids += self.split_group(record, spot);
                bucket += step;
                let base = u64::from(spot.base) + columns;
                let carry = u64::from(base >= self.base_buckets);
                spot = Spot {
                    base: (base - carry * self.base_buckets) as u32,
                    t: (u64::from(spot.t) + rows + carry) as u32,
                };
            }
        });""",
        """        let mut bucket = stripe as u64 * Self::PER_WORD;
        let mut spot = self.spot_of(bucket);
        while bucket < parents {
            voids += self.split_group(record, spot);
            bucket += step;
            let base = u64::from(spot.base) + columns;
            let carry = u64::from(base >= self.base_buckets);
            spot = Spot {
                base: (base - carry * self.base_buckets) as u32,
                t: (u64::from(spot.t) + rows + carry) as u32,
            };
        }
        record.stripes.split_window::<A>(&[stripe], || {});""",
    ),
    "l": (
        "doubling::insert_splits_the_stripe_it_needs",
        "a writer uses a stripe without splitting it first",
        "src/expand/engine.rs",
        """            if !record.stripes.is_split(stripe) {
                self.split_stripe::<A>(record, stripe);
                // A split may have found a newer era: locate again.
                ready = Err(Stale);
            }""",
        """            let _ = (stripe, &mut ready);""",
    ),
    "m": (
        "doubling::lookup_races_a_doubling",
        "an era ends with its stamps even, so a lookup that pinned it validates a read of buckets the next era's split rewrote",
        "src/expand/record.rs",
        """        ended.retire();""",
        """        let _ = ended;""",
    ),
    "m2": (
        "tests/growable.rs::doublings_in_a_row_split_what_no_writer_touched",
        "a doubling publishes the next era before every stripe of this one is split",
        "src/expand/engine.rs",
        """        for stripe in 0..stripes {
            self.split_stripe::<A>(record, stripe);
        }""",
        """        let _ = stripes;""",
    ),
    "p": (
        "doubling::insert_races_a_doubling",
        "a doubling's new era starts with its stripes marked split",
        "src/expand/engine.rs",
        """        let next = self.record_after(record, next_stripes, segment, false);""",
        """        let next = self.record_after(record, next_stripes, segment, true);""",
    ),
    "p2": (
        "doubling::insert_races_a_doubling",
        "a plain insert stores under its stripe lock without checking that its era is current",
        "src/engine.rs",
        """    if L::GROWS && !layout.era_unchanged(era) {
        return Err(Stale);
    }""",
        """    let _ = era;""",
    ),
    "r": (
        "doubling::insert_searches_again_after_a_broken_kick_path",
        "an insert whose kick searches concurrent writers broke takes the table for full",
        "src/kick.rs",
        """            NoRoom::Contended if contended < MAX_CONTENDED_ROUNDS => {""",
        """            NoRoom::Contended if false => {""",
    ),
    "q": (
        "doubling::unique_inserts_race_a_new_link",
        "a unique insert places into the link it chose after a newer link started",
        "src/engine.rs",
        """    if unique && !current() {
        return Placement::Superseded;
    }""",
        """    let _ = current;""",
    ),
    "q2": (
        "doubling::unique_inserts_race_a_new_link",
        "a unique insert checks the older links without passing their pair locks",
        "src/expand/chain.rs",
        """                table.pass_pair_lock(key);""",
        """                let _ = (table, key);""",
    ),
    "n": (
        "doubling::lookup_reads_a_plain_insert_after_a_split",
        "a growing table's plain insert stores its word with Relaxed (no release for a lookup that reads it)",
        "src/engine.rs",
        """    Table::<L::F, B>::group_store(words, sub, slot, new, Ordering::Release);""",
        """    Table::<L::F, B>::group_store(words, sub, slot, new, Ordering::Relaxed);""",
    ),
    "o": (
        "lookup_reads_a_plain_remove_after_a_kick_move",
        "a plain remove stores its word with Relaxed (no release for a lookup that reads it)",
        "src/engine.rs",
        """    Table::<L::F, B>::group_store(words, sub, slot, new, Ordering::Release);""",
        """    Table::<L::F, B>::group_store(words, sub, slot, new, Ordering::Relaxed);""",
    ),
    "x": (
        "kick_search_meets_a_slot_a_remove_emptied",
        "a kick move of a slot emptied since the search checked its bucket goes ahead",
        "src/kick.rs",
        """            || step.code == 0
""",
        "",
    ),
    "x2": (
        "tests/concurrent.rs::stripe_counts_match_their_buckets_while_kicks_race_removes",
        "a kick move of a slot emptied since the search checked its bucket goes ahead",
        "src/kick.rs",
        """            || step.code == 0
""",
        "",
    ),
    "t10": (
        "tests/exclusive.rs::exclusive_and_shared_operations_leave_the_same_table",
        "a kick move made with exclusive access skips its stores",
        "src/stripe.rs",
        """    fn while_moving(&self, _keep_split: bool, rewrite: impl FnOnce()) {
        rewrite();
    }""",
        """    fn while_moving(&self, _keep_split: bool, rewrite: impl FnOnce()) {
        let _ = rewrite;
    }""",
    ),
    "t12": (
        "tests/growable.rs::removes_never_cost_another_key_through_ten_doublings_at_8_bits",
        "a remove takes the shortest matching code, not the longest",
        "src/expand/engine.rs",
        """                .max_by_key(|&(len, _)| len)""",
        """                .min_by_key(|&(len, _)| len)""",
    ),
    "t13": (
        "tests/growable.rs::snapshots_while_growing_hold_every_acknowledged_key",
        "kick moves go on while a snapshot copies the table",
        "src/kick.rs",
        """        if !guard.moves_paused() {""",
        """        if true {""",
    ),
    "t14": (
        "tests/growable.rs::a_view_of_a_grown_snapshot_answers_as_the_filter",
        "a view of a growable snapshot reads only its first table",
        "src/format/growable.rs",
        """        for &(scheme, era, start, words) in &self.tables {""",
        """        for &(scheme, era, start, words) in self.tables.iter().take(1) {""",
    ),
    "t15": (
        "tests/exclusive.rs::exclusive_and_shared_growable_operations_leave_the_same_table",
        "a split made with exclusive access skips its stores",
        "src/stripe.rs",
        """        if !A::SHARED {
            rewrite();""",
        """        if !A::SHARED {
            let _ = rewrite;""",
    ),
    "t16": (
        "tests/exclusive.rs::exclusive_and_shared_operations_leave_the_same_table",
        "an exclusive plain insert, which stores into the slot it loaded, skips its stripe count",
        "src/engine.rs",
        """        access
            .lock_pair(layout.stripes(era), stripe, stripe)
            .count_added(stripe);""",
        """        let _ = (access, stripe);""",
    ),
    "t17": (
        "tests/exclusive.rs::exclusive_and_shared_growable_operations_leave_the_same_table",
        "a doubling counts one unsplit stripe too few (exclusive reads skip a split bit too soon)",
        "src/expand/engine.rs",
        """            .store(next_stripes as u32, Ordering::Relaxed);""",
        """            .store(next_stripes as u32 - 1, Ordering::Relaxed);""",
    ),
    "t6": (
        "tests/stats.rs::filling_to_the_first_failure_counts_kicks_and_refusals",
        "a kicked insert is not counted",
        "src/kick.rs",
        """                    layout.count_kick(access, era, c.buckets[0], moves);""",
        """                    let _ = moves;""",
    ),
    "t23": (
        "tests/growable.rs::a_table_doubles_just_past_its_threshold_and_never_below_its_capacity",
        "a grown table doubles only when a kick search fails, never after a kick past 92.5%",
        "src/expand/engine.rs",
        """        codes.saturating_mul(40) > slots.saturating_mul(37)""",
        """        codes.saturating_mul(40) > slots.saturating_mul(40)""",
    ),
    "t24": (
        "tests/growable.rs::a_table_doubles_just_past_its_threshold_and_never_below_its_capacity",
        "a table doubles early from 90% load, below the capacity it was built for",
        "src/expand/engine.rs",
        """        codes.saturating_mul(20) > slots.saturating_mul(19)""",
        """        codes.saturating_mul(20) > slots.saturating_mul(18)""",
    ),
    "t25": (
        "tests/growable.rs::a_table_doubles_just_past_its_threshold_and_never_below_its_capacity",
        "a grown table waits for 95% past era 0, as its first era does",
        "src/expand/engine.rs",
        """        codes.saturating_mul(40) > slots.saturating_mul(37)""",
        """        codes.saturating_mul(40) > slots.saturating_mul(38)""",
    ),
    "v": (
        "tests/duplicates.rs::a_remove_takes_an_older_links_stashed_copy_before_a_newer_links_shorter_code",
        "a chain's remove takes the newest link's match even when an older link's stashed copy knows more",
        "src/expand/chain.rs",
        """        if older.iter().any(|&(table, key)| table.stash_holds(key)) {""",
        """        if false && older.iter().any(|&(table, key)| table.stash_holds(key)) {""",
    ),
    "s": (
        "doubling::lookup_races_an_unstash",
        "a growing table's lookup reads its stash after its buckets",
        "src/expand/engine.rs",
        """        self.control.stash.holds_at(|| self.era(), key) || self.buckets_hold(access, key)""",
        """        self.buckets_hold(access, key) || self.control.stash.holds_at(|| self.era(), key)""",
    ),
    "t": (
        "doubling::remove_races_an_unstash",
        "an unstash moves a key without checking that a remove has not taken it",
        "src/expand/engine.rs",
        """            if !stash.holds(era, key) {
                continue;
            }""",
        """            let _ = stash.holds(era, key);""",
    ),
    "u": (
        "doubling::two_keys_stashed_at_once",
        "a stash insert picks its free entry without the stash's lock",
        "src/expand/engine.rs",
        """        if self.stash(&self.control.stash_lock.lock(), record.era, key) {""",
        """        if self.stash(&crate::sync::Lock::default().lock(), record.era, key) {""",
    ),
    "u2": (
        "doubling::remove_races_an_unstash",
        "a remove takes a stashed copy from the era it read, which a doubling may have ended",
        "src/expand/engine.rs",
        """            if self.era() == era {
                return self.control.stash.take(&locked, era, key);
            }""",
        """            return self.control.stash.take(&locked, era, key);""",
    ),
    "u3": (
        "tests/duplicates.rs::keys_drawn_at_random_with_replacement_stay_in_one_link",
        "a doubling leaves the stash behind in the era it ends",
        "src/expand/engine.rs",
        """        self.control.stash.carry(&locked, era, groups, self.max_era);""",
        """        let _ = (&locked, groups);""",
    ),
    "u4": (
        "tests/duplicates.rs::keys_drawn_at_random_with_replacement_stay_in_one_link",
        "every era's stash is one group of 8, however large the table",
        "src/expand/stash.rs",
        """    if slots < 2 * SLOTS_PER_GROUP {""",
        """    if true {""",
    ),
    "u5": (
        "tests/duplicates.rs::a_flood_of_one_keys_copies_costs_no_doubling",
        "a pair of the key's own full code alone stashes its next copy (a flood fills the stash)",
        "src/expand/engine.rs",
        """        SlotMask(F::match_pair_each(&pair, q1, q2, B)).count() == 2 * B""",
        """        SlotMask(F::match_pair_each(&pair, q1, q2, B)).count() == 2 * B && false""",
    ),
    "u6": (
        "tests/duplicates.rs::three_copies_at_8_bits_refuse_none",
        "a pair of codes that merely answer for the key refuses it as TooManyCopies",
        "src/expand/engine.rs",
        """        SlotMask(F::match_pair_each(&pair, q1, q2, B)).count() == 2 * B""",
        """        SlotMask(F::match_pair_each(&pair, q1, q2, B)).count() <= 2 * B""",
    ),
    "w": (
        "doubling::plain_insert_races_the_first_doubling",
        "the first record's check passes after a doubling (a plain insert that pinned era 0 stores into a parent the split emptied)",
        "src/expand/record.rs",
        """            Arm::First => pointer.is_null(),""",
        """            Arm::First => true,""",
    ),
    "w6": (
        "doubling::plain_lookup_races_the_first_doubling",
        "a lookup read at a later era than 0 (a plain one read again after a doubling) gets no answer",
        "src/expand/engine.rs",
        """        if q1 == q2 {
            match (c.eras[0], c.eras[1]) {""",
        """        if c.eras != [0, 0] {
            return false;
        }
        if q1 == q2 {
            match (c.eras[0], c.eras[1]) {""",
    ),
    "w7": (
        "doubling::plain_lookup_races_two_doublings",
        "a plain lookup read again after a doubling compares the later era's codes by equality",
        "src/expand/engine.rs",
        """                (1.., 1..) => return F::pair_holds_prefix(pair, q1, B),""",
        """                (1.., 1..) => return crate::fingerprint::pair_holds::<F>(pair, q1, B),""",
    ),
    "w1": (
        "doubling::plain_lookup_races_the_first_doubling",
        "a grown table's plain lookup reads a first record still current as a later one",
        "src/expand/engine.rs",
        """        if record.arm() == Arm::First {
            return self.first_holds(access, key);
        }
        engine::contains_at(""",
        """        if false {
            return self.first_holds(access, key);
        }
        engine::contains_at(""",
    ),
    "w5": (
        "tests/format.rs::the_chained_golden_files_decode_key_by_key",
        "a doubling puts a filter with a frozen chain back on a plain path, which skips the chain",
        "src/expand/engine.rs",
        """            .fetch_max(LookupPath::Grown as u8, Ordering::Relaxed);""",
        """            .store(LookupPath::Grown as u8, Ordering::Relaxed);""",
    ),
    "w2": (
        "tests/duplicates.rs::a_key_stashed_before_any_doubling_is_found",
        "a table stashes a key and stays on the plain path, which skips the stash",
        "src/expand/engine.rs",
        """    fn stash(&self, locked: &LockGuard<'_>, era: Era, key: Key) -> bool {
        self.leave_plain();""",
        """    fn stash(&self, locked: &LockGuard<'_>, era: Era, key: Key) -> bool {""",
    ),
    "w3": (
        "tests/growable.rs::keys_of_a_link_started_before_any_doubling_are_found",
        "a second link starts while the first stays on the plain path, which asks it alone",
        "src/expand/chain.rs",
        """        // Before any key can be in the new link.
        self.first_link.leave_plain();""",
        """        // Before any key can be in the new link.""",
    ),
    "w4": (
        "tests/format.rs::the_chained_golden_files_decode_key_by_key",
        "a filter decoded with a frozen chain keeps its tables on the plain path, which skips the chain",
        "src/growable.rs",
        """        if frozen.is_some() {
            chain.first_link().leave_plain();
        }""",
        """        if false {
            chain.first_link().leave_plain();
        }""",
    ),
}


# Mutations whose bug is a wait that never ends (see the comment above MUTATIONS).
LIVELOCKS = {"j8"}


def scratch_copy():
    """A copy of the workspace at one path for every mutant (the root manifest names the
    Redis module as a member). One path keeps the crate's identity, so each mutant's
    build reuses the last one's incremental cache and overwrites its artifacts instead
    of adding a crate's worth of them to the target dir. Every file is copied with a new
    modification time, so cargo never takes the last mutant's build for this one's."""
    scratch = os.path.join(tempfile.gettempdir(), f"cuckoo-mutant-{os.getuid()}")
    shutil.rmtree(scratch, ignore_errors=True)
    os.makedirs(scratch)
    for item in ["Cargo.toml", "Cargo.lock", "src", "loom-tests", "README.md", "benches", "examples", "tests", "redis-module"]:
        source = os.path.join(REPO, item)
        if os.path.isdir(source):
            shutil.copytree(source, os.path.join(scratch, item), copy_function=shutil.copy)
        elif os.path.exists(source):
            shutil.copy(source, scratch)
    return scratch


def run(letter):
    test, what, path, old, new = MUTATIONS[letter]
    spins = letter in LIVELOCKS
    started = time.monotonic()
    scratch = scratch_copy()
    try:
        target = os.path.join(scratch, path)
        text = open(target).read()
        if text.count(old) != 1:
            print(f"({letter}) mutation no longer applies to {path}: update break_models.py")
            return False
        open(target, "w").write(text.replace(old, new))
        env = dict(os.environ)
        # Release builds are not incremental by default; a mutant changes a few lines of
        # one crate, so its rebuild reuses the rest of the last mutant's.
        env["CARGO_INCREMENTAL"] = "1"
        if test.startswith("tests/"):
            # A plain integration test: the normal build, sharing the release profile's
            # dependencies (CI builds them for the throughput program first).
            test_file, test = test.split("::", 1)
            test_file = os.path.basename(test_file).removesuffix(".rs")
            env.pop("RUSTFLAGS", None)
            env["CARGO_TARGET_DIR"] = os.environ.get(
                "CUCKOO_TEST_MUTANT_TARGET_DIR", os.path.join(REPO, "target", "test-mutants")
            )
        else:
            test_file = "loom"
            env["RUSTFLAGS"] = "--cfg cuckoo_loom"
            env.setdefault("LOOM_MAX_PREEMPTIONS", "2")
            # Share a build cache: only the mutated crate recompiles. CI points this at
            # the loom step's target dir, whose dependencies are already built.
            env["CARGO_TARGET_DIR"] = os.environ.get(
                "CUCKOO_MUTANT_TARGET_DIR", os.path.join(REPO, "target", "loom-mutants")
            )
        try:
            result = subprocess.run(
                ["cargo", "test", "--release", "--test", test_file, "--", "--exact", test],
                cwd=scratch, env=env, capture_output=True, text=True, timeout=MUTANT_TIMEOUT_S,
            )
        except subprocess.TimeoutExpired:
            print(f"({letter}) {test}: broke '{what}': the mutant ran past {MUTANT_TIMEOUT_S} s")
            return False
        output = result.stdout + result.stderr
        # Caught only by the model's own checks: not by a setup assertion, and not by
        # loom giving up on an execution that branches too much.
        failed = (
            result.returncode != 0
            and "panicked" in output
            and "setup:" not in output
            and (spins or "maximum number of branches" not in output)
        )
        if "error[" in output or "could not compile" in output:
            print(f"({letter}) the mutant of {path} does not compile: update break_models.py")
            return False
        if "running 1 test" not in output:
            print(f"({letter}) {test} did not run exactly one test: update break_models.py")
            return False
        kind = "model" if test_file == "loom" else "test"
        verdict = f"{kind} FAILED, as it must" if failed else f"{kind} PASSED: it misses this bug"
        print(f"({letter}) {test}: broke '{what}': {verdict} ({time.monotonic() - started:.0f} s)")
        if failed:
            for line in output.splitlines():
                if ("panicked" in line or line.startswith("  left") or "missed" in line
                        or "maximum number of branches" in line):
                    print("      " + line.strip())
                    break
        return failed
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
        # A mutant built in a shared target dir leaves its crate there under the names
        # this checkout's build uses, and newer than these sources: the next plain
        # `cargo test` here ran the mutant (seen after a run with CI's settings) until a
        # source changed. Touching the mutated file makes cargo rebuild from it.
        os.utime(os.path.join(REPO, path))


if __name__ == "__main__":
    # Mutants of one test binary in a row: each rebuild starts from the last one's cache.
    def binary(letter):
        test = MUTATIONS[letter][0]
        return test.split("::")[0] if test.startswith("tests/") else "loom"

    letters = sys.argv[1:] or sorted(MUTATIONS, key=lambda letter: (binary(letter), letter))
    results = [run(letter) for letter in letters]
    sys.exit(0 if all(results) else 1)
