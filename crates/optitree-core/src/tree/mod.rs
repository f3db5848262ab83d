//! The one tree model: multiway categorical nodes, binary threshold nodes, oblique (linear or
//! polynomial) nodes and leaves, all carrying class totals. Stored as a struct of arrays, node 0
//! the root, children in CSR form, exactly like the Python `optitree.tree.Tree` it converts to.
//!
//! Invariant (checked by [`Tree::new`] and kept by [`TreeSpec::build`]): the arrays describe one
//! rooted tree in which every node is reachable from the root exactly once, each split kind has
//! the right number of children, every feature index is `< n_features`, and all class totals are
//! finite and non-negative.

mod routing;
mod spec;

pub use routing::Cell;
pub use spec::{NodeSpec, TreeSpec};

use crate::data_err;
use crate::error::Result;

/// What a node does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(i8)]
pub enum NodeKind {
    /// No test; predicts from its class totals.
    Leaf = 0,
    /// Multiway: child `j` takes the rows whose feature code is `j`.
    Category = 1,
    /// Binary: child 0 takes `x[feature] <= threshold`, child 1 the rest.
    Threshold = 2,
    /// Binary: child 0 takes `sum_t coef_t * prod(x[f] for f in term_t) <= 0`, child 1 the rest.
    Oblique = 3,
}

impl NodeKind {
    /// Decodes the integer used in the array representation.
    pub fn from_code(code: i8) -> Option<NodeKind> {
        match code {
            0 => Some(NodeKind::Leaf),
            1 => Some(NodeKind::Category),
            2 => Some(NodeKind::Threshold),
            3 => Some(NodeKind::Oblique),
            _ => None,
        }
    }
}

/// One term of an oblique test: `coef * prod(x[f] for f in features)` (repeat a feature for powers;
/// no feature = the constant term).
#[derive(Debug, Clone, PartialEq)]
pub struct Term {
    /// Multiplier.
    pub coef: f64,
    /// Features multiplied together.
    pub features: Vec<usize>,
}

/// A linear or polynomial test `sum of terms <= 0`.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ObliqueTest {
    /// The terms, summed in this order (fixed order = reproducible floating point).
    pub terms: Vec<Term>,
}

impl ObliqueTest {
    /// Value of the test's left-hand side at `x`.
    pub fn evaluate<T: Cell>(&self, x: &[T]) -> f64 {
        self.terms
            .iter()
            .map(|t| t.coef * t.features.iter().map(|&f| x[f].value()).product::<f64>())
            .sum()
    }
}

/// A decision tree as a struct of arrays (see the module docs for the invariant).
#[derive(Debug, Clone)]
pub struct Tree {
    kind: Vec<NodeKind>,
    feature: Vec<i64>,
    threshold: Vec<f64>,
    oblique_index: Vec<i64>,
    children_ptr: Vec<usize>,
    children: Vec<usize>,
    /// Row-major `n_nodes x n_classes` class totals.
    value: Vec<f64>,
    oblique: Vec<ObliqueTest>,
    n_features: usize,
    n_classes: usize,
}

/// The raw arrays of a tree, as they cross the language boundary.
#[derive(Debug, Clone, Default)]
pub struct TreeArrays {
    /// Node kinds as integers (0 leaf, 1 category, 2 threshold, 3 oblique).
    pub kind: Vec<i8>,
    /// Split feature, -1 when the node has none.
    pub feature: Vec<i64>,
    /// Threshold, NaN unless a threshold node.
    pub threshold: Vec<f64>,
    /// Index of the oblique test, -1 unless an oblique node.
    pub oblique_index: Vec<i64>,
    /// CSR offsets into `children`, `n_nodes + 1` entries.
    pub children_ptr: Vec<i64>,
    /// Child node indices.
    pub children: Vec<i64>,
    /// Row-major `n_nodes x n_classes` class totals.
    pub value: Vec<f64>,
    /// CSR offsets of each oblique test's terms.
    pub oblique_ptr: Vec<i64>,
    /// Term coefficients.
    pub term_coef: Vec<f64>,
    /// CSR offsets of each term's features.
    pub term_ptr: Vec<i64>,
    /// Features of the terms.
    pub term_features: Vec<i64>,
    /// Number of input features the tree reads.
    pub n_features: usize,
    /// Number of classes (columns of `value`).
    pub n_classes: usize,
}

/// Structural equality; thresholds compare NaN-aware (NaN marks "no threshold").
impl PartialEq for Tree {
    fn eq(&self, o: &Self) -> bool {
        let same_thresholds = self.threshold.len() == o.threshold.len()
            && self
                .threshold
                .iter()
                .zip(&o.threshold)
                .all(|(a, b)| a == b || (a.is_nan() && b.is_nan()));
        same_thresholds
            && self.kind == o.kind
            && self.feature == o.feature
            && self.oblique_index == o.oblique_index
            && self.children_ptr == o.children_ptr
            && self.children == o.children
            && self.value == o.value
            && self.oblique == o.oblique
            && (self.n_features, self.n_classes) == (o.n_features, o.n_classes)
    }
}

fn index(v: i64, bound: usize, what: &str) -> Result<usize> {
    if v < 0 || v as u64 >= bound as u64 {
        return data_err!("not a valid tree: {what} = {v} is outside 0..{bound}");
    }
    Ok(v as usize)
}

fn csr_offsets(ptr: &[i64], n_items: usize, n_targets: usize, what: &str) -> Result<Vec<usize>> {
    if ptr.len() != n_items + 1 {
        return data_err!(
            "not a valid tree: {what} has {} entries, expected {}",
            ptr.len(),
            n_items + 1
        );
    }
    if ptr.first() != Some(&0) || ptr.last().map(|&p| p as i128) != Some(n_targets as i128) {
        return data_err!("not a valid tree: {what} must start at 0 and end at {n_targets}");
    }
    if ptr.windows(2).any(|w| w[1] < w[0]) {
        return data_err!("not a valid tree: {what} must be non-decreasing");
    }
    Ok(ptr.iter().map(|&p| p as usize).collect())
}

impl Tree {
    /// Validates the arrays and builds the tree; every violation is reported as a data error that
    /// names the node and the rule it breaks.
    pub fn new(a: TreeArrays) -> Result<Tree> {
        let n = a.kind.len();
        if n == 0 {
            return data_err!("not a valid tree: it has no nodes");
        }
        if a.n_classes == 0 {
            return data_err!("not a valid tree: it has zero classes");
        }
        for (name, len) in [
            ("feature", a.feature.len()),
            ("threshold", a.threshold.len()),
            ("oblique_index", a.oblique_index.len()),
        ] {
            if len != n {
                return data_err!("not a valid tree: {name} has {len} entries for {n} nodes");
            }
        }
        if a.value.len() != n * a.n_classes {
            return data_err!(
                "not a valid tree: value has {} entries, expected {} nodes x {} classes",
                a.value.len(),
                n,
                a.n_classes
            );
        }
        if let Some(i) = a.value.iter().position(|v| !v.is_finite() || *v < 0.0) {
            return data_err!(
                "not a valid tree: node {} has class total {} (must be finite and >= 0)",
                i / a.n_classes,
                a.value[i]
            );
        }
        let children_ptr = csr_offsets(&a.children_ptr, n, a.children.len(), "children_ptr")?;
        let mut children = Vec::with_capacity(a.children.len());
        for &c in &a.children {
            children.push(index(c, n, "a child index")?);
        }
        let oblique = oblique_tests(&a)?;

        let mut kind = Vec::with_capacity(n);
        for i in 0..n {
            let k = NodeKind::from_code(a.kind[i]).ok_or_else(|| {
                crate::Error::Data(format!(
                    "not a valid tree: node {i} has kind {} (allowed: 0 leaf, 1 category, 2 threshold, 3 oblique)",
                    a.kind[i]
                ))
            })?;
            let n_children = children_ptr[i + 1] - children_ptr[i];
            match k {
                NodeKind::Leaf if n_children != 0 => {
                    return data_err!("not a valid tree: leaf {i} has {n_children} children")
                }
                NodeKind::Category if n_children < 2 => {
                    return data_err!(
                    "not a valid tree: categorical node {i} has {n_children} children (at least 2)"
                )
                }
                NodeKind::Threshold | NodeKind::Oblique if n_children != 2 => {
                    return data_err!("not a valid tree: binary node {i} has {n_children} children")
                }
                _ => {}
            }
            match k {
                NodeKind::Category | NodeKind::Threshold => {
                    index(
                        a.feature[i],
                        a.n_features,
                        &format!("the feature of node {i}"),
                    )?;
                }
                _ if a.feature[i] != -1 => {
                    return data_err!(
                        "not a valid tree: node {i} has feature {} but no feature test",
                        a.feature[i]
                    )
                }
                _ => {}
            }
            if k == NodeKind::Threshold && !a.threshold[i].is_finite() {
                return data_err!(
                    "not a valid tree: threshold node {i} has threshold {}",
                    a.threshold[i]
                );
            }
            if k == NodeKind::Oblique {
                index(
                    a.oblique_index[i],
                    oblique.len(),
                    &format!("the oblique test of node {i}"),
                )?;
            } else if a.oblique_index[i] != -1 {
                return data_err!(
                    "not a valid tree: node {i} is not oblique but has an oblique test"
                );
            }
            kind.push(k);
        }
        check_single_rooted(&children, &children_ptr, n)?;
        Ok(Tree {
            kind,
            feature: a.feature,
            threshold: a.threshold,
            oblique_index: a.oblique_index,
            children_ptr,
            children,
            value: a.value,
            oblique,
            n_features: a.n_features,
            n_classes: a.n_classes,
        })
    }

    /// The arrays of this tree (inverse of [`Tree::new`]).
    pub fn to_arrays(&self) -> TreeArrays {
        let mut oblique_ptr = vec![0i64];
        let (mut term_coef, mut term_ptr, mut term_features) = (vec![], vec![0i64], vec![]);
        for test in &self.oblique {
            for t in &test.terms {
                term_coef.push(t.coef);
                term_features.extend(t.features.iter().map(|&f| f as i64));
                term_ptr.push(term_features.len() as i64);
            }
            oblique_ptr.push(term_coef.len() as i64);
        }
        TreeArrays {
            kind: self.kind.iter().map(|&k| k as i8).collect(),
            feature: self.feature.clone(),
            threshold: self.threshold.clone(),
            oblique_index: self.oblique_index.clone(),
            children_ptr: self.children_ptr.iter().map(|&p| p as i64).collect(),
            children: self.children.iter().map(|&c| c as i64).collect(),
            value: self.value.clone(),
            oblique_ptr,
            term_coef,
            term_ptr,
            term_features,
            n_features: self.n_features,
            n_classes: self.n_classes,
        }
    }

    /// Number of nodes.
    pub fn n_nodes(&self) -> usize {
        self.kind.len()
    }
    /// Number of classes.
    pub fn n_classes(&self) -> usize {
        self.n_classes
    }
    /// Number of input features.
    pub fn n_features(&self) -> usize {
        self.n_features
    }
    /// Kind of node `i`.
    pub fn kind(&self, i: usize) -> NodeKind {
        self.kind[i]
    }
    /// Split feature of node `i` (None for leaves and oblique nodes).
    pub fn feature(&self, i: usize) -> Option<usize> {
        usize::try_from(self.feature[i]).ok()
    }
    /// Threshold of node `i` (NaN unless a threshold node).
    pub fn threshold(&self, i: usize) -> f64 {
        self.threshold[i]
    }
    /// Oblique test of node `i`, if it has one.
    pub fn oblique_test(&self, i: usize) -> Option<&ObliqueTest> {
        usize::try_from(self.oblique_index[i])
            .ok()
            .map(|k| &self.oblique[k])
    }
    /// Children of node `i`.
    pub fn children(&self, i: usize) -> &[usize] {
        &self.children[self.children_ptr[i]..self.children_ptr[i + 1]]
    }
    /// Class totals of node `i`.
    pub fn value(&self, i: usize) -> &[f64] {
        &self.value[i * self.n_classes..(i + 1) * self.n_classes]
    }
    /// Number of leaves.
    pub fn n_leaves(&self) -> usize {
        self.kind.iter().filter(|&&k| k == NodeKind::Leaf).count()
    }
    /// Number of internal nodes (splits); a multiway split counts once.
    pub fn n_splits(&self) -> usize {
        self.n_nodes() - self.n_leaves()
    }
    /// Length of the longest root-to-leaf path, in edges.
    pub fn depth(&self) -> usize {
        let mut depth = vec![0usize; self.n_nodes()];
        let mut deepest = 0;
        // Parents are visited before children in a depth-first order from the root.
        let mut stack = vec![0usize];
        while let Some(i) = stack.pop() {
            deepest = deepest.max(depth[i]);
            for &c in self.children(i) {
                depth[c] = depth[i] + 1;
                stack.push(c);
            }
        }
        deepest
    }
}

fn oblique_tests(a: &TreeArrays) -> Result<Vec<ObliqueTest>> {
    // An empty offsets array is the same as `[0]`: no tests, no terms.
    let or_zero = |p: &[i64]| if p.is_empty() { vec![0] } else { p.to_vec() };
    let (oblique_ptr, term_ptr) = (or_zero(&a.oblique_ptr), or_zero(&a.term_ptr));
    let n_tests = oblique_ptr.len() - 1;
    let test_ptr = csr_offsets(&oblique_ptr, n_tests, a.term_coef.len(), "oblique_ptr")?;
    let term_ptr = csr_offsets(
        &term_ptr,
        a.term_coef.len(),
        a.term_features.len(),
        "term_ptr",
    )?;
    let mut tests = Vec::with_capacity(n_tests);
    for k in 0..n_tests {
        let mut terms = Vec::new();
        for t in test_ptr[k]..test_ptr[k + 1] {
            if !a.term_coef[t].is_finite() {
                return data_err!(
                    "not a valid tree: oblique term {t} has coefficient {}",
                    a.term_coef[t]
                );
            }
            let mut features = Vec::new();
            for &f in &a.term_features[term_ptr[t]..term_ptr[t + 1]] {
                features.push(index(
                    f,
                    a.n_features,
                    &format!("a feature of oblique term {t}"),
                )?);
            }
            terms.push(Term {
                coef: a.term_coef[t],
                features,
            });
        }
        tests.push(ObliqueTest { terms });
    }
    Ok(tests)
}

/// Every non-root node must have exactly one parent, the root none, and every node must be
/// reachable from the root (which rules out detached cycles).
fn check_single_rooted(children: &[usize], children_ptr: &[usize], n: usize) -> Result<()> {
    let mut parents = vec![0u32; n];
    for &c in children {
        parents[c] += 1;
    }
    if parents[0] != 0 {
        return data_err!("not a valid tree: the root (node 0) appears as a child");
    }
    if let Some(i) = (1..n).find(|&i| parents[i] != 1) {
        return data_err!(
            "not a valid tree: node {i} has {} parents (must have exactly 1)",
            parents[i]
        );
    }
    let mut seen = vec![false; n];
    let mut stack = vec![0usize];
    let mut reached = 0;
    while let Some(i) = stack.pop() {
        if std::mem::replace(&mut seen[i], true) {
            continue;
        }
        reached += 1;
        stack.extend_from_slice(&children[children_ptr[i]..children_ptr[i + 1]]);
    }
    if reached != n {
        let i = seen.iter().position(|s| !s).unwrap_or(0);
        return data_err!("not a valid tree: node {i} is not reachable from the root");
    }
    Ok(())
}

#[cfg(test)]
mod tests;
