//! Looking up the children of a node's splits: each child is found in the graph or gets the
//! bounds a fresh node would have. Lookups read the graph and write only their own scratch space,
//! so an expansion's splits are looked up on two threads at once when the search has a second
//! one ([`crate::search::Fork`]), with the same results in the same order.

use super::count_bound::{CountBound, ValidFloor};
use super::graph::{CompareScratch, Graph, SubsetHasher, NONE};
use super::model::Posterior;
use super::quadrants::EmptyQuadrants;
use crate::data::popcount::intersection_counts2_each;
use crate::data::{Bitset, Dataset};

/// A child subproblem met during an expansion: already in the graph, or not yet.
#[derive(Debug, Clone, Copy)]
pub(super) enum Child {
    Existing(u32),
    Fresh { hash: u64, bounds: (f64, f64) },
}

impl Child {
    pub(super) fn bounds(&self, graph: &Graph<'_>) -> (f64, f64) {
        match *self {
            Child::Existing(id) => (graph.or[id as usize].lb, graph.or[id as usize].ub),
            Child::Fresh { bounds, .. } => bounds,
        }
    }
}

/// How a child subproblem was reached: the node's split `(feature, side)`, the node's dividing
/// features with the class counts of their `= 1` sides (the child's candidates), and the node's
/// class counts.
#[derive(Clone, Copy)]
pub(super) struct Parent<'p> {
    pub split: (usize, usize),
    pub ones: &'p [(usize, Vec<u64>)],
    pub counts: (u64, u64),
}

/// The node an expansion looks up the children of: its rows, its dividing features (each with
/// the class counts of its `= 1` side, ascending), its class counts and its subset hash's sum.
pub(super) struct Expanding<'n> {
    pub rows: &'n Bitset,
    pub depth: u32,
    pub ones: &'n [(usize, Vec<u64>)],
    pub features: &'n [usize],
    pub counts: (u64, u64),
    pub sum: u128,
}

/// What lookups read; shared by the threads of an expansion.
pub(super) struct Lookup<'g, 'a> {
    pub graph: &'g Graph<'a>,
    pub model: &'a Posterior,
    /// Fast mode: fresh nodes get the bounds that knowing their valid features allows.
    pub fast: bool,
    /// Fast mode, two classes: the count bound behind the fresh nodes' look-ahead bound.
    pub count_bound: Option<&'g CountBound<'a>>,
    /// Fast mode, two classes: pairs of features whose counts on a subset follow from others.
    pub quadrants: Option<&'g EmptyQuadrants>,
}

/// What lookups write: one per thread, reused by every lookup.
#[derive(Default)]
pub(super) struct LookupScratch<'a> {
    /// The class counts of each valid feature's `= 1` side.
    children: Vec<(u64, u64)>,
    /// The columns a fresh lookup counts, and their counts.
    columns: Vec<&'a [u64]>,
    counts: Vec<(u64, u64)>,
    /// The look-ahead's floors (also lent to the expansion's ranking by floors).
    pub floor: ValidFloor,
    /// The graph's comparisons of candidates (with the collisions they met).
    pub compare: CompareScratch<'a>,
    side_rows: Option<Bitset>,
    hashes: Vec<u64>,
}

impl<'a> Lookup<'_, 'a> {
    /// Looks up both children (`= 1` first) of the splits of `node` on `features`, in order,
    /// appending them to `out` as `[= 0 child, = 1 child]`. The children are hashed first and
    /// their cache entries prefetched in two waves (cache slots, then the nodes they name) so
    /// that the cache misses overlap; one pass per split, since the `= 0` child's linear sum is
    /// the node's minus the `= 1` child's.
    pub fn splits(
        &self,
        scratch: &mut LookupScratch<'a>,
        node: &Expanding<'_>,
        features: impl Iterator<Item = usize> + Clone,
        out: &mut Vec<[Child; 2]>,
    ) {
        let data = self.graph.data;
        let hasher = &self.graph.hasher;
        let depth = node.depth + 1;
        let mut hashes = std::mem::take(&mut scratch.hashes);
        hashes.clear();
        for f in features.clone() {
            let one = hasher.sum_and(node.rows, data.rows_with(f, 1));
            for sum in [one, node.sum.wrapping_sub(one)] {
                let hash = SubsetHasher::finish(sum, depth);
                self.graph.prefetch_slot(hash);
                hashes.push(hash);
            }
        }
        for &hash in &hashes {
            self.graph.prefetch_candidate(hash);
        }
        let mut side_rows = scratch
            .side_rows
            .take()
            .unwrap_or_else(|| Bitset::empty(node.rows.len()));
        for (k, f) in features.enumerate() {
            let mut found = [Child::Existing(NONE); 2];
            for (side, hash) in [(1usize, hashes[2 * k]), (0, hashes[2 * k + 1])] {
                node.rows.and_into(data.rows_with(f, side), &mut side_rows);
                debug_assert_eq!(hash, hasher.hash(&side_rows, depth));
                let parent = Parent {
                    split: (f, side),
                    ones: node.ones,
                    counts: node.counts,
                };
                found[side] = self.child(
                    scratch,
                    &side_rows,
                    depth,
                    node.features,
                    hash,
                    Some(parent),
                );
            }
            out.push(found);
        }
        scratch.side_rows = Some(side_rows);
        scratch.hashes = hashes;
    }

    /// The OR node for `rows` at `depth` if cached, else the bounds a fresh one would get;
    /// `candidates` holds every feature that may divide the rows (ascending): a subset is divided
    /// only by features that divide its parent. `parent`, how the rows were reached (then
    /// `candidates` are its features), spares counting what it decides.
    pub fn child(
        &self,
        scratch: &mut LookupScratch<'a>,
        rows: &Bitset,
        depth: u32,
        candidates: &[usize],
        hash: u64,
        parent: Option<Parent<'_>>,
    ) -> Child {
        if let Some(found) = self
            .graph
            .find_with(rows, depth, hash, &mut scratch.compare)
        {
            return Child::Existing(found);
        }
        let data = self.graph.data;
        let counts = data.class_counts(rows);
        let bounds = if self.fast {
            // Fast mode: knowing the valid features tightens both bounds (and settles
            // unsplittable nodes at once).
            let total: u64 = counts.iter().sum();
            let (lb, n_valid) = match self.count_bound {
                Some(bound) => {
                    let known = self.quadrants.zip(parent);
                    let child = (counts[0], counts[1]);
                    let scratch_counts = (&mut scratch.columns, &mut scratch.counts);
                    let children = &mut scratch.children;
                    one_side_counts(
                        data,
                        rows,
                        (candidates, child),
                        known,
                        scratch_counts,
                        children,
                    );
                    let lb = bound.fresh(depth, child, children, &mut scratch.floor);
                    (lb, children.len())
                }
                None => {
                    let n_valid = candidates
                        .iter()
                        .filter(|&&f| {
                            let n1 = rows.intersection_count(data.rows_with(f, 1));
                            n1 > 0 && n1 < total
                        })
                        .count();
                    let lb = self.model.heuristic_known_splits(depth, &counts, n_valid);
                    (lb, n_valid)
                }
            };
            (lb, self.model.leaf_cost(depth, n_valid > 0, &counts))
        } else {
            (
                self.model.heuristic(depth, &counts),
                self.model.leaf_cost(depth, true, &counts),
            )
        };
        Child::Fresh { hash, bounds }
    }
}

/// For every feature of `candidates` that divides `rows` (class counts `child`), the class
/// counts `(class 0, class 1)` of its `= 1` side. Those that `known` (the empty quadrants, and
/// how `rows` was reached) decide are not counted; the rest take one pass over the words each,
/// all in one call.
fn one_side_counts<'d>(
    data: &'d Dataset,
    rows: &Bitset,
    (candidates, child): (&[usize], (u64, u64)),
    known: Option<(&EmptyQuadrants, Parent<'_>)>,
    (columns, counts): (&mut Vec<&'d [u64]>, &mut Vec<(u64, u64)>),
    out: &mut Vec<(u64, u64)>,
) {
    // The decided sides first, then the counted ones: the look-ahead does not mind the order.
    out.clear();
    columns.clear();
    let Some((quadrants, parent)) = known else {
        columns.extend(candidates.iter().map(|&g| data.rows_with(g, 1).words()));
        return count_sides(data, rows, child, columns, counts, out);
    };
    for (&g, (feature, node_ones)) in candidates.iter().zip(parent.ones) {
        debug_assert_eq!(*feature, g, "the candidates are the node's features");
        let node_ones = (node_ones[0], node_ones[1]);
        match quadrants.child_side(parent.split, g, parent.counts, child, node_ones) {
            Some(sides) => out.push(sides),
            None => columns.push(data.rows_with(g, 1).words()),
        }
    }
    count_sides(data, rows, child, columns, counts, out);
}

/// The rest of [`one_side_counts`]: counts the sides of `columns`, appends them to `out`, and
/// keeps the features that divide the rows.
fn count_sides(
    data: &Dataset,
    rows: &Bitset,
    child: (u64, u64),
    columns: &[&[u64]],
    counts: &mut Vec<(u64, u64)>,
    out: &mut Vec<(u64, u64)>,
) {
    counts.clear();
    counts.resize(columns.len(), (0, 0));
    let class1 = data.rows_of_class(1).words();
    intersection_counts2_each(rows.words(), columns, class1, counts);
    out.extend(counts.iter().map(|&(n1, b1)| (n1 - b1, b1)));
    let total = child.0 + child.1;
    out.retain(|&(c0, c1)| c0 + c1 > 0 && c0 + c1 < total);
}
