//! Subtrees grown by a two-level look-ahead, to improve the fast mode's anytime tree.
//!
//! The search's upper bound comes from trees grown greedily, one split at a time, along the
//! split whose two leaves cost least. On mushroom that tree stays 20 nats above the MAP tree
//! until the proof closes: under its root split the MAP tree opens with a split that only pays
//! off one level further down. Choosing each split by the best it allows one level below (each
//! child a leaf, or split once more into two leaves) finds that subtree, and soybean's MAP tree
//! too. Grown at the root it does worse than the greedy tree, so the search regrows each node
//! of its incumbent tree and keeps a regrown subtree only where it costs less (see
//! `Search::improve_incumbent`).
//!
//! Two classes. The cost of a regrown subtree is exact: every node counts the features that
//! divide it. Only the choice of a split guesses, taking the leaves below the look-ahead to be
//! splittable. When the budget runs out, the nodes not grown yet stay leaves (their cost is
//! still exact).

use super::model::Posterior;
use crate::data::popcount::intersection_counts2_each;
use crate::data::{Bitset, Dataset};
use crate::search::Budget;

/// `(rows, class-1 rows)` of a subset.
type Counts = (u64, u64);

/// A subtree's shape: leaves, and splits on a feature (`[= 0 child, = 1 child]`).
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Shape {
    Leaf,
    Split(usize, Box<[Shape; 2]>),
}

impl Shape {
    /// Whether its root splits on `feature`.
    pub(super) fn splits_on(&self, feature: usize) -> bool {
        matches!(self, Shape::Split(f, _) if *f == feature)
    }
}

/// Grows subtrees over one dataset, with reused scratch space.
pub(super) struct Grower<'a> {
    data: &'a Dataset,
    model: &'a Posterior,
    /// Growing stops (every node left a leaf) once the budget's time is up or the search is
    /// interrupted: a regrowth on wide data counts for a while.
    budget: &'a Budget,
    /// The binary features (the only ones MAPTree splits on).
    features: Vec<usize>,
    /// `(rows, class-1 rows)` of each column of `columns` on the subset counted last.
    counts: Vec<Counts>,
    columns: Vec<&'a [u64]>,
}

/// The features of `candidates` that divide a subset of `total` rows, with their `= 1` sides'
/// `(rows, class-1 rows)`.
fn dividers(candidates: &[usize], counts: &[Counts], total: u64) -> Vec<(usize, Counts)> {
    let sides = candidates.iter().zip(counts);
    let divides = |&(_, &(n1, _)): &(&usize, &Counts)| n1 > 0 && n1 < total;
    sides.filter(divides).map(|(&f, &c)| (f, c)).collect()
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
            features,
            counts: Vec::new(),
            columns: Vec::new(),
        }
    }

    /// The `(rows, class-1 rows)` of `rows` and of the `= 1` side of each of `candidates`
    /// within it.
    fn count(&mut self, rows: &Bitset, candidates: &[usize]) -> Counts {
        let class1 = self.data.rows_of_class(1);
        self.columns.clear();
        let columns = candidates
            .iter()
            .map(|&f| self.data.rows_with(f, 1).words());
        self.columns.extend(columns);
        self.counts.clear();
        self.counts.resize(candidates.len(), (0, 0));
        intersection_counts2_each(
            rows.words(),
            &self.columns,
            class1.words(),
            &mut self.counts,
        );
        (rows.count(), rows.intersection_count(class1))
    }

    /// Whether the budget stopped growing (time up or interrupted; its expansion and memory
    /// limits are the search's to check).
    fn stopped(&self) -> bool {
        self.budget.check(0, 0).is_some()
    }

    /// Cost of a leaf of `(rows, class-1 rows)` at `depth`.
    fn leaf(&self, depth: u32, splittable: bool, (n, b): Counts) -> f64 {
        self.model.leaf_cost(depth, splittable, &[n - b, b])
    }

    /// The counts of `rows` and the features that divide it (see [`dividers`]).
    fn node(&mut self, rows: &Bitset) -> (Counts, Vec<(usize, Counts)>) {
        let features = std::mem::take(&mut self.features);
        let node = self.count(rows, &features);
        self.features = features;
        (node, dividers(&self.features, &self.counts, node.0))
    }

    /// The subtree grown from `rows` at `depth`, each split chosen by the look-ahead, with its
    /// exact cost. A leaf wherever the grown split costs more than the leaf.
    pub(super) fn grow(&mut self, rows: &Bitset, depth: u32) -> (f64, Shape) {
        let (node, valid) = self.node(rows);
        let leaf = self.leaf(depth, !valid.is_empty(), node);
        if self.stopped() {
            return (leaf, Shape::Leaf);
        }
        let Some(feature) = self.best_split(rows, depth, node, &valid, leaf) else {
            return (leaf, Shape::Leaf);
        };
        let grown = self.grow_below(rows, depth, feature, valid.len());
        match grown.0 < leaf {
            true => grown,
            false => (leaf, Shape::Leaf),
        }
    }

    /// The subtree that splits `rows` at `depth` on `feature` (which divides it) and grows
    /// both children, with its exact cost.
    pub(super) fn grow_under(&mut self, rows: &Bitset, depth: u32, feature: usize) -> (f64, Shape) {
        let n_valid = self.node(rows).1.len();
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
        (cost, Shape::Split(feature, Box::new(children)))
    }

    /// The split of `rows` (counts `node`, dividing features `valid`) whose children cost
    /// least when each is a leaf or split once into two leaves (the first on ties); None when
    /// none costs less than `leaf`.
    fn best_split(
        &mut self,
        rows: &Bitset,
        depth: u32,
        node: Counts,
        valid: &[(usize, Counts)],
        leaf: f64,
    ) -> Option<usize> {
        let candidates: Vec<usize> = valid.iter().map(|&(f, _)| f).collect();
        let pen = self.model.split_penalty(depth, valid.len());
        let mut best = (leaf, None);
        let mut child = Bitset::empty(rows.len());
        for &(f, ones) in valid {
            if self.stopped() {
                break;
            }
            let zeros = (node.0 - ones.0, node.1 - ones.1);
            let mut cost = pen;
            for (side, counts) in [(0, zeros), (1, ones)] {
                rows.and_into(self.data.rows_with(f, side), &mut child);
                cost += self.one_split_below(&child, depth + 1, counts, &candidates);
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

    /// The least cost of `rows` (counts `node`) at `depth` as a leaf or split once into two
    /// leaves (taken to be splittable); the features dividing it are among `candidates`.
    fn one_split_below(
        &mut self,
        rows: &Bitset,
        depth: u32,
        node: Counts,
        candidates: &[usize],
    ) -> f64 {
        self.count(rows, candidates);
        let valid = dividers(candidates, &self.counts, node.0);
        let mut best = self.leaf(depth, !valid.is_empty(), node);
        let pen = self.model.split_penalty(depth, valid.len());
        for &(_, ones) in &valid {
            let zeros = (node.0 - ones.0, node.1 - ones.1);
            let cost = pen + self.leaf(depth + 1, true, ones) + self.leaf(depth + 1, true, zeros);
            best = best.min(cost);
        }
        best
    }
}
