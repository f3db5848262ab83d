//! The AND/OR graph the Branches search explores: one OR node per subproblem (a row set, plus the
//! remaining depth when a depth limit is set), one AND record per useful split of it.
//!
//! Subproblems are keyed by their exact row set. Without a depth limit the best subtree of a node
//! depends on its rows alone: a feature already used above is constant on those rows, so
//! splitting on it again is useless (see the spec, §8), and the useful splits are the same for
//! every path that reaches the same rows. With a depth limit the key adds the remaining depth.
//!
//! Row sets are stored only for expanded nodes. Every other node remembers its origin (the
//! expanded parent that created it, the feature and the value), so its rows are one AND away:
//! when it is expanded, and when a memo lookup must check a hash match exactly. Children that are
//! closed at sight (empty, out of depth, or whose leaf the purification bound proves optimal) are
//! not nodes at all: their split record keeps just their weight and majority weight.
//!
//! Invariants:
//! - `ub >= optimum >= lb` for every node and child summary; `ub` never increases and `lb` never
//!   decreases;
//! - a node is `complete` exactly when `ub == lb`, and then `best` describes an optimal subtree;
//! - a split is dropped only when its upper bound cannot beat the node's incumbent, so the
//!   node's upper bound (the best kept split or the leaf) stays admissible.

use crate::data::{Bitset, Dataset, SubsetCounter};
use crate::search::cache::{FastHasher, FastMap};
use std::hash::Hasher;

use super::score::{Scale, Score};

/// Index of a node in the arena.
pub type NodeId = u32;
/// Marks "no split" in `best`/`top`, "not built yet" in child slots and the end of hash chains.
pub const NONE: u32 = u32::MAX;

/// One child of a split.
#[derive(Debug, Clone, Copy)]
pub struct Slot {
    /// The child's node, or `NONE` for a child closed at sight (its leaf is optimal).
    pub node: NodeId,
    /// Total weight of the child's rows.
    pub weight: u64,
    /// Weight of the child's majority class.
    pub majority: u64,
}

/// A split of a node: the feature and one child per category.
#[derive(Debug)]
pub struct SplitRec {
    pub feature: u32,
    pub children: Box<[Slot]>,
}

/// An OR node: a subproblem that may still be split.
#[derive(Debug)]
pub struct Node {
    /// Row set, kept once the node is expanded (the root always has it).
    pub support: Option<Bitset>,
    /// The expanded node that created this one, with the feature and value leading here
    /// (`NONE` for the root): the rows are `rows(parent) ∩ (feature = value)`.
    pub origin: (NodeId, u32, u32),
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
    /// Whether `ub` already includes the one-split look-ahead of [`Graph::tighten`].
    pub tightened: bool,
    /// For a node not expanded: the feature of the best one-split tree found by the look-ahead,
    /// which is then the incumbent (`lb`); `NONE` when the incumbent is the leaf.
    pub stump: u32,
    pub splits: Vec<SplitRec>,
    /// Next node whose row set has the same hash (memo chain).
    next_same_hash: NodeId,
}

/// What the one-level look-ahead learns about a subproblem.
pub struct LookAhead {
    /// Upper bound on its best subtree.
    pub ub: Score,
    /// Value of the best tree with at most one split (achievable).
    pub lb: Score,
    /// That tree's split feature, `NONE` for the leaf.
    pub stump: u32,
}

/// Buffers reused by every look-ahead (a search runs thousands, and allocating for each one
/// showed in profiles).
pub struct Scratch {
    rows: Bitset,
    counter: SubsetCounter,
    slots: Vec<Slot>,
    rest: Vec<u64>,
    child: Vec<u64>,
}

impl Default for Scratch {
    fn default() -> Self {
        Scratch {
            rows: Bitset::empty(0),
            counter: SubsetCounter::empty(),
            slots: Vec::new(),
            rest: Vec::new(),
            child: Vec::new(),
        }
    }
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
    /// Heap bytes held by row sets and split records (see [`Graph::memory`] for the total).
    pub bytes: usize,
    /// Memo hits: subproblems reached again through another path.
    pub memo_hits: u64,
    /// Splits dropped because they could not beat their node's incumbent.
    pub dominated_splits: u64,
    scratch: Scratch,
    /// Per-split (upper, lower) sums, reused by every refresh.
    sums: Vec<(Score, Score)>,
}

fn key_hash(support: &Bitset, depth_left: u32) -> u64 {
    let mut h = FastHasher::default();
    for &w in support.words() {
        h.write_u64(w);
    }
    h.write_u32(depth_left);
    h.finish()
}

/// Heap bytes behind a node's split list: the list's buffer at its capacity and each record's
/// slots, each block with the allocator's header and rounding (up to 16 bytes).
fn splits_bytes(splits: &Vec<SplitRec>) -> usize {
    let list = match splits.capacity() {
        0 => 0,
        cap => cap * std::mem::size_of::<SplitRec>() + 16,
    };
    list + splits
        .iter()
        .map(|s| std::mem::size_of::<Slot>() * s.children.len() + 16)
        .sum::<usize>()
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
            memo_hits: 0,
            dominated_splits: 0,
            scratch: Scratch {
                rows: Bitset::empty(data.n_rows()),
                ..Scratch::default()
            },
            sums: Vec::new(),
        }
    }

    /// All the bytes the search holds: row sets and split records, plus the node arena and
    /// the memo table at their allocated capacity (growth by doubling reserves up to twice
    /// what is in use, and that memory is as real to the machine as the rest).
    pub fn memory(&self) -> usize {
        let memo_slot = std::mem::size_of::<(u64, NodeId)>() + 1; // entry + control byte
        self.bytes
            + self.nodes.capacity() * std::mem::size_of::<Node>()
            + self.memo.capacity() * memo_slot * 8 / 7
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

    /// Class totals and row count of `rows ∩ (feature f = v)` without building that set;
    /// `counter` must have been built for `rows` (it serves unweighted data).
    fn child_totals(
        &self,
        rows: &Bitset,
        counter: &SubsetCounter,
        f: usize,
        v: usize,
        out: &mut [u64],
    ) -> u64 {
        match &self.weights {
            None => counter.counts(self.data, f, v, out),
            Some(w) => {
                out.iter_mut().for_each(|x| *x = 0);
                let labels = self.data.labels();
                let mut n = 0;
                for r in rows.iter_and(self.data.rows_with(f, v)) {
                    out[labels[r] as usize] += w[r];
                    n += 1;
                }
                n
            }
        }
    }

    fn child_depth(depth_left: u32) -> u32 {
        if depth_left == u32::MAX {
            u32::MAX
        } else {
            depth_left - 1
        }
    }

    /// Whether a subproblem with this summary is closed at sight: empty, out of depth, or a leaf
    /// proven optimal by the purification bound (ties go to the leaf).
    fn closed(&self, weight: u64, majority: u64, depth_left: u32) -> bool {
        weight == 0 || depth_left == 0 || self.scale.pure_split(weight) <= self.scale.leaf(majority)
    }

    /// Upper and lower bounds of a child slot under a node with `depth_left`.
    pub fn slot_bounds(&self, slot: &Slot, parent_depth_left: u32) -> (Score, Score) {
        if slot.node != NONE {
            let n = &self.nodes[slot.node as usize];
            return (n.ub, n.lb);
        }
        self.summary_bounds(slot, Self::child_depth(parent_depth_left))
    }

    /// Bounds of a subproblem known only by its weight and majority: the leaf below, the
    /// purification bound above (the leaf itself when it is closed).
    fn summary_bounds(&self, slot: &Slot, depth_left: u32) -> (Score, Score) {
        let leaf = self.scale.leaf(slot.majority);
        if self.closed(slot.weight, slot.majority, depth_left) {
            (leaf, leaf)
        } else {
            (self.scale.pure_split(slot.weight), leaf)
        }
    }

    /// Whether a child slot is known to be solved exactly.
    pub fn slot_complete(&self, slot: &Slot, parent_depth_left: u32) -> bool {
        if slot.node != NONE {
            return self.nodes[slot.node as usize].complete;
        }
        self.closed(
            slot.weight,
            slot.majority,
            Self::child_depth(parent_depth_left),
        )
    }

    /// Adds the root (all rows); None when the root is closed at sight (the leaf is optimal).
    pub fn add_root(&mut self) -> Option<NodeId> {
        let rows = self.data.all_rows();
        let totals = self.class_totals(&rows);
        let depth = self.limits.max_depth.unwrap_or(u32::MAX);
        let (weight, majority) = (
            totals.iter().sum(),
            totals.iter().copied().max().unwrap_or(0),
        );
        if self.closed(weight, majority, depth) {
            return None;
        }
        let mut check = Bitset::empty(rows.len());
        let slot = Slot {
            node: NONE,
            weight,
            majority,
        };
        let id = self.node_for(&rows, slot, depth, (NONE, 0, 0), &mut check);
        self.bytes += rows.heap_bytes() + 16; // + the allocator's block header
        self.nodes[id as usize].support = Some(rows);
        Some(id)
    }

    /// Whether a split of rows weighing `weight` whose heaviest child weighs `largest` is
    /// dominated by not splitting: the other children are [`Scale::negligible`], so routing
    /// every row through the heaviest child's subtree loses no objective and saves a split.
    /// Only without a minimum leaf size: that rerouting can fill an empty leaf with too few rows.
    fn dominated(&self, weight: u64, largest: u64) -> bool {
        self.limits.min_samples_leaf <= 1 && self.scale.negligible(weight - largest)
    }

    /// Sharpens a node's upper bound with the one-split look-ahead (once per node; expanded
    /// nodes have exact split sums already). Returns whether anything was computed.
    pub fn tighten(&mut self, id: NodeId) -> bool {
        let node = &self.nodes[id as usize];
        if node.tightened || node.expanded || node.complete {
            return false;
        }
        let depth_left = node.depth_left;
        let mut scratch = std::mem::take(&mut self.scratch);
        let mut rows = std::mem::replace(&mut scratch.rows, Bitset::empty(0));
        self.rows_into(id, &mut rows);
        let totals = self.class_totals(&rows);
        let look = self.look_ahead(&rows, &totals, depth_left, &mut scratch);
        scratch.rows = rows;
        self.scratch = scratch;
        let node = &mut self.nodes[id as usize];
        node.ub = node.ub.min(look.ub);
        if look.lb > node.lb {
            node.lb = look.lb;
            node.stump = look.stump;
        }
        node.tightened = true;
        node.complete = node.ub <= node.lb;
        true
    }

    /// Fills `slots` with the child summaries of splitting `rows` (counted by `counter`, with
    /// class `totals` over `count` rows) on feature `f` — the last child by subtraction — and
    /// returns whether the split is worth considering: at least two non-empty children, none
    /// below the minimum leaf size, and not [`Graph::dominated`].
    fn split_summaries(
        &self,
        rows: &Bitset,
        counter: &SubsetCounter,
        (totals, count): (&[u64], u64),
        f: usize,
        slots: &mut Vec<Slot>,
        (rest, child): (&mut [u64], &mut [u64]),
    ) -> bool {
        slots.clear();
        let n_values = self.data.n_values(f);
        if n_values < 2 {
            return false;
        }
        rest.copy_from_slice(totals);
        let mut rest_count = count;
        let (mut non_empty, mut too_small) = (0, false);
        for v in 0..n_values {
            let c = if v + 1 == n_values {
                child.copy_from_slice(rest);
                rest_count
            } else {
                let c = self.child_totals(rows, counter, f, v, child);
                rest.iter_mut().zip(child.iter()).for_each(|(r, x)| *r -= x);
                rest_count -= c;
                c
            };
            non_empty += usize::from(c > 0);
            too_small |= c > 0 && c < self.limits.min_samples_leaf;
            let majority = child.iter().copied().max().unwrap_or(0);
            slots.push(Slot {
                node: NONE,
                weight: child.iter().sum(),
                majority,
            });
        }
        let weight: u64 = totals.iter().sum();
        let largest = slots.iter().map(|s| s.weight).max().unwrap_or(0);
        non_empty >= 2 && !too_small && !self.dominated(weight, largest)
    }

    /// Upper bound for a subproblem, one level sharper than purification: a tree on these rows
    /// is a leaf, or splits on some feature f into children whose subtrees are each worth at
    /// most their own purification bound (exactly their leaf when they are closed). So the
    /// bound is `max(leaf, max_f Σ_v ub0(child_v) − λ)`; with one level of depth left it is exact.
    fn look_ahead(
        &self,
        rows: &Bitset,
        totals: &[u64],
        depth_left: u32,
        scratch: &mut Scratch,
    ) -> LookAhead {
        let leaf = self.scale.leaf(totals.iter().copied().max().unwrap_or(0));
        let child_depth = Self::child_depth(depth_left);
        let mut best = leaf;
        let (mut stump_value, mut stump) = (leaf, NONE);
        let count = rows.count();
        scratch.counter.reset(self.data, rows);
        scratch.rest.clear();
        scratch.rest.extend_from_slice(totals);
        scratch.child.clear();
        scratch.child.extend_from_slice(totals);
        let Scratch {
            counter,
            slots,
            rest,
            child,
            ..
        } = scratch;
        for f in 0..self.data.n_features() {
            let buffers = (&mut rest[..], &mut child[..]);
            if !self.split_summaries(rows, counter, (totals, count), f, slots, buffers) {
                continue;
            }
            let cost = self.scale.split_cost;
            let bound: Score = slots
                .iter()
                .map(|c| self.summary_bounds(c, child_depth).0)
                .sum();
            let as_leaves: Score = slots.iter().map(|c| self.scale.leaf(c.majority)).sum();
            best = best.max(bound - cost);
            if as_leaves - cost > stump_value {
                (stump_value, stump) = (as_leaves - cost, f as u32);
            }
        }
        LookAhead {
            ub: best,
            lb: stump_value,
            stump,
        }
    }

    /// Writes the rows of a node that is not expanded (built from its origin) into `out`.
    fn rows_into(&self, id: NodeId, out: &mut Bitset) {
        let node = &self.nodes[id as usize];
        let (parent, f, v) = node.origin;
        match (
            &node.support,
            self.nodes
                .get(parent as usize)
                .and_then(|p| p.support.as_ref()),
        ) {
            (Some(rows), _) => out.clone_from(rows),
            (None, Some(parent_rows)) => {
                parent_rows.and_into(self.data.rows_with(f as usize, v as usize), out)
            }
            // Unreachable by construction: a node's origin is expanded and keeps its rows.
            (None, None) => *out = Bitset::empty(out.len()),
        }
    }

    /// The existing node of the subproblem (`rows`, `depth_left`), if any; hash matches are
    /// checked against the candidate's actual rows.
    fn lookup(
        &self,
        rows: &Bitset,
        depth_left: u32,
        hash: u64,
        check: &mut Bitset,
    ) -> Option<NodeId> {
        let mut id = self.memo.get(&hash).copied().unwrap_or(NONE);
        while id != NONE {
            let n = &self.nodes[id as usize];
            if n.depth_left == depth_left {
                self.rows_into(id, check);
                if check == rows {
                    return Some(id);
                }
            }
            id = n.next_same_hash;
        }
        None
    }

    /// The node of the subproblem with these rows, created (without storing the rows) if new.
    fn node_for(
        &mut self,
        rows: &Bitset,
        slot: Slot,
        depth_left: u32,
        origin: (NodeId, u32, u32),
        check: &mut Bitset,
    ) -> NodeId {
        let hash = key_hash(rows, depth_left);
        if let Some(id) = self.lookup(rows, depth_left, hash, check) {
            self.memo_hits += 1;
            return id;
        }
        let id = self.nodes.len() as NodeId;
        let previous = self.memo.insert(hash, id).unwrap_or(NONE);
        let leaf = self.scale.leaf(slot.majority);
        let ub = self.scale.pure_split(slot.weight);
        self.nodes.push(Node {
            support: None,
            origin,
            depth_left,
            leaf,
            ub,
            lb: leaf,
            best: NONE,
            top: NONE,
            expanded: false,
            complete: false,
            tightened: false,
            stump: NONE,
            splits: Vec::new(),
            next_same_hash: previous,
        });
        id
    }

    /// Creates the split records of an open node: one per feature that sends its rows to at
    /// least two children (each non-empty child holding at least `min_samples_leaf` rows), except
    /// those that already cannot beat the best one-level tree.
    pub fn expand(&mut self, id: NodeId) {
        if self.nodes[id as usize].support.is_none() {
            let mut own = Bitset::empty(self.data.n_rows());
            self.rows_into(id, &mut own);
            self.bytes += own.heap_bytes() + 16;
            self.nodes[id as usize].support = Some(own);
        }
        // A copy, because children created below may be checked against this node's rows.
        let rows = self.nodes[id as usize]
            .support
            .clone()
            .unwrap_or_else(|| self.data.all_rows());
        let depth = self.nodes[id as usize].depth_left;
        let parent_totals = self.class_totals(&rows);
        let parent_count = rows.count();
        let cost = self.scale.split_cost;
        let mut candidates: Vec<(SplitRec, Score, Score)> = Vec::new();
        let counter = SubsetCounter::new(self.data, &rows);
        let mut slots = Vec::new();
        let (mut rest, mut child) = (parent_totals.clone(), parent_totals.clone());
        for f in 0..self.data.n_features() {
            let scratch = (&mut rest[..], &mut child[..]);
            let totals = (&parent_totals[..], parent_count);
            if !self.split_summaries(&rows, &counter, totals, f, &mut slots, scratch) {
                // All rows in one child, a leaf too small, or the other children too light to
                // pay for the split: dominated by not splitting.
                continue;
            }
            let slots = std::mem::take(&mut slots);
            let (mut ub, mut lb) = (-cost, -cost);
            for slot in &slots {
                let (u, l) = self.slot_bounds(slot, depth);
                ub += u;
                lb += l;
            }
            let rec = SplitRec {
                feature: f as u32,
                children: slots.into_boxed_slice(),
            };
            candidates.push((rec, ub, lb));
        }
        // Keep only splits that may still beat the best one-level tree (and that tree's split).
        let (mut incumbent, mut incumbent_split) = (self.nodes[id as usize].leaf, NONE as usize);
        for (i, (_, _, lb)) in candidates.iter().enumerate() {
            if *lb > incumbent {
                (incumbent, incumbent_split) = (*lb, i);
            }
        }
        let before = candidates.len();
        let mut splits: Vec<SplitRec> = candidates
            .into_iter()
            .enumerate()
            .filter(|(i, (_, ub, _))| *ub > incumbent || *i == incumbent_split)
            .map(|(_, (rec, _, _))| rec)
            .collect();
        self.dominated_splits += (before - splits.len()) as u64;
        // Children that may still split become nodes (shared with every other parent that
        // reaches the same rows); the others stay summaries.
        let child_depth = Self::child_depth(depth);
        let mut child_rows = Bitset::empty(rows.len());
        let mut check = Bitset::empty(rows.len());
        for rec in &mut splits {
            let f = rec.feature as usize;
            for (v, slot) in rec.children.iter_mut().enumerate() {
                if !self.closed(slot.weight, slot.majority, child_depth) {
                    rows.and_into(self.data.rows_with(f, v), &mut child_rows);
                    let origin = (id, f as u32, v as u32);
                    slot.node = self.node_for(&child_rows, *slot, child_depth, origin, &mut check);
                }
            }
        }
        self.bytes += splits_bytes(&splits);
        let node = &mut self.nodes[id as usize];
        node.splits = splits;
        node.expanded = true;
    }

    /// Recomputes a node's bounds, incumbent and top split from its children's current values,
    /// and drops the splits that can no longer beat the incumbent.
    pub fn refresh(&mut self, id: NodeId) {
        let node = &self.nodes[id as usize];
        if !node.expanded || node.complete {
            return;
        }
        let cost = self.scale.split_cost;
        let depth = node.depth_left;
        let mut sums = std::mem::take(&mut self.sums);
        sums.clear();
        let (mut lb, mut best) = (node.leaf, NONE);
        for (i, s) in node.splits.iter().enumerate() {
            let (mut su, mut sl) = (-cost, -cost);
            for slot in s.children.iter() {
                let (u, l) = self.slot_bounds(slot, depth);
                su += u;
                sl += l;
            }
            if sl > lb {
                (lb, best) = (sl, i as u32);
            }
            sums.push((su, sl));
        }
        // Drop dominated splits (never the incumbent's), then find the top one.
        let keep = |i: usize, su: Score| su > lb || i as u32 == best;
        let node = &mut self.nodes[id as usize];
        if sums.iter().enumerate().any(|(i, &(su, _))| !keep(i, su)) {
            let before = splits_bytes(&node.splits);
            let n_kept = (0..sums.len()).filter(|&i| keep(i, sums[i].0)).count();
            let mut new_best = NONE;
            let mut kept = Vec::with_capacity(n_kept);
            for (i, rec) in std::mem::take(&mut node.splits).into_iter().enumerate() {
                if keep(i, sums[i].0) {
                    if i as u32 == best {
                        new_best = kept.len() as u32;
                    }
                    sums[kept.len()] = sums[i];
                    kept.push(rec);
                }
            }
            self.dominated_splits += (sums.len() - kept.len()) as u64;
            sums.truncate(kept.len());
            node.splits = kept;
            best = new_best;
            self.bytes = self.bytes - before + splits_bytes(&node.splits);
        }
        let (mut top_ub, mut top) = (Score::MIN, NONE);
        for (i, (su, _)) in sums.iter().enumerate() {
            if *su > top_ub {
                (top_ub, top) = (*su, i as u32);
            }
        }
        let top_ub = top_ub.max(node.leaf);
        debug_assert!(
            top_ub <= node.ub && lb >= node.lb,
            "bounds must tighten monotonically"
        );
        node.ub = top_ub.max(lb);
        node.lb = lb;
        node.best = best;
        node.top = top;
        node.complete = node.ub <= lb;
        if node.complete && node.splits.len() > 1 {
            // Only the incumbent's split is needed from now on.
            let before = splits_bytes(&node.splits);
            node.splits = if best == NONE {
                Vec::new()
            } else {
                vec![node.splits.swap_remove(best as usize)]
            };
            node.best = if best == NONE { NONE } else { 0 };
            node.top = NONE;
            self.bytes = self.bytes - before + splits_bytes(&node.splits);
        }
        self.sums = sums;
    }
}
