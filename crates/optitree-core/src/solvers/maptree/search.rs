//! The MAPTree best-first AND/OR search in the reference's order (spec §2.5): descend along
//! best-lower-bound splits into the child with the larger gap, expand, then propagate lower bounds
//! and upper bounds upwards, until the root's bounds meet or a limit stops the search.
//!
//! Differences from the reference, all fixes of its defects (spec §2.8): an unsplittable node's
//! lower bound rises through `update_lb` and propagates (D1; the descent also repairs, never
//! dereferences, a missing best split); every row counts whatever `n % 64` is (D2); the cache
//! compares exact subsets (D3).
//!
//! Invariant: for every OR node `lb <= ub`; the root's `lb` never decreases and its `ub` never
//! increases; `extract` returns a tree whose cost is at most the root's `ub`.

use std::collections::VecDeque;

use super::count_bound::{largest_group, CountBound, ValidFloor};
use super::graph::{Graph, NONE};
use super::model::Posterior;
use super::small::{SmallProblem, SMALL_ROWS};
use crate::data::Bitset;
use crate::search::{Budget, ProgressBoard, Snapshot, Status};

/// The search state: the graph, the model and the counters.
pub struct Search<'a> {
    pub graph: Graph<'a>,
    model: &'a Posterior,
    pub expansions: u64,
    /// Stamp for the visited marks of one propagation.
    epoch: u32,
    /// Descents that met an expanded, unsolved node without a best split and repaired it.
    pub repairs: u64,
    /// Fast mode: nodes with at most this many rows are solved exactly (0: reference order).
    small_rows: usize,
    /// Nodes closed by the exact small-subproblem solver.
    pub exact_closures: u64,
    /// Splits not materialised because their bound lost to the node's upper bound (fast mode).
    pub pruned_splits: u64,
    /// Fast mode, two classes: the count bound behind the fresh nodes' look-ahead bound.
    count_bound: Option<CountBound<'a>>,
}

/// A child subproblem met during an expansion: already in the graph, or not yet.
#[derive(Debug, Clone, Copy)]
enum Child {
    Existing(u32),
    Fresh { hash: u64, bounds: (f64, f64) },
}

impl Child {
    fn bounds(&self, graph: &Graph<'_>) -> (f64, f64) {
        match *self {
            Child::Existing(id) => (graph.or[id as usize].lb, graph.or[id as usize].ub),
            Child::Fresh { bounds, .. } => bounds,
        }
    }
}

impl<'a> Search<'a> {
    /// A search holding only the root.
    pub fn new(data: &'a crate::data::Dataset, model: &'a Posterior, small_rows: usize) -> Self {
        let rows = data.all_rows();
        let counts = data.class_counts(&rows);
        let lb = model.heuristic(0, &counts);
        let ub = model.leaf_cost(0, true, &counts);
        let count_bound = (small_rows > 0 && counts.len() == 2)
            .then(|| CountBound::new(model, largest_group(data), counts[0], counts[1]));
        Search {
            graph: Graph::new(data, lb, ub),
            model,
            expansions: 0,
            epoch: 0,
            repairs: 0,
            small_rows: small_rows.min(SMALL_ROWS),
            exact_closures: 0,
            pruned_splits: 0,
            count_bound,
        }
    }

    /// The model the search scores with.
    pub fn model(&self) -> &'a Posterior {
        self.model
    }

    /// Root bounds `(lb, ub)`.
    pub fn bounds(&self) -> (f64, f64) {
        (self.graph.or[0].lb, self.graph.or[0].ub)
    }

    fn penalty(&self, id: u32) -> f64 {
        let o = &self.graph.or[id as usize];
        self.model.split_penalty(o.depth, o.n_valid as usize)
    }

    /// Runs until the root is solved or the budget (or `max_expansions`) stops it.
    pub fn run(
        &mut self,
        budget: &Budget,
        max_expansions: Option<u64>,
        board: Option<&ProgressBoard>,
    ) -> Status {
        let mut last_post = 0.0;
        let dived = if self.small_rows > 0 {
            self.dive(budget, max_expansions)
        } else {
            None
        };
        let status = dived.unwrap_or_else(|| loop {
            if self.graph.or[0].solved() {
                break Status::Optimal;
            }
            if max_expansions.is_some_and(|k| self.expansions >= k) {
                break Status::NodeLimit;
            }
            if let Some(status) = budget.check(self.expansions, self.graph.memory()) {
                break status;
            }
            if let Some(status) = self.step(budget) {
                break status;
            }
            if let Some(board) = board {
                let seconds = budget.elapsed();
                if seconds - last_post > 0.2 {
                    last_post = seconds;
                    self.post(board, seconds);
                }
            }
        });
        if let Some(board) = board {
            self.post(board, budget.elapsed()); // the final figures, for the last report
        }
        status
    }

    /// Posts the search's figures (bounds on the MAP tree's cost) for the progress display.
    fn post(&self, board: &ProgressBoard, seconds: f64) {
        let (lb, ub) = self.bounds();
        board.post(Snapshot {
            iterations: self.expansions,
            expansions: self.expansions,
            lower_bound: lb,
            upper_bound: ub,
            cached: self.graph.or.len() as u64,
            memory_bytes: self.graph.memory() as u64,
            seconds,
        });
    }

    /// Fast mode: grows the greedy tree first, depth first along best-upper-bound splits and
    /// expanding every node on it, so that a good tree is known from the start instead of
    /// whenever the best-first order reaches deep nodes (on wide data that can take the whole
    /// time limit). Expanding in any order keeps every bound valid.
    fn dive(&mut self, budget: &Budget, max_expansions: Option<u64>) -> Option<Status> {
        let data = self.graph.data;
        let mut stack = vec![(0u32, data.all_rows())];
        while let Some((id, rows)) = stack.pop() {
            if max_expansions.is_some_and(|k| self.expansions >= k) {
                return Some(Status::NodeLimit);
            }
            if let Some(status) = budget.check(self.expansions, self.graph.memory()) {
                return Some(status);
            }
            let node = &self.graph.or[id as usize];
            if node.solved() {
                continue;
            }
            if !node.expanded {
                self.open(id, &rows);
            }
            let best = self.graph.or[id as usize].best_ub;
            if best == NONE {
                continue;
            }
            let and = &self.graph.and[best as usize];
            let (f, children) = (and.feature as usize, and.child);
            for side in [0, 1] {
                stack.push((children[side], rows.and(data.rows_with(f, side))));
            }
        }
        None
    }

    /// One iteration: descend, expand, propagate. Returns a status if the budget stopped it.
    pub fn step(&mut self, budget: &Budget) -> Option<Status> {
        let (node, rows) = loop {
            match self.descend() {
                Ok(found) => break found,
                // A stale node on the path was repaired; descend again from the root.
                Err(()) => {
                    self.repairs += 1;
                    if self.graph.or[0].solved() {
                        return None; // the repair settled the root
                    }
                    if let Some(status) = budget.check(self.expansions, self.graph.memory()) {
                        return Some(status);
                    }
                }
            }
        };
        self.open(node, &rows);
        None
    }

    /// Expands `id` (or solves it outright when small) and propagates its new bounds.
    fn open(&mut self, id: u32, rows: &Bitset) {
        if rows.count() as usize <= self.small_rows {
            self.close_exactly(id, rows);
        } else {
            self.expand(id, rows);
        }
        self.expansions += 1;
        self.propagate_lb(id);
        self.propagate_ub(id);
    }

    /// Follows best-lower-bound splits from the root to an unexpanded node, into the child with
    /// the larger gap (ties to the feature = 0 child). Returns the node and its rows.
    fn descend(&mut self) -> Result<(u32, Bitset), ()> {
        let data = self.graph.data;
        let mut at = 0u32;
        let mut rows = data.all_rows();
        let mut path = Vec::new();
        while self.graph.or[at as usize].expanded {
            path.push(at);
            let best = self.graph.or[at as usize].best_lb;
            if best == NONE {
                // An expanded node without a best split: solved, but an ancestor's bound did
                // not hear of it (the reference dereferences null here, D1; rounding can also
                // leave a bound one ulp stale). Recompute the path bottom-up and start over.
                for &id in path.iter().rev() {
                    self.update_lb(id);
                }
                return Err(());
            }
            let and = &self.graph.and[best as usize];
            let (c0, c1) = (
                &self.graph.or[and.child[0] as usize],
                &self.graph.or[and.child[1] as usize],
            );
            let side = usize::from(c0.ub - c0.lb < c1.ub - c1.lb);
            rows.and_assign(data.rows_with(and.feature as usize, side));
            at = and.child[side];
        }
        Ok((at, rows))
    }

    /// Fast mode: solves a small node outright; its bounds become its exact optimum.
    fn close_exactly(&mut self, id: u32, rows: &Bitset) {
        let depth = self.graph.or[id as usize].depth;
        let value = SmallProblem::new(self.graph.data, self.model, rows).solve(depth);
        let o = &mut self.graph.or[id as usize];
        o.expanded = true;
        o.exact = true;
        o.ub = value; // the lower bound follows in update_lb
        self.exact_closures += 1;
    }

    /// Creates the AND children of `id` for every valid feature (ascending) and their OR
    /// children (from the cache when the same rows at the same depth were met before).
    fn expand(&mut self, id: u32, rows: &Bitset) {
        let data = self.graph.data;
        let depth = self.graph.or[id as usize].depth;
        self.graph.or[id as usize].expanded = true;
        let counts = data.class_counts(rows);
        let total: u64 = counts.iter().sum();
        let valid: Vec<usize> = self.dividing(rows, total).collect();
        if valid.is_empty() {
            // Unsplittable: the exact leaf cost. The lower bound follows in update_lb (D1 fix).
            self.graph.or[id as usize].ub = self.model.leaf_cost(depth, false, &counts);
            return;
        }
        let pen = self.model.split_penalty(depth, valid.len());
        let first = self.graph.and.len() as u32;
        let mut made = 0u32;
        let mut sides = [Bitset::empty(rows.len()), Bitset::empty(rows.len())];
        for &f in &valid {
            let mut found = [Child::Existing(NONE); 2];
            for side in [1usize, 0] {
                rows.and_into(data.rows_with(f, side), &mut sides[side]);
                found[side] = self.lookup(&sides[side], depth + 1);
            }
            if self.small_rows > 0
                && (found[0].bounds(&self.graph).0 + found[1].bounds(&self.graph).0) + pen
                    >= self.graph.or[id as usize].ub
            {
                // Fast mode: this split's bound already loses to the node's upper bound, and
                // bounds only move towards each other, so it can never be best: skip it.
                self.pruned_splits += 1;
                continue;
            }
            let mut child = [NONE; 2];
            for side in [1usize, 0] {
                child[side] = self.materialise(found[side], id, f, side, depth + 1);
            }
            let and = self.graph.push_and(f as u32, id, child);
            made += 1;
            let v =
                (self.graph.or[child[0] as usize].ub + self.graph.or[child[1] as usize].ub) + pen;
            let o = &mut self.graph.or[id as usize];
            if v < o.ub {
                o.ub = v;
                o.best_ub = and;
            }
        }
        let o = &mut self.graph.or[id as usize];
        o.first_child = first;
        o.n_children = made;
        o.n_valid = valid.len() as u32;
    }

    /// The OR node for `rows` at `depth` if cached, else the bounds a fresh one would get.
    fn lookup(&mut self, rows: &Bitset, depth: u32) -> Child {
        let hash = super::graph::subset_hash(rows, depth);
        if let Some(found) = self.graph.find(rows, depth, hash) {
            return Child::Existing(found);
        }
        let data = self.graph.data;
        let counts = data.class_counts(rows);
        let bounds = if self.small_rows > 0 {
            // Fast mode: knowing the valid features tightens both bounds (and settles
            // unsplittable nodes at once).
            let total: u64 = counts.iter().sum();
            let (lb, n_valid) = match &self.count_bound {
                Some(bound) => {
                    // One pass per feature gives both its validity and its `= 1` child's counts.
                    let class1 = rows.and(data.rows_of_class(1));
                    let children: Vec<(u64, u64)> = self
                        .dividing_counts(rows, total)
                        .map(|(f, n1)| {
                            let b1 = class1.intersection_count(data.rows_with(f, 1));
                            (n1 - b1, b1)
                        })
                        .collect();
                    let n_valid = children.len();
                    let perfect_split = self.model.heuristic_known_splits(depth, &counts, n_valid);
                    if n_valid == 0 {
                        (perfect_split, 0)
                    } else {
                        // Both are lower bounds; the look-ahead is usually far tighter.
                        let parent = (counts[0], counts[1]);
                        let ones = children.iter().map(|&(a1, b1)| a1 + b1);
                        let floor = ValidFloor::new(total, ones);
                        let look =
                            bound.look_ahead(depth, parent, children.into_iter(), n_valid, &floor);
                        (perfect_split.max(look), n_valid)
                    }
                }
                None => {
                    let n_valid = self.dividing(rows, total).count();
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

    /// The node of a looked-up child, inserting a fresh one (reached from `parent` by `f = side`).
    fn materialise(&mut self, child: Child, parent: u32, f: usize, side: usize, depth: u32) -> u32 {
        match child {
            Child::Existing(id) => id,
            Child::Fresh { hash, bounds } => {
                self.graph
                    .insert(hash, bounds, depth, parent, (f * 2 + side) as u32)
            }
        }
    }

    /// The features that divide `rows` (`total` of them), ascending.
    fn dividing<'r>(&self, rows: &'r Bitset, total: u64) -> impl Iterator<Item = usize> + 'r
    where
        'a: 'r,
    {
        self.dividing_counts(rows, total).map(|(f, _)| f)
    }

    /// [`Self::dividing`], each feature with the number of `rows` on its `= 1` side.
    fn dividing_counts<'r>(
        &self,
        rows: &'r Bitset,
        total: u64,
    ) -> impl Iterator<Item = (usize, u64)> + 'r
    where
        'a: 'r,
    {
        let data = self.graph.data;
        (0..data.n_features())
            .filter(move |&f| data.n_values(f) == 2)
            .map(move |f| (f, rows.intersection_count(data.rows_with(f, 1))))
            .filter(move |&(_, n1)| n1 > 0 && n1 < total) // some of the rows, not all
    }

    /// Recomputes `lb` from the children (or the node's own `ub`); returns whether it rose.
    fn update_lb(&mut self, id: u32) -> bool {
        let o = &self.graph.or[id as usize];
        let (first, n) = (o.first_child, o.n_children);
        let mut best = o.ub;
        let mut best_and = NONE;
        if n > 0 {
            let pen = self.penalty(id);
            for a in first..first + n {
                let and = &self.graph.and[a as usize];
                let v = (self.graph.or[and.child[0] as usize].lb
                    + self.graph.or[and.child[1] as usize].lb)
                    + pen;
                if v < best {
                    best = v;
                    best_and = a;
                }
            }
        }
        let o = &mut self.graph.or[id as usize];
        if self.count_bound.is_some() {
            // The look-ahead bound is consistent only up to rounding: never let it fall back.
            best = best.max(o.lb.min(o.ub));
        }
        o.best_lb = best_and;
        let improved = best > o.lb;
        o.lb = best;
        improved
    }

    fn next_epoch(&mut self) -> u32 {
        self.epoch = self.epoch.wrapping_add(1);
        if self.epoch == 0 {
            for o in self.graph.or.iter_mut() {
                o.visited = 0;
            }
            self.epoch = 1;
        }
        self.epoch
    }

    /// Raises lower bounds level by level (FIFO), only into parents whose best-lower-bound split
    /// is the one the change came through, and only into unsolved parents.
    fn propagate_lb(&mut self, source: u32) {
        let epoch = self.next_epoch();
        self.graph.or[source as usize].visited = epoch;
        let mut queue = VecDeque::from([source]);
        while let Some(id) = queue.pop_front() {
            if !self.update_lb(id) {
                continue;
            }
            let parents: Vec<u32> = self.graph.parents(id).collect();
            for a in parents {
                let p = self.graph.and[a as usize].parent;
                let node = &self.graph.or[p as usize];
                if node.visited != epoch && !node.solved() && node.best_lb == a {
                    self.graph.or[p as usize].visited = epoch;
                    queue.push_back(p);
                }
            }
        }
    }

    /// Lowers upper bounds through the changed splits only (incremental, FIFO).
    fn propagate_ub(&mut self, source: u32) {
        let epoch = self.next_epoch();
        self.graph.or[source as usize].visited = epoch;
        let mut queue = VecDeque::from([source]);
        while let Some(id) = queue.pop_front() {
            let parents: Vec<u32> = self.graph.parents(id).collect();
            for a in parents {
                let and = &self.graph.and[a as usize];
                let p = and.parent;
                let v = (self.graph.or[and.child[0] as usize].ub
                    + self.graph.or[and.child[1] as usize].ub)
                    + self.penalty(p);
                let node = &mut self.graph.or[p as usize];
                if v < node.ub {
                    node.ub = v;
                    node.best_ub = a;
                    if node.visited != epoch {
                        node.visited = epoch;
                        queue.push_back(p);
                    }
                }
            }
        }
    }
}
