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
}
