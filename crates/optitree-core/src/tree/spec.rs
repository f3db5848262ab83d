//! A nested, easy-to-build description of a tree that solvers produce and [`TreeSpec::build`]
//! flattens into the array form (preorder numbering, root = 0).

use super::{NodeKind, ObliqueTest, Tree, TreeArrays};
use crate::error::Result;

/// A node of a tree under construction.
#[derive(Debug, Clone, PartialEq)]
pub enum NodeSpec {
    /// A leaf with its class totals.
    Leaf { value: Vec<f64> },
    /// A multiway split on a categorical feature; `children[j]` takes code `j`.
    Category {
        feature: usize,
        value: Vec<f64>,
        children: Vec<NodeSpec>,
    },
    /// `x[feature] <= threshold` goes to `low`, the rest to `high`.
    Threshold {
        feature: usize,
        threshold: f64,
        value: Vec<f64>,
        low: Box<NodeSpec>,
        high: Box<NodeSpec>,
    },
    /// `test(x) <= 0` goes to `low`, the rest to `high`.
    Oblique {
        test: ObliqueTest,
        value: Vec<f64>,
        low: Box<NodeSpec>,
        high: Box<NodeSpec>,
    },
}

/// A whole tree under construction.
#[derive(Debug, Clone, PartialEq)]
pub struct TreeSpec {
    /// The root node.
    pub root: NodeSpec,
    /// Number of input features.
    pub n_features: usize,
    /// Number of classes.
    pub n_classes: usize,
}

impl TreeSpec {
    /// Flattens the nested description into a validated [`Tree`].
    pub fn build(&self) -> Result<Tree> {
        let mut a = TreeArrays {
            n_features: self.n_features,
            n_classes: self.n_classes,
            oblique_ptr: vec![0],
            term_ptr: vec![0],
            ..TreeArrays::default()
        };
        let mut pending_children: Vec<Vec<usize>> = Vec::new();
        push(&self.root, &mut a, &mut pending_children);
        a.children_ptr.push(0);
        for kids in pending_children {
            a.children.extend(kids.iter().map(|&c| c as i64));
            a.children_ptr.push(a.children.len() as i64);
        }
        Tree::new(a)
    }
}

/// Appends `node` and its subtree in preorder; returns its index.
fn push(node: &NodeSpec, a: &mut TreeArrays, kids: &mut Vec<Vec<usize>>) -> usize {
    let id = a.kind.len();
    let (kind, feature, threshold, value) = match node {
        NodeSpec::Leaf { value } => (NodeKind::Leaf, -1, f64::NAN, value),
        NodeSpec::Category { feature, value, .. } => {
            (NodeKind::Category, *feature as i64, f64::NAN, value)
        }
        NodeSpec::Threshold {
            feature,
            threshold,
            value,
            ..
        } => (NodeKind::Threshold, *feature as i64, *threshold, value),
        NodeSpec::Oblique { value, .. } => (NodeKind::Oblique, -1, f64::NAN, value),
    };
    a.kind.push(kind as i8);
    a.feature.push(feature);
    a.threshold.push(threshold);
    a.value.extend_from_slice(value);
    kids.push(Vec::new());
    if let NodeSpec::Oblique { test, .. } = node {
        a.oblique_index.push((a.oblique_ptr.len() - 1) as i64);
        for t in &test.terms {
            a.term_coef.push(t.coef);
            a.term_features.extend(t.features.iter().map(|&f| f as i64));
            a.term_ptr.push(a.term_features.len() as i64);
        }
        a.oblique_ptr.push(a.term_coef.len() as i64);
    } else {
        a.oblique_index.push(-1);
    }
    let child_ids: Vec<usize> = match node {
        NodeSpec::Leaf { .. } => vec![],
        NodeSpec::Category { children, .. } => children.iter().map(|c| push(c, a, kids)).collect(),
        NodeSpec::Threshold { low, high, .. } | NodeSpec::Oblique { low, high, .. } => {
            vec![push(low, a, kids), push(high, a, kids)]
        }
    };
    kids[id] = child_ids;
    id
}
