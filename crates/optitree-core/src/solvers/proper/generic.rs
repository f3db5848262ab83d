//! The paper's recursion with a pluggable `splits` (spec §3.2, §3.10): given a list of items, a
//! problem says how the list can split around a root (decision trees: the rules comparable with
//! the root go to its sides; matrix chains: every cut into a prefix and a suffix) and how costs
//! combine; [`best`] returns the least cost over every tree the splits generate, and [`count`]
//! the number of those trees.
//!
//! This is the general form; [`super::combos::Sodt`] is the decision-tree instance tuned for
//! speed. The tests check the two agree, and run the matrix-chain instance (spec T9).

/// A problem for the generic recursion.
pub trait Splits {
    /// What a subtree is built from (rules, matrices).
    type Item: Copy;
    /// What a subtree sees besides its items (the rows of its region; nothing for matrix chains).
    type Region: Clone;

    /// Every way `items` splits at the root: `(left items, root, right items, left region, right
    /// region)`. No entries: `items` cannot form a subtree.
    #[allow(clippy::type_complexity)]
    fn splits(
        &self,
        items: &[Self::Item],
        region: &Self::Region,
    ) -> Vec<(
        Vec<Self::Item>,
        Option<Self::Item>,
        Vec<Self::Item>,
        Self::Region,
        Self::Region,
    )>;

    /// Whether `items` form a leaf (no further split).
    fn is_leaf(&self, items: &[Self::Item]) -> bool;

    /// The cost of a leaf.
    fn leaf(&self, items: &[Self::Item], region: &Self::Region) -> f64;

    /// The cost of a node from its children's costs (non-decreasing in each).
    fn node(&self, items: &[Self::Item], root: Option<Self::Item>, left: f64, right: f64) -> f64;
}

/// The least cost over every tree `splits` generates from `items` (`+∞` when there is none).
pub fn best<S: Splits>(s: &S, items: &[S::Item], region: &S::Region) -> f64 {
    if s.is_leaf(items) {
        return s.leaf(items, region);
    }
    let mut out = f64::INFINITY;
    for (l, root, r, lr, rr) in s.splits(items, region) {
        let c = s.node(items, root, best(s, &l, &lr), best(s, &r, &rr));
        if c < out {
            out = c;
        }
    }
    out
}

/// How many trees `splits` generates from `items`.
pub fn count<S: Splits>(s: &S, items: &[S::Item], region: &S::Region) -> u64 {
    if s.is_leaf(items) {
        return 1;
    }
    s.splits(items, region)
        .into_iter()
        .map(|(l, _, r, lr, rr)| count(s, &l, &lr) * count(s, &r, &rr))
        .sum()
}

/// Matrix-chain multiplication (spec §3.10): items are matrices `i` of shape `dims[i] ×
/// dims[i + 1]`; every cut into a non-empty prefix and suffix is a split (the "root" item names
/// the first matrix of the suffix), and a node costs its two halves plus their product.
pub struct MatrixChain {
    /// The dimensions `p_0, ..., p_n` of `n` matrices.
    pub dims: Vec<u64>,
}

impl MatrixChain {
    /// The matrices `0..n` as items.
    pub fn items(&self) -> Vec<usize> {
        (0..self.dims.len().saturating_sub(1)).collect()
    }
}

impl Splits for MatrixChain {
    type Item = usize;
    type Region = ();

    fn splits(
        &self,
        items: &[usize],
        _: &(),
    ) -> Vec<(Vec<usize>, Option<usize>, Vec<usize>, (), ())> {
        (1..items.len())
            .map(|cut| {
                (
                    items[..cut].to_vec(),
                    Some(items[cut]),
                    items[cut..].to_vec(),
                    (),
                    (),
                )
            })
            .collect()
    }

    fn is_leaf(&self, items: &[usize]) -> bool {
        items.len() <= 1
    }

    fn leaf(&self, _: &[usize], _: &()) -> f64 {
        0.0
    }

    fn node(&self, items: &[usize], root: Option<usize>, left: f64, right: f64) -> f64 {
        let (first, last) = (items[0], items[items.len() - 1]);
        let cut = root.unwrap_or(first);
        let p = &self.dims;
        left + right + (p[first] * p[cut] * p[last + 1]) as f64
    }
}

/// Proper decision trees (spec §3.2–3.4): items are rules, a root sends every other rule to the
/// side its ancestry relation names, and each side sees the rows of its region.
pub struct ProperSplits<'p> {
    /// The rules, data and constraints.
    pub problem: &'p super::problem::Problem<'p>,
}

impl Splits for ProperSplits<'_> {
    type Item = usize;
    type Region = Vec<u64>;

    #[allow(clippy::type_complexity)]
    fn splits(
        &self,
        items: &[usize],
        mask: &Vec<u64>,
    ) -> Vec<(Vec<usize>, Option<usize>, Vec<usize>, Vec<u64>, Vec<u64>)> {
        let p = self.problem;
        let mut out = Vec::new();
        'roots: for &root in items {
            let (mut plus, mut minus) = (Vec::new(), Vec::new());
            for &other in items.iter().filter(|&&o| o != root) {
                match p.ancestry(root, other) {
                    1 => plus.push(other),
                    -1 => minus.push(other),
                    _ => continue 'roots,
                }
            }
            let mut l = vec![0; mask.len()];
            let mut r = vec![0; mask.len()];
            super::words::and_into(mask, p.rules.plus(root), &mut l);
            super::words::and_not_into(mask, p.rules.plus(root), &mut r);
            out.push((plus, Some(root), minus, l, r));
        }
        out
    }

    fn is_leaf(&self, items: &[usize]) -> bool {
        items.is_empty()
    }

    fn leaf(&self, _: &[usize], mask: &Vec<u64>) -> f64 {
        self.problem.leaf_cost(mask)
    }

    fn node(&self, _: &[usize], _: Option<usize>, left: f64, right: f64) -> f64 {
        left + right
    }
}
