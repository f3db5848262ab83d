//! The AND/OR graph the Branches search explores: one OR node per subproblem (a row set, plus the
//! remaining depth when a depth limit is set), one AND record per useful split of it.
//!
//! Subproblems are keyed by their exact row set. Without a depth limit the best subtree of a node
//! depends on its rows alone: a feature already used above is constant on those rows, so
//! splitting on it again is useless (see the spec, §8), and the useful splits are the same for
//! every path that reaches the same rows. With a depth limit the key adds the remaining depth.
//!
//! Invariants:
//! - `ub >= optimum >= lb` for every node; `ub` never increases and `lb` never decreases;
//! - a node is `complete` exactly when `ub == lb`, and then `best` describes an optimal subtree;
//! - only nodes that may still be split ("open") keep their row set and enter the memo; nodes
//!   closed at creation (empty, depth exhausted, or leaf proven optimal by the purification bound)
//!   are stored without rows, since they are never expanded.

use crate::data::{Bitset, Dataset};
use crate::search::cache::FastHasher;
use crate::search::cache::FastMap;
use std::hash::Hasher;

use super::score::{Scale, Score};

/// Index of a node in the arena.
pub type NodeId = u32;
/// Marks "no split" in `best`/`top` and "no next node" in hash chains.
pub const NONE: u32 = u32::MAX;

/// A split of a node: the feature and one child per category.
#[derive(Debug)]
pub struct SplitRec {
    pub feature: u32,
    pub children: Box<[NodeId]>,
}

/// An OR node: a subproblem.
#[derive(Debug)]
pub struct Node {
    /// Row set; `Some` only for open nodes.
    pub support: Option<Bitset>,
    /// Remaining depth (`u32::MAX` when unlimited).
    pub depth_left: u32,
    /// Score of making this node a leaf.
    pub leaf: Score,
    /// Upper bound on the best subtree's score.
    pub ub: Score,
    /// Score of the best subtree found so far (the incumbent).
    pub lb: Score,
    /// Index in `splits` of the incumbent's split, `NONE` for a leaf.
    pub best: u32,
    /// Index in `splits` of the split with the largest upper bound, `NONE` if none.
    pub top: u32,
    pub expanded: bool,
    pub complete: bool,
    pub splits: Vec<SplitRec>,
    /// Next node whose row set has the same hash (memo chain).
    next_same_hash: NodeId,
}

/// Problem settings the graph needs.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    pub max_depth: Option<u32>,
    pub min_samples_leaf: u64,
}

/// The arena, the memo and the accounting.
pub struct Graph<'d> {
    pub data: &'d Dataset,
    pub scale: Scale,
    weights: Option<Vec<u64>>,
    limits: Limits,
    pub nodes: Vec<Node>,
    memo: FastMap<u64, NodeId>,
    /// Bytes held by nodes, row sets and split records.
    pub bytes: usize,
    /// Open (memoised) nodes.
    pub cached: u64,
    /// Memo hits: subproblems reached again through another path.
    pub memo_hits: u64,
}

fn key_hash(support: &Bitset, depth_left: u32) -> u64 {
    let mut h = FastHasher::default();
    for &w in support.words() {
        h.write_u64(w);
    }
    h.write_u32(depth_left);
    h.finish()
}

impl<'d> Graph<'d> {
    /// An empty graph for `data`; `weights` are integer row weights (None: all 1).
    pub fn new(data: &'d Dataset, scale: Scale, weights: Option<Vec<u64>>, limits: Limits) -> Self {
        Graph {
            data,
            scale,
            weights,
            limits,
            nodes: Vec::new(),
            memo: FastMap::default(),
            bytes: 0,
            cached: 0,
            memo_hits: 0,
        }
    }

    /// Class totals (weighted) of a row set.
    pub fn class_totals(&self, rows: &Bitset) -> Vec<u64> {
        match &self.weights {
            None => self.data.class_counts(rows),
            Some(w) => {
                let mut out = vec![0u64; self.data.n_classes()];
                let labels = self.data.labels();
                for r in rows.iter() {
                    out[labels[r] as usize] += w[r];
                }
                out
            }
        }
    }

    /// Class totals and row count of `rows ∩ (feature f = v)` without building that set.
    fn child_totals(&self, rows: &Bitset, f: usize, v: usize, out: &mut [u64]) -> u64 {
        let values = self.data.rows_with(f, v);
        match &self.weights {
            None => {
                for (k, slot) in out.iter_mut().enumerate() {
                    *slot = rows.intersection_count3(values, self.data.rows_of_class(k));
                }
                out.iter().sum()
            }
            Some(w) => {
                out.iter_mut().for_each(|x| *x = 0);
                let labels = self.data.labels();
                let mut n = 0;
                for r in rows.iter_and(values) {
                    out[labels[r] as usize] += w[r];
                    n += 1;
                }
                n
            }
        }
    }

    /// Adds the root (all rows).
    pub fn add_root(&mut self) -> NodeId {
        let rows = self.data.all_rows();
        let totals = self.class_totals(&rows);
        let depth = self.limits.max_depth.unwrap_or(u32::MAX);
        self.add(totals, depth, || rows)
    }

    /// Returns the node for a subproblem with the given class totals and remaining depth,
    /// creating it if needed. `rows` is only called when the node is open (may still split).
    fn add(&mut self, totals: Vec<u64>, depth_left: u32, rows: impl FnOnce() -> Bitset) -> NodeId {
        let weight: u64 = totals.iter().sum();
        let leaf = self.scale.leaf(totals.iter().copied().max().unwrap_or(0));
        let pure = self.scale.pure_split(weight);
        if weight == 0 || depth_left == 0 || pure <= leaf {
            // Closed at creation: the leaf is optimal (purification bound, ties to the leaf).
            return self.push(Node::closed(leaf, depth_left));
        }
        let support = rows();
        let hash = key_hash(&support, depth_left);
        let mut id = self.memo.get(&hash).copied().unwrap_or(NONE);
        while id != NONE {
            let n = &self.nodes[id as usize];
            if n.depth_left == depth_left && n.support.as_ref() == Some(&support) {
                self.memo_hits += 1;
                return id;
            }
            id = n.next_same_hash;
        }
        self.bytes += support.heap_bytes();
        self.cached += 1;
        let previous = self
            .memo
            .insert(hash, self.nodes.len() as NodeId)
            .unwrap_or(NONE);
        let mut node = Node::closed(leaf, depth_left);
        node.ub = pure;
        node.complete = false;
        node.support = Some(support);
        node.next_same_hash = previous;
        self.push(node)
    }

    fn push(&mut self, node: Node) -> NodeId {
        self.bytes += std::mem::size_of::<Node>() + 12; // + its memo slot, roughly
        self.nodes.push(node);
        (self.nodes.len() - 1) as NodeId
    }

    /// Creates every useful split of an open node: one per feature that sends the rows to at
    /// least two children, each non-empty child holding at least `min_samples_leaf` rows.
    pub fn expand(&mut self, id: NodeId) {
        let node = &mut self.nodes[id as usize];
        let Some(rows) = node.support.take() else {
            node.expanded = true;
            return;
        };
        let child_depth = if node.depth_left == u32::MAX {
            u32::MAX
        } else {
            node.depth_left - 1
        };
        let n_classes = self.data.n_classes();
        let parent_totals = self.class_totals(&rows);
        let parent_count = rows.count();
        let mut splits = Vec::new();
        let mut totals: Vec<Vec<u64>> = Vec::new();
        let mut counts: Vec<u64> = Vec::new();
        for f in 0..self.data.n_features() {
            let n_values = self.data.n_values(f);
            if n_values < 2 {
                continue;
            }
            totals.clear();
            counts.clear();
            let mut rest = parent_totals.clone();
            let mut rest_count = parent_count;
            for v in 0..n_values {
                let mut t = vec![0u64; n_classes];
                let c = if v + 1 == n_values {
                    // The last child by subtraction: the parent minus its siblings.
                    t.copy_from_slice(&rest);
                    rest_count
                } else {
                    let c = self.child_totals(&rows, f, v, &mut t);
                    rest.iter_mut().zip(&t).for_each(|(r, x)| *r -= x);
                    rest_count -= c;
                    c
                };
                totals.push(t);
                counts.push(c);
            }
            let non_empty = counts.iter().filter(|&&c| c > 0).count();
            if non_empty < 2 {
                continue; // all rows in one child: dominated by not splitting
            }
            let m = self.limits.min_samples_leaf;
            if counts.iter().any(|&c| c > 0 && c < m) {
                continue;
            }
            let mut children = Vec::with_capacity(n_values);
            for (v, t) in totals.drain(..).enumerate() {
                let data = self.data;
                let child = self.add(t, child_depth, || rows.and(data.rows_with(f, v)));
                children.push(child);
            }
            self.bytes += std::mem::size_of::<SplitRec>() + 4 * children.len();
            splits.push(SplitRec {
                feature: f as u32,
                children: children.into_boxed_slice(),
            });
        }
        let node = &mut self.nodes[id as usize];
        node.splits = splits;
        node.expanded = true;
        node.support = Some(rows);
    }

    /// Recomputes a node's bounds, incumbent and top split from its children's current values.
    pub fn refresh(&mut self, id: NodeId) {
        let node = &self.nodes[id as usize];
        if !node.expanded || node.complete {
            return;
        }
        let cost = self.scale.split_cost;
        let (mut lb, mut best) = (node.leaf, NONE);
        let (mut top_ub, mut top) = (Score::MIN, NONE);
        for (i, s) in node.splits.iter().enumerate() {
            let (mut su, mut sl) = (0, 0);
            for &c in s.children.iter() {
                let child = &self.nodes[c as usize];
                su += child.ub;
                sl += child.lb;
            }
            if su > top_ub {
                (top_ub, top) = (su, i as u32);
            }
            if sl - cost > lb {
                (lb, best) = (sl - cost, i as u32);
            }
        }
        let ub = if top == NONE {
            node.leaf
        } else {
            node.leaf.max(top_ub - cost)
        };
        let node = &mut self.nodes[id as usize];
        debug_assert!(
            ub <= node.ub && lb >= node.lb,
            "bounds must tighten monotonically"
        );
        node.ub = ub;
        node.lb = lb;
        node.best = best;
        node.top = top;
        node.complete = ub <= lb;
        if node.complete {
            // A complete node is never expanded again: only the incumbent's split is kept.
            let size = |s: &SplitRec| std::mem::size_of::<SplitRec>() + 4 * s.children.len();
            let before: usize = node.splits.iter().map(size).sum();
            node.splits = if best == NONE {
                Vec::new()
            } else {
                vec![node.splits.swap_remove(best as usize)]
            };
            node.best = if best == NONE { NONE } else { 0 };
            node.top = NONE;
            let after: usize = node.splits.iter().map(size).sum();
            self.bytes -= before - after;
        }
    }
}

impl Node {
    fn closed(leaf: Score, depth_left: u32) -> Node {
        Node {
            support: None,
            depth_left,
            leaf,
            ub: leaf,
            lb: leaf,
            best: NONE,
            top: NONE,
            expanded: false,
            complete: true,
            splits: Vec::new(),
            next_same_hash: NONE,
        }
    }
}
