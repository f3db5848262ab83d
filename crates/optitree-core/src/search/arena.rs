//! A growable array stored in fixed-size chunks, for search graphs that must respect a memory
//! limit: growing never copies what is already stored, so memory rises by one chunk at a time
//! instead of doubling (with the old and the new buffer briefly alive together).
//!
//! Chunks are large (a search's nodes are read in no order, and large chunks can sit on huge
//! pages, see [`super::huge_pages`]), so the first one grows by doubling like a vector: a small
//! search does not reserve a whole chunk.
//!
//! Invariant: every chunk but the last is full; element `i` lives at `chunks[i >> SHIFT][i & MASK]`.

use std::ops::{Index, IndexMut};

const SHIFT: u32 = 17;
const CHUNK: usize = 1 << SHIFT;
const MASK: usize = CHUNK - 1;

/// An append-only vector in 131,072-element chunks.
#[derive(Debug, Clone)]
pub struct Arena<T> {
    chunks: Vec<Vec<T>>,
    len: usize,
}

impl<T> Default for Arena<T> {
    fn default() -> Self {
        Arena {
            chunks: Vec::new(),
            len: 0,
        }
    }
}

impl<T> Arena<T> {
    /// An empty arena.
    pub fn new() -> Self {
        Self::default()
    }

    /// Number of elements.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether there are no elements.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Element `i`, if there is one.
    pub fn get(&self, i: usize) -> Option<&T> {
        self.chunks
            .get(i >> SHIFT)
            .and_then(|chunk| chunk.get(i & MASK))
    }

    /// Element `i`, mutable, if there is one.
    pub fn get_mut(&mut self, i: usize) -> Option<&mut T> {
        self.chunks
            .get_mut(i >> SHIFT)
            .and_then(|chunk| chunk.get_mut(i & MASK))
    }

    /// Appends `value` and returns its index.
    pub fn push(&mut self, value: T) -> usize {
        let mut new_buffer = self.len & MASK == 0;
        if new_buffer {
            // The first chunk starts empty; later ones are reserved whole.
            let capacity = if self.len == 0 { 0 } else { CHUNK };
            self.chunks.push(Vec::with_capacity(capacity));
        }
        let last = self.chunks.len() - 1;
        let chunk = &mut self.chunks[last];
        if chunk.len() == chunk.capacity() {
            chunk.reserve_exact(Self::grown(chunk.capacity()) - chunk.len());
            new_buffer = true;
        }
        if new_buffer {
            super::huge_pages::advise(chunk);
        }
        chunk.push(value);
        self.len += 1;
        self.len - 1
    }

    /// The capacity the first chunk grows to from `capacity`.
    fn grown(capacity: usize) -> usize {
        (2 * capacity).clamp(4, CHUNK)
    }

    /// Bytes reserved by the chunks (and the chunk table), with the first chunk's next growth
    /// while it still grows (its old and new buffers are briefly alive together).
    pub fn bytes(&self) -> usize {
        let reserved: usize = self.chunks.iter().map(Vec::capacity).sum();
        let growth = match self.chunks.as_slice() {
            [first] if first.len() == first.capacity() && first.len() < CHUNK => {
                Self::grown(first.capacity())
            }
            _ => 0,
        };
        (reserved + growth) * std::mem::size_of::<T>()
            + self.chunks.capacity() * std::mem::size_of::<Vec<T>>()
    }

    /// Bytes reserved by the chunks and the chunk table now (without [`Arena::bytes`]'s next
    /// growth).
    pub fn reserved_bytes(&self) -> usize {
        let reserved: usize = self.chunks.iter().map(Vec::capacity).sum();
        reserved * std::mem::size_of::<T>() + self.chunks.capacity() * std::mem::size_of::<Vec<T>>()
    }

    /// At least the most bytes the arena holds at any moment while `pushes` more elements are
    /// added: what it has reserved, the first chunk's growth to hold them (old and new buffer
    /// alive together), and the whole chunks they would open. A search checks its memory limit
    /// with this before a step that may push that many: one new chunk of 88-byte records is
    /// 11 MB, which took a 200 MB search 5% past its limit.
    pub fn peak_bytes_within(&self, pushes: usize) -> usize {
        let target = self.len + pushes;
        let reserved: usize = self.chunks.iter().map(Vec::capacity).sum();
        let mut extra = 0;
        // Elements the first chunk (still doubling) or the reserved chunks hold; past them,
        // whole chunks.
        let mut held = reserved;
        if self.len < CHUNK {
            // Its last growth holds the buffer before it too (already reserved if it is the
            // current one).
            let current = self.chunks.first().map_or(0, Vec::capacity);
            let (mut before, mut capacity) = (current, current);
            while capacity < target.min(CHUNK) {
                (before, capacity) = (capacity, Self::grown(capacity));
            }
            if capacity > current {
                extra = capacity + if before > current { before } else { 0 };
            }
            held = CHUNK;
        }
        if target > held {
            extra += (target - held).div_ceil(CHUNK) * CHUNK;
        }
        // The chunk table, with its own growth (old and new together) if it needs one.
        let mut table = self.chunks.capacity();
        let chunks = target.div_ceil(CHUNK);
        if chunks > table {
            table += chunks.next_power_of_two().max(4);
        }
        let table = table * std::mem::size_of::<Vec<T>>();
        ((reserved + extra) * std::mem::size_of::<T>() + table).max(self.bytes())
    }

    /// Every element, in index order.
    pub fn iter_mut(&mut self) -> impl Iterator<Item = &mut T> {
        self.chunks.iter_mut().flatten()
    }
}

impl<T> Index<usize> for Arena<T> {
    type Output = T;
    fn index(&self, i: usize) -> &T {
        &self.chunks[i >> SHIFT][i & MASK]
    }
}

impl<T> IndexMut<usize> for Arena<T> {
    fn index_mut(&mut self, i: usize) -> &mut T {
        &mut self.chunks[i >> SHIFT][i & MASK]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn push_index_and_bytes() {
        let mut a = Arena::new();
        for i in 0..(3 * CHUNK + 5) {
            assert_eq!(a.push(i as u64), i);
        }
        assert_eq!(a.len(), 3 * CHUNK + 5);
        assert_eq!(a[CHUNK + 7], (CHUNK + 7) as u64);
        a[2 * CHUNK] = 1;
        assert_eq!(a[2 * CHUNK], 1);
        assert!(a.bytes() >= 4 * CHUNK * 8);
        // A small arena reserves little: its first chunk grows by doubling.
        let mut small = Arena::new();
        for i in 0..100u64 {
            small.push(i);
        }
        assert!(small.bytes() < 512 * 8 + 64, "{}", small.bytes());
        assert_eq!((small[0], small[99]), (0, 99));
        assert_eq!(a.iter_mut().count(), a.len());
    }

    /// Elements reserved by the chunks.
    fn reserved<T>(a: &Arena<T>) -> usize {
        a.chunks.iter().map(Vec::capacity).sum()
    }

    #[test]
    fn peak_bytes_within_covers_every_growth_and_new_chunk() {
        // From lengths around the first chunk's doublings and the chunk boundaries, the most
        // the arena holds while the pushes go in: a first-chunk growth holds the old buffer
        // and the new one together, a new chunk is reserved whole.
        for len in [0, 3, 4, 5, 100, CHUNK - 1, CHUNK, CHUNK + 1, 2 * CHUNK - 5] {
            for pushes in [0, 1, 7, 300, CHUNK + 3] {
                let mut a = Arena::new();
                for _ in 0..len {
                    a.push(0u8);
                }
                let predicted = a.peak_bytes_within(pushes);
                let table = |a: &Arena<u8>| a.chunks.capacity() * std::mem::size_of::<Vec<u8>>();
                let mut observed = reserved(&a) + table(&a);
                for _ in 0..pushes {
                    let (before, first) = (reserved(&a), a.chunks.first().map_or(0, Vec::capacity));
                    a.push(0u8);
                    let grew = a.chunks.first().map_or(0, Vec::capacity) - first;
                    // During a first-chunk growth its old buffer is still alive.
                    let during = if grew > 0 { before + first + grew } else { 0 };
                    observed = observed
                        .max(during + table(&a))
                        .max(reserved(&a) + table(&a));
                    // A chunk-table growth holds both tables (a few words each).
                }
                assert!(
                    predicted >= observed,
                    "{len} + {pushes}: {predicted} < {observed}"
                );
                // And not much more: at most a doubling's slack or a chunk's rounding.
                let slack = CHUNK + table(&a) + 64;
                assert!(
                    predicted <= observed + slack,
                    "{len} + {pushes}: {predicted}"
                );
            }
        }
    }
}
