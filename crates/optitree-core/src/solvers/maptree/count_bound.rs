//! A lower bound on the cost of any subtree from its class counts alone (fast mode, two classes),
//! and the look-ahead bound of a fresh node built on it: the node's real splits, each child
//! bounded by counts.
//!
//! Three facts hold for a subproblem J at depth d with m rows and counts (a, b), where G is the
//! largest group of identical feature vectors in the data:
//! - a leaf of J pays its leaf prior `lp(d) = −ln(1 − p_split(d)) > 0` whenever m > G (J then
//!   holds two distinct vectors, so some feature divides it);
//! - J holds at least ⌈m / G⌉ distinct vectors, which only J's valid features can tell apart, so
//!   `ln |V(J)| ≥ φ(m) = ln max(1, ⌈log2 ⌈m / G⌉⌉)`;
//! - the leaves below J have likelihood at most one pure leaf per class (the paper's Lemmas
//!   13–14): `Σ −LL ≥ −LLperf(a, b)`.
//!
//! Hence `opt(J, d) ≥ g(d, a, b)` with, by induction on m,
//! `g(d, a, b) = min([m > G]·lp(d) − LL(a, b), −lsp(d) + φ(m) + min over count partitions of
//! g(d+1, a', b') + g(d+1, a − a', b − b'))`, tabulated for small counts and depths. Outside the
//! table the closed form `min([m > G]·lp(d) − LL, −lsp(d) + φ(m) − LLperf + c(d+1, ⌈m/2⌉))`
//! (the same facts, one level deep, without the recursion) takes over, where
//! `c(d, s) = [s > G]·min(lp(d), −lsp(d) + φ(s))` is what the larger child's prior surely costs;
//! it is below `g`, so the two can be mixed freely.

use super::model::Posterior;
use crate::data::Dataset;

/// Largest count per class the table covers.
const MAX_COUNT: usize = 64;
/// Deepest level the table covers (deeper nodes use the closed form).
const MAX_DEPTH: u32 = 10;
/// Rounding slack per row: the table adds terms in another order than a tree's exact cost, and
/// its value may exceed the cost it bounds by a few ulps; subtracting this keeps it below.
const SLACK_PER_ROW: f64 = 1e-12;

/// The count bound `g` of the module docs, for one dataset and model.
pub struct CountBound<'m> {
    model: &'m Posterior,
    /// Largest group of rows with identical feature vectors.
    largest_group: u64,
    /// Table sides: counts 0..=max_a of class 0 and 0..=max_b of class 1.
    max_a: usize,
    max_b: usize,
    /// `table[d][a * (max_b + 1) + b]` for depths 0..=MAX_DEPTH.
    table: Vec<Vec<f64>>,
    /// `parts[d][a * (max_b + 1) + b]`: the cheapest count partition into two children at
    /// depth `d + 1` (the split term of `g` without its prior), same layout.
    parts: Vec<Vec<f64>>,
    /// `φ(m)` for every subset size of the data.
    phis: Vec<f64>,
}

/// Lower bounds on the number of features that divide a subset of a node, from the node's
/// features alone: a subset that leaves out fewer of the node's rows than a feature's smaller
/// side still holds rows of both sides, so that feature divides it.
#[derive(Debug, Default)]
pub struct ValidFloor {
    /// Rows of the node.
    total: u64,
    /// Features that divide the node.
    n: usize,
    /// `at_most[x]`: how many of those features have a smaller side of at most `x` rows, for
    /// `x` up to `total / 2` (no smaller side is larger). A counting table rather than a sorted
    /// list: an expansion that ranks with floors queries it twice per feature, and a table
    /// lookup beats a binary search.
    at_most: Vec<u32>,
    /// Scratch for [`Self::larger_child_floors`]: `(smaller side << 32) | feature`, and its
    /// answer.
    keys: Vec<u64>,
    larger: Vec<u32>,
}

/// Table entries per feature below which [`ValidFloor::larger_child_floors`] counts with the
/// table rather than by sorting (a sort of ~100 keys beats a 4,000-entry table).
const TABLE_PER_FEATURE: u64 = 8;

impl ValidFloor {
    /// The floor for a node of `total` rows whose dividing features have `= 1` sides of the
    /// given sizes.
    pub fn new(total: u64, ones: impl Iterator<Item = u64>) -> Self {
        let mut floor = ValidFloor::default();
        floor.reset(total, ones);
        floor
    }

    /// Makes this the floor of another node (reusing the buffer).
    pub fn reset(&mut self, total: u64, ones: impl Iterator<Item = u64>) {
        self.total = total;
        self.at_most.clear();
        self.at_most.resize((total / 2) as usize + 1, 0);
        self.n = 0;
        for n1 in ones {
            self.at_most[n1.min(total - n1) as usize] += 1;
            self.n += 1;
        }
        let mut running = 0;
        for count in self.at_most.iter_mut() {
            running += *count;
            *count = running;
        }
    }

    /// [`Self::of_subset`] of the larger child of a split on each feature of a node of `total`
    /// rows (by the sizes of the features' `= 1` sides, in order); the smaller child's is
    /// always 0. The floor of the larger child is the number of features whose
    /// smaller side is larger than the split's, so the features' own ranks give it: by sorting
    /// where the node is large next to its features (the table was 9% of mushroom's search,
    /// ~4,000 entries a fresh node for ~100 features), else by the table.
    pub fn larger_child_floors(&mut self, total: u64, ones: impl Iterator<Item = u64>) -> &[u32] {
        let mut keys = std::mem::take(&mut self.keys);
        keys.clear();
        let smaller = ones.map(|n1| n1.min(total - n1));
        keys.extend(smaller.enumerate().map(|(i, s)| (s << 32) | i as u64));
        let n = keys.len();
        self.larger.clear();
        self.larger.resize(n, 0);
        if total / 2 < TABLE_PER_FEATURE * n as u64 {
            self.reset(total, keys.iter().map(|&key| key >> 32));
            for (i, &key) in keys.iter().enumerate() {
                self.larger[i] = self.of_subset(total - (key >> 32)) as u32;
            }
        } else {
            keys.sort_unstable();
            // From the largest smaller side down: each group of equal sides gets the number of
            // features above it.
            let mut above = 0;
            for group in keys.chunk_by(|x, y| x >> 32 == y >> 32).rev() {
                for &key in group {
                    self.larger[(key & 0xFFFF_FFFF) as usize] = above;
                }
                above += group.len() as u32;
            }
        }
        self.keys = keys;
        &self.larger
    }

    /// At least this many features divide every subset of `size` rows of the node.
    pub fn of_subset(&self, size: u64) -> usize {
        let left_out = self.total.saturating_sub(size) as usize;
        match self.at_most.get(left_out) {
            Some(&smaller) => self.n - smaller as usize,
            None => 0, // leaves out more than any smaller side
        }
    }
}

/// Size of the largest group of rows whose feature vectors are identical.
///
/// The groups are refined one column at a time (a row's group after a column is that of its
/// group before and its code), reading the columns in place and stopping once every row is
/// alone. Hashing each row's whole vector took 1.5 s on 3,000 rows of 30,000 binarised
/// thresholds, before the time limit's first check.
pub fn largest_group(data: &Dataset) -> u64 {
    let n = data.n_rows();
    let mut group = vec![0u32; n];
    let mut n_groups = n.min(1);
    // The new group of (old group, code); `u32::MAX` until a row takes it.
    let mut slot: Vec<u32> = Vec::new();
    for f in 0..data.n_features() {
        if n_groups == n {
            break;
        }
        let k = data.n_values(f).max(1);
        slot.clear();
        slot.resize(n_groups * k, u32::MAX);
        let mut next = 0u32;
        data.column(f).for_each(|r, code| {
            let s = &mut slot[group[r] as usize * k + code as usize];
            if *s == u32::MAX {
                *s = next;
                next += 1;
            }
            group[r] = *s;
        });
        n_groups = next as usize;
    }
    let mut sizes = vec![0u64; n_groups];
    for &g in &group {
        sizes[g as usize] += 1;
    }
    sizes.into_iter().max().unwrap_or(1)
}

impl<'m> CountBound<'m> {
    /// Tabulates `g` for the class totals `(n0, n1)` of the data (capped at [`MAX_COUNT`]).
    pub fn new(model: &'m Posterior, largest_group: u64, n0: u64, n1: u64) -> Self {
        let max_a = (n0 as usize).min(MAX_COUNT);
        let max_b = (n1 as usize).min(MAX_COUNT);
        let mut bound = CountBound {
            model,
            largest_group: largest_group.max(1),
            max_a,
            max_b,
            table: Vec::new(),
            parts: Vec::new(),
            phis: Vec::new(),
        };
        bound.phis = (0..=n0 + n1).map(|m| bound.phi_formula(m)).collect();
        let width = max_b + 1;
        // The closed form one level below the table, tabulated too: the recursion reads each
        // entry many times, and it costs four lgamma calls.
        let mut below_table = vec![0.0; (max_a + 1) * width];
        for a in 0..=max_a {
            for b in 0..=max_b {
                below_table[a * width + b] = bound.closed(MAX_DEPTH + 1, a as u64, b as u64);
            }
        }
        let mut levels = vec![Vec::new(); MAX_DEPTH as usize + 1];
        let mut parts = vec![Vec::new(); MAX_DEPTH as usize + 1];
        for d in (0..=MAX_DEPTH).rev() {
            let mut level = vec![0.0; (max_a + 1) * width];
            let mut level_parts = vec![f64::INFINITY; (max_a + 1) * width];
            {
                let deeper = levels.get(d as usize + 1).unwrap_or(&below_table);
                for a in 0..=max_a {
                    for b in 0..=max_b {
                        if a + b > 0 {
                            let below = |a: usize, b: usize| deeper[a * width + b];
                            let (value, split) = bound.recurse(d, a, b, below);
                            level[a * width + b] = value;
                            level_parts[a * width + b] = split;
                        }
                    }
                }
            }
            levels[d as usize] = level;
            parts[d as usize] = level_parts;
        }
        bound.table = levels;
        bound.parts = parts;
        bound
    }

    #[inline(always)]
    fn phi(&self, m: u64) -> f64 {
        match self.phis.get(m as usize) {
            Some(&v) => v,
            None => self.phi_formula(m),
        }
    }

    fn phi_formula(&self, m: u64) -> f64 {
        let groups = m.div_ceil(self.largest_group);
        // ⌈log2 k⌉ for k ≥ 1.
        let bits = u64::BITS - (groups.max(1) - 1).leading_zeros();
        self.model.ln_count(bits.max(1) as usize)
    }

    /// The leaf term: the prior is certain only when the rows cannot all be identical.
    #[inline(always)]
    fn leaf(&self, d: u32, a: u64, b: u64) -> f64 {
        let m = a + b;
        let ll = self.model.log_likelihood_two(a, b);
        if m > self.largest_group {
            -(self.model.log_leaf_splittable(d) + ll)
        } else {
            -ll
        }
    }

    /// The bound without recursion, valid at any depth and for any counts.
    #[inline(always)]
    fn closed(&self, d: u32, a: u64, b: u64) -> f64 {
        let split = -self.model.log_split(d) + self.phi(a + b) + self.children(d, a, b);
        self.leaf(d, a, b).min(split)
    }

    /// A lower bound on what the two children of a split at depth `d` of counts `(a, b)` cost
    /// together, without recursion: their leaves' likelihood is at least the perfect split's
    /// (Lemmas 13-14), and the larger child, of at least ⌈m/2⌉ rows, pays [`Self::prior_floor`]
    /// on top (it splits or is a leaf; either way its prior costs something once it must hold
    /// two distinct rows).
    #[inline(always)]
    fn children(&self, d: u32, a: u64, b: u64) -> f64 {
        -self.model.log_likelihood_perfect_two(a, b) + self.prior_floor(d + 1, (a + b).div_ceil(2))
    }

    /// The least prior a subtree of at least `m` rows at depth `d` pays beyond its leaves'
    /// likelihood: with more rows than the largest group of identical rows it is splittable, so
    /// as a leaf it pays the leaf prior, and as a split the split prior and `φ(m)`; with fewer,
    /// nothing is certain. Nondecreasing in `m`.
    #[inline(always)]
    fn prior_floor(&self, d: u32, m: u64) -> f64 {
        if m <= self.largest_group {
            return 0.0;
        }
        let leaf = -self.model.log_leaf_splittable(d);
        let split = -self.model.log_split(d) + self.phi(m);
        leaf.min(split)
    }

    /// One level of the recursion, with `below(a', b')` bounding a child one level deeper:
    /// `g` and its cheapest partition (infinite when the rows cannot be split).
    fn recurse(
        &self,
        d: u32,
        a: usize,
        b: usize,
        below: impl Fn(usize, usize) -> f64,
    ) -> (f64, f64) {
        let leaf = self.leaf(d, a as u64, b as u64);
        if a + b < 2 {
            return (leaf, f64::INFINITY);
        }
        let mut parts = f64::INFINITY;
        for a1 in 0..=a {
            for b1 in 0..=b {
                // Each unordered partition once: the side holding the larger share first.
                let (a2, b2) = (a - a1, b - b1);
                if a1 + b1 == 0 || a2 + b2 == 0 || (a1, b1) < (a2, b2) {
                    continue;
                }
                parts = parts.min(below(a1, b1) + below(a2, b2));
            }
        }
        let split = -self.model.log_split(d) + self.phi((a + b) as u64) + parts;
        (leaf.min(split), parts)
    }

    /// `g(d, a, b)`: a lower bound on the cost of any subtree at depth `d` with counts `(a, b)`.
    #[inline(always)]
    pub fn subtree(&self, d: u32, a: u64, b: u64) -> f64 {
        if d <= MAX_DEPTH && (a as usize) <= self.max_a && (b as usize) <= self.max_b {
            self.table[d as usize][a as usize * (self.max_b + 1) + b as usize]
        } else {
            self.closed(d, a, b)
        }
    }

    /// [`Self::subtree`] for a subproblem known to be divided by at least `n_valid` features:
    /// its leaf surely pays the leaf prior and a split pays at least `ln n_valid`.
    #[inline(always)]
    pub fn subtree_divided(&self, d: u32, a: u64, b: u64, n_valid: usize) -> f64 {
        if n_valid == 0 {
            return self.subtree(d, a, b);
        }
        let leaf = -(self.model.log_leaf_splittable(d) + self.model.log_likelihood_two(a, b));
        let parts = if d <= MAX_DEPTH && (a as usize) <= self.max_a && (b as usize) <= self.max_b {
            self.parts[d as usize][a as usize * (self.max_b + 1) + b as usize]
        } else {
            self.children(d, a, b)
        };
        // Plain comparisons: no NaN can occur, and this is the fast mode's innermost call.
        let (phi, ln_valid) = (self.phi(a + b), self.model.ln_count(n_valid));
        let features = if phi > ln_valid { phi } else { ln_valid };
        let split = -self.model.log_split(d) + features + parts;
        if split < leaf {
            split
        } else {
            leaf
        }
    }

    /// [`Self::subtree_divided`] less the rounding slack of its `a + b` rows: safely below the
    /// exact cost however that cost's terms are summed.
    pub fn subtree_divided_lower(&self, d: u32, a: u64, b: u64, n_valid: usize) -> f64 {
        self.subtree_divided(d, a, b, n_valid) - SLACK_PER_ROW * (a + b) as f64
    }

    /// The lower bound a fresh node at `depth` with counts `(a, b)` gets when its valid features
    /// are known (`children`: the class counts of each one's `= 1` side): the Perfect Split with
    /// `ln |V|` and its [`Self::look_ahead`], whichever is higher; an unsplittable node's exact
    /// cost. `floor` is scratch space.
    pub fn fresh(
        &self,
        depth: u32,
        (a, b): (u64, u64),
        children: &[(u64, u64)],
        floor: &mut ValidFloor,
    ) -> f64 {
        let n_valid = children.len();
        let perfect_split = self.model.heuristic_known_splits(depth, &[a, b], n_valid);
        if n_valid == 0 {
            return perfect_split;
        }
        if self.splittable_leaf(depth, a, b) <= perfect_split {
            // The look-ahead never exceeds the leaf (12% of heart's fresh nodes, fewer on wide
            // data): it cannot raise this bound.
            return perfect_split;
        }
        let sizes = children.iter().map(|&(a1, b1)| a1 + b1);
        let larger = floor.larger_child_floors(a + b, sizes);
        // Both are lower bounds; the look-ahead is usually far tighter.
        perfect_split.max(self.look_ahead(depth, (a, b), children, n_valid, larger))
    }

    /// The cost of a leaf at `depth` with counts `(a, b)` that some feature divides.
    fn splittable_leaf(&self, depth: u32, a: u64, b: u64) -> f64 {
        -(self.model.log_leaf_splittable(depth) + self.model.log_likelihood_two(a, b))
    }

    /// Lower bound of a fresh splittable node at `depth` with counts `(a, b)`: its own leaf, or
    /// its cheapest real split (`children`: the counts of each valid feature's `= 1` side) with
    /// both children bounded by counts and by the features that must divide them (`larger`:
    /// [`ValidFloor::larger_child_floors`]; the smaller child's floor is 0).
    pub fn look_ahead(
        &self,
        depth: u32,
        (a, b): (u64, u64),
        children: &[(u64, u64)],
        n_valid: usize,
        larger: &[u32],
    ) -> f64 {
        let leaf = self.splittable_leaf(depth, a, b);
        let mut best = f64::INFINITY;
        for (&(a1, b1), &floor) in children.iter().zip(larger) {
            let (a0, b0) = (a - a1, b - b1);
            let one_larger = a1 + b1 >= a0 + b0;
            let (floor1, floor0) = match one_larger {
                true => (floor as usize, 0),
                false => (0, floor as usize),
            };
            let v = self.subtree_divided(depth + 1, a1, b1, floor1)
                + self.subtree_divided(depth + 1, a0, b0, floor0);
            if v < best {
                best = v;
            }
        }
        let split =
            self.model.split_penalty(depth, n_valid) + best - SLACK_PER_ROW * (a + b) as f64;
        leaf.min(split)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    /// The exact optimum over count partitions with the same facts, by brute force over real
    /// data is in `tests.rs`; here: the table agrees with the plain recursion it tabulates.
    #[test]
    fn table_matches_the_recursion_and_stays_below_the_closed_form_split() {
        let model = Posterior::new(0.95, 0.5, vec![2.5, 2.5]).expect("valid");
        fn g(bound: &CountBound<'_>, d: u32, a: usize, b: usize) -> f64 {
            if d > MAX_DEPTH {
                return bound.closed(d, a as u64, b as u64);
            }
            bound.recurse(d, a, b, |x, y| g(bound, d + 1, x, y)).0
        }
        // The closed form (with the larger child's prior) is itself below the recursion, for
        // groups of identical rows of every size.
        for group in [1, 2, 3] {
            let bound = CountBound::new(&model, group, 6, 5);
            for (a, b) in [(1, 0), (0, 1), (2, 1), (3, 3), (6, 5), (6, 0)] {
                for d in [0, 3, MAX_DEPTH] {
                    let t = bound.subtree(d, a as u64, b as u64);
                    assert!((t - g(&bound, d, a, b)).abs() < 1e-12, "({a},{b}) at {d}");
                    assert!(t >= bound.closed(d, a as u64, b as u64) - 1e-12);
                }
            }
        }
        let bound = CountBound::new(&model, 1, 6, 5);
        // One row is a leaf that cannot split.
        let one = bound.subtree(2, 1, 0);
        assert_eq!(one, -model.log_likelihood(&[1, 0]));
    }

    #[test]
    fn largest_group_counts_the_most_repeated_feature_vector() {
        use crate::data::Table;
        use crate::search::SplitMix;
        let mut rng = SplitMix::new(31);
        for case in 0..300 {
            let (n, m) = (1 + rng.below(40), 1 + rng.below(6));
            let values: Vec<usize> = (0..m).map(|_| 1 + rng.below(3)).collect();
            let columns: Vec<u32> = (0..m)
                .flat_map(|f| {
                    (0..n)
                        .map(|_| rng.below(values[f]) as u32)
                        .collect::<Vec<_>>()
                })
                .collect();
            let table = Table::new(columns, m, vec![0; n], Some(&values), Some(2), None)
                .expect("valid table");
            let data = Dataset::from_table(table);
            let mut groups: HashMap<Vec<u32>, u64> = HashMap::new();
            for r in 0..n {
                let key = (0..m).map(|f| data.code(r, f)).collect();
                *groups.entry(key).or_insert(0) += 1;
            }
            let expected = groups.values().copied().max().unwrap_or(1);
            assert_eq!(largest_group(&data), expected, "case {case}");
        }
    }

    #[test]
    fn phi_counts_the_features_needed_to_tell_groups_apart() {
        let model = Posterior::new(0.95, 0.5, vec![2.5, 2.5]).expect("valid");
        let bound = CountBound::new(&model, 2, 1, 1);
        assert_eq!(bound.phi(1), 0.0); // ln 1
        assert_eq!(bound.phi(4), 0.0); // 2 groups: one feature
        assert!((bound.phi(5) - 2f64.ln()).abs() < 1e-15); // 3 groups: two features
        assert!((bound.phi(16) - 3f64.ln()).abs() < 1e-15); // 8 groups: three features
    }
}
