//! Subtrees grown by a two-level look-ahead, to improve the fast mode's anytime tree.
//!
//! The search's upper bound comes from trees grown greedily, one split at a time, along the
//! split whose two leaves cost least. On mushroom that tree stays 20 nats above the MAP tree
//! until the proof closes: under its root split the MAP tree opens with a split that only pays
//! off one level further down. Choosing each split by the best it allows one level below (each
//! child a leaf, or split once more into two leaves) finds that subtree, and soybean's MAP tree
//! too. Grown at the root it picks another split and does worse than the greedy tree, so the
//! search regrows each node of its incumbent tree, also below the node's own best splits with
//! only their children regrown ([`Grower::grow_under`]), and keeps a regrown subtree only where
//! it costs less (see `Search::improve_incumbent`).
//!
//! Any number of classes. The cost of a regrown subtree is exact: every node counts the
//! features that divide it. Only the choice of a split guesses, taking the leaves below the
//! look-ahead to be splittable. When the budget runs out, the nodes not grown yet stay leaves
//! (their cost is still exact).

use std::borrow::Cow;

use super::model::Posterior;
use crate::data::popcount::intersection_counts2_each;
use crate::data::{Bitset, Dataset};
use crate::search::Budget;

/// Most features the look-ahead tries at a node (all of them on every CP4IM dataset, splice-1's
/// 287 the widest); past it, those whose one split costs least.
const LOOK_AHEAD_FEATURES: usize = 512;

/// A subtree's shape: leaves, and splits on a feature with the subtree's cost and its children
/// (`[= 0 child, = 1 child]`).
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Shape {
    Leaf,
    Split(usize, f64, Box<[Shape; 2]>),
}

impl Shape {
    /// Whether its root splits on `feature`.
    pub(super) fn splits_on(&self, feature: usize) -> bool {
        matches!(self, Shape::Split(f, _, _) if *f == feature)
    }
}

/// The features dividing a subset, with the class counts of their `= 1` sides (`k` a feature,
/// in order).
#[derive(Clone)]
struct Dividers {
    features: Vec<usize>,
    ones: Vec<u64>,
}

/// The class counts of a split's `= 0` side, from the node's (`node`) and its `= 1` side's.
fn other_side(node: &[u64], ones: &[u64], zeros: &mut [u64]) {
    for (z, (n, o)) in zeros.iter_mut().zip(node.iter().zip(ones)) {
        *z = n - o;
    }
}

/// Grows subtrees over one dataset, with reused scratch space.
pub(super) struct Grower<'a> {
    data: &'a Dataset,
    model: &'a Posterior,
    /// Growing stops (every node left a leaf) once the budget's time is up or the search is
    /// interrupted: a regrowth on wide data counts for a while.
    budget: &'a Budget,
    /// The number of classes.
    k: usize,
    /// The binary features (the only ones MAPTree splits on).
    features: Vec<usize>,
    /// The class counts of each candidate's `= 1` side (`k` a candidate) on the subset counted
    /// last.
    sides: Vec<u64>,
    columns: Vec<&'a [u64]>,
    pairs: Vec<(u64, u64)>,
}

impl<'a> Grower<'a> {
    pub(super) fn new(data: &'a Dataset, model: &'a Posterior, budget: &'a Budget) -> Self {
        let features = (0..data.n_features())
            .filter(|&f| data.n_values(f) == 2)
            .collect();
        Grower {
            data,
            model,
            budget,
            k: data.n_classes(),
            features,
            sides: Vec::new(),
            columns: Vec::new(),
            pairs: Vec::new(),
        }
    }

    /// Counts the classes of the `= 1` side of each of `candidates` within `rows` into
    /// `sides`: one pass a class after the first.
    fn count_sides(&mut self, rows: &Bitset, candidates: &[usize]) {
        let (k, n) = (self.k, candidates.len());
        self.columns.clear();
        let columns = candidates
            .iter()
            .map(|&f| self.data.rows_with(f, 1).words());
        self.columns.extend(columns);
        self.sides.clear();
        self.sides.resize(n * k, 0);
        self.pairs.resize(n, (0, 0));
        // Each pass also gives the sides' sizes (one pass even for a single class).
        for c in 1.min(k.saturating_sub(1))..k {
            let class = self.data.rows_of_class(c).words();
            intersection_counts2_each(rows.words(), &self.columns, class, &mut self.pairs);
            for (side, &(_, in_class)) in self.sides.chunks_exact_mut(k).zip(&self.pairs) {
                side[c] = in_class;
            }
        }
        // The first class is what the side holds beyond the others.
        for (side, &(n1, _)) in self.sides.chunks_exact_mut(k).zip(&self.pairs) {
            side[0] = n1 - side[1..].iter().sum::<u64>();
        }
    }

    /// The features of `candidates` that divide a subset of `total` rows, from `sides`.
    fn dividers(&self, candidates: &[usize], total: u64) -> Dividers {
        let mut out = Dividers {
            features: Vec::new(),
            ones: Vec::new(),
        };
        for (&f, side) in candidates.iter().zip(self.sides.chunks_exact(self.k)) {
            let n1: u64 = side.iter().sum();
            if n1 > 0 && n1 < total {
                out.features.push(f);
                out.ones.extend_from_slice(side);
            }
        }
        out
    }

    /// Whether the budget stopped growing (time up or interrupted; its expansion and memory
    /// limits are the search's to check).
    fn stopped(&self) -> bool {
        self.budget.check(0, 0).is_some()
    }

    /// The class counts of `rows` and the features that divide it.
    fn node(&mut self, rows: &Bitset) -> (Vec<u64>, Dividers) {
        let features = std::mem::take(&mut self.features);
        self.count_sides(rows, &features);
        self.features = features;
        let counts = self.data.class_counts(rows);
        let valid = self.dividers(&self.features, counts.iter().sum());
        (counts, valid)
    }

    /// The subtree grown from `rows` at `depth`, each split chosen by the look-ahead, with its
    /// exact cost. A leaf wherever the grown split costs more than the leaf.
    pub(super) fn grow(&mut self, rows: &Bitset, depth: u32) -> (f64, Shape) {
        let (node, valid) = self.node(rows);
        let n_valid = valid.features.len();
        let leaf = self.model.leaf_cost(depth, n_valid > 0, &node);
        if self.stopped() {
            return (leaf, Shape::Leaf);
        }
        let Some(feature) = self.best_split(rows, depth, &node, &valid, leaf) else {
            return (leaf, Shape::Leaf);
        };
        let grown = self.grow_below(rows, depth, feature, n_valid);
        match grown.0 < leaf {
            true => grown,
            false => (leaf, Shape::Leaf),
        }
    }

    /// The subtree that splits `rows` at `depth` on `feature` (which divides it) and grows
    /// both children, with its exact cost.
    pub(super) fn grow_under(&mut self, rows: &Bitset, depth: u32, feature: usize) -> (f64, Shape) {
        let n_valid = self.node(rows).1.features.len();
        self.grow_below(rows, depth, feature, n_valid)
    }

    /// [`Self::grow_under`], given the number of features that divide `rows`.
    fn grow_below(
        &mut self,
        rows: &Bitset,
        depth: u32,
        feature: usize,
        n_valid: usize,
    ) -> (f64, Shape) {
        let mut cost = self.model.split_penalty(depth, n_valid);
        let mut children = [Shape::Leaf, Shape::Leaf];
        for side in [0, 1] {
            let child = rows.and(self.data.rows_with(feature, side));
            let (c, shape) = self.grow(&child, depth + 1);
            cost += c;
            children[side] = shape;
        }
        (cost, Shape::Split(feature, cost, Box::new(children)))
    }

    /// The split of `rows` (class counts `node`, dividing features `valid`) whose children
    /// cost least when each is a leaf or split once into two leaves (the first on ties); None
    /// when none costs less than `leaf`.
    fn best_split(
        &mut self,
        rows: &Bitset,
        depth: u32,
        node: &[u64],
        valid: &Dividers,
        leaf: f64,
    ) -> Option<usize> {
        let pen = self.model.split_penalty(depth, valid.features.len());
        let mut best = (leaf, None);
        let mut child = Bitset::empty(rows.len());
        let mut zeros = vec![0; self.k];
        let valid = self.shortlist(depth, node, valid);
        for (&f, ones) in valid.features.iter().zip(valid.ones.chunks_exact(self.k)) {
            if self.stopped() {
                break;
            }
            other_side(node, ones, &mut zeros);
            let mut cost = pen;
            for (side, counts) in [(0, &zeros[..]), (1, ones)] {
                rows.and_into(self.data.rows_with(f, side), &mut child);
                cost += self.one_split_below(&child, depth + 1, counts, &valid.features);
                if cost >= best.0 {
                    break;
                }
            }
            if cost < best.0 {
                best = (cost, Some(f));
            }
        }
        best.1
    }

    /// At most [`LOOK_AHEAD_FEATURES`] of `valid`, those whose split into two leaves costs
    /// least (in feature order), for the look-ahead to try: it counts every candidate within
    /// each child of each candidate, and over the 30,000 binarised thresholds of 3,000 x 10
    /// numbers one choice took a minute. Narrower data keep every feature.
    fn shortlist<'v>(&self, depth: u32, node: &[u64], valid: &'v Dividers) -> Cow<'v, Dividers> {
        if valid.features.len() <= LOOK_AHEAD_FEATURES {
            return Cow::Borrowed(valid);
        }
        let mut zeros = vec![0; self.k];
        let mut costs: Vec<(f64, usize)> = valid
            .ones
            .chunks_exact(self.k)
            .enumerate()
            .map(|(i, ones)| {
                other_side(node, ones, &mut zeros);
                let leaves = self.model.leaf_cost(depth + 1, true, ones)
                    + self.model.leaf_cost(depth + 1, true, &zeros);
                (leaves, i)
            })
            .collect();
        costs.select_nth_unstable_by(LOOK_AHEAD_FEATURES, |a, b| {
            a.0.total_cmp(&b.0).then(a.1.cmp(&b.1))
        });
        let mut kept: Vec<usize> = costs[..LOOK_AHEAD_FEATURES]
            .iter()
            .map(|&(_, i)| i)
            .collect();
        kept.sort_unstable();
        Cow::Owned(Dividers {
            features: kept.iter().map(|&i| valid.features[i]).collect(),
            ones: kept
                .iter()
                .flat_map(|&i| valid.ones[i * self.k..(i + 1) * self.k].iter().copied())
                .collect(),
        })
    }

    /// The least cost of `rows` (class counts `node`) at `depth` as a leaf or split once into
    /// two leaves (taken to be splittable); the features dividing it are among `candidates`.
    fn one_split_below(
        &mut self,
        rows: &Bitset,
        depth: u32,
        node: &[u64],
        candidates: &[usize],
    ) -> f64 {
        self.count_sides(rows, candidates);
        let valid = self.dividers(candidates, node.iter().sum());
        let n_valid = valid.features.len();
        let mut best = self.model.leaf_cost(depth, n_valid > 0, node);
        let pen = self.model.split_penalty(depth, n_valid);
        let mut zeros = vec![0; self.k];
        for ones in valid.ones.chunks_exact(self.k) {
            other_side(node, ones, &mut zeros);
            let leaves = self.model.leaf_cost(depth + 1, true, ones)
                + self.model.leaf_cost(depth + 1, true, &zeros);
            best = best.min(pen + leaves);
        }
        best
    }
}
