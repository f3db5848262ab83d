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
    /// The side of each candidate's first rule, contiguous (the one-split scans read it in order).
    sides: Vec<u64>,
    n_words: usize,
    /// For axis-only rule sets: sorted row order per feature and the rule of each (feature, row).
    axis: Option<AxisIndex>,
}

#[derive(Debug)]
struct AxisIndex {
    rule_of: Vec<Vec<u32>>,
    /// Per feature, the rows in increasing order with their value's rank and their class, packed
    /// together for the sweeps.
    sorted: Vec<Vec<Sorted>>,
}

/// One row in a feature's sorted order.
#[derive(Debug, Clone, Copy)]
struct Sorted {
    row: u32,
    rank: u32,
    label: u32,
}

impl Candidates {
    /// Groups the rules of `p` by partition; rules that leave every row on one side are dropped.
    /// `distinct`: the rules already make distinct partitions (one candidate each).
    pub fn new(p: &Problem<'_>, points: &super::rules::Points, distinct: bool) -> Candidates {
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
            if distinct {
                groups.push(vec![r as u32]);
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
        let mut sides = Vec::with_capacity(groups.len() * rules.n_words());
        for g in groups {
            sides.extend_from_slice(rules.plus(g[0] as usize));
            flat.extend(g);
            ptr.push(flat.len());
        }
        let all_axis = (0..rules.len()).all(|r| matches!(rules.shape(r), Shape::Axis { .. }));
        let axis = (all_axis && !rules.is_empty() && points.n_rows() == n)
            .then(|| AxisIndex::new(p, points));
        Candidates {
            ptr,
            rules: flat,
            sides,
            n_words: rules.n_words(),
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

    /// The side of candidate `c` (its first rule's).
    #[inline]
    fn side(&self, c: usize) -> &[u64] {
        &self.sides[c * self.n_words..(c + 1) * self.n_words]
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
        let mut order = Vec::with_capacity(d);
        let mut values: Vec<Vec<f64>> = Vec::with_capacity(d);
        for f in 0..d {
            let mut o: Vec<u32> = (0..n as u32).collect();
            o.sort_by(|&a, &b| points.row(a as usize)[f].total_cmp(&points.row(b as usize)[f]));
            values.push(o.iter().map(|&i| points.row(i as usize)[f]).collect());
            order.push(o);
        }
        // The rule of each (feature, row): the threshold at the row's value, or the rule kept for
        // the same side and defining row when this one was removed as its exact duplicate (so a
        // sweep never loses a split); `u32::MAX` for rules thinned away (never usable).
        let mut by_side: HashMap<(&[u64], u32), u32> = HashMap::new();
        for r in 0..p.rules.len() {
            if let [row] = p.rules.defining(r) {
                by_side.entry((p.rules.plus(r), *row)).or_insert(r as u32);
            }
        }
        let mut rule_of = vec![vec![u32::MAX; n]; d];
        let mut side = vec![0u64; p.n_words()];
        for f in 0..d {
            side.iter_mut().for_each(|w| *w = 0);
            let mut k = 0;
            while k < n {
                let v = values[f][k];
                let start = k;
                while k < n && values[f][k] == v {
                    words::insert(&mut side, order[f][k] as usize);
                    k += 1;
                }
                for &row in &order[f][start..k] {
                    if let Some(&r) = by_side.get(&(side.as_slice(), row)) {
                        rule_of[f][row as usize] = r;
                    }
                }
            }
        }
        let labels = row_labels(p);
        let sorted = order
            .iter()
            .zip(&values)
            .map(|(o, v)| {
                let mut rank = 0u32;
                o.iter()
                    .enumerate()
                    .map(|(pos, &row)| {
                        if pos > 0 && v[pos] > v[pos - 1] {
                            rank += 1;
                        }
                        Sorted {
                            row,
                            rank,
                            label: u32::from(labels[row as usize]),
                        }
                    })
                    .collect()
            })
            .collect();
        AxisIndex { rule_of, sorted }
    }
}

/// The best option so far at a node: its cost and `(rule, left budget)`, or the leaf.
struct Best {
    cost: f64,
    choice: Option<(u32, u8)>,
}

/// A root to try: a candidate (any of its usable rules) or one concrete rule.
#[derive(Clone, Copy)]
enum Root {
    Candidate(usize),
    Rule(usize),
}

/// The bounds of the evaluated thresholds just below and just above a root, when known.
type Around<'b> = (Option<&'b SideBounds>, Option<&'b SideBounds>);

/// Lower bounds on the optimum of each side of a root, per budget of splits.
#[derive(Clone)]
struct SideBounds {
    left: Vec<f64>,
    right: Vec<f64>,
    /// For axis rules, per feature: a lower bound on (or the value of) the best of the leaf and
    /// the splits on that feature alone, of each side (empty when not computed).
    left_feat: Vec<f64>,
    right_feat: Vec<f64>,
    /// Rows on the left side.
    n_left: u64,
}

/// A memo entry.
#[derive(Debug, Clone, Copy)]
enum Entry {
    /// The optimum and how it is reached: `(rule, left budget)`, or a leaf.
    Exact(f64, Option<(u32, u8)>),
    /// The optimum is at least this.
    Lower(f64),
}

/// Where a thread posts the search's figures between root candidates, which can each take
/// seconds: the roots done of `total` (all threads), and the best cost found (`f64` bits).
#[derive(Clone, Copy)]
struct Heartbeat<'a> {
    board: &'a ProgressBoard,
    done: &'a AtomicU64,
    best: &'a AtomicU64,
    total: u64,
}

impl Heartbeat<'_> {
    /// Posts the roots done, the best cost, and one thread's memo and memory.
    fn post(&self, cached: usize, memory_bytes: usize, seconds: f64) {
        self.board.post(Snapshot {
            iterations: self.done.load(Ordering::Relaxed),
            expansions: self.total,
            lower_bound: 0.0,
            upper_bound: f64::from_bits(self.best.load(Ordering::Relaxed)),
            cached: cached as u64,
            memory_bytes: memory_bytes as u64,
            seconds,
            phase: "",
        });
    }
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
    /// Axis rules without a leaf-size constraint: side optima are monotone in their rows.
    monotone: bool,
    /// `whole[j]`: the optimum on all rows with `j` splits within `whole_depth` levels (empty:
    /// unknown). For misclassification a side misses at most one error per row it lacks, so
    /// a root's side with `j` splits costs at least `whole[j]` minus the other side's rows.
    whole: Vec<f64>,
    whole_depth: usize,
    stopped: bool,
    heartbeat: Option<Heartbeat<'a>>,
    last_post: f64,
    /// Subproblems solved (memo misses).
    pub subproblems: u64,
    /// Splits evaluated.
    pub splits: u64,
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
            monotone: cands.axis.is_some() && p.min_leaf <= 1,
            whole: Vec::new(),
            whole_depth: 0,
            stopped: false,
            heartbeat: None,
            last_post: 0.0,
            subproblems: 0,
            splits: 0,
        }
    }

    /// Gives the engine the optima on all rows with fewer splits (see the field `whole`).
    fn with_whole(mut self, whole: &[f64], depth: usize) -> Self {
        self.whole = whole.to_vec();
        self.whole_depth = depth;
        self
    }

    /// Posts progress on `heartbeat`'s board while it works (see [`Self::tick`]).
    fn with_heartbeat(mut self, heartbeat: Option<Heartbeat<'a>>) -> Self {
        self.heartbeat = heartbeat;
        self
    }

    /// Whether the budget stopped the search (results since then are not to be trusted).
    pub fn stopped(&self) -> bool {
        self.stopped
    }

    /// Bytes held by the memo (roughly).
    pub fn memory(&self) -> usize {
        self.memo.len() * (self.p.n_words() * 8 + 64)
    }

    /// Looks at the budget; true once it stopped the search. Called per root tried and every
    /// few hundred candidates scanned, each a large enough unit of work (up to milliseconds on
    /// wide data) that the clock is read every time: every 1,024th look let breast-cancer with
    /// four splits run 1.7 s past a 0.05 s limit.
    fn tick(&mut self) -> bool {
        // The memory limit covers the candidate rules as well as the memo.
        let held = self.memory() + self.p.rules.heap_bytes();
        if !self.stopped && self.budget.check(0, held).is_some() {
            self.stopped = true;
        }
        if let Some(beat) = self.heartbeat {
            let seconds = self.budget.elapsed();
            if seconds - self.last_post >= 0.25 {
                self.last_post = seconds;
                beat.post(self.memo.len(), held, seconds);
            }
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
            let units = self.root_units(k, h);
            self.best_root(mask, k, h, level, leaf, ub, 0..units)
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

    /// How many units the root loop of a `(k, h)` subproblem runs over: features when the
    /// rules are axis-parallel and monotone, candidates otherwise.
    fn root_units(&self, k: usize, h: usize) -> usize {
        match &self.cands.axis {
            Some(axis) if self.monotone && k >= 2 && h >= 2 => axis.sorted.len(),
            _ => self.cands.len(),
        }
    }

    /// The best of the leaf and every root among `range` (candidates, or features when the rules
    /// are axis-parallel) with its budget splits, pruned at `ub`.
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
        let mut best = Best {
            cost: leaf,
            choice: None,
        };
        if self.monotone {
            if range.len() > 1 {
                // Good roots first, so the intervals below meet a tight bound.
                for rule in self.axis_seeds(mask) {
                    self.try_root(
                        mask,
                        Root::Rule(rule),
                        k,
                        h,
                        level,
                        ub,
                        &mut best,
                        (None, None),
                    );
                }
            }
            for f in range {
                if self.tick() {
                    break;
                }
                self.axis_roots(mask, f, k, h, level, ub, &mut best);
            }
            return (best.cost, best.choice);
        }
        for c in range {
            if self.tick() {
                break;
            }
            self.try_root(
                mask,
                Root::Candidate(c),
                k,
                h,
                level,
                ub,
                &mut best,
                (None, None),
            );
            if self.stopped {
                break;
            }
        }
        (best.cost, best.choice)
    }

    /// For each feature, the rule of its best single split of `mask` (by one sweep per feature).
    pub fn axis_seeds(&mut self, mask: &[u64]) -> Vec<usize> {
        let Some(axis) = self.cands.axis.as_ref() else {
            return Vec::new();
        };
        (0..axis.sorted.len())
            .filter_map(|f| best_in_feature(self.p, axis, f, mask).map(|(_, r)| r as usize))
            .collect()
    }

    /// Every threshold of feature `f` as the root. For axis rules the optimum of a side is
    /// monotone in its rows (a subset never costs more: any tree for the superset, its
    /// thresholds moved onto the subset's values and its empty splits dropped, is a tree for the
    /// subset), so between two evaluated thresholds `a < b` every root costs at least
    /// `T(left of a) + T(right of b)`: intervals whose bound cannot win are skipped whole.
    #[allow(clippy::too_many_arguments)]
    fn axis_roots(
        &mut self,
        mask: &[u64],
        f: usize,
        k: usize,
        h: usize,
        level: usize,
        ub: f64,
        best: &mut Best,
    ) {
        let Some(axis) = self.cands.axis.as_ref() else {
            return;
        };
        // One representative row per distinct value in the region, in increasing order; the last
        // value would leave the right side empty.
        let mut reps: Vec<u32> = Vec::new();
        let mut last: Option<u32> = None;
        for e in &axis.sorted[f] {
            if words::contains(mask, e.row as usize) && last != Some(e.rank) {
                reps.push(e.row);
                last = Some(e.rank);
            }
        }
        reps.pop();
        if reps.is_empty() {
            return;
        }
        let rules: Vec<u32> = reps.iter().map(|&r| axis.rule_of[f][r as usize]).collect();
        let eval = |e: &mut Self, j: usize, best: &mut Best, around: Around<'_>| {
            if rules[j] == u32::MAX {
                return None;
            }
            e.try_root(
                mask,
                Root::Rule(rules[j] as usize),
                k,
                h,
                level,
                ub,
                best,
                around,
            )
        };
        let integral = self.p.objective.integral();
        let last = reps.len() - 1;
        let lo = eval(self, 0, best, (None, None));
        let hi = if last > 0 {
            eval(self, last, best, (None, None))
        } else {
            None
        };
        let mut stack: Vec<(usize, usize, Option<SideBounds>, Option<SideBounds>)> =
            vec![(0, last, lo, hi)];
        while let Some((a, b, la, rb)) = stack.pop() {
            if b <= a + 1 || self.stopped {
                continue;
            }
            let bound = best.cost.min(ub);
            if let (Some(at_a), Some(at_b)) = (&la, &rb) {
                // Misclassification also moves by at most one per row that changes side: a
                // side's optimum differs from its neighbour's by at most the rows between them.
                let moved = (at_b.n_left - at_a.n_left) as f64;
                let lb = (0..k)
                    .map(|kl| {
                        let kr = k - 1 - kl;
                        let monotone = at_a.left[kl] + at_b.right[kr];
                        if integral {
                            monotone.max(at_b.left[kl] + at_a.right[kr] - moved)
                        } else {
                            monotone
                        }
                    })
                    .fold(f64::INFINITY, f64::min);
                if lb >= bound {
                    continue;
                }
            }
            let m = a + (b - a) / 2;
            let sm = eval(self, m, best, (la.as_ref(), rb.as_ref()));
            stack.push((m, b, sm.clone(), rb));
            stack.push((a, m, la, sm));
        }
    }

    /// Evaluates one root with every budget split, updating `best`; returns lower bounds on the
    /// optimum of each side for each budget (`None` when the root is unusable here). `around`
    /// holds the bounds of the neighbouring axis thresholds `a < this < b` when known: by
    /// monotonicity (and, for misclassification, one error per row that changes side) they bound
    /// this root's sides before any is solved.
    #[allow(clippy::too_many_arguments)]
    fn try_root(
        &mut self,
        mask: &[u64],
        root: Root,
        k: usize,
        h: usize,
        level: usize,
        ub: f64,
        best: &mut Best,
        around: Around<'_>,
    ) -> Option<SideBounds> {
        let p = self.p;
        let integral = p.objective.integral();
        let (li, ri) = (2 * level, 2 * level + 1);
        let side_rule = match root {
            Root::Candidate(c) => self.cands.first(c),
            Root::Rule(r) => r,
        };
        let side = p.rules.plus(side_rule);
        words::and_into(mask, side, &mut self.scratch[li]);
        words::and_not_into(mask, side, &mut self.scratch[ri]);
        if words::popcount(&self.scratch[li]) == 0 || words::popcount(&self.scratch[ri]) == 0 {
            return None;
        }
        let f_left = p.leaf_cost(&self.scratch[li]);
        let f_right = p.leaf_cost(&self.scratch[ri]);
        if !(f_left.is_finite() && f_right.is_finite()) {
            return None; // a side below the minimum leaf size
        }
        let mut bounds = SideBounds {
            left: vec![0.0; k],
            right: vec![0.0; k],
            left_feat: Vec::new(),
            right_feat: Vec::new(),
            n_left: words::popcount(&self.scratch[li]),
        };
        bounds.left[0] = f_left;
        bounds.right[0] = f_right;
        let n = bounds.n_left;
        if integral && h >= 1 && h - 1 == self.whole_depth && !self.whole.is_empty() {
            let n_right = words::popcount(&self.scratch[ri]);
            if n + n_right == p.rules.n_rows() as u64 {
                // At the root: a tree for one side, used on all rows, errs on at most the other
                // side's rows more, so the side costs at least the whole optimum minus those.
                for j in 1..k.min(self.whole.len()) {
                    bounds.left[j] = bounds.left[j].max(self.whole[j] - n_right as f64);
                    bounds.right[j] = bounds.right[j].max(self.whole[j] - n as f64);
                }
            }
        }
        for j in 1..k {
            if let Some(a) = around.0 {
                bounds.left[j] = bounds.left[j].max(a.left[j]);
                if integral {
                    bounds.right[j] = bounds.right[j].max(a.right[j] - (n - a.n_left) as f64);
                }
            }
            if let Some(b) = around.1 {
                bounds.right[j] = bounds.right[j].max(b.right[j]);
                if integral {
                    bounds.left[j] = bounds.left[j].max(b.left[j] - (b.n_left - n) as f64);
                }
            }
        }
        // Budgets that leave a side one split (within the depth left) are the sweep's T1.
        let one_split = |j: usize| j >= 1 && normalise(j, h - 1).0 == 1;
        let per_feature = self.monotone && (1..k).any(one_split);
        if per_feature {
            bounds.left_feat = self.feature_bounds(true, n, around);
            bounds.right_feat = self.feature_bounds(false, n, around);
            let low = |v: &[f64], leaf: f64| v.iter().copied().fold(leaf, f64::min);
            let (bl, br) = (
                low(&bounds.left_feat, f_left),
                low(&bounds.right_feat, f_right),
            );
            for j in (1..k).filter(|&j| one_split(j)) {
                bounds.left[j] = bounds.left[j].max(bl);
                bounds.right[j] = bounds.right[j].max(br);
            }
        }
        // Lower bound of each budget split: a side with splits left costs at least 0.
        let lb = |b: &SideBounds, kl: usize| b.left[kl] + b.right[k - 1 - kl];
        let bound = best.cost.min(ub);
        if (0..k).all(|kl| lb(&bounds, kl) >= bound) {
            return Some(bounds);
        }
        let (rule, swapped) = match root {
            Root::Rule(r) => (r, false),
            Root::Candidate(c) => {
                let rule = self.cands.usable(p, c, mask)?;
                // The reported rule may have its sides the other way round.
                let swapped = rule != side_rule
                    && !words::contains(p.rules.plus(rule), first_member(&self.scratch[li]));
                (rule, swapped)
            }
        };
        for kl in 0..k {
            let bound = best.cost.min(ub);
            if lb(&bounds, kl) >= bound {
                continue;
            }
            let kr = k - 1 - kl;
            let left = if kl == 0 {
                f_left
            } else {
                let m = self.scratch[li].clone();
                let sub = if integral {
                    bound - bounds.right[kr]
                } else {
                    bound
                };
                let v = if per_feature && one_split(kl) {
                    self.one_split_bounded(&m, f_left, &mut bounds.left_feat, sub)
                } else {
                    self.solve(&m, kl, h - 1, level + 1, sub)
                };
                bounds.left[kl] = if v < sub { v } else { sub.max(0.0) };
                v
            };
            if left + bounds.right[kr] >= bound {
                continue;
            }
            let right = if kr == 0 {
                f_right
            } else {
                let m = self.scratch[ri].clone();
                let sub = if integral { bound - left } else { bound };
                let v = if per_feature && one_split(kr) {
                    self.one_split_bounded(&m, f_right, &mut bounds.right_feat, sub)
                } else {
                    self.solve(&m, kr, h - 1, level + 1, sub)
                };
                bounds.right[kr] = if v < sub { v } else { sub.max(0.0) };
                v
            };
            let cost = left + right;
            if cost < best.cost {
                best.cost = cost;
                let kl_rule = if swapped { kr } else { kl };
                best.choice = Some((rule as u32, kl_rule as u8));
            }
            if self.stopped {
                break;
            }
        }
        Some(bounds)
    }

    /// Per feature, a lower bound on a side's best one-split tree on that feature alone, from the
    /// neighbouring thresholds' values: monotone in the rows, and for misclassification moving by
    /// at most one per row that changes side. `n` is this root's left-side size.
    fn feature_bounds(&self, left_side: bool, n: u64, around: Around<'_>) -> Vec<f64> {
        let nf = self.cands.axis.as_ref().map_or(0, |a| a.sorted.len());
        let integral = self.p.objective.integral();
        let mut v = vec![0.0; nf];
        let mut raise = |src: &[f64], minus: f64| {
            for (x, s) in v.iter_mut().zip(src) {
                *x = f64::max(*x, s - minus);
            }
        };
        if let Some(a) = around.0 {
            if left_side {
                raise(&a.left_feat, 0.0);
            } else if integral {
                raise(&a.right_feat, (n - a.n_left) as f64);
            }
        }
        if let Some(b) = around.1 {
            if !left_side {
                raise(&b.right_feat, 0.0);
            } else if integral {
                raise(&b.left_feat, (b.n_left - n) as f64);
            }
        }
        v
    }

    /// The best tree with at most one split of `mask` (axis rules): exact when below `cut`,
    /// otherwise some value `>= cut`. Features are swept in increasing order of their lower
    /// bounds `feat` until the next bound cannot win; `feat` then holds each feature's value
    /// (swept) or its bound (skipped).
    fn one_split_bounded(&mut self, mask: &[u64], leaf: f64, feat: &mut [f64], cut: f64) -> f64 {
        let Some(axis) = self.cands.axis.as_ref() else {
            return leaf;
        };
        let mut order: Vec<usize> = (0..feat.len()).collect();
        order.sort_by(|&a, &b| feat[a].total_cmp(&feat[b]));
        let mut best = leaf;
        for g in order {
            if feat[g] >= best.min(cut) {
                break;
            }
            self.splits += 1;
            let split = best_in_feature(self.p, axis, g, mask).map_or(f64::INFINITY, |c| c.0);
            feat[g] = split.min(leaf);
            best = best.min(feat[g]);
        }
        best
    }

    /// The best single split of `mask` (or the leaf).
    fn best_split(&mut self, mask: &[u64], leaf: f64) -> (f64, Option<(u32, u8)>) {
        if self.cands.axis.is_some() {
            return self.best_axis_split(mask, leaf);
        }
        self.scan_candidates(mask, leaf, 0..self.cands.len())
    }

    /// The best of the leaf and the splits by candidates `range` of `mask`, one candidate at a
    /// time.
    fn scan_candidates(
        &mut self,
        mask: &[u64],
        leaf: f64,
        range: std::ops::Range<usize>,
    ) -> (f64, Option<(u32, u8)>) {
        let p = self.p;
        let nc = p.n_classes();
        if nc == 2 && p.objective.integral() {
            return self.best_binary_split(mask, leaf, range);
        }
        let mut total = vec![0u64; nc];
        p.counts(mask, &mut total);
        let mut left = vec![0u64; nc];
        let mut right = vec![0u64; nc];
        let mut best = leaf;
        let mut choice = None;
        for c in range {
            if c % 256 == 0 && self.tick() {
                break;
            }
            let side = self.cands.side(c);
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

    /// [`Self::best_split`] for two classes and misclassification: one pass over the candidates'
    /// contiguous sides counting, per word, the rows on the left and those of class 1 there.
    fn best_binary_split(
        &mut self,
        mask: &[u64],
        leaf: f64,
        range: std::ops::Range<usize>,
    ) -> (f64, Option<(u32, u8)>) {
        let p = self.p;
        let class1 = p.class(1);
        let n = words::popcount(mask);
        let t1 = words::and_count(mask, class1);
        let min_leaf = p.min_leaf.max(1);
        let mut best = leaf;
        let mut choice = None;
        let mut evaluated = 0u64;
        for c in range {
            if c % 1024 == 0 && self.tick() {
                break;
            }
            let (mut nl, mut l1) = (0u64, 0u64);
            for ((s, m), k) in self.cands.side(c).iter().zip(mask).zip(class1) {
                let left = s & m;
                nl += u64::from(left.count_ones());
                l1 += u64::from((left & k).count_ones());
            }
            if nl < min_leaf || n - nl < min_leaf {
                continue;
            }
            evaluated += 1;
            let (r1, nr) = (t1 - l1, n - nl);
            let cost = (l1.min(nl - l1) + r1.min(nr - r1)) as f64;
            if cost < best {
                if let Some(rule) = self.cands.usable(p, c, mask) {
                    best = cost;
                    choice = Some((rule as u32, 0));
                }
            }
        }
        self.splits += evaluated;
        (best, choice)
    }

    /// [`Self::best_split`] for axis rules: one sweep per feature over its sorted rows.
    fn best_axis_split(&mut self, mask: &[u64], leaf: f64) -> (f64, Option<(u32, u8)>) {
        let Some(axis) = self.cands.axis.as_ref() else {
            return (leaf, None);
        };
        let mut best = leaf;
        let mut choice = None;
        for f in 0..axis.sorted.len() {
            if self.tick() {
                break;
            }
            self.splits += 1;
            if let Some((cost, rule)) = best_in_feature(self.p, axis, f, mask) {
                if cost < best {
                    best = cost;
                    choice = Some((rule, 0));
                }
            }
        }
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

/// The best single split of `mask` on feature `f` (first in increasing threshold order among
/// equals) as `(cost, rule)`, if the feature splits `mask` at all.
fn best_in_feature(
    p: &Problem<'_>,
    axis: &AxisIndex,
    f: usize,
    mask: &[u64],
) -> Option<(f64, u32)> {
    let rule_of = &axis.rule_of[f];
    if p.n_classes() == 2
        && p.objective == super::problem::Objective::Misclassification
        && p.min_leaf <= 1
    {
        let (cost, row) = best_binary_split(&axis.sorted[f], mask, p.class(0), p.class(1))?;
        // A duplicate rule dropped in favour of an earlier feature's twin: that feature finds
        // the same split first.
        let rule = rule_of[row];
        return (rule != u32::MAX).then_some((cost as f64, rule));
    }
    let mut best: Option<(f64, u32)> = None;
    sweep(p, &axis.sorted[f], mask, |cost, row| {
        if best.is_none_or(|(b, _)| cost < b) && rule_of[row] != u32::MAX {
            best = Some((cost, rule_of[row]));
        }
    });
    best
}

/// The two-class misclassification sweep without data-dependent branches on row membership
/// (the hot loop of the axis engine): `(errors, last left row)` of the best split.
fn best_binary_split(
    sorted: &[Sorted],
    mask: &[u64],
    class0: &[u64],
    class1: &[u64],
) -> Option<(u64, usize)> {
    let t0 = words::and_count(mask, class0);
    let t1 = words::and_count(mask, class1);
    let (mut l0, mut l1) = (0u64, 0u64);
    let mut prev_rank = u64::MAX; // rank of the last row in the mask (none yet: no boundary)
    let mut prev_row = 0usize;
    let mut best = u64::MAX;
    let mut best_row = usize::MAX;
    for e in sorted {
        let row = e.row as usize;
        let w = (mask[row / 64] >> (row % 64)) & 1;
        let rank = u64::from(e.rank);
        let boundary = w & u64::from(prev_rank != u64::MAX && rank > prev_rank);
        let cost = l0.min(l1) + (t0 - l0).min(t1 - l1);
        if boundary & u64::from(cost < best) == 1 {
            best = cost;
            best_row = prev_row;
        }
        let is1 = u64::from(e.label);
        l1 += w & is1;
        l0 += w & (1 - is1);
        if w == 1 {
            prev_rank = rank;
            prev_row = row;
        }
    }
    (best_row != usize::MAX).then_some((best, best_row))
}

/// Visits every single split of `mask` along one feature's sorted rows: `visit(cost, row)` with
/// `row` the last row (in sorted order) on the left side.
fn sweep(p: &Problem<'_>, sorted: &[Sorted], mask: &[u64], mut visit: impl FnMut(f64, usize)) {
    let nc = p.n_classes();
    let mut total = vec![0u64; nc];
    p.counts(mask, &mut total);
    let mut left = vec![0u64; nc];
    let mut right = vec![0u64; nc];
    let mut last: Option<Sorted> = None;
    for e in sorted {
        if !words::contains(mask, e.row as usize) {
            continue;
        }
        if let Some(prev) = last {
            if e.rank > prev.rank {
                for c in 0..nc {
                    right[c] = total[c] - left[c];
                }
                visit(
                    p.leaf_from_counts(&left) + p.leaf_from_counts(&right),
                    prev.row as usize,
                );
            }
        }
        left[e.label as usize] += 1;
        last = Some(*e);
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
    let cap = if h >= 63 {
        usize::MAX
    } else {
        (1usize << h) - 1
    };
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
    // The optima with fewer splits (iterative deepening) bound the sides of every root. Their
    // trees are trees of this problem too: the best is returned should the search stop before
    // it finds better (a stopped search may not have got past the leaf).
    let mut whole = vec![leaf];
    let mut fallback: Option<(f64, RuleTree)> = None;
    if p.objective.integral() && k >= 2 && h >= 2 {
        for j in 1..k {
            let r = solve(p, cands, j, h - 1, n_jobs, budget, None);
            let optimal = r.status == Status::Optimal;
            if r.cost < fallback.as_ref().map_or(leaf, |f| f.0) {
                fallback = Some((r.cost, r.tree));
            }
            if !optimal {
                break;
            }
            whole.push(r.cost);
        }
    }

    let m = Engine::new(p, cands, k, budget).root_units(k, h);
    let chunk = if m < 64 * n_jobs.max(1) {
        1
    } else {
        ROOT_CHUNK
    };
    let next = AtomicU64::new(0);
    let done = AtomicU64::new(0);
    let global = AtomicU64::new(leaf.to_bits());
    let stop = AtomicBool::new(false);
    // (cost, unit, 0 for the warm start / 1 for the search, tree): ties go to the first unit.
    type Found = (f64, usize, u8, RuleTree);
    let found: Mutex<Vec<Found>> = Mutex::new(Vec::new());
    if m > 1 && k >= 2 && h >= 2 {
        // A first bound from each feature's best single split as the root (axis rules): only a
        // bound (ties with it are still searched), so the result does not depend on it.
        let mut e = Engine::new(p, cands, k, budget).with_whole(&whole, h.saturating_sub(1));
        if e.monotone {
            let mut best = Best {
                cost: leaf,
                choice: None,
            };
            for rule in e.axis_seeds(&all) {
                e.try_root(
                    &all,
                    Root::Rule(rule),
                    k,
                    h,
                    0,
                    f64::INFINITY,
                    &mut best,
                    (None, None),
                );
            }
            if let (false, Some((rule, kl))) = (e.stopped(), best.choice) {
                global.store(best.cost.to_bits(), Ordering::Relaxed);
                let unit = match p.rules.shape(rule as usize) {
                    Shape::Axis { feature, .. } => feature,
                    Shape::Surface { .. } => 0,
                };
                let tree = e.expand(&all, rule as usize, kl as usize, k, h);
                if let Ok(mut v) = found.lock() {
                    v.push((best.cost, unit, 0, tree));
                }
            }
        }
    }
    let totals = Mutex::new((0u64, 0u64, 0usize));
    let trivial = k == 0 || leaf == 0.0 || (n as u64) < 2 * p.min_leaf.max(1);
    if !trivial {
        std::thread::scope(|s| {
            for _ in 0..n_jobs.max(1) {
                s.spawn(|| {
                    let heartbeat = board.map(|board| Heartbeat {
                        board,
                        done: &done,
                        best: &global,
                        total: m as u64,
                    });
                    let mut e = Engine::new(p, cands, k, budget)
                        .with_whole(&whole, h.saturating_sub(1))
                        .with_heartbeat(heartbeat);
                    let mut best = leaf;
                    let mut mine: Option<Found> = None;
                    loop {
                        let start = next.fetch_add(chunk as u64, Ordering::Relaxed) as usize;
                        if start >= m || stop.load(Ordering::Relaxed) {
                            break;
                        }
                        let end = (start + chunk).min(m);
                        for c in start..end {
                            let g = f64::from_bits(global.load(Ordering::Relaxed));
                            let ub = best.min(super::problem::next_up(g));
                            let (cost, choice) = if k == 1 || h == 1 {
                                e.scan_candidates(&all, leaf, c..c + 1)
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
                                    // Built now, from this thread's memo (exact below the root).
                                    let tree = e.expand(&all, rule as usize, kl as usize, k, h);
                                    mine = Some((cost, c, 1, tree));
                                    global.fetch_min(cost.to_bits(), Ordering::Relaxed);
                                }
                            }
                        }
                        done.fetch_add((end - start) as u64, Ordering::Relaxed);
                        if let Some(beat) = heartbeat {
                            let held = e.memory() + p.rules.heap_bytes();
                            beat.post(e.memo.len(), held, budget.elapsed());
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
        .min_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)).then(a.2.cmp(&b.2)));
    let (tree, cost) = match winner {
        None => (RuleTree::Leaf, leaf),
        Some((cost, _, _, tree)) => (tree, cost),
    };
    // Only a stopped search can have found worse than a tree of fewer splits.
    let (tree, cost) = match fallback {
        Some((better, fewer)) if better < cost => (fewer, better),
        _ => (tree, cost),
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
        candidates: cands.len() as u64,
        subproblems,
        splits,
        memory,
    }
}
