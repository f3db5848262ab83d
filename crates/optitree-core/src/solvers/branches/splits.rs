//! A node's splits, all in one block of 4-byte words: headers, then every split's children.
//! Splits hold a large part of a search's memory (lymph: a third of it), and a block per split
//! cost a record, a pointer and an allocator header each, besides an allocation and a free per
//! split. Two layouts:
//! - *uniform*, when every split has the same number of children `a` (binary data: always):
//!   the count of splits (marked by the top bit), `a`, then each split's feature; split `i`'s
//!   children start at `2 + n + i·a`. One word of header per split.
//! - *general*: per split its feature and where its children start; split `i`'s children run to
//!   the next split's start (or the end). Two words of header per split.

use super::graph::NodeId;

/// One child of a split, in 4 bytes: its node, or, for a child closed at sight (its leaf is
/// optimal), the weight of its majority class, which is all its value needs, when that weight is
/// below 2^31 (always without sample weights; heavier closed children get a node of their own).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Slot(u32);

impl Slot {
    const CLOSED: u32 = 1 << 31;
    /// Node ids stay below this (see [`super::graph::Graph::room_for_expansion`]).
    pub const MAX_ID: u32 = Self::CLOSED;

    pub fn node(id: NodeId) -> Slot {
        debug_assert!(id < Self::MAX_ID);
        Slot(id)
    }

    /// A closed child of this majority weight, if it fits a slot.
    pub fn closed(majority: u64) -> Option<Slot> {
        u32::try_from(majority)
            .ok()
            .filter(|&m| m < Self::CLOSED)
            .map(|m| Slot(Self::CLOSED | m))
    }

    /// The child's node, None for a closed child.
    pub fn id(self) -> Option<NodeId> {
        (self.0 & Self::CLOSED == 0).then_some(self.0)
    }

    /// The majority weight of a closed child, None for a node.
    pub fn majority(self) -> Option<u64> {
        (self.0 & Self::CLOSED != 0).then_some(u64::from(self.0 & !Self::CLOSED))
    }
}

/// The splits of one node (see the module docs). In the general layout the first header also
/// tells how many splits there are (the first children start at `2n`); a feature index never
/// reaches 2^31, so the top bit of the first word tells the layouts apart.
#[derive(Debug, Default)]
pub struct Splits {
    words: Box<[Slot]>,
}

/// Marks the uniform layout in the first word.
const UNIFORM: u32 = 1 << 31;

impl Splits {
    /// The splits `(feature, children)` in order.
    pub fn new<'a>(splits: impl ExactSizeIterator<Item = (u32, &'a [Slot])> + Clone) -> Splits {
        let n = splits.len();
        let children: usize = splits.clone().map(|(_, c)| c.len()).sum();
        let arity = splits.clone().next().map_or(0, |(_, c)| c.len());
        if n > 2 && splits.clone().all(|(_, c)| c.len() == arity) {
            let mut words = Vec::with_capacity(2 + n + children);
            words.push(Slot(UNIFORM | n as u32));
            words.push(Slot(arity as u32));
            words.extend(splits.clone().map(|(feature, _)| Slot(feature)));
            for (_, c) in splits {
                words.extend_from_slice(c);
            }
            return Splits {
                words: words.into_boxed_slice(),
            };
        }
        let mut words = Vec::with_capacity(2 * n + children);
        let mut start = 2 * n;
        for (feature, c) in splits.clone() {
            words.push(Slot(feature));
            words.push(Slot(start as u32));
            start += c.len();
        }
        for (_, c) in splits {
            words.extend_from_slice(c);
        }
        Splits {
            words: words.into_boxed_slice(),
        }
    }

    pub fn len(&self) -> usize {
        match self.uniform() {
            Some((n, _)) => n,
            None => self.words.get(1).map_or(0, |h| h.0 as usize / 2),
        }
    }

    /// The count of splits and their number of children, in the uniform layout.
    #[inline]
    fn uniform(&self) -> Option<(usize, usize)> {
        match &self.words[..] {
            [first, arity, ..] if first.0 & UNIFORM != 0 => {
                Some(((first.0 & !UNIFORM) as usize, arity.0 as usize))
            }
            _ => None,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.words.is_empty()
    }

    pub fn feature(&self, i: usize) -> u32 {
        match self.uniform() {
            Some(_) => self.words[2 + i].0,
            None => self.words[2 * i].0,
        }
    }

    fn range(&self, i: usize) -> std::ops::Range<usize> {
        if let Some((n, arity)) = self.uniform() {
            let start = 2 + n + i * arity;
            return start..start + arity;
        }
        let start = self.words[2 * i + 1].0 as usize;
        let end = if i + 1 < self.len() {
            self.words[2 * i + 3].0 as usize
        } else {
            self.words.len()
        };
        start..end
    }

    /// Split `i`'s children.
    pub fn children(&self, i: usize) -> &[Slot] {
        &self.words[self.range(i)]
    }

    /// Every split as `(feature, children)`, in order.
    pub fn iter(&self) -> impl Iterator<Item = (u32, &[Slot])> + '_ {
        (0..self.len()).map(|i| (self.feature(i), self.children(i)))
    }

    /// Every child of every split.
    pub fn all_children(&self) -> &[Slot] {
        match self.uniform() {
            Some((n, _)) => &self.words[2 + n..],
            None => &self.words[2 * self.len()..],
        }
    }

    /// The splits for which `keep` holds, in a block of their own size.
    pub fn retain(&self, mut keep: impl FnMut(usize) -> bool) -> Splits {
        let kept: Vec<usize> = (0..self.len()).filter(|&i| keep(i)).collect();
        Splits::new(kept.iter().map(|&i| (self.feature(i), self.children(i))))
    }

    /// Heap bytes, with the allocator's header.
    pub fn bytes(&self) -> usize {
        match self.words.len() {
            0 => 0,
            n => n * std::mem::size_of::<Slot>() + 16,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_each_splits_feature_and_children() {
        let closed = |m| Slot::closed(m).expect("fits");
        let a = [Slot::node(3), closed(7)];
        let b = [closed(0), Slot::node(9), Slot::node(4)];
        let splits = Splits::new([(5, &a[..]), (2, &b[..])].into_iter());
        assert_eq!(splits.len(), 2);
        assert_eq!((splits.feature(0), splits.children(0)), (5, &a[..]));
        assert_eq!((splits.feature(1), splits.children(1)), (2, &b[..]));
        assert_eq!(splits.all_children().len(), 5);
        assert_eq!(splits.children(1)[1].id(), Some(9));
        assert_eq!(splits.children(0)[1].majority(), Some(7));
        let one = splits.retain(|i| i == 1);
        assert_eq!(one.len(), 1);
        assert_eq!(one.feature(0), 2);
        assert_eq!(one.children(0).len(), 3);
        assert!(Splits::new(std::iter::empty::<(u32, &[Slot])>()).is_empty());
        assert_eq!(Splits::default().len(), 0);
        // A split without children (never built by the search) still reads back.
        let odd = Splits::new([(1, &a[..]), (4, &[][..])].into_iter());
        assert_eq!(
            (odd.len(), odd.children(1).len(), odd.feature(1)),
            (2, 0, 4)
        );
    }

    /// Splits with equal numbers of children take one header word each, and read back alike.
    #[test]
    fn uniform_splits_take_a_word_of_header_each() {
        let kids: Vec<[Slot; 2]> = (0..5)
            .map(|i| [Slot::node(i), Slot::node(10 + i)])
            .collect();
        let splits = Splits::new(kids.iter().enumerate().map(|(i, c)| (7 * i as u32, &c[..])));
        assert_eq!(splits.bytes(), (2 + 5 + 10) * 4 + 16);
        assert_eq!(splits.len(), 5);
        for (i, (feature, children)) in splits.iter().enumerate() {
            assert_eq!((feature, children), (7 * i as u32, &kids[i][..]));
        }
        assert_eq!(splits.all_children().len(), 10);
        let kept = splits.retain(|i| i % 2 == 0);
        assert_eq!(
            (kept.len(), kept.feature(2), kept.children(1)),
            (3, 28, &kids[2][..])
        );
        let two = splits.retain(|i| i < 2); // too few to gain: the general layout
        assert_eq!(
            (two.len(), two.feature(1), two.children(1)),
            (2, 7, &kids[1][..])
        );
        assert_eq!(two.bytes(), (4 + 4) * 4 + 16);
    }

    #[test]
    fn closed_children_keep_weights_below_two_to_the_31() {
        assert_eq!(
            Slot::closed((1 << 31) - 1).and_then(Slot::majority),
            Some((1 << 31) - 1)
        );
        assert_eq!(Slot::closed(1 << 31), None);
        assert_eq!(Slot::closed(u64::MAX), None);
        assert_eq!(Slot::node(Slot::MAX_ID - 1).id(), Some(Slot::MAX_ID - 1));
    }
}
