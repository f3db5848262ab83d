//! Fixed-length sets of row indices stored as 64-bit words.
//!
//! Invariant: bits at positions `>= len` in the last word are always zero, so that word-wise
//! equality, hashing and popcounts need no masking.

use std::fmt;

const WORD_BITS: usize = 64;

/// A set of row indices in `0..len`.
#[derive(PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Bitset {
    words: Vec<u64>,
    len: usize,
}

/// Written out so that `clone_from` reuses the target's buffer: searches copy row sets into
/// scratch sets constantly, and a fresh allocation for each copy fragments the heap.
impl Clone for Bitset {
    fn clone(&self) -> Self {
        Bitset {
            words: self.words.clone(),
            len: self.len,
        }
    }

    fn clone_from(&mut self, source: &Self) {
        self.words.clone_from(&source.words);
        self.len = source.len;
    }
}

/// The row indices of the set bits of word `wi`, lowest first.
fn word_members(wi: usize, word: u64) -> impl Iterator<Item = usize> {
    let mut rest = word;
    std::iter::from_fn(move || {
        if rest == 0 {
            return None;
        }
        let bit = rest.trailing_zeros() as usize;
        rest &= rest - 1;
        Some(wi * WORD_BITS + bit)
    })
}

fn n_words(len: usize) -> usize {
    len.div_ceil(WORD_BITS)
}

impl Bitset {
    /// The empty set over `len` rows.
    pub fn empty(len: usize) -> Self {
        Bitset {
            words: vec![0; n_words(len)],
            len,
        }
    }

    /// The set of all `len` rows.
    pub fn full(len: usize) -> Self {
        let mut b = Bitset {
            words: vec![u64::MAX; n_words(len)],
            len,
        };
        b.clear_tail();
        b
    }

    /// The set holding the given indices; indices `>= len` are ignored by contract of the caller
    /// (debug builds assert).
    pub fn from_indices(len: usize, indices: impl IntoIterator<Item = usize>) -> Self {
        let mut b = Bitset::empty(len);
        for i in indices {
            b.insert(i);
        }
        b
    }

    /// The sets of rows holding each of the values `0..n_values` of `column` (every value must
    /// be below `n_values`; debug builds assert). Built 64 rows at a time in a word per value,
    /// which is several times faster than inserting row by row.
    pub fn partition<C: Copy + Into<u32>>(column: &[C], n_values: usize) -> Vec<Bitset> {
        let len = column.len();
        let mut sets = vec![Bitset::empty(len); n_values];
        if n_values > 64 {
            for (r, &c) in column.iter().enumerate() {
                sets[c.into() as usize].insert(r);
            }
            return sets;
        }
        // Four accumulators, rows taking turns: consecutive rows often share a value, and
        // with one accumulator each update would wait for the previous one's store.
        let mut block = [[0u64; 64]; 4];
        for (wi, chunk) in column.chunks(WORD_BITS).enumerate() {
            for (i, &c) in chunk.iter().enumerate() {
                let c: u32 = c.into();
                debug_assert!((c as usize) < n_values);
                block[i & 3][c as usize & 63] |= 1u64 << i;
            }
            for (v, set) in sets.iter_mut().enumerate() {
                set.words[wi] = block
                    .iter_mut()
                    .fold(0, |w, b| w | std::mem::take(&mut b[v]));
            }
        }
        sets
    }

    /// [`Bitset::partition`] of a column of 0/1 bytes (every binarised threshold): eight codes
    /// go into eight bits by one multiplication, and the `= 0` set is the complement of the
    /// `= 1` set within the rows.
    pub fn partition_binary_bytes(column: &[u8]) -> Vec<Bitset> {
        // Byte i of `x` (0 or 1) times this lands at bit 56 + i, with no carries.
        const GATHER: u64 = 0x0102_0408_1020_4080;
        let len = column.len();
        let (mut zeros, mut ones) = (Bitset::empty(len), Bitset::empty(len));
        for (wi, chunk) in column.chunks(WORD_BITS).enumerate() {
            let mut bytes = chunk.chunks_exact(8);
            let mut word = 0u64;
            for (k, eight) in (&mut bytes).enumerate() {
                let mut x = [0u8; 8];
                x.copy_from_slice(eight);
                let x = u64::from_le_bytes(x) & 0x0101_0101_0101_0101;
                word |= (x.wrapping_mul(GATHER) >> 56) << (8 * k);
            }
            let done = chunk.len() - bytes.remainder().len();
            for (i, &c) in bytes.remainder().iter().enumerate() {
                word |= u64::from(c & 1) << (done + i);
            }
            debug_assert!(chunk.iter().all(|&c| c < 2));
            ones.words[wi] = word;
            zeros.words[wi] = !word & (u64::MAX >> (WORD_BITS - chunk.len()));
        }
        vec![zeros, ones]
    }

    /// Number of rows the set ranges over (not the number of members).
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when the set ranges over zero rows.
    pub fn is_universe_empty(&self) -> bool {
        self.len == 0
    }

    /// The raw words (read-only), for hashing and fast custom kernels.
    pub fn words(&self) -> &[u64] {
        &self.words
    }

    fn clear_tail(&mut self) {
        let rem = self.len % WORD_BITS;
        if rem != 0 {
            if let Some(last) = self.words.last_mut() {
                *last &= (1u64 << rem) - 1;
            }
        }
    }

    /// Adds row `i`.
    pub fn insert(&mut self, i: usize) {
        debug_assert!(i < self.len, "row {i} outside 0..{}", self.len);
        self.words[i / WORD_BITS] |= 1u64 << (i % WORD_BITS);
    }

    /// Removes row `i`.
    pub fn remove(&mut self, i: usize) {
        debug_assert!(i < self.len);
        self.words[i / WORD_BITS] &= !(1u64 << (i % WORD_BITS));
    }

    /// Whether row `i` is a member; rows outside the universe are not.
    pub fn contains(&self, i: usize) -> bool {
        i < self.len && self.words[i / WORD_BITS] & (1u64 << (i % WORD_BITS)) != 0
    }

    /// Number of members.
    pub fn count(&self) -> u64 {
        self.words.iter().map(|w| u64::from(w.count_ones())).sum()
    }

    /// True when the set has no member.
    pub fn is_empty(&self) -> bool {
        self.words.iter().all(|&w| w == 0)
    }

    /// `|self ∩ other|` without allocating.
    pub fn intersection_count(&self, other: &Bitset) -> u64 {
        debug_assert_eq!(self.len, other.len);
        super::popcount::intersection_count(&self.words, &other.words)
    }

    /// `|self ∩ a ∩ b|` without allocating: counts a child's class members before deciding
    /// whether the child's row set needs to be materialised at all.
    pub fn intersection_count3(&self, a: &Bitset, b: &Bitset) -> u64 {
        debug_assert!(self.len == a.len && self.len == b.len);
        super::popcount::intersection_count3(&self.words, &a.words, &b.words)
    }

    /// Iterates the members of `self ∩ other` in increasing order, without allocating.
    pub fn iter_and<'a>(&'a self, other: &'a Bitset) -> impl Iterator<Item = usize> + 'a {
        let words = self.words.iter().zip(&other.words).map(|(&a, &b)| a & b);
        words.enumerate().flat_map(|(wi, w)| word_members(wi, w))
    }

    /// `self ∩ other` as a new set.
    pub fn and(&self, other: &Bitset) -> Bitset {
        debug_assert_eq!(self.len, other.len);
        let words = self
            .words
            .iter()
            .zip(&other.words)
            .map(|(a, b)| a & b)
            .collect();
        Bitset {
            words,
            len: self.len,
        }
    }

    /// `out ← self ∩ other`, reusing `out`'s storage (it must range over the same rows).
    pub fn and_into(&self, other: &Bitset, out: &mut Bitset) {
        debug_assert!(self.len == other.len && self.len == out.len);
        for ((o, a), b) in out.words.iter_mut().zip(&self.words).zip(&other.words) {
            *o = a & b;
        }
    }

    /// Whether `self ∩ other` equals `expected`, without building the intersection.
    pub fn and_equals(&self, other: &Bitset, expected: &Bitset) -> bool {
        debug_assert!(self.len == other.len && self.len == expected.len);
        (self.words.iter().zip(&other.words))
            .zip(&expected.words)
            .all(|((a, b), e)| a & b == *e)
    }

    /// `self ← self ∩ other`.
    pub fn and_assign(&mut self, other: &Bitset) {
        debug_assert_eq!(self.len, other.len);
        for (a, b) in self.words.iter_mut().zip(&other.words) {
            *a &= b;
        }
    }

    /// `self ← self ∪ other`.
    pub fn or_assign(&mut self, other: &Bitset) {
        debug_assert_eq!(self.len, other.len);
        for (a, b) in self.words.iter_mut().zip(&other.words) {
            *a |= b;
        }
    }

    /// `self ← self \ other`.
    pub fn and_not_assign(&mut self, other: &Bitset) {
        debug_assert_eq!(self.len, other.len);
        for (a, b) in self.words.iter_mut().zip(&other.words) {
            *a &= !b;
        }
    }

    /// The complement within `0..len`.
    pub fn complement(&self) -> Bitset {
        let mut b = Bitset {
            words: self.words.iter().map(|w| !w).collect(),
            len: self.len,
        };
        b.clear_tail();
        b
    }

    /// Whether every member of `self` is in `other`.
    pub fn is_subset_of(&self, other: &Bitset) -> bool {
        debug_assert_eq!(self.len, other.len);
        self.words
            .iter()
            .zip(&other.words)
            .all(|(a, b)| a & !b == 0)
    }

    /// Members in increasing order.
    pub fn iter(&self) -> impl Iterator<Item = usize> + '_ {
        self.words
            .iter()
            .enumerate()
            .flat_map(|(wi, &w)| word_members(wi, w))
    }

    /// Heap bytes held, for memory accounting.
    pub fn heap_bytes(&self) -> usize {
        self.words.capacity() * std::mem::size_of::<u64>()
    }
}

impl fmt::Debug for Bitset {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Bitset({}; ", self.len)?;
        f.debug_set().entries(self.iter()).finish()?;
        write!(f, ")")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn naive(b: &Bitset) -> Vec<bool> {
        (0..b.len()).map(|i| b.contains(i)).collect()
    }

    fn from_bools(v: &[bool]) -> Bitset {
        Bitset::from_indices(
            v.len(),
            v.iter().enumerate().filter(|(_, &x)| x).map(|(i, _)| i),
        )
    }

    #[test]
    fn partition_puts_each_row_in_its_value_set() {
        // Every way of building (binary bytes, a word per value up to 64 values, row by row
        // beyond), and lengths on and off word boundaries, from four- and one-byte codes.
        for (len, n_values) in [
            (0, 3),
            (1, 1),
            (1, 2),
            (63, 2),
            (128, 2),
            (200, 2),
            (71, 2),
            (64, 5),
            (200, 64),
            (130, 65),
            (77, 300),
        ] {
            // Pseudo-random codes (a pattern such as r % 2 would pass a packing that keeps
            // parity but moves bits).
            let mut next = crate::oracle::xorshift(0x51_7cc1_b727_220a ^ (len as u64) << 8);
            let column: Vec<u32> = (0..len)
                .map(|_| (next() % n_values as u64) as u32)
                .collect();
            let sets = Bitset::partition(&column, n_values as usize);
            assert_eq!(sets.len(), n_values as usize);
            if n_values <= 256 {
                let bytes: Vec<u8> = column.iter().map(|&c| c as u8).collect();
                assert_eq!(Bitset::partition(&bytes, n_values as usize), sets);
                if n_values == 2 {
                    assert_eq!(Bitset::partition_binary_bytes(&bytes), sets);
                }
            }
            for (v, set) in sets.iter().enumerate() {
                let expected = (0..len as usize).filter(|&r| column[r] as usize == v);
                assert_eq!(
                    *set,
                    Bitset::from_indices(len as usize, expected),
                    "{len} {v}"
                );
            }
        }
    }

    #[test]
    fn full_and_empty_respect_the_tail() {
        for len in [0, 1, 63, 64, 65, 130] {
            let full = Bitset::full(len);
            assert_eq!(full.count(), len as u64);
            assert_eq!(full.complement(), Bitset::empty(len));
            assert!(Bitset::empty(len).is_empty());
        }
    }

    #[test]
    fn iter_lists_members_in_order() {
        let b = Bitset::from_indices(200, [199, 0, 64, 63, 128]);
        assert_eq!(b.iter().collect::<Vec<_>>(), vec![0, 63, 64, 128, 199]);
        assert!(
            !b.contains(200),
            "rows outside the universe are not members"
        );
    }

    fn pair() -> impl Strategy<Value = (Vec<bool>, Vec<bool>)> {
        (0usize..300).prop_flat_map(|n| {
            (
                prop::collection::vec(any::<bool>(), n),
                prop::collection::vec(any::<bool>(), n),
            )
        })
    }

    proptest! {
        #[test]
        fn set_operations_agree_with_a_naive_model((a, b) in pair()) {
            let (x, y) = (from_bools(&a), from_bools(&b));
            let and: Vec<bool> = a.iter().zip(&b).map(|(p, q)| *p && *q).collect();
            let or: Vec<bool> = a.iter().zip(&b).map(|(p, q)| *p || *q).collect();
            let diff: Vec<bool> = a.iter().zip(&b).map(|(p, q)| *p && !*q).collect();
            let not: Vec<bool> = a.iter().map(|p| !*p).collect();
            prop_assert_eq!(naive(&x.and(&y)), and.clone());
            prop_assert_eq!(x.intersection_count(&y), and.iter().filter(|v| **v).count() as u64);
            let z = x.complement();
            prop_assert_eq!(x.intersection_count3(&y, &y), x.intersection_count(&y));
            prop_assert_eq!(x.intersection_count3(&y, &z), 0);
            let and_members: Vec<usize> = x.iter_and(&y).collect();
            let and_expected: Vec<usize> = (0..a.len()).filter(|&i| and[i]).collect();
            prop_assert_eq!(and_members, and_expected);
            let mut o = x.clone(); o.or_assign(&y); prop_assert_eq!(naive(&o), or);
            let mut into = Bitset::full(x.len()); x.and_into(&y, &mut into); prop_assert_eq!(naive(&into), and.clone());
            let mut d = x.clone(); d.and_not_assign(&y); prop_assert_eq!(naive(&d), diff);
            prop_assert!(x.and_equals(&y, &x.and(&y)));
            prop_assert_eq!(x.and_equals(&y, &x), naive(&x) == and);
            prop_assert_eq!(naive(&x.complement()), not);
            prop_assert_eq!(x.count(), a.iter().filter(|v| **v).count() as u64);
            prop_assert_eq!(x.is_subset_of(&y), a.iter().zip(&b).all(|(p, q)| !*p || *q));
            prop_assert_eq!(x.is_empty(), !a.iter().any(|v| *v));
            let members: Vec<usize> = x.iter().collect();
            let expected: Vec<usize> = (0..a.len()).filter(|&i| a[i]).collect();
            prop_assert_eq!(members, expected);
            // Equal sets compare equal whatever the construction order (tail invariant).
            prop_assert_eq!(from_bools(&a), x.complement().complement());
        }
    }
}
