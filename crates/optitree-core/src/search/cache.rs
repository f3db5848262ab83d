//! A memo table that knows how many bytes it holds, so a solver can honour `memory_limit`
//! by refusing to grow instead of being killed by the operating system.
//!
//! Invariant: `bytes()` is the sum over stored entries of the size the caller declared at insert
//! time plus a fixed per-entry overhead; an insert that would push it past the capacity is refused
//! and leaves the table unchanged.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hash, Hasher};

/// A fast non-cryptographic hasher (multiply-rotate over 64-bit words). Keys are solver-made
/// (bitsets, integer tuples), never attacker-controlled, so flooding resistance is not needed.
#[derive(Default, Clone, Copy)]
pub struct FastHasher(u64);

const SEED: u64 = 0x51_7c_c1_b7_27_22_0a_95;

impl Hasher for FastHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut buf = [0u8; 8];
            buf[..chunk.len()].copy_from_slice(chunk);
            self.write_u64(u64::from_le_bytes(buf));
        }
    }
    fn write_u64(&mut self, w: u64) {
        self.0 = (self.0.rotate_left(5) ^ w).wrapping_mul(SEED);
    }
    fn write_usize(&mut self, w: usize) {
        self.write_u64(w as u64);
    }
    fn write_u32(&mut self, w: u32) {
        self.write_u64(u64::from(w));
    }
}

/// A `HashMap` using [`FastHasher`].
pub type FastMap<K, V> = HashMap<K, V, BuildHasherDefault<FastHasher>>;

/// The insert was refused because the cache is at capacity.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CacheFull;

/// A memo table with byte accounting and an optional capacity.
#[derive(Debug, Clone)]
pub struct BoundedCache<K, V> {
    map: FastMap<K, (V, usize)>,
    bytes: usize,
    peak_bytes: usize,
    capacity: Option<usize>,
}

/// Bytes counted per entry on top of what the caller declares (hash table slot and bookkeeping).
pub const ENTRY_OVERHEAD: usize = 32;

impl<K: Hash + Eq, V> BoundedCache<K, V> {
    /// An empty cache that refuses to grow past `capacity` bytes (None: unbounded).
    pub fn new(capacity: Option<usize>) -> Self {
        BoundedCache {
            map: FastMap::default(),
            bytes: 0,
            peak_bytes: 0,
            capacity,
        }
    }

    /// The stored value for `key`.
    pub fn get(&self, key: &K) -> Option<&V> {
        self.map.get(key).map(|(v, _)| v)
    }

    /// Mutable access to the stored value for `key` (its declared size does not change).
    pub fn get_mut(&mut self, key: &K) -> Option<&mut V> {
        self.map.get_mut(key).map(|(v, _)| v)
    }

    /// Stores `value` under `key`, declaring `size` heap bytes for it (key and value together,
    /// beyond their inline size). Replacing an entry re-counts its size.
    pub fn insert(&mut self, key: K, value: V, size: usize) -> Result<(), CacheFull> {
        let cost = size + ENTRY_OVERHEAD + std::mem::size_of::<(K, V)>();
        let freed = self.map.get(&key).map_or(0, |(_, s)| *s);
        let after = self.bytes - freed + cost;
        if self.capacity.is_some_and(|c| after > c) {
            return Err(CacheFull);
        }
        self.map.insert(key, (value, cost));
        self.bytes = after;
        self.peak_bytes = self.peak_bytes.max(after);
        Ok(())
    }

    /// Removes and returns the value under `key`.
    pub fn remove(&mut self, key: &K) -> Option<V> {
        self.map.remove(key).map(|(v, s)| {
            self.bytes -= s;
            v
        })
    }

    /// Number of entries.
    pub fn len(&self) -> usize {
        self.map.len()
    }
    /// True when empty.
    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }
    /// Bytes currently accounted.
    pub fn bytes(&self) -> usize {
        self.bytes
    }
    /// Largest number of bytes ever accounted.
    pub fn peak_bytes(&self) -> usize {
        self.peak_bytes
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn refuses_inserts_past_capacity_and_stays_unchanged() {
        let per_entry = ENTRY_OVERHEAD + std::mem::size_of::<(u32, u32)>();
        let mut c: BoundedCache<u32, u32> = BoundedCache::new(Some(2 * per_entry));
        assert_eq!(c.insert(1, 10, 0), Ok(()));
        assert_eq!(c.insert(2, 20, 0), Ok(()));
        assert_eq!(c.insert(3, 30, 0), Err(CacheFull));
        assert_eq!((c.len(), c.bytes(), c.get(&3)), (2, 2 * per_entry, None));
        assert_eq!(c.insert(2, 21, 0), Ok(()), "replacing does not grow");
        assert_eq!(c.remove(&1), Some(10));
        assert_eq!(c.bytes(), per_entry);
        assert_eq!(c.peak_bytes(), 2 * per_entry);
    }

    proptest! {
        #[test]
        fn behaves_like_a_hashmap(ops in prop::collection::vec((0u8..3, 0u16..50, 0u32..100), 0..200)) {
            let mut c: BoundedCache<u16, u32> = BoundedCache::new(None);
            let mut m = std::collections::HashMap::new();
            for (op, k, v) in ops {
                match op {
                    0 => { prop_assert_eq!(c.insert(k, v, v as usize), Ok(())); m.insert(k, v); }
                    1 => { prop_assert_eq!(c.remove(&k), m.remove(&k)); }
                    _ => { prop_assert_eq!(c.get(&k), m.get(&k)); }
                }
            }
            prop_assert_eq!(c.len(), m.len());
            let inline = ENTRY_OVERHEAD + std::mem::size_of::<(u16, u32)>();
            prop_assert_eq!(c.bytes(), m.values().map(|&v| v as usize + inline).sum::<usize>());
        }
    }
}
