//! A compact multimap from 64-bit hashes to `u32` ids, for caches that check their hits
//! themselves (the caller compares the id's subproblem with the one it looks for).
//!
//! One 8-byte slot per entry, holding the hash's upper half as a tag and the id; open
//! addressing with linear probing from a home slot scaled from the tag (any table length works,
//! so the table grows by half, not double); entries are never removed. A large table is split
//! into segments by the tag's top bits, each growing on its own, so that a growth's peak (old
//! and new arrays) is a segment's, not the table's. Against a
//! `HashMap<u64, u32>` (16-byte entries plus a control byte each, doubling) this is less than
//! half the memory, also at the peak of a growth, and a probe reads one cache line where the map
//! reads two: in a search whose cache holds millions of subproblems, both show.

/// An unused slot (`u32::MAX` is never stored as an id).
const EMPTY: u64 = u64::MAX;

/// Slots from which the table is split into [`SEGMENTS`] segments (32 MiB): a segment grows
/// alone, so a growth needs its old and new arrays at once for one segment, not for the whole
/// table (at 768 MiB, MAPTree's heart-cleveland search stopped on the 123 MB of a growth due).
/// Smaller tables stay whole, and segments stay few, so that each is large enough for huge
/// pages: 16 segments made Branches' lymph-f (a 7.6M-node memo) 5% slower, 4 do not.
const SPLIT_SLOTS: usize = 1 << 22;

/// Segments of a split table, chosen by the tag's top bits.
const SEGMENT_BITS: u32 = 2;
const SEGMENTS: usize = 1 << SEGMENT_BITS;

/// Hashes to ids, several ids per hash allowed.
#[derive(Debug, Clone)]
pub struct TaggedIds {
    /// One segment until the table reaches [`SPLIT_SLOTS`], then [`SEGMENTS`].
    segments: Vec<Vec<u64>>,
    /// Ids per segment.
    lens: Vec<usize>,
    /// Tag bits that choose the segment (0 while whole).
    bits: u32,
    /// [`SPLIT_SLOTS`] (tests split small tables).
    split_slots: usize,
}

impl Default for TaggedIds {
    fn default() -> Self {
        TaggedIds {
            segments: vec![vec![EMPTY; 16]],
            lens: vec![0],
            bits: 0,
            split_slots: SPLIT_SLOTS,
        }
    }
}

impl TaggedIds {
    /// Number of ids stored.
    pub fn len(&self) -> usize {
        self.lens.iter().sum()
    }

    /// Whether no id is stored.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Bytes of the slot arrays.
    pub fn bytes(&self) -> usize {
        self.slots() * std::mem::size_of::<u64>()
    }

    fn slots(&self) -> usize {
        self.segments.iter().map(Vec::len).sum()
    }

    /// At least the most bytes the table holds at any moment while `inserts` more ids are added:
    /// its arrays, plus, for every segment those inserts could make grow (all of them might land
    /// in it), the new arrays of its growths (its old array is already counted). A search that
    /// checks its memory between steps of at most `inserts` inserts stays within its limit
    /// counting this, without reserving room for a growth that is not due yet (counting the next
    /// growth's arrays always was up to a fifth of a MAPTree search's accounted memory). The split of a whole table is
    /// counted as its growth, which holds when tags spread evenly over the segments, as hashes'
    /// upper halves do.
    pub fn peak_bytes_within(&self, inserts: usize) -> usize {
        let mut peak = self.slots();
        for (slots, &len) in self.segments.iter().zip(&self.lens) {
            // A segment's own peak: its old and new arrays of its last growth (at most one
            // growth is due in practice; several are counted as if they held together).
            let (target, mut size) = (len + inserts, slots.len());
            let mut extra = 0;
            while Self::crowded(target, size) {
                let grown = Self::grown(size);
                extra = extra.max(size + grown - slots.len());
                size = grown;
            }
            peak += extra;
        }
        peak * std::mem::size_of::<u64>()
    }

    /// Whether `entries` ids in `slots` slots are too many (probes grow long past 3/4 full).
    fn crowded(entries: usize, slots: usize) -> bool {
        4 * entries > 3 * slots
    }

    fn grown(slots: usize) -> usize {
        slots + slots / 2
    }

    fn tag(hash: u64) -> u32 {
        (hash >> 32) as u32
    }

    /// The segment of `tag`, and the tag's bits below the segment's (which place it within).
    #[inline]
    fn locate(&self, tag: u32) -> (usize, u32) {
        let segment = (u64::from(tag) >> (32 - self.bits)) as usize;
        (segment, (u64::from(tag) << self.bits) as u32)
    }

    /// Adds `id` under `hash` (ids are not checked for repeats). `id` must not be `u32::MAX`.
    pub fn insert(&mut self, hash: u64, id: u32) {
        debug_assert_ne!(id, u32::MAX);
        self.put(u64::from(Self::tag(hash)) << 32 | u64::from(id));
    }

    /// Places a slot's value, growing its segment first when it would be crowded.
    fn put(&mut self, slot: u64) {
        let tag = (slot >> 32) as u32;
        let (mut segment, mut within) = self.locate(tag);
        // Linear probing stays short below three quarters full.
        if Self::crowded(self.lens[segment] + 1, self.segments[segment].len()) {
            self.grow(segment);
            (segment, within) = self.locate(tag);
        }
        Self::place(&mut self.segments[segment], within, slot);
        self.lens[segment] += 1;
    }

    /// The first slot to probe for `within` (the tag's bits below the segment's): scaled to the
    /// segment's length.
    fn home(within: u32, len: usize) -> usize {
        ((u64::from(within) * len as u64) >> 32) as usize
    }

    /// The slot probed after `at` (wrapping around).
    fn next(at: usize, len: usize) -> usize {
        if at + 1 == len {
            0
        } else {
            at + 1
        }
    }

    fn place(slots: &mut [u64], within: u32, slot: u64) {
        let mut at = Self::home(within, slots.len());
        while slots[at] != EMPTY {
            at = Self::next(at, slots.len());
        }
        slots[at] = slot;
    }

    /// A new array of `len` slots, advised huge pages before it is filled (pages written before
    /// the advice stay small).
    fn array(len: usize) -> Vec<u64> {
        let mut slots = Vec::with_capacity(len);
        super::huge_pages::advise(&slots);
        slots.resize(len, EMPTY);
        slots
    }

    /// Grows a segment by half; a whole table that reaches [`SPLIT_SLOTS`] is split instead.
    fn grow(&mut self, segment: usize) {
        let grown = Self::grown(self.segments[segment].len());
        let old = std::mem::take(&mut self.segments[segment]);
        if self.bits == 0 && grown >= self.split_slots {
            self.bits = SEGMENT_BITS;
            let each = (grown / SEGMENTS).max(16);
            self.segments = (0..SEGMENTS).map(|_| Self::array(each)).collect();
            self.lens = vec![0; SEGMENTS];
        } else {
            self.segments[segment] = Self::array(grown);
            self.lens[segment] = 0;
        }
        // A split may crowd a segment (tags are not spread evenly), which then grows too.
        for &slot in old.iter().filter(|&&s| s != EMPTY) {
            self.put(slot);
        }
    }

    /// Starts loading the slot where a search for `hash` begins (see [`super::prefetch`]).
    pub fn prefetch(&self, hash: u64) {
        let (segment, within) = self.locate(Self::tag(hash));
        let slots = &self.segments[segment];
        super::prefetch(&slots[Self::home(within, slots.len())]);
    }

    /// The ids stored under hashes with the same upper half as `hash` (all ids stored under
    /// `hash` among them, in no particular order).
    pub fn candidates(&self, hash: u64) -> impl Iterator<Item = u32> + '_ {
        let tag = Self::tag(hash);
        let (segment, within) = self.locate(tag);
        let slots = &self.segments[segment];
        let len = slots.len();
        let mut at = Self::home(within, len);
        std::iter::from_fn(move || loop {
            let slot = slots[at];
            if slot == EMPTY {
                return None;
            }
            at = Self::next(at, len);
            if (slot >> 32) as u32 == tag {
                return Some(slot as u32);
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::search::SplitMix;

    /// The peak within some inserts is the array alone until a growth is due, then the old and
    /// new arrays of the growth, and it matches what the inserts really allocate.
    #[test]
    fn peak_within_some_inserts_counts_only_the_growths_they_cause() {
        let mut table = TaggedIds::default();
        assert_eq!(table.peak_bytes_within(0), 16 * 8);
        assert_eq!(table.peak_bytes_within(12), 16 * 8); // 12 of 16 slots: not crowded
        assert_eq!(table.peak_bytes_within(13), (16 + 24) * 8);
        assert_eq!(table.peak_bytes_within(19), (24 + 36) * 8); // two growths: the later peak
        for id in 0..13u32 {
            let before = table.peak_bytes_within(1);
            table.insert(u64::from(id) << 40, id);
            assert!(
                table.bytes() <= before,
                "insert {id} allocated more than announced"
            );
        }
        assert_eq!(table.bytes(), 24 * 8);
        assert_eq!(table.peak_bytes_within(6), (24 + 36) * 8);
    }

    /// Against a plain map from hashes to id lists, through several growths, with hashes that
    /// share their upper half (same tag) and hashes stored more than once; whole, and split
    /// early into segments.
    #[test]
    fn finds_every_id_stored_under_a_hash() {
        for split_slots in [SPLIT_SLOTS, 1000] {
            finds_every_id_with(TaggedIds {
                split_slots,
                ..TaggedIds::default()
            });
        }
    }

    fn finds_every_id_with(mut table: TaggedIds) {
        let mut rng = SplitMix::new(3);
        let mut plain: std::collections::HashMap<u64, Vec<u32>> = Default::default();
        let mut hashes = Vec::new();
        for id in 0..20_000u32 {
            let hash = match rng.below(4) {
                0 if !hashes.is_empty() => hashes[rng.below(hashes.len())], // stored again
                1 => (rng.next_u64() & 0xFFFF_FFFF) | 0x1234_5678 << 32,    // a shared tag
                _ => rng.next_u64(),
            };
            hashes.push(hash);
            table.insert(hash, id);
            plain.entry(hash).or_default().push(id);
        }
        assert_eq!(table.len(), 20_000);
        for (hash, ids) in &plain {
            let found: Vec<u32> = table.candidates(*hash).collect();
            for id in ids {
                assert!(found.contains(id), "{id} missing under {hash:x}");
            }
            // Every candidate has the same tag.
            let tag = (hash >> 32) as u32;
            assert!(found
                .iter()
                .all(|&c| (hashes[c as usize] >> 32) as u32 == tag));
        }
        assert_eq!(TaggedIds::default().candidates(7).count(), 0);
        assert!(4 * table.len() <= 3 * table.bytes() / 8);
        assert_eq!(table.lens.iter().sum::<usize>(), table.len());
        let split = table.split_slots < SPLIT_SLOTS;
        assert_eq!(table.segments.len(), if split { SEGMENTS } else { 1 });
    }

    /// Once split, a growth's announced peak is one segment's old and new arrays on top of the
    /// others: never less than an insert really holds (old and new arrays together), also when
    /// asked for a batch of inserts, and far below a whole table's growth.
    #[test]
    fn a_split_table_grows_one_segment_at_a_time() {
        let mut rng = SplitMix::new(5);
        let mut table = TaggedIds {
            split_slots: 1 << 12,
            ..TaggedIds::default()
        };
        let (mut worst_extra, mut growths) = (0, 0);
        let mut id = 0u32;
        while id < 200_000 {
            let batch = 1 + rng.below(300);
            let announced = table.peak_bytes_within(batch);
            for _ in 0..batch {
                let (prior, one) = (table.bytes(), table.peak_bytes_within(1));
                worst_extra = worst_extra.max(one - prior);
                table.insert(rng.next_u64(), id);
                id += 1;
                let after = table.bytes();
                // A growth by half held the old array (twice the increase) with the new one;
                // the split of the whole table held the old array with all the new segments.
                let held = match prior >= table.split_slots * 8 {
                    true => after + 2 * (after - prior),
                    false => prior + after,
                };
                let held = if after > prior { held } else { after };
                growths += usize::from(after > prior);
                assert!(held <= one, "insert {id}: held {held} > announced {one}");
                assert!(
                    held <= announced,
                    "insert {id}: held {held} > batch's {announced}"
                );
            }
        }
        assert_eq!(table.segments.len(), SEGMENTS);
        assert!(growths > 2 * SEGMENTS, "only {growths} growths");
        // A whole table's growth would hold 1.5 times its array on top of it; a segment's, about
        // 1.5 times a quarter.
        assert!(
            worst_extra * 2 < table.bytes(),
            "extra {worst_extra} of {}",
            table.bytes()
        );
    }
}
