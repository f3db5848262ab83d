//! A compact multimap from 64-bit hashes to `u32` ids, for caches that check their hits
//! themselves (the caller compares the id's subproblem with the one it looks for).
//!
//! One 8-byte slot per entry, holding the hash's upper half as a tag and the id; open
//! addressing with linear probing from a home slot scaled from the tag (any table length works,
//! so the table grows by half, not double); entries are never removed. Against a
//! `HashMap<u64, u32>` (16-byte entries plus a control byte each, doubling) this is less than
//! half the memory, also at the peak of a growth, and a probe reads one cache line where the map
//! reads two: in a search whose cache holds millions of subproblems, both show.

/// An unused slot (`u32::MAX` is never stored as an id).
const EMPTY: u64 = u64::MAX;

/// Hashes to ids, several ids per hash allowed.
#[derive(Debug, Clone)]
pub struct TaggedIds {
    slots: Vec<u64>,
    len: usize,
}

impl Default for TaggedIds {
    fn default() -> Self {
        TaggedIds {
            slots: vec![EMPTY; 16],
            len: 0,
        }
    }
}

impl TaggedIds {
    /// Number of ids stored.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether no id is stored.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Bytes of the slot array.
    pub fn bytes(&self) -> usize {
        self.slots.len() * std::mem::size_of::<u64>()
    }

    /// The most bytes the table holds at any moment while `inserts` more ids are added: its
    /// array, or, when those inserts make it grow, the old and new arrays of the largest growth
    /// together. A search that checks its memory between steps of at most `inserts` inserts
    /// stays within its limit counting this, without reserving room for a growth that is not
    /// due yet (counting the next growth's arrays always was up to a fifth of a MAPTree search's
    /// accounted memory).
    pub fn peak_bytes_within(&self, inserts: usize) -> usize {
        let (target, mut len) = (self.len + inserts, self.slots.len());
        let mut peak = len;
        while Self::crowded(target, len) {
            let grown = Self::grown(len);
            peak = peak.max(len + grown);
            len = grown;
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

    /// Adds `id` under `hash` (ids are not checked for repeats). `id` must not be `u32::MAX`.
    pub fn insert(&mut self, hash: u64, id: u32) {
        debug_assert_ne!(id, u32::MAX);
        // Linear probing stays short below three quarters full.
        if Self::crowded(self.len + 1, self.slots.len()) {
            self.grow();
        }
        Self::place(&mut self.slots, Self::tag(hash), id);
        self.len += 1;
    }

    /// The first slot to probe for `tag`: the tag scaled to the table's length.
    fn home(tag: u32, len: usize) -> usize {
        ((u64::from(tag) * len as u64) >> 32) as usize
    }

    /// The slot probed after `at` (wrapping around).
    fn next(at: usize, len: usize) -> usize {
        if at + 1 == len {
            0
        } else {
            at + 1
        }
    }

    fn place(slots: &mut [u64], tag: u32, id: u32) {
        let mut at = Self::home(tag, slots.len());
        while slots[at] != EMPTY {
            at = Self::next(at, slots.len());
        }
        slots[at] = u64::from(tag) << 32 | u64::from(id);
    }

    fn grow(&mut self) {
        // Advised before it is filled: pages written before the advice stay small.
        let grown = Self::grown(self.slots.len());
        let mut slots = Vec::with_capacity(grown);
        super::huge_pages::advise(&slots);
        slots.resize(grown, EMPTY);
        for &slot in self.slots.iter().filter(|&&s| s != EMPTY) {
            Self::place(&mut slots, (slot >> 32) as u32, slot as u32);
        }
        self.slots = slots;
    }

    /// Starts loading the slot where a search for `hash` begins (see [`super::prefetch`]).
    pub fn prefetch(&self, hash: u64) {
        super::prefetch(&self.slots[Self::home(Self::tag(hash), self.slots.len())]);
    }

    /// The ids stored under hashes with the same upper half as `hash` (all ids stored under
    /// `hash` among them, in no particular order).
    pub fn candidates(&self, hash: u64) -> impl Iterator<Item = u32> + '_ {
        let tag = Self::tag(hash);
        let len = self.slots.len();
        let mut at = Self::home(tag, len);
        std::iter::from_fn(move || loop {
            let slot = self.slots[at];
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
    /// share their upper half (same tag) and hashes stored more than once.
    #[test]
    fn finds_every_id_stored_under_a_hash() {
        let mut rng = SplitMix::new(3);
        let mut table = TaggedIds::default();
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
    }
}
