//! The best-first (AO*) loop: select a path down the most promising splits, expand the open node
//! it ends in, and back the new bounds up the path. Stops when the root's bounds meet or the
//! budget runs out; either way the incumbent tree is returned with exact bounds.

use crate::data::Bitset;
use crate::error::Result;
use crate::search::{Budget, Outcome, ProgressBoard, Snapshot, Stats, Status};
use crate::tree::{NodeSpec, TreeSpec};

use super::graph::{Bounds, Graph, NodeId, NONE};
use super::score::Score;
use super::BranchesSolution;

/// How often (in passes) the loop posts progress.
const POST_EVERY: u64 = 1024;
/// Counting work (see [`Graph::counting_work`]) between two looks at the limits during a
/// descent: about 10 ms of counting.
const WORK_PER_CHECK: u64 = 1 << 24;
/// Expansions, or counting work, after which a search still running grows the greedy tree
/// (see [`grow_greedy_tree`]): a few tenths of a second. Short searches never pay for it, and
/// since work, not time, decides, the search stays deterministic.
const GREEDY_AFTER_EXPANSIONS: u64 = 10_000;
const GREEDY_AFTER_WORK: u64 = 1 << 28;

/// The search's watch over a descent: the limits, where to post progress, and when the greedy
/// tree is due.
struct Watch<'a> {
    budget: &'a Budget,
    board: Option<&'a ProgressBoard>,
    root: NodeId,
    passes: u64,
    expansions: u64,
    /// The counting work at which the next look is due.
    next_look: u64,
    /// Whether the greedy tree is still to be grown.
    greedy_pending: bool,
}

impl Watch<'_> {
    /// Whether the descent must end: a limit is reached, or the greedy tree is due. Looked at
    /// only once enough counting work was done since the last look (a descent on wide data
    /// may tighten splits for seconds); posts progress at each look.
    fn must_stop<S: Score>(&mut self, g: &Graph<'_, S>) -> bool {
        if g.counting_work < self.next_look {
            return false;
        }
        self.next_look = g.counting_work + WORK_PER_CHECK;
        if let Some(board) = self.board {
            board.post(snapshot(
                g,
                self.root,
                self.passes,
                self.expansions,
                self.budget,
            ));
        }
        self.budget.check(self.expansions, g.memory()).is_some() || self.greedy_due(g)
    }

    fn greedy_due<S: Score>(&self, g: &Graph<'_, S>) -> bool {
        self.greedy_pending
            && (self.expansions >= GREEDY_AFTER_EXPANSIONS || g.counting_work >= GREEDY_AFTER_WORK)
    }
}

/// The child of `id`'s top split to descend into: the incomplete one with the widest gap between
/// its bounds (first on ties), once the split's children are refreshed. Children found improved
/// or complete (through another parent) make the node refresh and, if its top split changed,
/// choose again; returns None when the node itself becomes complete, or when a limit is reached
/// meanwhile. Also returns the child's bounds as `id` last saw them, so that the climb back can
/// tell whether `id` needs a refresh.
fn choose_child<S: Score>(
    g: &mut Graph<'_, S>,
    id: NodeId,
    watch: &mut Watch<'_>,
) -> Option<(NodeId, Bounds<S>)> {
    loop {
        if watch.must_stop(g) {
            return None;
        }
        let node = &g.nodes[id as usize];
        if g.bounds[id as usize].complete() || node.top == NONE {
            return None;
        }
        let top = node.top as usize;
        // Sharpen the bounds of the top split's children before committing to it: the top
        // split may change once they are known better.
        let sharpened = g.tighten_split(id, top);
        if sharpened {
            g.refresh(id);
            continue;
        }
        // Judge the split by its children's current bounds: one shared with another parent
        // may have improved through it (10% fewer expansions on most instances).
        if g.refresh_children(id, top) {
            g.refresh(id);
            // `top` is an index: should dropped splits shift another split onto it, that split
            // is the top now (its children merely not refreshed this round).
            let node = &g.nodes[id as usize];
            if g.bounds[id as usize].complete() || node.top as usize != top {
                continue;
            }
        }
        let mut chosen = NONE as usize;
        let mut widest = None;
        for (v, &slot) in g.splits_of(id).children(top).iter().enumerate() {
            if g.slot_complete(slot) {
                continue;
            }
            let (u, l) = g.slot_bounds(slot);
            if Some(u - l) > widest {
                (chosen, widest) = (v, Some(u - l));
            }
        }
        if chosen == NONE as usize {
            g.refresh(id);
            continue;
        }
        // An incomplete child is a node (closed children are complete).
        let child = g.splits_of(id).children(top)[chosen].id().unwrap_or(NONE);
        return Some((child, g.bounds[child as usize]));
    }
}

/// Grows the greedy tree: from the root, depth first along the incumbent splits, each node not
/// expanded yet is expanded, and its children along its incumbent split (the split whose
/// children as leaves score best, when it beats the leaf) are grown the same way; the nodes then
/// refresh bottom-up, so that the root's incumbent is at least the incumbent tree completed
/// greedily. On wide data a best-first search may spend a long time near the root; this gives
/// its anytime result a whole tree. Returns the number of expansions, counting on from the
/// search's `expansions`.
fn grow_greedy_tree<S: Score>(
    g: &mut Graph<'_, S>,
    root: NodeId,
    budget: &Budget,
    mut expansions: u64,
) -> u64 {
    // (node, whether its subtree is grown and only its refresh is left)
    let mut stack = vec![(root, false)];
    while let Some((id, grown)) = stack.pop() {
        if grown {
            g.refresh(id);
            continue;
        }
        if g.bounds[id as usize].complete() {
            continue;
        }
        if !g.nodes[id as usize].expanded {
            if budget.check(expansions, g.memory()).is_some() || !g.room_for_expansion() {
                // Stopped: what was grown still refreshes up to the root.
                stack.retain(|&(_, grown)| grown);
                for &(id, _) in stack.iter().rev() {
                    g.refresh(id);
                }
                break;
            }
            g.expand(id);
            expansions += 1;
        }
        g.refresh(id);
        let best = g.nodes[id as usize].best();
        if g.bounds[id as usize].complete() || best == NONE {
            continue;
        }
        stack.push((id, true));
        let children = g.splits_of(id).children(best as usize);
        stack.extend(children.iter().filter_map(|s| s.id()).map(|c| (c, false)));
    }
    expansions
}

/// Runs the search; see the module docs.
pub fn run<S: Score>(
    g: &mut Graph<'_, S>,
    budget: &Budget,
    board: Option<&ProgressBoard>,
) -> Result<Outcome<BranchesSolution>> {
    let root = g.add_root();
    let mut peak_bytes = g.held_bytes();
    // The nodes above the one expanded, each with the bounds it last saw of its child on the path.
    let mut path: Vec<(NodeId, Bounds<S>)> = Vec::new();
    let mut status = Status::Optimal;
    // The pass and expansion counts live in the watch, which reports them during a descent.
    let mut watch = Watch {
        budget,
        board,
        root: root.unwrap_or(NONE),
        passes: 0,
        expansions: 0,
        next_look: WORK_PER_CHECK,
        greedy_pending: true,
    };
    while let Some(root) = root.filter(|&r| !g.bounds[r as usize].complete()) {
        if let Some(s) = budget.check(watch.expansions, g.memory()) {
            status = s;
            break;
        }
        if !g.room_for_expansion() {
            status = Status::MemoryLimit; // as many nodes as node ids allow
            break;
        }
        if watch.greedy_due(g) {
            watch.greedy_pending = false;
            watch.expansions = grow_greedy_tree(g, root, budget, watch.expansions);
            peak_bytes = peak_bytes.max(g.held_bytes());
            continue;
        }
        watch.passes += 1;
        path.clear();
        let mut id = root;
        g.refresh(id);
        while let Some((child, seen)) = choose_child(g, id, &mut watch) {
            path.push((id, seen));
            id = child;
        }
        let node = &g.nodes[id as usize];
        // A descent cut short by a limit expands nothing; the next pass reports the limit.
        let stopped = budget.stopped().is_some();
        if !stopped && !g.bounds[id as usize].complete() && !node.expanded {
            g.expand(id);
            watch.expansions += 1;
            g.refresh(id);
            peak_bytes = peak_bytes.max(g.held_bytes());
        }
        // Climb back, refreshing a node only when its child on the path changed since the node
        // last looked: its other children changed only if another parent's look-ahead
        // tightened them, and it reads them afresh on the next descent anyway (stale bounds are
        // still valid bounds). Most passes change nothing a few levels up.
        let mut child = id;
        for &(p, seen) in path.iter().rev() {
            if g.bounds[child as usize] != seen {
                g.bound_from_child(p, child);
                g.refresh(p);
            }
            child = p;
        }
        if watch.passes % POST_EVERY == 0 {
            if let Some(board) = board {
                board.post(snapshot(g, root, watch.passes, watch.expansions, budget));
            }
        }
    }
    let (passes, expansions) = (watch.passes, watch.expansions);
    let solution = extract(g, root)?;
    let upper = match root {
        Some(r) if !status.is_optimal() => g.scale.objective_bound(g.bounds[r as usize].ub),
        _ => solution.objective,
    };
    let mut stats = Stats::new();
    stats.set_count("iterations", passes);
    stats.set_count("expansions", expansions);
    stats.set_count("cached_subproblems", g.nodes.len() as u64);
    stats.set_count("memo_hits", g.memo_hits);
    stats.set_count("dominated_splits", g.dominated_splits);
    stats.set_count("chain_bounds", g.chain_bounded);
    stats.set_count("similarity_bounds", g.similar_bounded);
    stats.set_count("depth_two_solves", g.depth_two_solved);
    stats.set_count("peak_memory_bytes", peak_bytes as u64);
    stats.set_real("seconds", budget.elapsed());
    if let (Some(board), Some(r)) = (board, root) {
        board.post(snapshot(g, r, passes, expansions, budget));
    }
    Ok(Outcome {
        lower_bound: solution.objective,
        upper_bound: upper.max(solution.objective),
        solution,
        status,
        stats,
    })
}

fn snapshot<S: Score>(
    g: &Graph<'_, S>,
    root: NodeId,
    passes: u64,
    expansions: u64,
    budget: &Budget,
) -> Snapshot {
    let r = &g.bounds[root as usize];
    Snapshot {
        iterations: passes,
        expansions,
        lower_bound: g.scale.objective_bound(r.lb),
        upper_bound: g.scale.objective_bound(r.ub),
        cached: g.nodes.len() as u64,
        memory_bytes: g.held_bytes() as u64,
        seconds: budget.elapsed(),
        phase: "",
    }
}

/// Follows the incumbent from the root and builds the tree, with exact class totals recomputed
/// from the rows of every node (so the tree does not depend on the search's bookkeeping).
fn extract<S: Score>(g: &Graph<'_, S>, root: Option<NodeId>) -> Result<BranchesSolution> {
    let mut correct = 0u64;
    let mut splits = 0u64;
    let spec = build(
        g,
        root.unwrap_or(NONE),
        g.data.all_rows(),
        &mut correct,
        &mut splits,
    );
    let tree = TreeSpec {
        root: spec,
        n_features: g.data.n_features(),
        n_classes: g.data.n_classes(),
    }
    .build()?;
    Ok(BranchesSolution {
        tree,
        correct,
        splits,
        objective: g.scale.objective(correct, splits),
    })
}

fn build<S: Score>(
    g: &Graph<'_, S>,
    id: NodeId,
    rows: Bitset,
    correct: &mut u64,
    splits: &mut u64,
) -> NodeSpec {
    let totals = g.class_totals(&rows);
    let value: Vec<f64> = totals.iter().map(|&t| t as f64).collect();
    let leaf = |correct: &mut u64| {
        *correct += totals.iter().copied().max().unwrap_or(0);
        NodeSpec::Leaf {
            value: value.clone(),
        }
    };
    if id == NONE {
        return leaf(correct);
    }
    let node = &g.nodes[id as usize];
    if let Some((f, picks)) = g.depth_two_tree(id) {
        // Solved outright: a split whose children are leaves or one-split trees.
        *splits += 1;
        return split_node(g, f as usize, &rows, value, |v, rows| match picks[v] {
            NONE => build(g, NONE, rows, correct, splits),
            pick => stump(g, pick, rows, correct, splits),
        });
    }
    if node.stump() != NONE {
        // The look-ahead's one-split tree is this node's incumbent.
        return stump(g, node.stump(), rows, correct, splits);
    }
    if node.best() == NONE {
        return leaf(correct);
    }
    *splits += 1;
    let best = node.best() as usize;
    let f = g.splits_of(id).feature(best) as usize;
    let slots = g.splits_of(id).children(best);
    split_node(g, f, &rows, value, |v, rows| {
        build(g, slots[v].id().unwrap_or(NONE), rows, correct, splits)
    })
}

/// The tree of one split on `feature` over `rows`, its children leaves.
fn stump<S: Score>(
    g: &Graph<'_, S>,
    feature: u32,
    rows: Bitset,
    correct: &mut u64,
    splits: &mut u64,
) -> NodeSpec {
    *splits += 1;
    let value = g.class_totals(&rows).iter().map(|&t| t as f64).collect();
    split_node(g, feature as usize, &rows, value, |_, rows| {
        build(g, NONE, rows, correct, splits)
    })
}

/// A split of `rows` (class totals `value`) on feature `f`, child `v` being `child(v, its
/// rows)`.
fn split_node<S: Score>(
    g: &Graph<'_, S>,
    f: usize,
    rows: &Bitset,
    value: Vec<f64>,
    mut child: impl FnMut(usize, Bitset) -> NodeSpec,
) -> NodeSpec {
    let children = (0..g.data.n_values(f))
        .map(|v| child(v, rows.and(g.data.rows_with(f, v))))
        .collect();
    NodeSpec::Category {
        feature: f,
        value,
        children,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::Dataset;
    use crate::oracle;
    use crate::solvers::branches::graph::Limits;
    use crate::solvers::branches::score::Scale;

    /// The majority count of `rows`' labels, and the best a single split on any feature does.
    fn leaf_and_best_stump(inst: &oracle::Instance, rows: &[usize]) -> (u64, u64) {
        let majority = |rows: &mut dyn Iterator<Item = usize>| {
            let mut counts = [0u64; 8];
            rows.for_each(|r| counts[inst.labels[r] as usize] += 1);
            counts.into_iter().max().unwrap_or(0)
        };
        let leaf = majority(&mut rows.iter().copied());
        let stump = (0..inst.n_features)
            .map(|f| {
                (0..4)
                    .map(|v| {
                        let code = |r: usize| inst.codes[r * inst.n_features + f];
                        majority(&mut rows.iter().copied().filter(|&r| code(r) == v))
                    })
                    .sum::<u64>()
            })
            .max()
            .unwrap_or(0);
        (leaf, stump)
    }

    #[test]
    fn the_greedy_tree_has_no_leaf_one_split_would_improve() {
        for seed in 0..20 {
            let inst = oracle::random_instance(150, 5, 3, 3, seed);
            let data = Dataset::new(&inst.codes, inst.n_features, &inst.labels, None, None, None)
                .expect("valid");
            let (p, q) = (1, 100);
            let scale = Scale::<i64>::new(p, q, data.n_rows(), 150).expect("fits");
            let limits = Limits {
                max_depth: None,
                min_samples_leaf: 1,
            };
            let mut g = Graph::new(&data, scale, None, limits);
            let Some(root) = g.add_root() else { continue };
            grow_greedy_tree(&mut g, root, &Budget::unlimited(), 0);
            let found = extract(&g, Some(root)).expect("a tree");
            assert!(
                found.splits >= 1,
                "seed {seed}: the greedy tree splits the root"
            );
            // Route the rows to the tree's leaves; no leaf gains more than λ from one more split.
            let mut leaves: std::collections::BTreeMap<usize, Vec<usize>> = Default::default();
            for r in 0..inst.n_rows {
                let x: Vec<f64> = (0..inst.n_features)
                    .map(|f| f64::from(inst.codes[r * inst.n_features + f]))
                    .collect();
                leaves.entry(found.tree.route(&x).0).or_default().push(r);
            }
            for rows in leaves.values() {
                let (leaf, stump) = leaf_and_best_stump(&inst, rows);
                assert!(
                    q * (stump - leaf) <= p * 150,
                    "seed {seed}: a leaf of {} rows gains {} rows from one split",
                    rows.len(),
                    stump - leaf
                );
            }
        }
    }
}
