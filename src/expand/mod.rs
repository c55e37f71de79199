//! A cuckoo table that doubles in place: the table of the growable filter
//! (`growable.rs`), which replaced the chain of sub-filters (`chained.rs`).
//!
//! - `scheme.rs`: the addressing scheme (below), pure functions shared by everything.
//! - `model.rs`: the single-threaded reference table and chain of links (behind the
//!   `test-hooks` feature), which the simulations below measure.
//! - `engine.rs`: the concurrent table, a layout of the crate's one engine
//!   (`engine.rs` and `kick.rs` at the crate root hold the protocol), with lazy
//!   stripe-by-stripe splits; `record.rs`: its era records (the crate's one `unsafe`
//!   module besides the prefetch hint); `stash.rs`: the few keys a table keeps beside
//!   its buckets ("Duplicates" below); `chain.rs`: its links, on `segments.rs` (arrays
//!   that grow by appending). Driven alone, table and chain hold the model's codes slot
//!   for slot. `hooks.rs` exposes them on pre-hashed keys to the loom models and
//!   measurements as the hidden `DoublingTable` (`test-hooks` only).
//!
//! # What a doubling must do without keys
//!
//! A table of `N = N0 · 2^d` buckets (era `d`; `N0` any even number) doubles to `2N`.
//! Every stored code must move to the bucket its key would use in the larger table,
//! computed from the code and its bucket alone, and every key must still find all its
//! copies with one probe of two buckets, whenever its copies were stored.
//!
//! # The streams
//!
//! A key's 64-bit hash gives a base bucket `i0 = ⌊lo32 · N0 / 2^32⌋` and a 32-bit
//! *stream* `z = hi32` (its first block of `f` bits made non-zero, `f` the slot width,
//! 8 or 16). Stream bits are spent one per doubling, lowest first:
//!
//! - at era `d` the key's bucket is `i0 + N0 · (z mod 2^d)`: doubling sends bucket `b`
//!   to `b` or `b + N` by the stream's next bit, so the old buckets keep their index and
//!   the new half is appended (memory is added, never moved);
//! - the code stored at era `d` is the stream's next bits from bit `d` on, the next one
//!   lowest. At era 0 it is the whole first block (`f` bits, like the core filter's
//!   fingerprint); from era 1 it is `f − 1` bits under a delimiting 1: `[0…][1][bits]`.
//!   Doubling reads the code's lowest bit as the bucket bit and shifts it out, so a code
//!   stored at era `e` holds `f − 1 − (d − e)` bits at era `d` (an era-0 code `f − d`).
//!   A code whose bits are all spent is a *void*, `1`: it answers for any key of its
//!   bucket pair, and a doubling copies it into both halves (Aleph filter's rule).
//!
//! Because every code is a prefix of the stream from bit `d` on, a code answers for a
//! key when the key's fresh code agrees with it below the stored delimiter. One SIMD
//! pass over both buckets still answers a lookup: with `x = code ^ query`, the code
//! answers when `x ^ (x − 1)` (`x`'s lowest set bit and every bit below it) is at
//! least the code and the code is not 0: two xors, a subtract, a saturating subtract,
//! two compares and an and-not per lane instead of one compare. (Codes kept top-down
//! with the delimiter below would match with fewer vector operations, but every lookup
//! would then reverse the bits of both streams: measured, that made the scheme's locate
//! four times as slow as the core's.)
//!
//! # The partner
//!
//! The second bucket must also be one probe for every key at every era, and a kick must
//! find it from a stored code. The key's side-2 stream is `z' = Π(z)` and its side-2 base
//! bucket `j0`; its side-2 bucket at era `d` is `j0 + N0 · (z' mod 2^d)` and its side-2
//! code is `z'`'s bits from `d` on, exactly as on side 1. `Π` must be an involution (a
//! code does not know its side) and must map the first `n` bits to the first `n` bits
//! for every `n ≥ f` (a code knows the first `d + len ≥ f` bits of its stream: `d` from
//! its bucket, `len` from itself):
//!
//! - on the first block, `z = (A, R)` with `A` its low `f − 4` bits (`f − 2` at 8 bits),
//!   one Feistel round: `A' = A ⊕ H(R)` (`H(0) = 0`, so a non-zero block stays
//!   non-zero), `R' = R`;
//! - past the block the two streams agree.
//!
//! Side 1's base buckets are the lower half of the base table, side 2's the upper half
//! (see "Links" for why). The pair's symmetric information `(R, min(A, A'))` gives an
//! offset `r` in `0..N0/2`, and `j0 = N0/2 + (i0 + r) mod N0/2`; from side 2 the same
//! `r` leads back, so the map is an involution with no fixed point on any even `N0`.
//! `H(R)` is the top bits of `R` times an odd constant: it must not be linear in `R`
//! (see `mirror`).
//!
//! Without the Feistel round (`Π` the identity past an offset), both buckets of every
//! key would share their low `d` stream bits, and the table would fall apart into `2^d`
//! independent tables of `N0` buckets. Measured with the model (`examples/expand_sim --
//! 100 16 12 200000` after a one-off edit that sets `H ≡ 0` in `mirror`, first capacity
//! 100, 16 bits): with `H ≡ 0` the doublings came at 99, 95, 87, 84, 75,
//! 79, 81, 79, 71, 73, 72 and 72% load; with the round, at 96–99% through era 12.
//!
//! ## One code for both buckets (snapshot kind 4)
//!
//! The Feistel pairing above is snapshot kind 3's; every table built now pairs a key's
//! buckets otherwise (`Pairing::SharedCode`). Both sides store the key's one stream, as
//! the core filter stores one fingerprint in both buckets. Side 2's bucket bits are
//! that stream xor `H(R)` (the round's mask, so side 2's buckets spread as a Feistel
//! side's do), and its base bucket is `N0/2 + (i0 + ⌊m(z) · (N0/2) / 2^32⌋) mod N0/2`
//! with `m` a multiply of the whole first block, which a code on either side reads back
//! (its bucket's half says its side, and `R` is never masked). The Feistel pairing draws
//! that offset from the pair's symmetric half of the block only, so a bucket's codes
//! reached fewer partner buckets. With three copies of each of 50,000 keys inserted into
//! a model chain of 264 base buckets (`ExpandChain`, 16 bits, 4 slots, the engine's
//! growth policy, 12 key sets): the Feistel pairing doubled 9 times in 3 of 12 sets
//! inserted round by round and in 7 of 12 inserted with each key's copies in a row;
//! one shared code, 8 times in all 24 (the fewest that hold 150,000 codes). Doubling
//! loads and false-positive rates of distinct keys were the Feistel pairing's.
//!
//! # How far one table doubles
//!
//! A code's partner may depend only on what every copy of its key knows: the base bucket
//! and the stream's first block. At era `d` the bucket itself spells out `d` of the
//! block's `f` bits, so the codes of one bucket have at most `2^(f − d)` partner buckets.
//! The kick graph thins out as `d` nears `f`, whatever `Π` is; at `d = f` every bucket has
//! a single partner and the table is a set of two-bucket tables. Measured with the model
//! (4 slots, doubling when an insert finds no kick path of up to 5 moves, load at each
//! doubling; `cargo run --release --example expand_sim -- 100 16 15 100000 15` and
//! `-- 1000 8 8 100000 8`):
//!
//! | bits | eras 0 to f − 4 | era f − 3 | era f − 2 | era f − 1 |
//! |---|---|--:|--:|--:|
//! | 16 (first capacity 100) | 96.1–99.4% | 86.2% | 52.6% | – |
//! | 8 (first capacity 1,000) | 96.8–98.3% | 86.5% | 47.6% | 23.8% |
//!
//! So one table doubles well `f − 4` times (4,096× at 16 bits, 16× at 8 bits) with
//! distinct keys, once more at a lower load, and no further. Neither a deeper kick search nor a later start
//! helps. In a run of the scheme before its sides kept to halves, 7 or 9 moves gave the
//! same 88.9% at era 13 as 5 moves. A table started at a later era from a smaller base
//! gains nothing either: the first codes' information (base bucket and code bits) is
//! fixed by the memory they occupy, and every doubling moves one bit of it into the
//! address.
//!
//! Copies need more room than that. The codes of one bucket can move to at most
//! `2^(f − d)` buckets, and a key's copies all sit in one pair, so at a link's last eras
//! copies crowd small groups of buckets, which jam while the table is far from full. Measured with three copies of each key (`GrowableCuckooFilter`,
//! 16 bits, 8 hasher seeds, the same in each): 200,000 keys from `with_capacity(200)`
//! jammed at era 12 (`f − 4`) under half load and ended at 14 doublings and 95 bits per
//! item (both insertion orders) with links of `f − 3` doublings; with links of `f − 5`,
//! 12 doublings and 24 bits round by round, 13 and 36 in a row. So a 16-bit link
//! doubles `f − 5` times (2,048×), which costs distinct keys nothing measured (10^6
//! keys from 1,000: 17.7 bits per item either way; 8·10^6: 35.1 → 22.0, the second
//! link starting earlier). An 8-bit link keeps `f − 3` (32×): at 8 bits each extra link
//! adds its false positives to every lookup, and `f − 5` spreads a filter grown from
//! 1,000 to 10^6 keys over 4 links where `f − 3` needs 3.
//!
//! # When a table doubles
//!
//! A table may double as soon as its codes no longer fit well, and it must double
//! before a key is refused; between the two, the later it doubles, the fewer bits per
//! item it costs, and the more its inserts cost. Kick searches grow steeply with the
//! load: in instructions per insert (callgrind at `8380ffa`, before this policy, the
//! table grown from 1,000 keys to era 8, 270,336 slots, keys inserted one at a time,
//! against era 0 of the same size):
//!
//! | load | 49–60% | 60–70% | 70–80% | 80–85% | 85–90% | 90–93% | 93–95% | 95–97% |
//! |---|--:|--:|--:|--:|--:|--:|--:|--:|
//! | era 8 | 266 | 283 | 404 | 644 | 1,035 | 1,854 | 3,359 | 10,484 |
//! | era 0 | 163 | 175 | 254 | 439 | 737 | 1,362 | 2,465 | 6,956 |
//!
//! and the failed search that ended each era at 97.3–98.7% read its whole tree (up to
//! 2,730 nodes): the last 2.5% of each era cost more than the 46% before them. So a table
//! whose insert kicked and left it more than 95% full doubles then
//! (`ExpandTable::grow_if_loaded`), as a failed search would have made it (the same
//! `grow_from`, by an insert that holds no lock, its key placed). 95% is the load a
//! first table is sized for, so a filter filled to its capacity never doubles early.
//! Only a kick from one of the first 512 buckets asks, since the answer sums every
//! stripe's count: the cost per insert stays the same at any size, and the table
//! doubles within about 0.1% of the threshold. A fill of 943,718 keys from capacity
//! 921 (10 doublings) went from 1,112.8 to 728.8 instructions per insert (the table
//! pre-sized for them: 296.0 to 297.5; see BENCHMARKS.md for the times, and for 719.8
//! once a split stores each bucket once); 10^6 keys from 1,000 end at the same era either
//! way (17.65 bits per item), as do 8·10^6 (22.0). A filter whose keys fill 95% to
//! about 97.5% of an era's slots now holds twice the slots it did, and the most bits
//! per item a grown table costs (right after a doubling) rise by about 2.6%.
//!
//! Past era 0 the threshold is 92.5%: no capacity promise holds a grown table at 95%,
//! and its kicks between 92.5% and 95% cost as much as everything below them (the
//! table above). A fill of 943,718 keys from 117,964 (3 doublings) went from 547.0 to
//! 476.1 instructions per insert, from 921 (10 doublings) from 598.2 to 512.6, and 10^6
//! keys from 1,000 took 9–15% less time (54.35 → 46.3 and 51.55 → 46.95 ns an insert,
//! medians of two sets of alternations; BENCHMARKS.md, "Doubling at 92.5% past era 0").
//! The price is memory between 92.5% and 95% of an era: bits per item of a filter grown
//! from 1,000, averaged over 1,001 sizes spaced evenly in log from 10^4 to 4·10^6 keys,
//! rose from 24.84 to 25.38 (+2.2%), and their most from 35.0 to 36.1.
//! 10^6 keys still end at 10 doublings and 17.77 bits per item: that era holds them at
//! 92.3%, and 1,002,268 keys already double it (where 95% doubled at 1,032,748).
//!
//! The model (`model.rs`) doubles the same way, and `examples/expand_sim.rs` turns it
//! off to measure the scheme's own limit (the table above, "How far one table
//! doubles").
//!
//! # Links: growth past one table
//!
//! Past its last good era a table stops doubling and a *link* starts: a new table of its
//! size, with the same scheme, in which every key's stream goes on where the older link
//! stopped spending bits on addresses. The new link's base bucket of a key is its
//! side-1 bucket in the older link at that link's last era, numbered among that link's
//! side-1 buckets (so that it lies in the new link's lower half), and its stream starts
//! right after the bits that bucket spent. A fresh code of the new link (`f` bits from
//! there) still knows one stream bit more than the older link's last-era codes (`f − 1`
//! bits from the same place), which is what the remove rule below needs. Snapshots
//! written before this rule started each link at twice the size, one doubling further
//! (one bit more); a chain decoded from one keeps that rule (`chain::LinkSizes`), and
//! `tests/format.rs` holds such a snapshot as a golden file. Measured at 8 M keys grown
//! from 1,000 (`growth -- lookups`): 34.9 bits per key with links of the same size,
//! 52.4 with links twice the size. A link that stopped short of its doublings
//! (at 2^32 buckets) starts no further link. Inserts go to the newest link; lookups ask every
//! link (one probe of two buckets each: one link covers 2,048× of growth at 16 bits).
//!
//! A remove takes the longest match over all links, which is in the newest link that
//! answers, unless an older link's stash holds the key: a newer link's code knows every
//! stream bit an older link's code knows, and more, but a stashed copy knows its link's
//! whole 32-bit window, which can reach past a newer link's codes (a chain's remove then
//! compares each link's longest match, `chain.rs`). Two details make that hold, both found by the model's cross-link test:
//!
//! - Side 1's base buckets are the lower half of the base table and side 2's the upper
//!   half (Graf's mirror within the halves). Without that, a code could answer for key
//!   `x` on `x`'s side 1 while being key `y`'s side-2 code; `y`'s base bucket in the
//!   newer link then says nothing about `y`'s buckets in the older one, and deleting it
//!   for `x` lost `y`'s only copy.
//! - A block that is all zeros (an era-0 code of 0 would read as empty) gets its top bit
//!   set, not its lowest: the older link reads its codes up to one bit before that
//!   position, so the fix never makes the links disagree about a bit.
//!
//! Measured with the model (`cargo run --release --example expand_sim -- 100 16 17 300000`
//! and `-- 1000 8 12 1000000`): at 16 bits the second link starts at doubling 13 and
//! the doublings stay at 96–99% load through 17; at 8 bits (links of 4 doublings) three
//! links reach 12 doublings at 95–98%. Either way the measured false-positive rate at
//! each doubling is about the chain of sub-filters' at the same number of growths
//! (within ±11% over runs of these commands with other negative counts: within the
//! sampling noise of a few hundred false positives).
//!
//! # Duplicates
//!
//! `CF.ADD` of a key already present is everyday use, and a filter that may still grow
//! must take every copy that fits its pair (`2b`: more is `TooManyCopies`, as in the
//! core filter). Three things keep copies from costing refusals or memory:
//!
//! - one code for both buckets (above), so copies of different keys rarely share a pair
//!   forever;
//! - the growth policy: a kick search that fails under three quarters load meets copies
//!   that crowd a few pairs (distinct keys fill a table past 94% before one fails), so
//!   the key goes to the table's **stash** (`stash.rs`: keys each as its base bucket and
//!   32-bit stream, compared whole) instead of doubling the table. Each doubling moves
//!   the stashed keys back into the table where it made room. Keys that share a base
//!   bucket and a first block share their pair for the whole link and stay stashed, and
//!   there are more of them the larger the table (pairs of their copies collide in
//!   proportion to the table's `N0/2 · 2^f` such identities), so each era's stash has
//!   a group of 8 entries for every 4,096 slots, a key in the group it hashes to. With
//!   the key's group full the table doubles at any load: it never refuses a key while
//!   it may still grow. A key whose pair holds only codes that answer for it goes to
//!   the stash too, unless they are all its own full code (`TooManyCopies`: then they
//!   may all be its copies, and a flood of one key's copies costs no doubling);
//! - links of `f − 5` doublings at 16 bits ("How far one table doubles").
//!
//! Measured with `GrowableCuckooFilter` (`tests/duplicates.rs` holds each as a test):
//! `with_capacity(1_000)` and 50,000 keys three times each, round by round or each key's
//! copies in a row, refuse none at 16 bits and double 8 times (the fewest that hold the
//! 150,000 codes: 29.7 bits per item round by round and 30.1 in a row, the stashes'
//! groups included, against 22.4 for the keys once, a ratio set by the doublings'
//! powers of two); `with_capacity(200)` and 200,000 keys three times refuse
//! none in 12 (round by round) or 13 doublings. At 8 bits round by round refuses none
//! in 9 doublings (17.2 bits per item), and so do copies in a row (17.5): there, late
//! in an 8-bit link, a key's pair can fill with other keys' shorter codes that answer
//! for it before its second copy, which goes to the stash. (While such a pair was
//! `TooManyCopies` and one stash of 8 keys served the whole table, 3–4 of 150,000 were
//! refused and the table doubled 12 times, to 121 bits per item.)
//!
//! Keys drawn at random with replacement (`CF.ADD k __rand_int__`: 1 M draws from 1 M
//! keys, Poisson copies, into `with_capacity(1_000)`) meet the identities that overflow:
//! with one stash of 8 keys for the whole table they filled it at era 10, and the
//! filter grew a second link at 38.7% load (12 doublings, 8.8 MB); with a stash per era
//! that grows with the table, 11 doublings in one link, 4.5 MB, 1.07× RedisBloom's
//! bytes for the same draws, none refused. From `with_capacity(100_000)`, 10 M draws:
//! 869 MB before, 27.5 MB after (`growth -- copies`; BENCHMARKS.md, "A stash per
//! era").
//!
//! # Removes that never lose another key
//!
//! A remove deletes the *longest* code in the key's two buckets that answers for it
//! (InfiniFilter's rule). Any code that answers for key `x` in `x`'s buckets was left by a
//! key `y` that agrees with `x` on every bit the code holds; if it is not `x`'s own, then
//! `x`'s own copy is no longer than it, so it also answers for `y`, in the same two buckets
//! (both keys share the first block, hence the partner). Deleting the longest match
//! therefore leaves every other key a copy that answers for it. A chain of sub-filters
//! has no such order between its sub-filters' codes, which is why its removes could
//! delete another key's only copy.
//!
//! # False positives
//!
//! A code with `len` bits answers for an unrelated key with probability `2^−len` (at era
//! 0, `1/(2^f − 1)`). A key's two buckets hold a given code with probability `2/N`, so
//!
//! ```text
//! FPR ≤ (2 / N) · Σ_codes 2^−len(code)
//! ```
//!
//! With doublings at load `α_g` and load `α` now, each past era contributes about the same
//! mass as one full table, and at era `d ≥ 1`
//! `FPR ≈ (2b / 2^f) · (2α + α_g · (d − 1))`: the chain's `(2b / 2^f) · (α_g · d + α_new)`
//! at the same point of the same doubling. Era 0 is the core filter's bound exactly.
//! Measured (`cargo run --release --example expand_sim -- 1000 16 12 1000000`, 10^6
//! negatives at 90% load of each era, 16 bits): 0.0099% at era 0, 0.0536% at era 4,
//! 0.1284% at era 10, 0.1510% at era 12, each within 10% of the bound; the chain at
//! the same number of growths: 0.0129%, 0.0601%, 0.1317%, 0.1517%.
//!
//! # Limits
//!
//! A fresh code at era `d` of a link reads that link's stream bits `d .. d + f − 2`; a
//! key's whole stream is 96 bits (the hash's high half, then 64 bits spread from the
//! hash), so links start while the next one fits in it, and no table passes 2^32
//! buckets. Past that an insert that finds no room fails with `Full` and changes
//! nothing.
//!
//! # What a lookup costs
//!
//! Measured on the core filter's table with the scheme's locate and the prefix compare
//! swapped in (a throwaway build: era 12, default geometry, one pinned thread, 2·10^6
//! random keys, median of 9, AMD EPYC, no `RUSTFLAGS`, other builds running on the
//! machine): the locate alone 3.75 ns against the core's 1.5; a whole lookup 1.62× the
//! core's at 1 M keys (10.1 against 6.2 ns) and 1.44× at 8 M (53.5 against 37.2 ns),
//! 1.58–1.65× through a non-inlined call. The first version of the scheme measured
//! 2.3–3.0× (a murmur finalizer and two bit reversals per lookup); a branch in the
//! halves' arithmetic cost another 5 ns of mispredictions before it became a
//! conditional move. What is left is the partner's two serial multiplies (`H(R)` and the
//! offset), the first bucket's second multiply (`N0 · t`), and the prefix compare's
//! extra vector operations after the loads. A table still at era 0 compares by equality,
//! as the core does.
//!
//! # Concurrency
//!
//! What the layout adds to the engine's protocol (`engine.rs` has it in full):
//!
//! - **Segments, never freed.** The table is segment 0 (`N0` buckets) and one segment
//!   per doubling (as many buckets as all before), each a cache-line-aligned word array.
//!   Bucket `i0 + N0 · t` lies in segment `k`, the bit length of `t`: nothing a reader
//!   holds is moved or freed, so lookups need no reclamation.
//! - **One record per era.** The era, its stripes, its counters and a directory of
//!   rows (row `t`: the `N0` buckets of descendant `t`, which lie together in one
//!   segment) are one record, published once with `Release` (an `AtomicPtr`); every
//!   operation pins the current record with one `Acquire` load and finds bucket
//!   `i0 + N0 · t` as word `i0` of row `t`: one load from the directory and two bounds
//!   checks (`record.rs`). A record is never freed before the table, so a reader that
//!   pinned an old one reads live memory.
//! - **Stripes per era.** Bucket `b`'s stripe at era `e` is `(b / W) mod L_e` (`W`
//!   buckets per word). `L` doubles with the table (up to one stripe per 256 buckets,
//!   at most 65,536) and `2 · L_0 · W` divides `N0`, so a bucket and its child
//!   `b + N_(e−1)` always share a stripe: a stripe's split touches its own buckets only,
//!   and takes its own lock only. Each era's stripes are new (the old ones stay for
//!   whoever still holds or waits on one: about 1% of the table's bytes over all eras),
//!   and each stripe's version carries a bit saying whether its buckets hold codes of
//!   the era or still of the one before.
//! - **A doubling** (an insert that finds no kick path in a table at least three
//!   quarters full, at most one per insert, or in any table whose stash has no room for
//!   the key: see
//!   "Duplicates"; or, before any search fails, an insert that kicked and left the
//!   table more than 95% full at era 0 or 92.5% later, see "When a table doubles")
//!   splits whatever is left of the current era, allocates the next segment and the
//!   next era's stripes (all unsplit), and then, holding every stripe lock of the
//!   current record, carries the stripes' counts over and publishes the next record:
//!   nothing is copied there.
//! - **Lazy splits.** A writer splits the stripes it needs (each under its lock, inside
//!   its seqlock window) before it locks, so it waits for at most one stripe's split,
//!   never for the table; the next doubling splits what nobody touched. Under its lock a
//!   writer checks that its record is still current: a doubling holds every lock of the
//!   record it replaces, so neither the era nor its stripes' split states change while a
//!   writer holds one.
//! - **Lookups never wait for a doubling.** A lookup reads a bucket of an unsplit stripe
//!   as its parent with the key's code of the era before, and validates both stamps (an
//!   era that ends leaves its stamps odd for good, so they also say that its record was
//!   still current); it retries only when a split, a doubling or a kick move overlapped
//!   it. While the first doubling's splits are under way a pair can
//!   mix era-0 codes (compared by equality) and era-1 codes (by prefix): the compare
//!   picks per bucket.
//! - **One search and move protocol**, the crate's (`kick.rs`: BFS over partners, moves
//!   from the free end back, each under its pair lock and checked there), and removes
//!   that take the longest match, under the pair lock.
//! - **Adversarial keys.** More than `2b` live keys that share a base bucket and a first
//!   block fill their pair with codes no kick can move, and no doubling before era `f`
//!   tells them apart (their buckets and partner are fixed by the block). A doubling
//!   therefore needs the table three quarters full, and one insert causes at most one:
//!   such keys go to the stash, and past the 8 entries of their group each further one
//!   doubles the table, so a flood of them costs memory, as it would cost the core
//!   filter refusals.
//! - **The stash** (`stash.rs`): one per era, one atomic word per key, written under
//!   its own lock and the key's pair lock, read by lookups before the buckets (a
//!   doubling moves stashed keys into the table before it empties their entries). A
//!   doubling copies it into the next era's under its lock before it publishes that
//!   era; an era's stash is never emptied after the era ends.
//! - **Links** (`chain.rs`): published once, behind a link count raised with `Release`.
//!   No code moves between links, so a lookup asks each in turn.
//! - **The plain paths** (`ExpandTable::path`): a lookup of a filter of one table
//!   tests one byte, then reads the buckets: of the first era where the table never
//!   grew, of the current record where it did. The byte only rises: to the grown path
//!   before the first doubling's record is published (a lookup that then still reads
//!   the first record takes the first era's path), and for good to the general path
//!   before a key is first stashed, before a second link starts, and for a filter with
//!   a frozen chain; a doubling that begins after the test is caught by the era's
//!   validation after the stamps (v, m).
//! - **Loom models** (`loom-tests/doubling.rs`): a lookup racing a stripe's split (k), an
//!   insert that must split the stripe it needs (l), a lookup racing a doubling (m),
//!   a lookup that reads a plain insert made after a split (n), an insert racing a
//!   doubling (p), two unique inserts of one key racing a link's start (q), and an
//!   insert whose kick path another insert breaks, which must search again rather than
//!   take the table for full (r), a lookup (s) and a remove (t) racing the doubling
//!   that moves a stashed key into the table, two keys stashed at once (u), and a
//!   plain lookup racing the first doubling (v), each with one or two mutations in
//!   `break_models.py`.
//!
//! The public type is `growable.rs`'s `GrowableCuckooFilter`; its snapshots are
//! `format/growable.rs`. Measured: see BENCHMARKS.md, "Growth in place".

pub(crate) mod chain;
#[cfg(test)]
mod churn;
pub(crate) mod engine;
#[cfg(feature = "test-hooks")]
pub(crate) mod hooks;
#[cfg(any(test, feature = "test-hooks"))]
pub(crate) mod model;
mod record;
pub(crate) mod scheme;
mod segments;
pub(crate) mod stash;
