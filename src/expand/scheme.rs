//! The addressing scheme of a table that doubles in place (see the module docs in
//! `expand/mod.rs` for the design and the reasons): from a key's hash to its two
//! buckets and the codes it leaves there, at any era, and from a stored code to its
//! partner bucket and to its place after a doubling, without the key.
//!
//! Everything here is a pure function of the scheme's three numbers (base buckets,
//! fingerprint bits, era), so the reference model and the concurrent engine share it.

/// One doubling's worth of state lives in the era: a table at era `d` has
/// `base · 2^d` buckets.
pub(crate) type Era = u32;

/// A key's bucket and the code it is looked up (and stored) with, on one side.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Place {
    pub(crate) bucket: u64,
    pub(crate) code: u32,
}

/// A key as one table sees it: its base bucket there and its stream from that table's
/// first bit on (see "Links" in the module docs for tables after the first).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Key {
    pub(crate) base_bucket: u64,
    pub(crate) stream: u32,
}

/// 32 bits of a key's whole stream from bit `start` on (`start` at most 64): the hash's
/// high half, then 64 bits spread from the whole hash. The first table reads bits 0 to
/// 31; each later one starts where the one before stopped spending bits on addresses.
#[inline]
pub(crate) fn stream_window(hash: u64, start: u32) -> u32 {
    debug_assert!(start <= 64);
    if start == 0 {
        return (hash >> 32) as u32;
    }
    let mut spread = hash ^ (hash >> 31);
    spread = spread.wrapping_mul(0xBF58_476D_1CE4_E5B9);
    spread ^= spread >> 29;
    let whole = u128::from(hash >> 32) | u128::from(spread) << 32;
    (whole >> start) as u32
}

/// What a stored code becomes when its table doubles: the reference model's form (the
/// engine splits a table word's codes at once, [`BucketSplit::word`]).
#[cfg(any(test, feature = "test-hooks"))]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Split {
    /// It stays in its bucket `b` (`to_upper` false) or moves to `b + N`, as this code.
    One { to_upper: bool, code: u32 },
    /// A void (no fingerprint bit left): a copy in both `b` and `b + N`.
    Both { code: u32 },
}

/// Bits of the stream's first block that the Feistel round flips on the way to the
/// partner (`A`: the bits spent on addresses while a table doubles well); the other 4
/// (2 at 8 bits) bits (`R`) stay the same on both sides and key the round. See "The
/// partner" in the module docs.
const fn feistel_address_bits(bits: u32) -> u32 {
    if bits <= 8 { bits - 2 } else { bits - 4 }
}

/// Lemire's multiply-shift range reduction of a 32-bit value into `0..n`.
#[inline]
fn reduce(x: u32, n: u64) -> u64 {
    (u64::from(x) * n) >> 32
}

/// Mask of the low `n` bits of a `u32` (`n` up to 32).
#[inline]
fn low_bits(n: u32) -> u32 {
    if n >= 32 { u32::MAX } else { (1 << n) - 1 }
}

/// The scheme of one table: `base` buckets at era 0 (even, at least 2), `bits`-bit
/// slots (8 or 16).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Scheme {
    base: u64,
    bits: u32,
    pairing: Pairing,
}

/// How a key's second bucket and the code it leaves there follow from its first.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Pairing {
    /// Snapshot kind 3: side 2 has a stream of its own, a Feistel round of side 1's
    /// first block (`mirror`), and stores that stream's bits; the two sides' codes
    /// differ, and side 2's base bucket comes from what both streams share.
    Feistel,
    /// Both sides store the key's one stream (one code for both buckets, as in the core
    /// filter). Side 2's descendant is that stream xor `H(R)` (the Feistel round's
    /// mask, so its buckets spread as a Feistel side's do), and its base bucket comes
    /// from a mix of the whole first block, which a code on either side can read back
    /// (its bucket's half says its side; `R` is never masked).
    SharedCode,
}

impl Scheme {
    #[inline(always)]
    pub(crate) fn new(base: u64, bits: u32) -> Self {
        Self::with_pairing(base, bits, Pairing::Feistel)
    }

    #[inline(always)]
    pub(crate) fn with_pairing(base: u64, bits: u32, pairing: Pairing) -> Self {
        debug_assert!(base >= 2 && base.is_multiple_of(2) && base <= 1 << 32);
        debug_assert!(bits == 8 || bits == 16);
        Self {
            base,
            bits,
            pairing,
        }
    }

    /// The pairing of the scheme's two sides.
    #[cfg(any(test, feature = "test-hooks"))]
    #[inline(always)]
    pub(crate) fn pairing(&self) -> Pairing {
        self.pairing
    }

    /// `H(R)` of a stream: the mask that side 2's descendant bits are xored with (the
    /// `A` bits of the first block; see [`mirror`](Self::mirror)).
    #[inline(always)]
    pub(crate) fn round_mask(&self, stream: u32) -> u32 {
        let a_bits = feistel_address_bits(self.bits);
        let r = (stream >> a_bits) & low_bits(self.bits - a_bits);
        r.wrapping_mul(0x9E37_79B9) >> (32 - a_bits)
    }

    /// The offset between a shared-code key's base buckets within their halves: the
    /// whole first block, mixed (its `A` bits spread over the offset as much as its `R`
    /// bits, so that a bucket's codes reach many partner buckets even when `N0` is
    /// small), scaled onto `0..N0/2`.
    #[inline(always)]
    fn shared_offset(&self, stream: u32) -> u64 {
        let block = stream & self.slot_mask();
        reduce(block.wrapping_mul(0x9E37_79B1), self.base / 2)
    }

    /// The other half's base bucket of a shared-code key whose base bucket is
    /// `base_bucket` and stream `stream` (either side: the map is an involution).
    #[inline(always)]
    pub(crate) fn shared_other_base(&self, base_bucket: u64, stream: u32) -> u64 {
        self.across(
            base_bucket,
            self.shared_offset(stream),
            base_bucket < self.base / 2,
        )
    }

    /// Side 2 of a shared-code key: its base bucket and the stream its descendant is
    /// read from (the key's stream xor `H(R)`). A key's own base bucket is always in
    /// the lower half, so no test of the half is made.
    #[inline(always)]
    pub(crate) fn shared_side_two(&self, key: Key) -> (u64, u32) {
        debug_assert!(key.base_bucket < self.base / 2);
        (
            self.across(key.base_bucket, self.shared_offset(key.stream), true),
            key.stream ^ self.round_mask(key.stream),
        )
    }

    /// The base bucket `offset` on from `base_bucket` within the other half, from the
    /// lower half (`lower`) or the upper. Both terms are below `N0/2`: a subtract kept
    /// only when it does not wrap, a conditional move rather than a division or a branch
    /// (which, taken half the time, cost a lookup's locate 5 ns in mispredictions).
    ///
    /// No branch on `lower` either: a kick search meets buckets of both halves at
    /// random, and the branch cost grown fills 0.3 mispredictions an insert.
    #[inline(always)]
    fn across(&self, base_bucket: u64, offset: u64, lower: bool) -> u64 {
        let half = self.base / 2;
        let within = |sum: u64| sum.min(sum.wrapping_sub(half));
        // From the lower half: `half + within(b + offset)`; from the upper:
        // `within(b − offset)` (both sums lie in `0..N0`). `negate` is all ones from the
        // upper half, and `(offset ^ negate) − negate` then `−offset`.
        let negate = 0u64.wrapping_sub(u64::from(!lower));
        let sum = base_bucket.wrapping_add((offset ^ negate).wrapping_sub(negate));
        (half & !negate) + within(sum)
    }

    #[inline(always)]
    #[cfg(any(test, feature = "test-hooks"))]
    pub(crate) fn bits(&self) -> u32 {
        self.bits
    }

    /// Buckets at era `era`.
    pub(crate) fn buckets(&self, era: Era) -> u64 {
        self.base << era
    }

    /// The last era a table may reach: a fresh code at era `d` reads stream bits
    /// `d .. d + bits − 1`, which must lie in the stream's 32 bits, and the table stays
    /// within 2^32 buckets.
    pub(crate) fn max_era(&self) -> Era {
        let by_stream = 33 - self.bits;
        // Rounded down: `base · 2^era` must stay within 2^32.
        let by_buckets = ((1u64 << 32) / self.base).ilog2();
        by_stream.min(by_buckets)
    }

    /// Mask of a slot's `bits` bits.
    #[inline(always)]
    fn slot_mask(&self) -> u32 {
        low_bits(self.bits)
    }

    /// Bits a code stored at `era` carries when it is fresh: all `bits` at era 0 (no
    /// delimiter yet), one fewer from era 1 on.
    #[inline(always)]
    pub(crate) fn fresh_len(&self, era: Era) -> u32 {
        if era == 0 { self.bits } else { self.bits - 1 }
    }

    /// The first bucket at era 0, in the lower half (side 1's), from the hash's low
    /// half.
    #[inline(always)]
    pub(crate) fn first_base_bucket(&self, hash: u64) -> u64 {
        reduce(hash as u32, self.base / 2)
    }

    /// A stream with its first block made non-zero (an era-0 code of 0 would read as
    /// an empty slot) by setting the block's top bit: a stream bit that the link before
    /// never reads (its last fresh codes end two bits earlier), so every link sees the
    /// same stream.
    #[inline(always)]
    pub(crate) fn nonzero_block(&self, stream: u32) -> u32 {
        stream | (u32::from(stream & self.slot_mask() == 0) << (self.bits - 1))
    }

    /// A key of the first table: base bucket from the hash's low half, stream from its
    /// high half.
    #[inline(always)]
    pub(crate) fn key(&self, hash: u64) -> Key {
        Key {
            base_bucket: self.first_base_bucket(hash),
            stream: self.nonzero_block(stream_window(hash, 0)),
        }
    }

    /// Whether `key` is one this table's keys can be: its base bucket in the first half
    /// of the base buckets, its stream's first block non-zero (what a decoder checks of
    /// a stashed key).
    pub(crate) fn is_key(&self, key: Key) -> bool {
        key.base_bucket < self.base / 2 && key.stream & self.slot_mask() != 0
    }

    /// The other side of `(base bucket, stream)`: the partner's base bucket and stream.
    /// An involution, defined on any stream whose first block (`bits` bits) is known;
    /// the bits of `stream` past those it is told are ignored by every caller.
    #[inline(always)]
    pub(crate) fn mirror(&self, base_bucket: u64, stream: u32) -> (u64, u32) {
        self.mirror_from(base_bucket, stream, base_bucket < self.base / 2)
    }

    /// [`mirror`](Self::mirror) of a key's own side, whose base bucket is always in the
    /// lower half: no test of the half.
    #[inline(always)]
    pub(crate) fn mirror_key(&self, key: Key) -> (u64, u32) {
        debug_assert!(key.base_bucket < self.base / 2);
        self.mirror_from(key.base_bucket, key.stream, true)
    }

    /// [`mirror`](Self::mirror), told whether `base_bucket` is in the lower half.
    #[inline(always)]
    fn mirror_from(&self, base_bucket: u64, stream: u32, lower: bool) -> (u64, u32) {
        let a_bits = feistel_address_bits(self.bits);
        let r_bits = self.bits - a_bits;
        let a = stream & low_bits(a_bits);
        let r = (stream >> a_bits) & low_bits(r_bits);
        // H(R): the top bits of a multiply. H(0) = 0, so a non-zero block stays
        // non-zero. H must not be linear in R: the classes a bucket's partners fall in
        // are its own class xor H(R), and a linear H (R repeated across A's width, tried
        // in a one-off run before the sides kept to halves) spans only `r_bits`
        // dimensions, so the classes fell apart into separate tables again (16-bit
        // doublings at 91–93% load from era 9, against 96–97%). At 8 bits R has 2 bits,
        // so H spans at most 2 dimensions anyway; each class there still holds `8 · N0`
        // buckets.
        let other_a = a ^ (r.wrapping_mul(0x9E37_79B9) >> (32 - a_bits));
        // The same on both sides: R, and the smaller A half. (Their sum costs one
        // operation less and collides more: in a one-off run before the sides kept to
        // halves, 8-bit doublings came at 89% and 68% load in eras 4 and 5, against 97%
        // and 91% with the minimum.)
        let symmetric = (r << a_bits) | a.min(other_a);
        // Past the block the two streams agree: the partner never depends on those bits
        // before era `bits`, past which a table no longer doubles well (module docs).
        let other_stream = (stream & !self.slot_mask()) | (r << a_bits) | other_a;
        // Side 1's base buckets are the lower half, side 2's the upper: a code then
        // always sits on the same side for every key it answers for, which the removes
        // across links rely on (module docs, "Links"). The offset within a half is the
        // same from both sides, so this is an involution, and never a fixed point.
        (
            self.across(base_bucket, self.scaled(symmetric), lower),
            other_stream,
        )
    }

    /// `symmetric` (a block's worth of bits) scaled onto `0..N0/2`. With 16 bits a
    /// multiply-shift, as the core filter's alternate bucket; 8 bits are first spread
    /// over 32, since a grid of 256 offsets keeps kick paths meeting the same buckets
    /// (the core filter's measurement, see `index.rs`).
    #[inline(always)]
    fn scaled(&self, symmetric: u32) -> u64 {
        let half = self.base / 2;
        if self.bits < 16 {
            reduce(symmetric.wrapping_mul(0x9E37_79B1), half)
        } else {
            (u64::from(symmetric) * half) >> self.bits
        }
    }

    /// The key's side-1 bucket at `era` numbered among side-1 buckets only (`0..N/2`):
    /// the base bucket of a later link, which must stay in that link's lower half.
    #[inline(always)]
    pub(crate) fn side_one_rank(&self, key: Key, era: Era) -> u64 {
        key.base_bucket + self.base / 2 * u64::from(key.stream & low_bits(era))
    }

    /// The bucket of `(base bucket, stream)` at `era`: the stream's first `era` bits
    /// say which of the base bucket's `2^era` descendants it is.
    #[inline(always)]
    pub(crate) fn bucket(&self, base_bucket: u64, stream: u32, era: Era) -> u64 {
        base_bucket + self.base * u64::from(stream & low_bits(era))
    }

    /// The code of the stream's `len` bits from `era` on.
    ///
    /// At era 0 (`len` = `bits`): the block itself, the next stream bit lowest. From era
    /// 1: a delimiting 1 above those `len` bits, zeros above it: `[0…][1][bits]`.
    #[inline(always)]
    pub(crate) fn code(&self, stream: u32, era: Era, len: u32) -> u32 {
        if era == 0 {
            return stream & self.slot_mask();
        }
        debug_assert!(len < self.bits && era + len <= 32);
        (1 << len) | ((stream >> era) & low_bits(len))
    }

    /// Both of a first-table key's places at `era`, with fresh codes.
    #[cfg(test)]
    pub(crate) fn locate(&self, hash: u64, era: Era) -> [Place; 2] {
        self.locate_key(self.key(hash), era)
    }

    /// Both of a key's places at `era`, with fresh codes.
    #[inline(always)]
    pub(crate) fn locate_key(&self, key: Key, era: Era) -> [Place; 2] {
        let (first, stream) = (key.base_bucket, key.stream);
        let len = self.fresh_len(era);
        if self.pairing == Pairing::SharedCode {
            let code = self.code(stream, era, len);
            let second = self.shared_other_base(first, stream);
            return [
                Place {
                    bucket: self.bucket(first, stream, era),
                    code,
                },
                Place {
                    bucket: self.bucket(second, stream ^ self.round_mask(stream), era),
                    code,
                },
            ];
        }
        let (second, other_stream) = self.mirror(first, stream);
        [(first, stream), (second, other_stream)].map(|(base_bucket, stream)| Place {
            bucket: self.bucket(base_bucket, stream, era),
            code: self.code(stream, era, len),
        })
    }

    /// Fingerprint bits a stored code carries.
    #[inline(always)]
    pub(crate) fn len_of(&self, code: u32, era: Era) -> u32 {
        if era == 0 { self.bits } else { code.ilog2() }
    }

    /// Whether stored `code` answers for a key whose fresh code here is `query`: equal
    /// at era 0; from era 1, equal in every bit below the stored code's delimiter.
    #[inline(always)]
    pub(crate) fn matches(&self, code: u32, query: u32, era: Era) -> bool {
        if era == 0 {
            return code == query && code != 0;
        }
        code != 0 && (code ^ query) & low_bits(code.ilog2()) == 0
    }

    /// Bucket `bucket` as its base bucket and descendant: `bucket = base + N0 · descendant`.
    #[cfg(any(test, feature = "test-hooks"))]
    pub(crate) fn base_and_descendant(&self, bucket: u64) -> (u64, u64) {
        (bucket % self.base, bucket / self.base)
    }

    /// The stream bits a stored code knows, read back: the first `era + len` bits of
    /// its side's stream (the first `era` from the bucket, the rest from the code). For
    /// a shared-code scheme, the key's one stream: a side-2 bucket's descendant is the
    /// stream xor `H(R)`, and `R` lies above every bit `H` masks, in the bucket or in
    /// the code.
    #[inline(always)]
    fn known_stream(&self, spot: (u64, u64), code: u32, era: Era) -> (u64, u32, u32) {
        let (base_bucket, descendant) = (spot.0, spot.1 as u32);
        let len = self.len_of(code, era);
        let tail = code & low_bits(len);
        let mut stream = descendant | tail.checked_shl(era).unwrap_or(0);
        // Side 2's descendant bits are masked (see `Pairing::SharedCode`). A mask
        // rather than a branch: a kick search reads buckets of both halves at random.
        let upper = self.pairing == Pairing::SharedCode && base_bucket >= self.base / 2;
        stream ^= self.round_mask(stream) & low_bits(era) & 0u32.wrapping_sub(u32::from(upper));
        (base_bucket, stream, len)
    }

    /// The other place of the entry stored as `code` in `bucket` at `era`: where a kick
    /// moves it, and the code it has there.
    #[cfg(any(test, feature = "test-hooks"))]
    pub(crate) fn partner(&self, bucket: u64, code: u32, era: Era) -> Place {
        let ((base, descendant), code) =
            self.partner_at(self.base_and_descendant(bucket), code, era);
        Place {
            // The descendant is below 2^era, so its stream is itself.
            bucket: self.bucket(base, descendant as u32, era),
            code,
        }
    }

    /// [`partner`](Self::partner) of a bucket given as its base bucket and descendant
    /// (see [`base_and_descendant`](Self::base_and_descendant)), answered the same way:
    /// the partner's base bucket and descendant, and its code.
    #[inline(always)]
    pub(crate) fn partner_at(&self, spot: (u64, u64), code: u32, era: Era) -> ((u64, u64), u32) {
        if era == 0 && self.pairing == Pairing::SharedCode {
            // A table that never grew: no descendant, no mask, and the code is the
            // stream's first block. A kick search asks this of every child, and the
            // general answer took a pre-sized fill 19 more instructions an insert
            // (282.0 against 262.6, callgrind) and 4% more time.
            return ((self.shared_other_base(spot.0, code), 0), code);
        }
        self.partner_of_stream(spot, code, era)
    }

    /// [`partner_at`](Self::partner_at) in general: through the stream the code and the
    /// descendant know.
    #[inline(always)]
    fn partner_of_stream(&self, spot: (u64, u64), code: u32, era: Era) -> ((u64, u64), u32) {
        let (base_bucket, stream, len) = self.known_stream(spot, code, era);
        debug_assert!(era + len >= self.bits, "the first block must be known");
        if self.pairing == Pairing::SharedCode {
            let other_base = self.shared_other_base(base_bucket, stream);
            // Side 2's descendant is the stream xor H(R); side 1's the stream itself.
            let mask = if other_base >= self.base / 2 {
                self.round_mask(stream)
            } else {
                0
            };
            return (
                (other_base, u64::from((stream ^ mask) & low_bits(era))),
                code,
            );
        }
        let (other_base, other_stream) = self.mirror(base_bucket, stream);
        (
            (other_base, u64::from(other_stream & low_bits(era))),
            self.code(other_stream, era, len),
        )
    }

    /// What stored `code` becomes when the table doubles from `era` to `era + 1`: its
    /// next stream bit (its lowest) picks the lower or the upper half, and leaves it.
    #[cfg(any(test, feature = "test-hooks"))]
    pub(crate) fn split(&self, code: u32, era: Era) -> Split {
        if era == 0 {
            return Split::One {
                to_upper: code & 1 != 0,
                code: (code >> 1) | (1 << (self.bits - 1)),
            };
        }
        if code == 1 {
            return Split::Both { code };
        }
        Split::One {
            to_upper: code & 1 != 0,
            code: code >> 1,
        }
    }

    /// `split_at` (the reference model's) as the codes a slot holds after the split,
    /// in the lower half and in the upper (0: none), and whether the code was a void
    /// (a copy in both). For one code; a bucket's split works out its
    /// [`BucketSplit`] once for all of its codes.
    #[cfg(test)]
    pub(crate) fn split_lanes(&self, spot: (u64, u64), code: u32, era: Era) -> (u32, u32, bool) {
        self.bucket_split(spot.0, era).lanes(code)
    }

    /// What splitting any code of a bucket of era `era` whose base bucket is
    /// `base_bucket` takes: the tests and shifts that are the same for all its codes.
    #[inline(always)]
    pub(crate) fn bucket_split(&self, base_bucket: u64, era: Era) -> BucketSplit {
        let a_bits = feistel_address_bits(self.bits);
        // `H(R)` has `a_bits` bits: from era `a_bits` on, its bit for the era is 0.
        let flips =
            self.pairing == Pairing::SharedCode && base_bucket >= self.base / 2 && era < a_bits;
        BucketSplit {
            delimiter: if era == 0 { 1 << (self.bits - 1) } else { 0 },
            // Below `a_bits`, `R` (the stream's bits from `a_bits` to `bits`) lies in the
            // code wholly, below its delimiter (a code of era `d` knows `bits − d` bits
            // or more): found with a shift, where the code's known stream would need its
            // delimiter found.
            r_shift: a_bits.saturating_sub(era),
            r_mask: low_bits(self.bits - a_bits),
            h_shift: (32 - a_bits + era).min(31),
            flip_mask: u32::from(flips),
        }
    }

    /// [`split`](Self::split) of `code` stored in the bucket at `spot`: in a
    /// shared-code scheme a side-2 bucket's next descendant bit is the stream's xor
    /// `H(R)`'s, which the code and its bucket know.
    #[cfg(any(test, feature = "test-hooks"))]
    pub(crate) fn split_at(&self, spot: (u64, u64), code: u32, era: Era) -> Split {
        let split = self.split(code, era);
        let Split::One { .. } = split else {
            return split; // a void goes to both halves
        };
        if self.pairing == Pairing::Feistel || spot.0 < self.base / 2 || code == 0 {
            return split;
        }
        let (_, stream, _) = self.known_stream(spot, code, era);
        let flip = (self.round_mask(stream) >> era) & 1 != 0;
        match split {
            Split::One { to_upper, code } => Split::One {
                to_upper: to_upper ^ flip,
                code,
            },
            both => both,
        }
    }
}

/// [`Scheme::bucket_split`]: a bucket's split, each code of it a few instructions
/// with no branch on the code (a split meets codes of either half at random, and its
/// branch on the outcome cost a grown fill 0.4 mispredictions an insert).
#[derive(Clone, Copy)]
pub(crate) struct BucketSplit {
    /// The delimiter an era-0 code gains as it moves (0 from era 1 on: it has one).
    delimiter: u32,
    r_shift: u32,
    r_mask: u32,
    /// `H(R)`'s bit for this era is bit 0 of `(R · K) >> h_shift` ([`Scheme::round_mask`]).
    h_shift: u32,
    /// 1 in a side-2 bucket of a shared-code scheme, whose descendant bits are
    /// the stream's xor `H(R)`'s; else 0.
    flip_mask: u32,
}

impl BucketSplit {
    /// A split from era 1 on, where a code already has its delimiter and a void (code 1)
    /// can exist.
    #[inline(always)]
    fn is_later(&self) -> bool {
        self.delimiter == 0
    }

    /// The code a slot holding `code` has after the split in the lower half and in
    /// the upper (0: none), and whether `code` was a void (a copy in both). An empty
    /// slot (`code` 0) gives `(0, 0, false)`. `code` is one a table of the era holds
    /// (it knows its stream's first block: see [`bucket_split`](Scheme::bucket_split));
    /// any other goes to one half or both, without a panic. The reference for
    /// [`word`](Self::word), which the engine uses.
    #[cfg(test)]
    pub(crate) fn lanes(&self, code: u32) -> (u32, u32, bool) {
        let r = (code >> self.r_shift) & self.r_mask;
        let flip = (r.wrapping_mul(0x9E37_79B9) >> self.h_shift) & self.flip_mask;
        let up = (code ^ flip) & 1;
        let present = u32::from(code != 0);
        let void = u32::from(self.is_later() & (code == 1));
        // A void (1, from era 1 on, with no delimiter to add) stays 1; an empty slot
        // stays empty.
        let value = ((code >> 1) | (self.delimiter & 0u32.wrapping_sub(present))) | void;
        let lower = present & (void | (up ^ 1));
        let upper = present & (void | up);
        (
            value & 0u32.wrapping_sub(lower),
            value & 0u32.wrapping_sub(upper),
            void != 0,
        )
    }

    /// `lanes` (the tests' reference) of every lane of a table word, lanes of `bits` bits (8
    /// or 16), all at once: the word's codes in the lower half and in the upper, and
    /// the voids among them. A lane a few instructions, where one at a time took 40
    /// (the bucket's codes taken apart and put together again); only a side-2 bucket's
    /// flips take each lane alone (`H` is a multiply).
    #[inline(always)]
    pub(crate) fn word(&self, word: u64, bits: u32) -> (u64, u64, u32) {
        let ones = (1u64 << bits) - 1;
        let lsb = u64::MAX / ones;
        let high = lsb << (bits - 1);
        let low = !high;
        // The top bit of each lane of `x` that is not 0 (no carry leaves a lane).
        let nonzero = |x: u64| (((x & low).wrapping_add(low)) | x) & high;
        let present = nonzero(word) >> (bits - 1);
        let void = (!nonzero(word ^ lsb) >> (bits - 1))
            & lsb
            & 0u64.wrapping_sub(u64::from(self.is_later()));
        let mut flips = 0;
        if self.flip_mask != 0 {
            for lane in (0..64).step_by(bits as usize) {
                let r = (word >> (lane + self.r_shift)) as u32 & self.r_mask;
                flips |= u64::from((r.wrapping_mul(0x9E37_79B9) >> self.h_shift) & 1) << lane;
            }
        }
        let up = (word ^ flips) & lsb;
        let delimiters = (present << (bits - 1)) & 0u64.wrapping_sub(u64::from(!self.is_later()));
        let value = ((word >> 1) & low) | delimiters | void;
        let lower = (present & (void | (up ^ lsb))).wrapping_mul(ones);
        let upper = (present & (void | up)).wrapping_mul(ones);
        // The voids summed into the top lane (no `popcnt` in a baseline x86-64 build).
        let voids = void.wrapping_mul(lsb) >> (64 - bits);
        (value & lower, value & upper, voids as u32)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn schemes() -> Vec<Scheme> {
        let mut all = Vec::new();
        for bits in [8, 16] {
            for base in [2, 6, 28, 264, 1000, 65_538] {
                all.push(Scheme::new(base, bits));
            }
        }
        all
    }

    /// A code a table of era `era` holds: any non-zero `bits`-bit value at era 0; from
    /// era 1 a void or a delimited code that knows its stream's first block (`bits −
    /// era` bits or more under its delimiter); 0 is an empty slot.
    fn code_of_era(rng: &mut fastrand::Rng, bits: u32, era: Era) -> u32 {
        match rng.u8(..8) {
            0 => 0,
            1 if era > 0 => 1,
            _ if era == 0 => rng.u32(1..1 << bits),
            _ => rng.u32((1 << (bits - era)).max(2)..1 << bits),
        }
    }

    /// Every scheme the split tests try, at each era it splits: both widths, several
    /// base sizes, both pairings.
    fn each_splitting_era(mut check: impl FnMut(Scheme, Era)) {
        for bits in [8, 16] {
            for base in [2, 6, 28, 264, 1000, 65_538] {
                for pairing in [Pairing::SharedCode, Pairing::Feistel] {
                    let scheme = Scheme::with_pairing(base, bits, pairing);
                    for era in 0..scheme.max_era().min(bits - 1) {
                        check(scheme, era);
                    }
                }
            }
        }
    }

    #[test]
    fn a_split_word_holds_what_its_lanes_split_one_by_one_hold() {
        let mut rng = fastrand::Rng::with_seed(11);
        each_splitting_era(|scheme, era| {
            let bits = scheme.bits;
            for _ in 0..100 {
                let split = scheme.bucket_split(rng.u64(..scheme.base), era);
                let lanes: Vec<u32> = (0..64 / bits)
                    .map(|_| code_of_era(&mut rng, bits, era))
                    .collect();
                let word = lanes.iter().enumerate().fold(0, |word, (k, &code)| {
                    word | u64::from(code) << (k as u32 * bits)
                });
                let mut expected = (0, 0, 0);
                for (k, &code) in lanes.iter().enumerate() {
                    let (lower, upper, void) = split.lanes(code);
                    let at = k as u32 * bits;
                    expected.0 |= u64::from(lower) << at;
                    expected.1 |= u64::from(upper) << at;
                    expected.2 += u32::from(void);
                }
                assert_eq!(
                    split.word(word, bits),
                    expected,
                    "{scheme:?}, era {era}, word {word:#x}"
                );
            }
        });
    }

    #[test]
    fn split_lanes_agree_with_split_at_for_every_code_of_both_halves() {
        let mut rng = fastrand::Rng::with_seed(7);
        each_splitting_era(|scheme, era| {
            let bits = scheme.bits;
            for _ in 0..400 {
                let spot = (rng.u64(..scheme.base), rng.u64(..1 << era));
                let code = code_of_era(&mut rng, bits, era);
                let expected = match (code, scheme.split_at(spot, code, era)) {
                    (0, _) => (0, 0, false),
                    (
                        _,
                        Split::One {
                            to_upper: false,
                            code,
                        },
                    ) => (code, 0, false),
                    (
                        _,
                        Split::One {
                            to_upper: true,
                            code,
                        },
                    ) => (0, code, false),
                    (_, Split::Both { code }) => (code, code, true),
                };
                assert_eq!(
                    scheme.split_lanes(spot, code, era),
                    expected,
                    "{scheme:?}, era {era}, spot {spot:?}, code {code:#x}"
                );
            }
        });
    }

    #[test]
    fn mirror_is_an_involution_between_the_halves() {
        let mut rng = fastrand::Rng::with_seed(1);
        for scheme in schemes() {
            for _ in 0..5_000 {
                let hash = rng.u64(..);
                let Key {
                    base_bucket: first,
                    stream,
                } = scheme.key(hash);
                let (second, other) = scheme.mirror(first, stream);
                let half = scheme.buckets(0) / 2;
                assert!(
                    first < half && (half..2 * half).contains(&second),
                    "sides keep to halves"
                );
                assert_ne!(first, second);
                assert_ne!(
                    other & scheme.slot_mask(),
                    0,
                    "a zero block would read empty"
                );
                assert_eq!(scheme.mirror(second, other), (first, stream));
            }
        }
    }

    #[test]
    fn a_fresh_code_kicks_to_the_other_place_and_back() {
        let mut rng = fastrand::Rng::with_seed(2);
        for scheme in schemes() {
            for era in 0..=scheme.max_era().min(12) {
                for _ in 0..500 {
                    let [one, two] = scheme.locate(rng.u64(..), era);
                    assert!(one.bucket < scheme.buckets(era) && two.bucket < scheme.buckets(era));
                    assert_ne!(one.bucket, two.bucket);
                    assert_eq!(scheme.partner(one.bucket, one.code, era), two);
                    assert_eq!(scheme.partner(two.bucket, two.code, era), one);
                    assert!(scheme.matches(one.code, one.code, era));
                }
            }
        }
    }

    #[test]
    fn the_first_eras_partner_is_the_general_one_for_every_code() {
        for scheme in schemes() {
            let scheme = Scheme::with_pairing(scheme.base, scheme.bits, Pairing::SharedCode);
            for base in [0, 1, scheme.base / 2 - 1, scheme.base / 2, scheme.base - 1] {
                for code in 1..=scheme.slot_mask() {
                    assert_eq!(
                        scheme.partner_at((base, 0), code, 0),
                        scheme.partner_of_stream((base, 0), code, 0),
                        "base bucket {base}, code {code:#x}"
                    );
                }
            }
        }
    }

    #[test]
    fn a_split_code_lands_where_a_fresh_insert_would_and_still_matches() {
        let mut rng = fastrand::Rng::with_seed(3);
        for scheme in schemes() {
            for _ in 0..300 {
                let hash = rng.u64(..);
                let mut stored = scheme.locate(hash, 0);
                for era in 0..scheme.max_era().min(14) {
                    for place in &mut stored {
                        let buckets = scheme.buckets(era);
                        *place = match scheme.split(place.code, era) {
                            Split::One { to_upper, code } => Place {
                                bucket: place.bucket + if to_upper { buckets } else { 0 },
                                code,
                            },
                            // A void: the copy that stays is the right one for any key
                            // whose next bit is 0; check the key's own half below.
                            Split::Both { code } => Place {
                                bucket: place.bucket,
                                code,
                            },
                        };
                    }
                    let fresh = scheme.locate(hash, era + 1);
                    for (old, new) in stored.iter_mut().zip(fresh) {
                        if scheme.len_of(old.code, era + 1) == 0 {
                            // The void's copy in the key's own half.
                            old.bucket = new.bucket;
                        }
                        assert_eq!(old.bucket, new.bucket, "era {}", era + 1);
                        assert!(scheme.matches(old.code, new.code, era + 1));
                        // The aged code still kicks to the key's other place.
                        let other = scheme.partner(old.bucket, old.code, era + 1);
                        assert!(other.bucket == fresh[0].bucket || other.bucket == fresh[1].bucket);
                    }
                }
            }
        }
    }

    #[test]
    fn the_last_era_stays_within_2_to_the_32_buckets() {
        for base in [2, 6, 268, 4_194_306, 1 << 31, (1 << 32) - 2] {
            for bits in [8, 16] {
                let scheme = Scheme::new(base, bits);
                let era = scheme.max_era();
                assert!(scheme.buckets(era) <= 1 << 32, "base {base}: era {era}");
                if era < 33 - bits {
                    assert!(
                        scheme.buckets(era + 1) > 1 << 32,
                        "base {base}: era {era} stops early"
                    );
                }
            }
        }
    }

    #[test]
    fn codes_of_other_keys_match_at_their_length_only() {
        let scheme = Scheme::new(1000, 16);
        let mut rng = fastrand::Rng::with_seed(4);
        let era = 5;
        let (mut hits, trials) = (0u32, 200_000);
        for _ in 0..trials {
            let stored = scheme.locate(rng.u64(..), era)[0].code;
            let query = scheme.locate(rng.u64(..), era)[0].code;
            hits += u32::from(scheme.matches(stored, query, era));
        }
        // 15 bits: about 6 matches in 200,000.
        assert!(hits < 30, "{hits} matches of unrelated 15-bit codes");
    }
}
