//! A growable array stored in fixed-size chunks, for search graphs that must respect a memory
//! limit: growing never copies what is already stored, so memory rises by one chunk at a time
//! instead of doubling (with the old and the new buffer briefly alive together).
//!
//! Invariant: every chunk but the last is full; element `i` lives at `chunks[i >> SHIFT][i & MASK]`.

use std::ops::{Index, IndexMut};

const SHIFT: u32 = 14;
const CHUNK: usize = 1 << SHIFT;
const MASK: usize = CHUNK - 1;

/// An append-only vector in 16,384-element chunks.
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
        if self.len & MASK == 0 {
            self.chunks.push(Vec::with_capacity(CHUNK));
        }
        let last = self.chunks.len() - 1;
        self.chunks[last].push(value);
        self.len += 1;
        self.len - 1
    }

    /// Bytes reserved by the chunks (and the chunk table).
    pub fn bytes(&self) -> usize {
        self.chunks.len() * CHUNK * std::mem::size_of::<T>()
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
        assert_eq!(a.iter_mut().count(), a.len());
    }
}
