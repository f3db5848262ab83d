//! The paper's engine (spec §3.2–3.5): for every K-combination of the candidate rules, the best
//! proper tree built from exactly those rules (`sodt`), and the best over all combinations (`odt`),
//! on several threads.
//!
//! Invariants:
//! - ties go to the first minimum in (number of splits, combination rank, root order) — the
//!   paper's `smaller_E` — whatever the number of threads: workers only prune what cannot be
//!   strictly better than an earlier combination or tie a later one, and the reduction picks the
//!   lowest rank among equal costs;
//! - `sodt` optimises each subtree on the rows its region holds (never on the parent's rows).

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;

use super::problem::{ancestry, Problem};
use super::words;
use super::RuleTree;
use crate::search::{Budget, ProgressBoard, Snapshot, Status};

/// Most splits the combination engine takes (a K-set is held on the stack).
pub const MAX_SPLITS: usize = 16;

/// The `sodt` recursion over one rule list, with reusable per-level row masks.
pub struct Sodt<'p> {
    p: &'p Problem<'p>,
    masks: Vec<u64>,
    w: usize,
    /// All rows (the root's mask).
    all: Vec<u64>,
    /// Calls made so far (spec T2/T14 count them).
    pub calls: u64,
    /// Skip roots and right subtrees that cannot beat the best so far (off only to count calls).
    pub prune: bool,
}

impl<'p> Sodt<'p> {
    /// A recursion for rule lists of at most `max_k` rules.
    pub fn new(p: &'p Problem<'p>, max_k: usize) -> Sodt<'p> {
        let w = p.n_words();
        Sodt {
            p,
            masks: vec![0; (max_k + 2) * w],
            w,
            all: words::full(p.rules.n_rows()),
            calls: 0,
            prune: true,
        }
    }

    /// The cost of the best proper tree made of exactly the rules `rs` on all rows, with at most
    /// `depth` levels of splits: exact when below `cut`, otherwise some value `>= cut`
    /// (`+∞` when no proper tree exists).
    pub fn solve(&mut self, rs: &[u32], depth: u32, cut: f64) -> f64 {
        self.masks[..self.w].copy_from_slice(&self.all);
        self.rec(rs, 0, depth, cut)
    }

    fn rec(&mut self, rs: &[u32], lvl: usize, depth: u32, cut: f64) -> f64 {
        self.calls += 1;
        let p = self.p;
        let w = self.w;
        let mask_range = lvl * w..(lvl + 1) * w;
        if p.min_leaf > 0 && words::popcount(&self.masks[mask_range.clone()]) < p.min_leaf {
            return f64::INFINITY;
        }
        if rs.is_empty() {
            return p.leaf_cost(&self.masks[mask_range]);
        }
        if depth == 0 {
            return f64::INFINITY;
        }
        let mut best = f64::INFINITY;
        let mut plus = [0u32; MAX_SPLITS];
        let mut minus = [0u32; MAX_SPLITS];
        for &root in rs {
            let Some((np, nm)) = split_around(p, rs, root, &mut plus, &mut minus) else {
                continue;
            };
            let bound = if self.prune {
                best.min(cut)
            } else {
                f64::INFINITY
            };
            self.child_mask(lvl, root as usize, true);
            let left = self.rec(&plus[..np], lvl + 1, depth - 1, bound);
            if left.is_infinite() || (self.prune && left >= bound) {
                continue;
            }
            let right_bound = if !self.prune {
                f64::INFINITY
            } else if p.objective.integral() {
                bound - left
            } else {
                bound
            };
            self.child_mask(lvl, root as usize, false);
            let right = self.rec(&minus[..nm], lvl + 1, depth - 1, right_bound);
            let c = left + right;
            if c < best {
                best = c;
            }
        }
        best
    }

    /// Writes the left (`true`) or right side of `rule` within level `lvl`'s mask into level
    /// `lvl + 1`.
    fn child_mask(&mut self, lvl: usize, rule: usize, left: bool) {
        let w = self.w;
        let (cur, next) = self.masks.split_at_mut((lvl + 1) * w);
        let mask = &cur[lvl * w..];
        let side = self.p.rules.plus(rule);
        if left {
            words::and_into(mask, side, &mut next[..w]);
        } else {
            words::and_not_into(mask, side, &mut next[..w]);
        }
    }

    /// The best tree over `rs` (no pruning, so the choice is the first minimum), with its cost;
    /// `None` when no proper tree exists.
    pub fn tree(&mut self, rs: &[u32], depth: u32) -> Option<(f64, RuleTree)> {
        let all = self.all.clone();
        self.tree_rec(rs, &all, depth)
    }

    fn tree_rec(&mut self, rs: &[u32], mask: &[u64], depth: u32) -> Option<(f64, RuleTree)> {
        let p = self.p;
        if p.min_leaf > 0 && words::popcount(mask) < p.min_leaf {
            return None;
        }
        if rs.is_empty() {
            let c = p.leaf_cost(mask);
            return c.is_finite().then_some((c, RuleTree::Leaf));
        }
        if depth == 0 {
            return None;
        }
        let mut best: Option<(f64, RuleTree)> = None;
        let mut plus = [0u32; MAX_SPLITS];
        let mut minus = [0u32; MAX_SPLITS];
        let mut left = vec![0u64; self.w];
        let mut right = vec![0u64; self.w];
        for &root in rs {
            let Some((np, nm)) = split_around(p, rs, root, &mut plus, &mut minus) else {
                continue;
            };
            words::and_into(mask, p.rules.plus(root as usize), &mut left);
            let Some((lc, lt)) = self.tree_rec(&plus[..np], &left, depth - 1) else {
                continue;
            };
            words::and_not_into(mask, p.rules.plus(root as usize), &mut right);
            let Some((rc, rt)) = self.tree_rec(&minus[..nm], &right, depth - 1) else {
                continue;
            };
            let c = lc + rc;
            if best.as_ref().is_none_or(|(b, _)| c < *b) {
                best = Some((
                    c,
                    RuleTree::Node {
                        rule: root as usize,
                        left: Box::new(lt),
                        right: Box::new(rt),
                    },
                ));
            }
        }
        best
    }
}

/// `splits` for one root (spec §3.2): the rules that must go left and right of `root`, in list
/// order, or `None` when some rule is unrelated to it (it cannot be the root).
#[inline]
fn split_around(
    p: &Problem<'_>,
    rs: &[u32],
    root: u32,
    plus: &mut [u32; MAX_SPLITS],
    minus: &mut [u32; MAX_SPLITS],
) -> Option<(usize, usize)> {
    let (mut np, mut nm) = (0, 0);
    for &other in rs {
        if other == root {
            continue;
        }
        match ancestry(p.rules, root as usize, other as usize) {
            1 => {
                plus[np] = other;
                np += 1;
            }
            -1 => {
                minus[nm] = other;
                nm += 1;
            }
            _ => return None,
        }
    }
    Some((np, nm))
}

/// Binomial coefficient, saturating at `u128::MAX`.
pub fn binomial_u128(n: u64, k: u64) -> u128 {
    if k > n {
        return 0;
    }
    let k = k.min(n - k);
    let mut acc: u128 = 1;
    for i in 0..k {
        // acc * (n - i) / (i + 1) stays an integer at every step.
        match acc.checked_mul(u128::from(n - i)) {
            Some(v) => acc = v / u128::from(i + 1),
            None => return u128::MAX,
        }
    }
    acc
}

/// The combination of rank `rank` (lexicographic) of `k` out of `m`.
fn unrank(mut rank: u128, m: usize, k: usize, out: &mut [u32]) {
    let mut x = 0usize;
    for (i, slot) in out.iter_mut().enumerate().take(k) {
        loop {
            let c = binomial_u128((m - x - 1) as u64, (k - i - 1) as u64);
            if c <= rank {
                rank -= c;
                x += 1;
            } else {
                break;
            }
        }
        *slot = x as u32;
        x += 1;
    }
}

/// Advances a combination of `k` out of `m` (as `u32`); `false` after the last.
fn next(c: &mut [u32], m: usize) -> bool {
    let k = c.len();
    let mut i = k;
    while i > 0 {
        i -= 1;
        if (c[i] as usize) < m - k + i {
            c[i] += 1;
            for j in i + 1..k {
                c[j] = c[j - 1] + 1;
            }
            return true;
        }
    }
    false
}

/// What the combination engine found.
#[derive(Debug, Clone, Default)]
pub struct CombosResult {
    /// Best cost, its number of splits and its combination.
    pub best: Option<(f64, Vec<u32>)>,
    /// `Optimal`, or why the enumeration stopped.
    pub status: Option<Status>,
    /// Combinations examined.
    pub combinations: u64,
    /// Combinations whose recursion the bound cut short.
    pub pruned: u64,
    /// `sodt` calls.
    pub sodt_calls: u64,
}

/// Settings of one enumeration.
#[derive(Debug, Clone, Copy)]
pub struct CombosConfig {
    /// Number of splits K.
    pub n_splits: usize,
    /// Exactly K (`true`) or the best over 0..=K.
    pub exactly: bool,
    /// Depth budget.
    pub depth: u32,
    /// Worker threads (≥ 1).
    pub n_jobs: usize,
}

/// Total combinations `odt` enumerates.
pub fn total_combinations(m: usize, config: &CombosConfig) -> u128 {
    let ks = if config.exactly {
        config.n_splits..=config.n_splits
    } else {
        0..=config.n_splits
    };
    ks.map(|k| binomial_u128(m as u64, k as u64))
        .fold(0u128, |a, b| a.saturating_add(b))
}

/// Combinations per unit of work a thread takes.
const CHUNK: u64 = 2048;

/// `odt` (spec §3.5): the best tree over all K-combinations (or over all k <= K).
pub fn odt(
    p: &Problem<'_>,
    config: &CombosConfig,
    budget: &Budget,
    board: Option<&ProgressBoard>,
) -> CombosResult {
    let m = p.rules.len();
    let total = total_combinations(m, config).min(u128::from(u64::MAX)) as u64;
    let done = AtomicU64::new(0);
    let mut result = CombosResult::default();
    let ks: Vec<usize> = if config.exactly {
        vec![config.n_splits]
    } else {
        (0..=config.n_splits).collect()
    };
    let mut incumbent = f64::INFINITY;
    for k in ks {
        if k > m {
            break;
        }
        let pass = Pass {
            p,
            k,
            depth: config.depth,
            total: binomial_u128(m as u64, k as u64).min(u128::from(u64::MAX)) as u64,
            incumbent,
            global: AtomicU64::new(f64::INFINITY.to_bits()),
            next_chunk: AtomicU64::new(0),
            done: &done,
            all: total,
            stop: AtomicBool::new(false),
            found: Mutex::new(Vec::new()),
            budget,
            board,
        };
        let threads = config.n_jobs.max(1);
        let counters: Vec<(u64, u64, u64)> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..threads).map(|_| s.spawn(|| pass.work())).collect();
            handles
                .into_iter()
                .map(|h| h.join().unwrap_or((0, 0, 0)))
                .collect()
        });
        for (c, pr, calls) in counters {
            result.combinations += c;
            result.pruned += pr;
            result.sodt_calls += calls;
        }
        let found = pass.found.into_inner().unwrap_or_default();
        if let Some((cost, rank)) = found
            .into_iter()
            .min_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)))
        {
            if cost < incumbent {
                incumbent = cost;
                let mut combo = vec![0u32; k];
                unrank(u128::from(rank), m, k, &mut combo);
                result.best = Some((cost, combo));
            }
        }
        if pass.stop.load(Ordering::Relaxed) {
            result.status = budget.check(0, 0).or(Some(Status::Interrupted));
            return result;
        }
    }
    result.status = Some(Status::Optimal);
    result
}

/// One enumeration of all k-combinations, shared by the worker threads.
struct Pass<'a> {
    p: &'a Problem<'a>,
    k: usize,
    depth: u32,
    total: u64,
    /// Cost from earlier passes (fewer splits), which must be strictly beaten.
    incumbent: f64,
    /// Best cost any worker found in this pass (as `f64` bits; costs are ≥ 0 so the bit order
    /// is the numeric order).
    global: AtomicU64,
    next_chunk: AtomicU64,
    done: &'a AtomicU64,
    all: u64,
    stop: AtomicBool,
    found: Mutex<Vec<(f64, u64)>>,
    budget: &'a Budget,
    board: Option<&'a ProgressBoard>,
}

impl Pass<'_> {
    /// Takes chunks until none are left; returns (combinations, pruned, sodt calls).
    fn work(&self) -> (u64, u64, u64) {
        let mut sodt = Sodt::new(self.p, self.k);
        let m = self.p.rules.len();
        let mut combo = vec![0u32; self.k];
        let mut best = self.incumbent;
        let mut best_rank = None;
        let (mut examined, mut pruned) = (0u64, 0u64);
        'chunks: loop {
            let chunk = self.next_chunk.fetch_add(1, Ordering::Relaxed);
            let start = chunk.saturating_mul(CHUNK);
            if start >= self.total || self.stop.load(Ordering::Relaxed) {
                break;
            }
            let end = (start + CHUNK).min(self.total);
            unrank(u128::from(start), m, self.k, &mut combo);
            for rank in start..end {
                if (rank - start) % 256 == 0 {
                    let mem = sodt.masks.len() * 8;
                    if self.stop.load(Ordering::Relaxed)
                        || self
                            .budget
                            .check(self.done.load(Ordering::Relaxed), mem)
                            .is_some()
                    {
                        self.stop.store(true, Ordering::Relaxed);
                        break 'chunks;
                    }
                }
                let global = f64::from_bits(self.global.load(Ordering::Relaxed));
                let cut = best.min(super::problem::next_up(global));
                let c = sodt.solve(&combo, self.depth, cut);
                examined += 1;
                if c < cut {
                    best = c;
                    best_rank = Some(rank);
                    self.global.fetch_min(c.to_bits(), Ordering::Relaxed);
                } else if cut.is_finite() && c.is_finite() {
                    pruned += 1;
                }
                if rank + 1 < end {
                    next(&mut combo, m);
                }
            }
            let done = self.done.fetch_add(end - start, Ordering::Relaxed) + (end - start);
            if let Some(board) = self.board {
                let ub = f64::from_bits(self.global.load(Ordering::Relaxed)).min(self.incumbent);
                board.post(Snapshot {
                    iterations: done,
                    expansions: self.all,
                    lower_bound: 0.0,
                    upper_bound: ub,
                    cached: 0,
                    memory_bytes: 0,
                    seconds: self.budget.elapsed(),
                    phase: "",
                });
            }
        }
        if let Some(rank) = best_rank {
            if let Ok(mut f) = self.found.lock() {
                f.push((best, rank));
            }
        }
        (examined, pruned, sodt.calls)
    }
}

/// Left-first level order of a tree's rules (its canonical permutation, spec §2.3).
pub fn level_order(tree: &RuleTree) -> Vec<usize> {
    let mut out = Vec::new();
    let mut queue = std::collections::VecDeque::from([tree]);
    while let Some(t) = queue.pop_front() {
        if let RuleTree::Node { rule, left, right } = t {
            out.push(*rule);
            queue.push_back(left);
            queue.push_back(right);
        }
    }
    out
}

/// The insertion decoder (spec §2.3): the unique proper tree whose rules, inserted in the order
/// of `perm`, each follow the ancestry relation down from the root; `None` when some rule meets
/// an unrelated one on its way.
pub fn decode(perm: &[usize], rules: &super::rules::RuleSet) -> Option<RuleTree> {
    let mut tree = RuleTree::Leaf;
    for &r in perm {
        let mut slot = &mut tree;
        loop {
            match slot {
                RuleTree::Leaf => {
                    *slot = RuleTree::Node {
                        rule: r,
                        left: Box::new(RuleTree::Leaf),
                        right: Box::new(RuleTree::Leaf),
                    };
                    break;
                }
                RuleTree::Node { rule, left, right } => {
                    slot = match ancestry(rules, *rule, r) {
                        1 => left,
                        -1 => right,
                        _ => return None,
                    };
                }
            }
        }
    }
    Some(tree)
}
