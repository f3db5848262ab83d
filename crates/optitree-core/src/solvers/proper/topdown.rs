//! The top-down engine (spec §3.11): `T(rows, k, h)`, the best proper tree with at most `k`
//! splits and at most `h` levels on the rows of a region, choosing a root among the rules whose
//! defining points lie in the region and splitting the budget between its sides; memoised on
//! (rows, k, h) and bounded (branch and bound).
//!
//! Invariants:
//! - only non-degenerate splits are tried (both sides non-empty): a degenerate split never helps
//!   when at most `k` splits are allowed, and without it no rule can appear twice in a tree;
//! - rules with the same partition of the rows (up to swapping sides) are one *candidate*; it may
//!   be used in a region when any of its rules may (the first such rule, in list order, is the one
//!   reported);
//! - ties go to the first minimum in the order (leaf, candidate, left budget), whatever the number
//!   of threads; a memo entry is exact, or a lower bound recorded when the search was cut off by
//!   its caller's bound.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;

use super::problem::Problem;
use super::rules::Shape;
use super::words;
use super::RuleTree;
use crate::search::{Budget, ProgressBoard, Snapshot, Status};

/// Rules grouped by the partition they make.
#[derive(Debug)]
pub struct Candidates {
    /// Rule ids of candidate `c`: `rules[ptr[c]..ptr[c + 1]]`, in list order.
    ptr: Vec<usize>,
    rules: Vec<u32>,
    /// For axis-only rule sets: sorted row order per feature and the rule of each (feature, row).
    axis: Option<AxisIndex>,
}

#[derive(Debug)]
struct AxisIndex {
    order: Vec<Vec<u32>>,
    values: Vec<Vec<f64>>,
    rule_of: Vec<Vec<u32>>,
}

impl Candidates {
    /// Groups the rules of `p` by partition; rules that leave every row on one side are dropped.
    pub fn new(p: &Problem<'_>, points: &super::rules::Points) -> Candidates {
        let rules = p.rules;
        let n = rules.n_rows();
        let full = words::full(n);
        let mut index: HashMap<Vec<u64>, usize> = HashMap::new();
        let mut groups: Vec<Vec<u32>> = Vec::new();
        let mut key = vec![0u64; rules.n_words()];
        for r in 0..rules.len() {
            let side = rules.plus(r);
            let left = words::popcount(side);
            if left == 0 || left == n as u64 {
                continue;
            }
            if words::contains(side, 0) {
                key.copy_from_slice(side);
            } else {
                words::and_not_into(&full, side, &mut key);
            }
            match index.get(&key) {
                Some(&c) => groups[c].push(r as u32),
                None => {
                    index.insert(key.clone(), groups.len());
                    groups.push(vec![r as u32]);
                }
            }
        }
        let mut ptr = vec![0];
        let mut flat = Vec::new();
        for g in groups {
            flat.extend(g);
            ptr.push(flat.len());
        }
        let all_axis = (0..rules.len()).all(|r| matches!(rules.shape(r), Shape::Axis { .. }));
        let axis = (all_axis && !rules.is_empty() && points.n_rows() == n)
            .then(|| AxisIndex::new(p, points));
        Candidates {
            ptr,
            rules: flat,
            axis,
        }
    }

    /// Number of candidates.
    pub fn len(&self) -> usize {
        self.ptr.len() - 1
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The first rule of candidate `c`.
    fn first(&self, c: usize) -> usize {
        self.rules[self.ptr[c]] as usize
    }

    /// The first rule of candidate `c` usable in region `mask`, if any.
    fn usable(&self, p: &Problem<'_>, c: usize, mask: &[u64]) -> Option<usize> {
        self.rules[self.ptr[c]..self.ptr[c + 1]]
            .iter()
            .map(|&r| r as usize)
            .find(|&r| p.rules.available(r, mask))
    }
}

impl AxisIndex {
    fn new(p: &Problem<'_>, points: &super::rules::Points) -> AxisIndex {
        let n = points.n_rows();
        let d = points.n_features();
        let mut rule_of = vec![vec![u32::MAX; n]; d];
        for r in 0..p.rules.len() {
            if let Shape::Axis { feature, .. } = p.rules.shape(r) {
                let row = p.rules.defining(r)[0] as usize;
                if rule_of[feature][row] == u32::MAX {
                    rule_of[feature][row] = r as u32;
                }
            }
        }
        let mut order = Vec::with_capacity(d);
        let mut values = Vec::with_capacity(d);
        for f in 0..d {
            let mut o: Vec<u32> = (0..n as u32).collect();
            o.sort_by(|&a, &b| {
                points.row(a as usize)[f].total_cmp(&points.row(b as usize)[f])
            });
            values.push(o.iter().map(|&i| points.row(i as usize)[f]).collect());
            order.push(o);
        }
        AxisIndex {
            order,
            values,
            rule_of,
        }
    }
}

/// A memo entry.
#[derive(Debug, Clone, Copy)]
enum Entry {
    /// The optimum and how it is reached: `(rule, left budget)`, or a leaf.
    Exact(f64, Option<(u32, u8)>),
    /// The optimum is at least this.
    Lower(f64),
}

/// One thread's search state.
pub struct Engine<'a> {
    p: &'a Problem<'a>,
    cands: &'a Candidates,
    memo: HashMap<Vec<u64>, Entry>,
    /// Two masks (left, right side) per recursion level.
    scratch: Vec<Vec<u64>>,
    key: Vec<u64>,
    budget: &'a Budget,
    labels: Vec<u8>,
    stopped: bool,
    /// Subproblems solved (memo misses).
    pub subproblems: u64,
    /// Splits evaluated.
    pub splits: u64,
    ticks: u64,
}

impl<'a> Engine<'a> {
    /// A fresh engine for trees of at most `k` splits.
    pub fn new(p: &'a Problem<'a>, cands: &'a Candidates, k: usize, budget: &'a Budget) -> Self {
        let w = p.n_words();
        Engine {
            p,
            cands,
            memo: HashMap::new(),
            scratch: vec![vec![0u64; w]; 2 * (k + 2)],
            key: Vec::with_capacity(w + 1),
            budget,
            labels: row_labels(p),
            stopped: false,
            subproblems: 0,
            splits: 0,
            ticks: 0,
        }
    }

    /// Whether the budget stopped the search (results since then are not to be trusted).
    pub fn stopped(&self) -> bool {
        self.stopped
    }

    /// Bytes held by the memo (roughly).
    pub fn memory(&self) -> usize {
        self.memo.len() * (self.p.n_words() * 8 + 64)
    }

    fn tick(&mut self) -> bool {
        self.ticks += 1;
        if self.ticks.is_multiple_of(1024) && self.budget.check(0, self.memory()).is_some() {
            self.stopped = true;
        }
        self.stopped
    }

    fn set_key(&mut self, mask: &[u64], k: usize, h: usize) {
        self.key.clear();
        self.key.extend_from_slice(mask);
        self.key.push((k as u64) | ((h as u64) << 16));
    }

    /// `T(mask, k, h)`: exact when below `ub`, otherwise some value `>= ub`.
    pub fn solve(&mut self, mask: &[u64], k: usize, h: usize, level: usize, ub: f64) -> f64 {
        let (k, h) = normalise(k, h);
        let leaf = self.p.leaf_cost(mask);
        let n = words::popcount(mask);
        if k == 0 || leaf == 0.0 || n < 2 * self.p.min_leaf.max(1) {
            return leaf;
        }
        self.set_key(mask, k, h);
        match self.memo.get(self.key.as_slice()) {
            Some(Entry::Exact(v, _)) => return *v,
            Some(Entry::Lower(lb)) if *lb >= ub => return *lb,
            _ => {}
        }
        if self.stopped {
            return f64::INFINITY;
        }
        self.subproblems += 1;
        let one_split = k == 1 || h == 1;
        let (best, choice) = if one_split {
            self.best_split(mask, leaf)
        } else {
            self.best_root(mask, k, h, level, leaf, ub, 0..self.cands.len())
        };
        if self.stopped {
            return f64::INFINITY;
        }
        self.set_key(mask, k, h);
        let entry = if best < ub || one_split {
            Entry::Exact(best, choice)
        } else {
            Entry::Lower(ub)
        };
        self.memo.insert(self.key.clone(), entry);
        best
    }

    /// The best of the leaf and every root among `range` with its budget splits, pruned at `ub`.
    #[allow(clippy::too_many_arguments)]
    fn best_root(
        &mut self,
        mask: &[u64],
        k: usize,
        h: usize,
        level: usize,
        leaf: f64,
        ub: f64,
        range: std::ops::Range<usize>,
    ) -> (f64, Option<(u32, u8)>) {
        let p = self.p;
        let integral = p.objective.integral();
        let mut best = leaf;
        let mut choice = None;
        let (li, ri) = (2 * level, 2 * level + 1);
        for c in range {
            if self.tick() {
                break;
            }
            let bound = best.min(ub);
            let side = p.rules.plus(self.cands.first(c));
            words::and_into(mask, side, &mut self.scratch[li]);
            words::and_not_into(mask, side, &mut self.scratch[ri]);
            let f_left = p.leaf_cost(&self.scratch[li]);
            let f_right = p.leaf_cost(&self.scratch[ri]);
            if words::popcount(&self.scratch[li]) == 0 || words::popcount(&self.scratch[ri]) == 0
            {
                continue;
            }
            if !(f_left.is_finite() && f_right.is_finite()) {
                continue; // a side below the minimum leaf size
            }
            // Lower bound of each budget split: a side with splits left costs at least 0.
            let lb = |kl: usize| {
                let kr = k - 1 - kl;
                (if kl == 0 { f_left } else { 0.0 }) + (if kr == 0 { f_right } else { 0.0 })
            };
            if (0..k).all(|kl| lb(kl) >= bound) {
                continue;
            }
            let Some(rule) = self.cands.usable(p, c, mask) else {
                continue;
            };
            // The reported rule may have its sides the other way round.
            let swapped = rule != self.cands.first(c)
                && !words::contains(p.rules.plus(rule), first_member(&self.scratch[li]));
            for kl in 0..k {
                let bound = best.min(ub);
                if lb(kl) >= bound {
                    continue;
                }
                let kr = k - 1 - kl;
                let left = if kl == 0 {
                    f_left
                } else {
                    let m = self.scratch[li].clone();
                    let rest = if kr == 0 { f_right } else { 0.0 };
                    let sub = if integral { bound - rest } else { bound };
                    self.solve(&m, kl, h - 1, level + 1, sub)
                };
                if left + if kr == 0 { f_right } else { 0.0 } >= bound {
                    continue;
                }
                let right = if kr == 0 {
                    f_right
                } else {
                    let m = self.scratch[ri].clone();
                    let sub = if integral { bound - left } else { bound };
                    self.solve(&m, kr, h - 1, level + 1, sub)
                };
                let cost = left + right;
                if cost < best {
                    best = cost;
                    let kl_rule = if swapped { kr } else { kl };
                    choice = Some((rule as u32, kl_rule as u8));
                }
                if self.stopped {
                    return (best, choice);
                }
            }
        }
        (best, choice)
    }

    /// The best single split of `mask` (or the leaf).
    fn best_split(&mut self, mask: &[u64], leaf: f64) -> (f64, Option<(u32, u8)>) {
        if self.cands.axis.is_some() {
            return self.best_axis_split(mask, leaf);
        }
        let p = self.p;
        let nc = p.n_classes();
        let mut total = vec![0u64; nc];
        p.counts(mask, &mut total);
        let mut left = vec![0u64; nc];
        let mut right = vec![0u64; nc];
        let mut best = leaf;
        let mut choice = None;
        for c in 0..self.cands.len() {
            if self.tick() {
                break;
            }
            let side = p.rules.plus(self.cands.first(c));
            for (k, l) in left.iter_mut().enumerate() {
                *l = words::and3_count(mask, side, p.class(k));
            }
            let nl: u64 = left.iter().sum();
            let n: u64 = total.iter().sum();
            if nl == 0 || nl == n {
                continue;
            }
            for k in 0..nc {
                right[k] = total[k] - left[k];
            }
            let cost = p.leaf_from_counts(&left) + p.leaf_from_counts(&right);
            self.splits += 1;
            if cost < best {
                if let Some(rule) = self.cands.usable(p, c, mask) {
                    best = cost;
                    choice = Some((rule as u32, 0));
                }
            }
        }
        (best, choice)
    }

    /// [`Self::best_split`] for axis rules: one sweep per feature over its sorted rows.
    fn best_axis_split(&mut self, mask: &[u64], leaf: f64) -> (f64, Option<(u32, u8)>) {
        let p = self.p;
        let Some(axis) = self.cands.axis.as_ref() else {
            return (leaf, None);
        };
        let nc = p.n_classes();
        let mut total = vec![0u64; nc];
        p.counts(mask, &mut total);
        let n: u64 = total.iter().sum();
        let mut left = vec![0u64; nc];
        let mut right = vec![0u64; nc];
        let label = std::mem::take(&mut self.labels);
        let mut best = leaf;
        let mut choice = None;
        for (f, order) in axis.order.iter().enumerate() {
            if self.tick() {
                break;
            }
            left.iter_mut().for_each(|v| *v = 0);
            let values = &axis.values[f];
            let mut nl = 0u64;
            let mut last: Option<(usize, usize)> = None; // (position, row) of the last row in mask
            for (pos, &row) in order.iter().enumerate() {
                let row = row as usize;
                if !words::contains(mask, row) {
                    continue;
                }
                if let Some((lp, lrow)) = last {
                    if values[pos] > values[lp] {
                        // Split after the previous value: rows <= it go left.
                        for k in 0..nc {
                            right[k] = total[k] - left[k];
                        }
                        let cost = p.leaf_from_counts(&left) + p.leaf_from_counts(&right);
                        self.splits += 1;
                        if cost < best {
                            let rule = axis.rule_of[f][lrow];
                            if rule != u32::MAX {
                                best = cost;
                                choice = Some((rule, 0));
                            }
                        }
                    }
                }
                left[label[row] as usize] += 1;
                nl += 1;
                last = Some((pos, row));
            }
            debug_assert_eq!(nl, n);
        }
        self.labels = label;
        (best, choice)
    }

    /// The tree behind `T(mask, k, h)` (solving what the memo lacks).
    pub fn build(&mut self, mask: &[u64], k: usize, h: usize) -> RuleTree {
        let (k, h) = normalise(k, h);
        self.solve(mask, k, h, 0, f64::INFINITY);
        self.set_key(mask, k, h);
        let Some(Entry::Exact(_, Some((rule, kl)))) = self.memo.get(self.key.as_slice()).copied()
        else {
            return RuleTree::Leaf;
        };
        self.expand(mask, rule as usize, kl as usize, k, h)
    }

    /// The node for `rule` with `kl` splits on its left side, both sides built.
    pub fn expand(&mut self, mask: &[u64], rule: usize, kl: usize, k: usize, h: usize) -> RuleTree {
        let w = self.p.n_words();
        let mut l = vec![0u64; w];
        let mut r = vec![0u64; w];
        words::and_into(mask, self.p.rules.plus(rule), &mut l);
        words::and_not_into(mask, self.p.rules.plus(rule), &mut r);
        RuleTree::Node {
            rule,
            left: Box::new(self.build(&l, kl, h.saturating_sub(1))),
            right: Box::new(self.build(&r, k - 1 - kl, h.saturating_sub(1))),
        }
    }
}

fn first_member(mask: &[u64]) -> usize {
    words::members(mask).next().unwrap_or(0)
}

fn row_labels(p: &Problem<'_>) -> Vec<u8> {
    let n = p.rules.n_rows();
    let mut label = vec![0u8; n];
    for c in 0..p.n_classes() {
        for i in words::members(p.class(c)) {
            label[i] = c as u8;
        }
    }
    label
}

/// A budget of `k` splits within `h` levels allows at most `2^h − 1` splits, and `k` splits
/// need at most `k` levels.
fn normalise(k: usize, h: usize) -> (usize, usize) {
    let cap = if h >= 63 { usize::MAX } else { (1usize << h) - 1 };
    let k = k.min(cap);
    (k, h.min(k))
}

/// What the top-down engine found.
#[derive(Debug)]
pub struct TopDownResult {
    /// The best tree and its cost.
    pub tree: RuleTree,
    /// Its cost.
    pub cost: f64,
    /// `Optimal`, or why it stopped.
    pub status: Status,
    /// Candidates (distinct partitions).
    pub candidates: u64,
    /// Subproblems solved, over all threads.
    pub subproblems: u64,
    /// Splits evaluated, over all threads.
    pub splits: u64,
    /// Largest memo, in bytes, of one thread.
    pub memory: usize,
}

/// Candidates per unit of root work a thread takes.
const ROOT_CHUNK: usize = 16;

/// `T(all rows, k, h)` with the root's candidates shared among `n_jobs` threads.
pub fn solve(
    p: &Problem<'_>,
    cands: &Candidates,
    k: usize,
    h: usize,
    n_jobs: usize,
    budget: &Budget,
    board: Option<&ProgressBoard>,
) -> TopDownResult {
    let n = p.rules.n_rows();
    let all = words::full(n);
    let (k, h) = normalise(k, h);
    let leaf = p.leaf_cost(&all);
    let m = cands.len();
    let next = AtomicU64::new(0);
    let done = AtomicU64::new(0);
    let global = AtomicU64::new(leaf.to_bits());
    let stop = AtomicBool::new(false);
    type Found = (f64, usize, u32, u8);
    let found: Mutex<Vec<Found>> = Mutex::new(Vec::new());
    let totals = Mutex::new((0u64, 0u64, 0usize));
    let trivial = k == 0 || leaf == 0.0 || (n as u64) < 2 * p.min_leaf.max(1);
    if !trivial {
        std::thread::scope(|s| {
            for _ in 0..n_jobs.max(1) {
                s.spawn(|| {
                    let mut e = Engine::new(p, cands, k, budget);
                    let mut best = leaf;
                    let mut mine: Option<Found> = None;
                    loop {
                        let start = next.fetch_add(ROOT_CHUNK as u64, Ordering::Relaxed) as usize;
                        if start >= m || stop.load(Ordering::Relaxed) {
                            break;
                        }
                        let end = (start + ROOT_CHUNK).min(m);
                        for c in start..end {
                            let g = f64::from_bits(global.load(Ordering::Relaxed));
                            let ub = best.min(g.next_up());
                            let (cost, choice) = if k == 1 || h == 1 {
                                let (cost, choice) = e.best_split_range(&all, leaf, c..c + 1);
                                (cost, choice)
                            } else {
                                e.best_root(&all, k, h, 0, leaf, ub, c..c + 1)
                            };
                            if e.stopped() {
                                stop.store(true, Ordering::Relaxed);
                                break;
                            }
                            if let Some((rule, kl)) = choice {
                                if cost < ub {
                                    best = cost;
                                    mine = Some((cost, c, rule, kl));
                                    global.fetch_min(cost.to_bits(), Ordering::Relaxed);
                                }
                            }
                        }
                        let d = done.fetch_add((end - start) as u64, Ordering::Relaxed)
                            + (end - start) as u64;
                        if let Some(board) = board {
                            board.post(Snapshot {
                                iterations: d,
                                expansions: m as u64,
                                lower_bound: 0.0,
                                upper_bound: f64::from_bits(global.load(Ordering::Relaxed)),
                                cached: e.memo.len() as u64,
                                memory_bytes: e.memory() as u64,
                                seconds: budget.elapsed(),
                            });
                        }
                        if stop.load(Ordering::Relaxed) {
                            break;
                        }
                    }
                    if let Some(f) = mine {
                        if let Ok(mut v) = found.lock() {
                            v.push(f);
                        }
                    }
                    if let Ok(mut t) = totals.lock() {
                        t.0 += e.subproblems;
                        t.1 += e.splits;
                        t.2 = t.2.max(e.memory());
                    }
                });
            }
        });
    }
    let stopped = stop.load(Ordering::Relaxed);
    let winner = found
        .into_inner()
        .unwrap_or_default()
        .into_iter()
        .min_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)).then(a.3.cmp(&b.3)));
    let (tree, cost) = match winner {
        None => (RuleTree::Leaf, leaf),
        Some((cost, _, rule, kl)) => {
            let unlimited = Budget::unlimited();
            let mut e = Engine::new(p, cands, k, &unlimited);
            (e.expand(&all, rule as usize, kl as usize, k, h), cost)
        }
    };
    let (subproblems, splits, memory) = totals.into_inner().unwrap_or_default();
    TopDownResult {
        tree,
        cost,
        status: if stopped {
            budget.check(0, 0).unwrap_or(Status::Interrupted)
        } else {
            Status::Optimal
        },
        candidates: m as u64,
        subproblems,
        splits,
        memory,
    }
}

impl Engine<'_> {
    /// [`Self::best_split`] restricted to candidates `range` at the root (all rows), without
    /// the leaf: used to share a one-split search among threads.
    fn best_split_range(
        &mut self,
        mask: &[u64],
        leaf: f64,
        range: std::ops::Range<usize>,
    ) -> (f64, Option<(u32, u8)>) {
        let p = self.p;
        let mut best = leaf;
        let mut choice = None;
        for c in range {
            let side = p.rules.plus(self.cands.first(c));
            let w = p.n_words();
            let mut l = vec![0u64; w];
            let mut r = vec![0u64; w];
            words::and_into(mask, side, &mut l);
            words::and_not_into(mask, side, &mut r);
            if words::popcount(&l) == 0 || words::popcount(&r) == 0 {
                continue;
            }
            let cost = p.leaf_cost(&l) + p.leaf_cost(&r);
            self.splits += 1;
            if cost < best {
                if let Some(rule) = self.cands.usable(p, c, mask) {
                    best = cost;
                    choice = Some((rule as u32, 0));
                }
            }
        }
        (best, choice)
    }
}
