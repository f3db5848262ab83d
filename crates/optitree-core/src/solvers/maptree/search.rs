//! The MAPTree best-first AND/OR search in the reference's order (spec §2.5): descend along
//! best-lower-bound splits into the child with the larger gap, expand, then propagate lower bounds
//! and upper bounds upwards, until the root's bounds meet or a limit stops the search.
//!
//! Differences from the reference, all fixes of its defects (spec §2.8): an unsplittable node's
//! lower bound rises through `update_lb` and propagates (D1; the descent also repairs, never
//! dereferences, a missing best split); every row counts whatever `n % 64` is (D2); the cache
//! compares exact subsets (D3).
//!
//! The fast mode (same optimum, other path) adds tighter fresh-node bounds, a greedy dive for
//! an early upper bound, exact closure of small nodes and lazy split evaluation
//! (`Search::expand_best`).
//!
//! Invariant: for every OR node `lb <= ub`; the root's `lb` never decreases and its `ub` never
//! increases; `extract` returns a tree whose cost is at most the root's `ub`.

use std::collections::VecDeque;

use super::count_bound::{largest_group, CountBound};
use super::facts::{children_dividers, children_floors, SplitFacts};
use super::graph::{Graph, DEFERRED, NONE};
use super::lookup::{Child, Expanding, Lookup, LookupScratch};
use super::model::Posterior;
use super::quadrants::EmptyQuadrants;
use super::regrow::{Grower, Shape};
use super::small::{SmallProblem, SMALL_ROWS};
use crate::data::popcount::intersection_counts2;
use crate::data::Bitset;
use crate::search::{Budget, Fork, ProgressBoard, Snapshot, Status};

/// Fast mode: splits a node's first expansion evaluates (the most promising two-leaf split among
/// them); each further round evaluates twice as many.
const FIRST_SPLITS: usize = 16;

/// Fast mode, two classes: pair-pass work (word intersections: the node's dividing features
/// squared, times the words that hold its rows, halved) from which a node's splits are ranked
/// with floors ([`ValidFloor`]) on their children's dividers rather than exact counts.
/// Evaluated splits get exact bounds from their lookups either way; only the ranking and the
/// deferred splits' bound are looser. At 20 s the lower bound rose on every wide dataset
/// (mushroom 111.4 -> 113.7, splice-1 109.2 -> 116.1, kr-vs-kp 186.5 -> 189.1) and audiology
/// proved in 14.9 s instead of 17.2; below it (heart-cleveland, soybean) counting pays.
const FLOOR_WORK: usize = 32_768;

/// Fast mode: the incumbent tree is improved by regrown subtrees
/// ([`Search::improve_incumbent`]) after the dive, then when the expansions reach this and each
/// doubling of it (a pass costs about as much as a few hundred expansions on mushroom).
const FIRST_REGROWTH: u64 = 1 << 14;
/// Nodes of the incumbent tree deeper than this are not regrown (each regrowth counts its
/// features' pairs, and the deep nodes' subtrees are small).
const REGROWN_DEPTH: u32 = 4;

/// Fast mode with a second thread: the fewest evaluated splits an expansion hands half of to
/// it (fewer are not worth the hand-over).
const FORK_SPLITS: usize = 4;

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
    /// Splits left out of an expansion behind the node's deferred bound (fast mode).
    pub deferred_splits: u64,
    /// Expansions that materialised a node's deferred splits (fast mode).
    pub reexpansions: u64,
    /// Splits whose children were looked up to rank them (fast mode).
    pub evaluated_splits: u64,
    /// Splits skipped because an earlier feature splits the node the same way (fast mode).
    pub merged_splits: u64,
    /// Fast mode, two classes: the count bound behind the fresh nodes' look-ahead bound.
    count_bound: Option<CountBound<'a>>,
    /// Fast mode: splits a first expansion evaluates (`FIRST_SPLITS`; tests lower it).
    pub first_splits: usize,
    /// Fast mode, two classes: pairs of features whose counts on a subset follow from others.
    pub(super) quadrants: Option<EmptyQuadrants>,
    /// The lookups' scratch space: this thread's, and the second thread's.
    scratch: [LookupScratch<'a>; 2],
    /// Fast mode: whether `run` may start a second thread, which looks up half of an
    /// expansion's splits (the same search either way).
    pub two_threads: bool,
    /// The second thread, while `run` runs.
    fork: Option<Fork>,
    /// Fast mode, two classes: the pair-pass work (`FLOOR_WORK`; tests change it) from which a
    /// node ranks its splits with floors on their children's dividers instead of counts.
    pub floor_work: usize,
    /// The memory limit the search runs under (from its budget), for [`splits_to_keep`].
    memory_limit: Option<usize>,
    /// Evaluated splits left unmaterialised for memory (fast mode).
    pub shed_splits: u64,
    /// Where progress is posted (the run's board), and when it was last.
    board: Option<ProgressBoard>,
    last_post: f64,
    /// Subtrees of the incumbent replaced by cheaper regrown ones (fast mode).
    pub regrown_subtrees: u64,
    /// The expansions at which the incumbent is next regrown (`FIRST_REGROWTH`; tests lower
    /// it, or set it to `u64::MAX` for no regrowth at all).
    pub next_regrowth: u64,
}

/// Fast mode: how many of an expansion's evaluated splits are materialised when the graph holds
/// `used` bytes of its memory limit: all of them up to half the limit, then fewer and fewer (the
/// rest wait behind the node's deferred bound, to be looked up again if it is ever reached).
/// Graph growth slows as the limit nears instead of stopping the search: within 768 MiB, heart
/// ran 60 s instead of stopping at 31 s (lower bound 138.75 -> 144.80). Shedding costs time (a
/// shed split's fresh children are counted again when it is looked up again: keeping 8 from the
/// start, mushroom's bound at 30 s was 113.8 instead of 118.7), hence only from half the limit.
fn splits_to_keep(used: usize, limit: Option<usize>) -> usize {
    let Some(limit) = limit else {
        return usize::MAX;
    };
    match used {
        u if u < limit / 2 => usize::MAX,
        u if u < limit / 4 * 3 => 8,
        u if u < limit / 10 * 9 => 4,
        _ => 1,
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
        let quadrants = count_bound.as_ref().and_then(|_| EmptyQuadrants::new(data));
        Search {
            graph: Graph::new(data, lb, ub),
            model,
            expansions: 0,
            epoch: 0,
            repairs: 0,
            small_rows: small_rows.min(SMALL_ROWS),
            exact_closures: 0,
            pruned_splits: 0,
            deferred_splits: 0,
            reexpansions: 0,
            evaluated_splits: 0,
            merged_splits: 0,
            count_bound,
            first_splits: FIRST_SPLITS,
            quadrants,
            scratch: Default::default(),
            two_threads: false,
            fork: None,
            floor_work: FLOOR_WORK,
            regrown_subtrees: 0,
            next_regrowth: FIRST_REGROWTH,
            memory_limit: None,
            shed_splits: 0,
            board: None,
            last_post: 0.0,
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
        let depth = self.graph.depth(id);
        self.model
            .split_penalty(depth, self.graph.exp(id).n_valid as usize)
    }

    /// Runs until the root is solved or the budget (or `max_expansions`) stops it.
    pub fn run(
        &mut self,
        budget: &Budget,
        max_expansions: Option<u64>,
        board: Option<&ProgressBoard>,
    ) -> Status {
        self.board = board.cloned();
        self.memory_limit = budget.memory_limit();
        // The second thread spins between expansions: it lives only while the search runs.
        self.fork = (self.two_threads && self.small_rows > 0)
            .then(Fork::new)
            .flatten();
        let dived = if self.small_rows > 0 {
            self.dive(budget, max_expansions)
                .or_else(|| self.improve_incumbent(budget, max_expansions))
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
            if self.expansions >= self.next_regrowth {
                self.next_regrowth = self.expansions.saturating_mul(2).max(1);
                if let Some(status) = self.improve_incumbent(budget, max_expansions) {
                    break status;
                }
                continue; // the limits and the root again, before the next step
            }
            if let Some(status) = self.step(budget) {
                break status;
            }
            self.report(budget);
        });
        if let Some(board) = board {
            self.post(board, budget.elapsed()); // the final figures, for the last report
        }
        self.fork = None;
        status
    }

    /// Posts the figures if a fifth of a second has passed since the last post. Called by the
    /// best-first loop, and by the dive and the regrowth, which take long on wide data.
    fn report(&mut self, budget: &Budget) {
        let Some(board) = self.board.as_ref() else {
            return;
        };
        let seconds = budget.elapsed();
        if seconds - self.last_post > 0.2 {
            self.post(board, seconds);
            self.last_post = seconds;
        }
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
            memory_bytes: self.graph.held_bytes() as u64,
            seconds,
            phase: "",
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
            self.report(budget);
            let node = &self.graph.or[id as usize];
            if node.solved() {
                continue;
            }
            if !node.expanded() {
                self.open(id, &rows);
            }
            self.push_incumbent_children(id, &rows, &mut stack);
        }
        None
    }

    /// Pushes the children of expanded node `id`'s incumbent split (the one giving its upper
    /// bound), with their rows, onto `stack`; nothing for a leaf or an unexpanded node.
    fn push_incumbent_children(&self, id: u32, rows: &Bitset, stack: &mut Vec<(u32, Bitset)>) {
        if !self.graph.or[id as usize].expanded() {
            return;
        }
        let best = self.graph.exp(id).best_ub;
        if best == NONE {
            return;
        }
        let and = &self.graph.and[best as usize];
        let (f, children) = (and.feature as usize, and.child);
        for side in [0, 1] {
            stack.push((children[side], rows.and(self.graph.data.rows_with(f, side))));
        }
    }

    /// Fast mode: regrows each node of the incumbent tree down to
    /// `REGROWN_DEPTH` by a two-level look-ahead ([`Grower`]) and grafts the regrown subtree
    /// into the graph where it costs less than the node's upper bound; the walk goes on along
    /// the incumbent as it then is. Greedy trees choose each split by its two leaves, and can
    /// miss a subtree whose first split pays off only one level down: mushroom's upper bound
    /// stayed 20 nats above the MAP tree's until the proof closed. Every bound stays valid:
    /// grafting only expands nodes and materialises splits (never past `max_expansions`).
    pub(super) fn improve_incumbent(
        &mut self,
        budget: &Budget,
        max_expansions: Option<u64>,
    ) -> Option<Status> {
        if self.small_rows == 0 || self.next_regrowth == u64::MAX {
            return None;
        }
        let data = self.graph.data;
        let mut grower = Grower::new(data, self.model, budget);
        let mut stack = vec![(0u32, data.all_rows())];
        while let Some((id, rows)) = stack.pop() {
            if let Some(status) = budget.check(self.expansions, self.graph.memory()) {
                return Some(status);
            }
            self.report(budget);
            let node = &self.graph.or[id as usize];
            let depth = self.graph.depth(id);
            if node.solved() || depth > REGROWN_DEPTH {
                continue;
            }
            let (mut cost, mut shape) = grower.grow(&rows, depth);
            // The incumbent's split, or the one the lower bounds point at, may do better with
            // its children regrown although the look-ahead prefers another (mushroom's root).
            for f in self.split_features(id) {
                if !shape.splits_on(f) {
                    let under = grower.grow_under(&rows, depth, f);
                    if under.0 < cost {
                        (cost, shape) = under;
                    }
                }
            }
            // Only a clear gain: the regrown cost is summed in another order than the graph's.
            let ub = self.graph.or[id as usize].ub;
            if cost < ub - 1e-9 * ub.abs().max(1.0) {
                self.graft(id, &rows, &shape, (budget, max_expansions));
                self.regrown_subtrees += u64::from(self.graph.or[id as usize].ub < ub);
            }
            self.push_incumbent_children(id, &rows, &mut stack);
        }
        None
    }

    /// The features of the splits giving node `id` its upper and its lower bound (none, one or
    /// two of them).
    fn split_features(&self, id: u32) -> Vec<usize> {
        if !self.graph.or[id as usize].expanded() {
            return Vec::new();
        }
        let e = self.graph.exp(id);
        let splits = [e.best_ub, e.best_lb].into_iter();
        let mut features: Vec<usize> = splits
            .filter(|&a| a != NONE && a != DEFERRED)
            .map(|a| self.graph.and[a as usize].feature as usize)
            .collect();
        features.dedup();
        features
    }

    /// Makes the graph hold `shape` below node `id` (of `rows`): expands the nodes on it and
    /// materialises their splits, so that the node's upper bound is at most the shape's cost.
    /// Leaves out the parts of the shape that cost no less than what the graph already has
    /// there, and stops where expanding would pass a limit (what was grafted stays valid).
    fn graft(
        &mut self,
        id: u32,
        rows: &Bitset,
        shape: &Shape,
        (budget, max_expansions): (&Budget, Option<u64>),
    ) {
        let Shape::Split(feature, cost, children) = shape else {
            return;
        };
        if *cost >= self.graph.or[id as usize].ub {
            return;
        }
        if !self.graph.or[id as usize].expanded() {
            let limit = max_expansions.is_some_and(|k| self.expansions >= k);
            if limit || budget.check(self.expansions, self.graph.memory()).is_some() {
                return;
            }
            self.open(id, rows);
        }
        if self.graph.or[id as usize].solved() {
            return; // solved exactly: no tree is cheaper
        }
        // Materialising a split adds nodes too: within the limit, checked as an expansion is.
        if budget.check(self.expansions, self.graph.memory()).is_some() {
            return;
        }
        let and = self.split_on(id, rows, *feature);
        let child = self.graph.and[and as usize].child;
        for side in [0, 1] {
            let side_rows = rows.and(self.graph.data.rows_with(*feature, side));
            self.graft(
                child[side],
                &side_rows,
                &children[side],
                (budget, max_expansions),
            );
        }
    }

    /// The split of expanded node `id` (of `rows`) on `feature`, materialised if it was not;
    /// the node's upper bound takes it in.
    fn split_on(&mut self, id: u32, rows: &Bitset, feature: usize) -> u32 {
        let graph = &self.graph;
        let found = graph
            .splits_of(id)
            .find(|&a| graph.and[a as usize].feature as usize == feature);
        if let Some(and) = found {
            return and;
        }
        let pen = self.penalty(id);
        let valid: Vec<usize> = self.dividing(rows, rows.count()).collect();
        let mut side_rows = Bitset::empty(rows.len());
        let (and, ub) = self.push_split(id, rows, feature, &valid, pen, &mut side_rows);
        self.graph.push_run(id, (and, 1));
        let e = self.graph.exp_mut(id);
        e.grafted_runs = e.grafted_runs.saturating_add(1);
        if ub < self.graph.or[id as usize].ub {
            self.graph.or[id as usize].ub = ub;
            self.graph.exp_mut(id).best_ub = and;
            self.propagate_ub(id);
        }
        and
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

    /// Expands `id` (or solves it outright when small, or materialises its deferred splits when
    /// expanded) and propagates its new bounds.
    fn open(&mut self, id: u32, rows: &Bitset) {
        let ub_before = self.graph.or[id as usize].ub;
        if self.graph.or[id as usize].expanded() {
            self.reexpansions += 1;
            let ones = self.dividing_sides(rows, rows.count());
            self.expand_best(id, rows, ones);
        } else if rows.count() as usize <= self.small_rows {
            self.close_exactly(id, rows);
        } else {
            self.expand(id, rows);
        }
        self.expansions += 1;
        self.propagate_lb(id);
        // A parent's upper bound already counts this node's: walk the parents (a shared node
        // has hundreds) only when it fell.
        if self.graph.or[id as usize].ub < ub_before {
            self.propagate_ub(id);
        }
    }

    /// Follows best-lower-bound splits from the root to an unexpanded node, into the child with
    /// the larger gap (ties to the feature = 0 child). Returns the node and its rows.
    fn descend(&mut self) -> Result<(u32, Bitset), ()> {
        let data = self.graph.data;
        let mut at = 0u32;
        let mut rows = data.all_rows();
        let mut path = Vec::new();
        while self.graph.or[at as usize].expanded() {
            path.push(at);
            let best = self.graph.exp(at).best_lb;
            if best == DEFERRED {
                break; // the node's deferred splits are what its bound waits for
            }
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
        let depth = self.graph.depth(id);
        let value = SmallProblem::new(self.graph.data, self.model, rows).solve(depth);
        self.graph.mark_expanded(id, 0);
        self.graph.exp_mut(id).exact = true;
        self.graph.or[id as usize].ub = value; // the lower bound follows in update_lb
        self.exact_closures += 1;
    }

    /// Creates the AND children of `id` for every valid feature (ascending) and their OR
    /// children (from the cache when the same rows at the same depth were met before); the fast
    /// mode materialises only the most promising ones.
    fn expand(&mut self, id: u32, rows: &Bitset) {
        let data = self.graph.data;
        let depth = self.graph.depth(id);
        let counts = data.class_counts(rows);
        let total: u64 = counts.iter().sum();
        if self.small_rows > 0 {
            let ones = self.dividing_sides(rows, total);
            self.graph.mark_expanded(id, ones.len());
            match ones.is_empty() {
                true => self.close_unsplittable(id, depth, &counts),
                false => self.expand_best(id, rows, ones),
            }
            return;
        }
        let valid: Vec<usize> = self.dividing(rows, total).collect();
        self.graph.mark_expanded(id, valid.len());
        if valid.is_empty() {
            self.close_unsplittable(id, depth, &counts);
            return;
        }
        let pen = self.model.split_penalty(depth, valid.len());
        let first = self.graph.and.len() as u32;
        let mut side_rows = Bitset::empty(rows.len());
        for &f in &valid {
            let (and, v) = self.push_split(id, rows, f, &valid, pen, &mut side_rows);
            if v < self.graph.or[id as usize].ub {
                self.graph.or[id as usize].ub = v;
                self.graph.exp_mut(id).best_ub = and;
            }
        }
        self.graph
            .exp_mut(id)
            .runs
            .push((first, valid.len() as u32));
    }

    /// Looks up the children of the split of node `id` (of `rows`) on `feature`, `= 1` first
    /// (the reference's order), materialising each at once, and appends the split's AND node;
    /// returns it with the split's upper bound. `valid`: the features that divide the rows;
    /// `pen`: the node's split penalty; `side_rows`: scratch space.
    fn push_split(
        &mut self,
        id: u32,
        rows: &Bitset,
        feature: usize,
        valid: &[usize],
        pen: f64,
        side_rows: &mut Bitset,
    ) -> (u32, f64) {
        let data = self.graph.data;
        let depth = self.graph.depth(id);
        let mut child = [NONE; 2];
        for side in [1usize, 0] {
            rows.and_into(data.rows_with(feature, side), side_rows);
            let found = self.lookup(side_rows, depth + 1, valid);
            child[side] = self.materialise(found, id, feature, side);
        }
        let [c0, c1] = child.map(|c| &self.graph.or[c as usize]);
        let ub = (c0.ub + c1.ub) + pen;
        (self.graph.push_and(feature as u32, id, child), ub)
    }

    /// An expanded node no feature divides gets its exact leaf cost; the lower bound follows in
    /// `update_lb` (D1 fix).
    fn close_unsplittable(&mut self, id: u32, depth: u32, counts: &[u64]) {
        self.graph.or[id as usize].ub = self.model.leaf_cost(depth, false, counts);
    }

    /// Fast mode: materialises the most promising splits of expanded node `id` not materialised
    /// yet, and defers the rest behind one lower bound.
    ///
    /// Every split first gets a cheap bound from its children's class counts and the number of
    /// features that divide them ([`children_dividers`], [`Self::counts_lower_bound`]),
    /// or, where counting those is dear, a floor on that number ([`children_floors`]).
    /// The split whose two leaves cost least, then the splits of least cheap bound,
    /// `first_splits << round` in all, are evaluated (both children looked up, as fresh or
    /// cached nodes) and materialised; every other split waits behind the least of the cheap
    /// bounds, and should the node's lower bound reach it the descent comes back here for the
    /// next round. Splits whose bound reaches the node's upper bound can never be best and are
    /// dropped for good.
    ///
    /// Most splits of a node never matter: its bound is settled by a few. Evaluating them lazily
    /// saves most of the lookups (a fresh one counts every feature) and most of the graph: on
    /// audiology, 2.5 times the expansions per second, each adding a fifth of the graph.
    /// `ones`: [`Self::dividing_sides`] of `rows`.
    fn expand_best(&mut self, id: u32, rows: &Bitset, ones: Vec<(usize, Vec<u64>)>) {
        let data = self.graph.data;
        let depth = self.graph.depth(id);
        let pen = self.penalty(id);
        let mut done: Vec<u32> = self
            .graph
            .splits_of(id)
            .map(|a| self.graph.and[a as usize].feature)
            .collect();
        done.sort_unstable();
        let k = data.n_classes();
        let counts = data.class_counts(rows);
        let sizes: Vec<u64> = ones.iter().map(|(_, c)| c.iter().sum()).collect();
        let features: Vec<usize> = ones.iter().map(|&(f, _)| f).collect();
        // Counting every child's dividers costs a pair pass (dividing features² × the words
        // holding the rows / 2); where that is dear, floors rank the splits nearly as well (see
        // `FLOOR_WORK`).
        let live_words = rows.words().iter().filter(|&&w| w != 0).count();
        let pair_work = ones.len() * ones.len() * live_words / 2;
        let floors = self.count_bound.is_some() && pair_work >= self.floor_work;
        let facts = match floors {
            true => children_floors(data, rows, &ones, &sizes, &mut self.scratch[0].floor),
            false => self.dividers_of(id, rows, &ones, &sizes),
        };
        let first_round = self.graph.exp(id).runs.is_empty();
        // (cheap lower bound, feature, upper bound of the split into two leaves).
        let mut open: Vec<(f64, usize, f64)> = Vec::new();
        let mut zeros = vec![0u64; k];
        for (i, (f, side)) in ones.iter().enumerate() {
            if done.binary_search(&(*f as u32)).is_ok() {
                continue;
            }
            if facts.twin[i] {
                self.merged_splits += u64::from(first_round);
                continue;
            }
            for c in 0..k {
                zeros[c] = counts[c] - side[c];
            }
            let (v0, v1) = (facts.zeros[i], facts.ones[i]);
            let (lb, ub) = match floors {
                false => (
                    (self.counts_lower_bound(depth + 1, side, v1)
                        + self.counts_lower_bound(depth + 1, &zeros, v0))
                        + pen,
                    (self.model.leaf_cost(depth + 1, v1 > 0, side)
                        + self.model.leaf_cost(depth + 1, v0 > 0, &zeros))
                        + pen,
                ),
                true => {
                    let bound = self
                        .count_bound
                        .as_ref()
                        .expect("floors need the count bound");
                    (
                        (bound.subtree_divided_lower(depth + 1, side[0], side[1], v1)
                            + bound.subtree_divided_lower(depth + 1, zeros[0], zeros[1], v0))
                            + pen,
                        (self.model.leaf_cost(depth + 1, true, side)
                            + self.model.leaf_cost(depth + 1, true, &zeros))
                            + pen,
                    )
                }
            };
            open.push((lb, *f, ub));
        }
        let node_ub = self.graph.or[id as usize].ub;
        let before = open.len();
        open.retain(|c| c.0 < node_ub);
        self.pruned_splits += (before - open.len()) as u64;
        open.sort_by(|x, y| x.0.total_cmp(&y.0).then(x.1.cmp(&y.1)));
        let e = self.graph.exp(id);
        let rounds = e.runs.len() - usize::from(e.grafted_runs);
        let quota = self.first_splits << rounds.min(16);
        // The most promising leaf-leaf split is evaluated first, for the node's upper bound.
        let ub_pick = (0..open.len()).min_by(|&i, &j| open[i].2.total_cmp(&open[j].2));
        let mut order: Vec<usize> = ub_pick.into_iter().collect();
        order.extend((0..open.len()).filter(|&i| Some(i) != ub_pick));
        // Evaluated splits: (lower bound, feature, children, upper bound).
        let mut evaluated = Vec::new();
        let next = order.len().min(quota);
        let node = Expanding {
            rows,
            depth,
            ones: &ones,
            features: &features,
            counts: (counts[0], counts[1]),
            sum: self.graph.hasher.sum(rows),
        };
        let to_evaluate: Vec<usize> = order[..next].iter().map(|&i| open[i].1).collect();
        for (f, found) in to_evaluate
            .iter()
            .zip(self.look_up_splits(&node, &to_evaluate))
        {
            let (lb0, ub0) = found[0].bounds(&self.graph);
            let (lb1, ub1) = found[1].bounds(&self.graph);
            evaluated.push(((lb0 + lb1) + pen, *f, found, (ub0 + ub1) + pen));
        }
        self.evaluated_splits += next as u64;
        // Splits never evaluated keep their cheap bound.
        let deferred = order[next..]
            .iter()
            .map(|&i| open[i].0)
            .fold(f64::INFINITY, f64::min);
        self.deferred_splits += (order.len() - next) as u64;
        let best_ub = (0..evaluated.len())
            .filter(|&i| evaluated[i].3 < node_ub)
            .min_by(|&i, &j| evaluated[i].3.total_cmp(&evaluated[j].3).then(i.cmp(&j)));
        let ub = best_ub.map_or(node_ub, |i| evaluated[i].3);
        let best_feature = best_ub.map(|i| evaluated[i].1);
        let before = evaluated.len();
        evaluated.retain(|c| c.0 < ub || Some(c.1) == best_feature);
        self.pruned_splits += (before - evaluated.len()) as u64;
        // Under memory pressure only the most promising splits are materialised; the others
        // wait behind the deferred bound with the exact bounds their lookups gave.
        let mut deferred = deferred;
        let mut keep = splits_to_keep(self.graph.held_bytes(), self.memory_limit);
        if evaluated.len() > keep {
            evaluated.sort_by(|x, y| x.0.total_cmp(&y.0).then(x.1.cmp(&y.1)));
            if let Some(at) = evaluated.iter().position(|c| Some(c.1) == best_feature) {
                if at >= keep {
                    evaluated.swap(at, keep); // the node's upper bound stays materialised
                    keep += 1;
                }
            }
            deferred = evaluated[keep..].iter().fold(deferred, |d, c| d.min(c.0));
            self.shed_splits += (evaluated.len() - keep) as u64;
            evaluated.truncate(keep);
        }
        evaluated.sort_by_key(|c| c.1);
        let first = self.graph.and.len() as u32;
        for &(_, f, found, _) in &evaluated {
            let mut child = [NONE; 2];
            for side in [1usize, 0] {
                #[cfg(debug_assertions)]
                if let Child::Fresh { hash, .. } = found[side] {
                    let side_rows = rows.and(data.rows_with(f, side));
                    let twin = self.graph.find(&side_rows, depth + 1, hash);
                    debug_assert_eq!(twin, None, "a twin of feature {f} was looked up");
                }
                child[side] = self.materialise(found[side], id, f, side);
            }
            let and = self.graph.push_and(f as u32, id, child);
            if Some(f) == best_feature {
                self.graph.or[id as usize].ub = ub;
                self.graph.exp_mut(id).best_ub = and;
            }
        }
        self.graph.push_run(id, (first, evaluated.len() as u32));
        self.graph.exp_mut(id).deferred = deferred;
    }

    /// [`children_dividers`] of expanded node `id`, from its record when kept; kept from
    /// its second round on.
    fn dividers_of(
        &mut self,
        id: u32,
        rows: &Bitset,
        ones: &[(usize, Vec<u64>)],
        sizes: &[u64],
    ) -> SplitFacts {
        // A twin is kept as (TWIN, TWIN): its counts are never read.
        const TWIN: u16 = u16::MAX;
        let kept = &self.graph.exp(id).dividers;
        if !kept.is_empty() && kept.len() == ones.len() {
            return SplitFacts {
                zeros: kept.iter().map(|&(z, _)| usize::from(z)).collect(),
                ones: kept.iter().map(|&(_, o)| usize::from(o)).collect(),
                twin: kept.iter().map(|&pair| pair == (TWIN, TWIN)).collect(),
            };
        }
        let facts = children_dividers(self.graph.data, rows, ones, sizes, self.fork.as_mut());
        let second_round = !self.graph.exp(id).runs.is_empty();
        if second_round && ones.len() < usize::from(TWIN) {
            let kept: Vec<(u16, u16)> = (0..ones.len())
                .map(|i| match facts.twin[i] {
                    true => (TWIN, TWIN),
                    false => (facts.zeros[i] as u16, facts.ones[i] as u16),
                })
                .collect();
            self.graph.divider_bytes += kept.capacity() * std::mem::size_of::<(u16, u16)>();
            self.graph.exp_mut(id).dividers = kept;
        }
        facts
    }

    /// A lower bound on any subtree at `depth` with class `counts` divided by exactly `n_valid`
    /// features, below the bound a lookup of it would give.
    fn counts_lower_bound(&self, depth: u32, counts: &[u64], n_valid: usize) -> f64 {
        if n_valid == 0 {
            return self.model.leaf_cost(depth, false, counts); // its exact cost
        }
        match &self.count_bound {
            Some(bound) => bound.subtree_divided_lower(depth, counts[0], counts[1], n_valid),
            None => self.model.heuristic_known_splits(depth, counts, n_valid),
        }
    }

    /// What lookups read, borrowed from the search.
    fn lookup_view(&self) -> Lookup<'_, 'a> {
        Lookup {
            graph: &self.graph,
            model: self.model,
            fast: self.small_rows > 0,
            count_bound: self.count_bound.as_ref(),
            quadrants: self.quadrants.as_ref(),
        }
    }

    /// The OR node for `rows` at `depth` if cached, else the bounds a fresh one would get
    /// ([`Lookup::child`]).
    fn lookup(&mut self, rows: &Bitset, depth: u32, candidates: &[usize]) -> Child {
        let hash = self.graph.hasher.hash(rows, depth);
        let mut scratch = std::mem::take(&mut self.scratch[0]);
        let child = self
            .lookup_view()
            .child(&mut scratch, rows, depth, candidates, hash, None);
        self.graph.count_collisions(&mut scratch.compare);
        self.scratch[0] = scratch;
        child
    }

    /// Both children of the splits of `node` on `features` ([`Lookup::splits`]), half of them
    /// on the second thread if there is one and they are enough to pay for the hand-over. The
    /// results are the same either way.
    fn look_up_splits(&mut self, node: &Expanding<'_>, features: &[usize]) -> Vec<[Child; 2]> {
        let [mut mine, mut theirs] = std::mem::take(&mut self.scratch);
        let mut fork = self.fork.take();
        let lookup = self.lookup_view();
        let mut found = Vec::with_capacity(features.len());
        match fork.as_mut().filter(|_| features.len() >= FORK_SPLITS) {
            None => lookup.splits(&mut mine, node, features.iter().copied(), &mut found),
            Some(fork) => {
                // Alternate splits, so that each thread gets its share of the fresh children.
                let (mut even, mut odd) = (Vec::new(), Vec::new());
                let split = |parity: usize| features.iter().copied().skip(parity).step_by(2);
                fork.join(
                    || lookup.splits(&mut theirs, node, split(1), &mut odd),
                    || lookup.splits(&mut mine, node, split(0), &mut even),
                );
                let mut odd = odd.into_iter();
                for pair in even {
                    found.push(pair);
                    found.extend(odd.next());
                }
            }
        }
        for scratch in [&mut mine, &mut theirs] {
            self.graph.count_collisions(&mut scratch.compare);
        }
        (self.scratch, self.fork) = ([mine, theirs], fork);
        found
    }

    /// The node of a looked-up child, inserting a fresh one (reached from `parent` by
    /// `f = side`). A fresh child is still missing from the graph: the reference order
    /// materialises each split as soon as it looks it up, and two splits of one expansion never
    /// share a child (the child of one side fixes the other, so they would be twins, and only
    /// one of a pair of twins is looked up).
    fn materialise(&mut self, child: Child, parent: u32, f: usize, side: usize) -> u32 {
        match child {
            Child::Existing(id) => id,
            Child::Fresh { hash, bounds } => {
                let depth = self.graph.depth(parent) + 1;
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
        let data = self.graph.data;
        (0..data.n_features())
            .filter(move |&f| data.n_values(f) == 2)
            .filter(move |&f| {
                let n1 = rows.intersection_count(data.rows_with(f, 1));
                n1 > 0 && n1 < total // some of the rows, not all
            })
    }

    /// [`Self::dividing`], each feature with the class counts of its `= 1` side; one pass gives
    /// a feature's count and its first class's (all of them on two classes).
    fn dividing_sides(&self, rows: &Bitset, total: u64) -> Vec<(usize, Vec<u64>)> {
        let data = self.graph.data;
        let k = data.n_classes();
        let class0 = data.rows_of_class(0).words();
        let mut ones = Vec::new();
        for f in (0..data.n_features()).filter(|&f| data.n_values(f) == 2) {
            let column = data.rows_with(f, 1);
            let (n1, first) = intersection_counts2(rows.words(), column.words(), class0);
            if n1 == 0 || n1 == total {
                continue; // does not divide the rows
            }
            let mut side: Vec<u64> = Vec::with_capacity(k);
            if k > 1 {
                side.push(first);
                let classes = 1..k - 1;
                side.extend(
                    classes.map(|c| rows.intersection_count3(column, data.rows_of_class(c))),
                );
            }
            side.push(n1 - side.iter().sum::<u64>());
            ones.push((f, side));
        }
        ones
    }

    /// Recomputes `lb` from the children (or the node's own `ub`); returns whether it rose.
    fn update_lb(&mut self, id: u32) -> bool {
        let mut best = self.graph.or[id as usize].ub;
        let mut best_and = NONE;
        let pen = self.penalty(id);
        // The children sit anywhere in the node arena: start loading all of them before
        // reading any, so that their cache misses overlap (mushroom: 67 splits a scan, 7.5
        // scans an expansion). With the parents' prefetch in `propagate_lb`, a fixed number
        // of expansions takes 5-8% less time (mushroom, heart-cleveland, soybean).
        for a in self.graph.splits_of(id) {
            let and = &self.graph.and[a as usize];
            crate::search::prefetch(&self.graph.or[and.child[0] as usize]);
            crate::search::prefetch(&self.graph.or[and.child[1] as usize]);
        }
        for a in self.graph.splits_of(id) {
            let and = &self.graph.and[a as usize];
            let v = (self.graph.or[and.child[0] as usize].lb
                + self.graph.or[and.child[1] as usize].lb)
                + pen;
            if v < best {
                best = v;
                best_and = a;
            }
        }
        let deferred = self.graph.exp(id).deferred;
        if deferred < best {
            best = deferred;
            best_and = DEFERRED;
        }
        self.graph.exp_mut(id).best_lb = best_and;
        let o = &mut self.graph.or[id as usize];
        if self.count_bound.is_some() {
            // The look-ahead bound is consistent only up to rounding: never let it fall back.
            best = best.max(o.lb.min(o.ub));
        }
        let improved = best > o.lb;
        o.lb = best;
        improved
    }

    fn next_epoch(&mut self) -> u32 {
        self.epoch = self.epoch.wrapping_add(1);
        if self.epoch == 0 {
            for e in self.graph.expansions.iter_mut() {
                e.visited = 0;
            }
            self.epoch = 1;
        }
        self.epoch
    }

    /// Raises lower bounds level by level (FIFO), only into parents whose best-lower-bound split
    /// is the one the change came through, and only into unsolved parents.
    fn propagate_lb(&mut self, source: u32) {
        let epoch = self.next_epoch();
        self.graph.exp_mut(source).visited = epoch;
        let mut queue = VecDeque::from([source]);
        while let Some(id) = queue.pop_front() {
            if !self.update_lb(id) {
                continue;
            }
            let parents: Vec<u32> = self.graph.parents(id).collect();
            // Each parent's node is read below; load them all at once (see `update_lb`).
            for &a in &parents {
                let p = self.graph.and[a as usize].parent;
                crate::search::prefetch(&self.graph.or[p as usize]);
            }
            for a in parents {
                let p = self.graph.and[a as usize].parent;
                let e = self.graph.exp(p);
                if e.visited != epoch && !self.graph.or[p as usize].solved() && e.best_lb == a {
                    self.graph.exp_mut(p).visited = epoch;
                    queue.push_back(p);
                }
            }
        }
    }

    /// Lowers upper bounds through the changed splits only (incremental, FIFO).
    fn propagate_ub(&mut self, source: u32) {
        let epoch = self.next_epoch();
        self.graph.exp_mut(source).visited = epoch;
        let mut queue = VecDeque::from([source]);
        while let Some(id) = queue.pop_front() {
            let parents: Vec<u32> = self.graph.parents(id).collect();
            for a in parents {
                let and = &self.graph.and[a as usize];
                let p = and.parent;
                let v = (self.graph.or[and.child[0] as usize].ub
                    + self.graph.or[and.child[1] as usize].ub)
                    + self.penalty(p);
                if v < self.graph.or[p as usize].ub {
                    self.graph.or[p as usize].ub = v;
                    let e = self.graph.exp_mut(p);
                    e.best_ub = a;
                    if e.visited != epoch {
                        e.visited = epoch;
                        queue.push_back(p);
                    }
                }
            }
        }
    }
}
