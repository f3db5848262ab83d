//! A node's splits, all in one block of words: a header per split (its feature and where its
//! children start), then every split's children. Splits hold most of a search's memory (lymph:
//! two thirds of it), and a block per split cost a record, a pointer and an allocator header
//! each, besides an allocation and a free per split.

use super::graph::NodeId;

/// One child of a split, in 8 bytes: its node, or, for a child closed at sight (its leaf is
/// optimal), the weight of its majority class, which is all its value needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Slot(u64);

impl Slot {
    /// Marks a closed child; weights stay below 2^63 (the solver refuses totals of 2^53 or more,
    /// see `MAX_TOTAL_WEIGHT`).
    const CLOSED: u64 = 1 << 63;

    pub fn node(id: NodeId) -> Slot {
        Slot(u64::from(id))
    }

    pub fn closed(majority: u64) -> Slot {
        Slot(Self::CLOSED | majority)
    }

    /// The child's node, None for a closed child.
    pub fn id(self) -> Option<NodeId> {
        (self.0 & Self::CLOSED == 0).then_some(self.0 as NodeId)
    }

    /// The majority weight of a closed child, None for a node.
    pub fn majority(self) -> Option<u64> {
        (self.0 & Self::CLOSED != 0).then_some(self.0 & !Self::CLOSED)
    }
}

/// The splits of one node (see the module docs). Split `i`'s header is word `i` (a `Slot` in
/// name only): the feature in the upper half, the index of its first child in the lower; its
/// children run to the next split's first child (or the end). So the first header also tells
/// how many splits there are.
#[derive(Debug, Default)]
pub struct Splits {
    words: Box<[Slot]>,
}

impl Splits {
    /// The splits `(feature, children)` in order.
    pub fn new<'a>(splits: impl ExactSizeIterator<Item = (u32, &'a [Slot])> + Clone) -> Splits {
        let n = splits.len();
        let children: usize = splits.clone().map(|(_, c)| c.len()).sum();
        let mut words = Vec::with_capacity(n + children);
        let mut start = n;
        for (feature, c) in splits.clone() {
            words.push(Slot(u64::from(feature) << 32 | start as u64));
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
        self.words.first().map_or(0, |h| h.0 as u32 as usize)
    }

    pub fn is_empty(&self) -> bool {
        self.words.is_empty()
    }

    pub fn feature(&self, i: usize) -> u32 {
        (self.words[i].0 >> 32) as u32
    }

    fn range(&self, i: usize) -> std::ops::Range<usize> {
        let start = self.words[i].0 as u32 as usize;
        let end = if i + 1 < self.len() {
            self.words[i + 1].0 as u32 as usize
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
        &self.words[self.len()..]
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
            n => n * 8 + 16,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_each_splits_feature_and_children() {
        let a = [Slot::node(3), Slot::closed(7)];
        let b = [Slot::closed(0), Slot::node(9), Slot::node(4)];
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
    }
}
