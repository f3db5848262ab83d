//! What a node's expansion learns about its splits before looking any child up: how many of
//! the node's features divide each child (counted by one pass over the pairs of features, or
//! floored by ranks where that pass is dear), and which splits are twins of earlier ones.

use super::count_bound::ValidFloor;
use crate::data::popcount::intersection_counts;
use crate::data::{Bitset, Dataset};
use crate::search::Fork;

/// Pair-pass work (word intersections) from which half of the pass goes to the second thread.
const FORK_PAIR_WORK: usize = 4_096;

/// What one pass over the pairs of a node's dividing features tells about its splits, feature
/// by feature (in the order of the node's dividing features). From [`children_floors`],
/// `zeros` and `ones` are floors, and 0 means unknown, not unsplittable.
pub(super) struct SplitFacts {
    /// How many of the node's features divide the split's `= 0` child.
    pub zeros: Vec<usize>,
    /// How many of the node's features divide the split's `= 1` child.
    pub ones: Vec<usize>,
    /// The split makes the same two children as a split on an earlier feature (the same side
    /// or the complement on this node's rows): it costs exactly as much, so only the earliest
    /// feature of such a group is evaluated. Complement columns are common (a binarised yes/no
    /// attribute gives both), and they would double every lookup.
    pub twin: Vec<bool>,
}

/// For every feature of `ones` (the features dividing `rows`, with the sizes of their `= 1`
/// sides), how many of them divide its `= 0` and its `= 1` child: one intersection count per
/// pair of features, far cheaper than looking every child up. With `fork`, a large pass is
/// shared with the second thread (the same counts).
pub(super) fn children_dividers(
    data: &Dataset,
    rows: &Bitset,
    ones: &[(usize, Vec<u64>)],
    sizes: &[u64],
    fork: Option<&mut Fork>,
) -> SplitFacts {
    let pass = PairPass::new(data, rows, ones, sizes);
    let n = ones.len();
    let mut mine = PairCounts::new(n);
    match fork.filter(|_| n * n / 2 * pass.width >= FORK_PAIR_WORK) {
        None => pass.run(0..n, &mut mine),
        Some(fork) => {
            // Feature i meets the n - i - 1 later ones: the first 29% of the features (1 -
            // 1/√2) meet half of the pairs.
            let split = n - (n as f64 / std::f64::consts::SQRT_2) as usize;
            let mut theirs = PairCounts::new(n);
            fork.join(
                || pass.run(split..n, &mut theirs),
                || pass.run(0..split, &mut mine),
            );
            mine.add(&theirs);
        }
    }
    let widen = |v: Vec<u32>| v.into_iter().map(|x| x as usize).collect();
    SplitFacts {
        zeros: widen(mine.zeros),
        ones: widen(mine.ones),
        twin: mine.twin,
    }
}

/// The columns of a node's dividing features cut down to the words that hold the node's rows,
/// masked by them and laid out contiguously (a deep node's rows sit in few words), with the
/// sizes of their sides.
struct PairPass {
    columns: Vec<u64>,
    width: usize,
    sizes: Vec<u32>,
    rests: Vec<u32>,
}

/// Counts a part of the pair pass adds up: per feature, the features found to divide its
/// `= 0` and `= 1` children, and whether it is a twin; `both` is scratch space.
struct PairCounts {
    zeros: Vec<u32>,
    ones: Vec<u32>,
    twin: Vec<bool>,
    both: Vec<u32>,
}

impl PairCounts {
    fn new(n: usize) -> Self {
        PairCounts {
            zeros: vec![0; n],
            ones: vec![0; n],
            twin: vec![false; n],
            both: vec![0; n],
        }
    }

    fn add(&mut self, other: &PairCounts) {
        self.zeros
            .iter_mut()
            .zip(&other.zeros)
            .for_each(|(a, b)| *a += b);
        self.ones
            .iter_mut()
            .zip(&other.ones)
            .for_each(|(a, b)| *a += b);
        self.twin
            .iter_mut()
            .zip(&other.twin)
            .for_each(|(a, b)| *a |= b);
    }
}

impl PairPass {
    fn new(data: &Dataset, rows: &Bitset, ones: &[(usize, Vec<u64>)], sizes: &[u64]) -> Self {
        let row_words = rows.words();
        let live: Vec<usize> = (0..row_words.len())
            .filter(|&w| row_words[w] != 0)
            .collect();
        let width = live.len().max(1);
        let mut columns = vec![0u64; ones.len() * width];
        for ((f, _), column) in ones.iter().zip(columns.chunks_exact_mut(width)) {
            let words = data.rows_with(*f, 1).words();
            for (slot, &w) in column.iter_mut().zip(&live) {
                *slot = words[w] & row_words[w];
            }
        }
        let total = rows.count() as u32;
        let sizes: Vec<u32> = sizes.iter().map(|&s| s as u32).collect();
        let rests = sizes.iter().map(|&s| total - s).collect();
        PairPass {
            columns,
            width,
            sizes,
            rests,
        }
    }

    /// The pairs `(i, j)`, `i` in `first`, `j > i`, added to `acc`.
    fn run(&self, first: std::ops::Range<usize>, acc: &mut PairCounts) {
        let PairPass {
            columns,
            width,
            sizes,
            rests,
        } = self;
        let width = *width;
        // `0 < part < of` in one unsigned comparison (`of >= 1`).
        let divides = |part: u32, of: u32| u32::from(part.wrapping_sub(1) < of - 1);
        for i in first {
            let column_i = &columns[i * width..(i + 1) * width];
            let later = &columns[(i + 1) * width..];
            let counts = &mut acc.both[i + 1..];
            match width {
                1 => {
                    let x = column_i[0];
                    for (count, y) in counts.iter_mut().zip(later) {
                        *count = (x & y).count_ones();
                    }
                }
                _ => intersection_counts(column_i, later, counts),
            }
            // j divides i's `= 1` child when some but not all of it has j = 1, and so on; one
            // element-wise pass over the later features (vectorised).
            let (size_i, rest_i) = (sizes[i], rests[i]);
            let (mut zeros_i, mut ones_i) = (0, 0);
            let later_sides = sizes[i + 1..].iter().zip(&rests[i + 1..]);
            let later_counts = acc.ones[i + 1..].iter_mut().zip(&mut acc.zeros[i + 1..]);
            let later = later_counts.zip(&mut acc.twin[i + 1..]);
            for ((&n11, (&size_j, &rest_j)), ((ones_j, zeros_j), twin_j)) in
                acc.both[i + 1..].iter().zip(later_sides).zip(later)
            {
                ones_i += divides(n11, size_i);
                zeros_i += divides(size_j - n11, rest_i);
                *ones_j += divides(n11, size_j);
                *zeros_j += divides(size_i - n11, rest_j);
                // Same `= 1` side, or j's `= 1` side is i's `= 0` side.
                let same = n11 == size_i && n11 == size_j;
                let complement = n11 == 0 && size_j == rest_i;
                *twin_j |= same | complement;
            }
            acc.zeros[i] += zeros_i;
            acc.ones[i] += ones_i;
        }
    }
}

/// [`children_dividers`] with floors instead of counts (see [`ValidFloor`]; 0 means unknown),
/// and twins sought only among features whose `= 1` sides have equal sizes (the same side) or
/// sizes adding up to the node's (the complement).
pub(super) fn children_floors(
    data: &Dataset,
    rows: &Bitset,
    ones: &[(usize, Vec<u64>)],
    sizes: &[u64],
    floor: &mut ValidFloor,
) -> SplitFacts {
    let total = rows.count();
    let n = ones.len();
    let mut twin = vec![false; n];
    // Twins have equal smaller sides: sort by it (then by position) and compare within each
    // run only, earlier features first (a scan of all pairs was 4% of mushroom's search, though
    // few pairs ever needed counting).
    let mut keys: Vec<u64> = (0..n)
        .map(|i| (sizes[i].min(total - sizes[i]) << 32) | i as u64)
        .collect();
    keys.sort_unstable();
    for run in keys.chunk_by(|x, y| x >> 32 == y >> 32) {
        for (at, &key_j) in run.iter().enumerate().skip(1) {
            let j = (key_j & 0xFFFF_FFFF) as usize;
            for &key_i in &run[..at] {
                let i = (key_i & 0xFFFF_FFFF) as usize;
                if twin[i] {
                    continue;
                }
                let (col_i, col_j) = (data.rows_with(ones[i].0, 1), data.rows_with(ones[j].0, 1));
                let n11 = rows.intersection_count3(col_i, col_j);
                if (n11 == sizes[i] && n11 == sizes[j])
                    || (n11 == 0 && sizes[j] == total - sizes[i])
                {
                    twin[j] = true;
                    break;
                }
            }
        }
    }
    // The larger child gets the floor, the smaller one none (as in the look-ahead).
    let larger = floor.larger_child_floors(total, sizes.iter().copied());
    let floor_if = |larger_side: bool, floor: u32| usize::from(larger_side) * floor as usize;
    let sides = sizes.iter().zip(larger);
    SplitFacts {
        zeros: sides
            .clone()
            .map(|(&s, &f)| floor_if(total - s >= s, f))
            .collect(),
        ones: sides.map(|(&s, &f)| floor_if(s >= total - s, f)).collect(),
        twin,
    }
}
