//! Routing rows through a tree: `apply`, prediction nodes and decision paths.
//!
//! Policy for values a node cannot route (an unseen or non-integer category code, NaN): the row
//! stops at that node. Predictions use the deepest node on the row's path whose class totals are
//! not all zero, so an empty leaf (a category absent from the training rows of its parent) predicts
//! like its parent.

use super::{NodeKind, Tree};

impl Tree {
    /// The child of `node` that `x` goes to, or None when the node cannot route `x`.
    fn next(&self, node: usize, x: &[f64]) -> Option<usize> {
        let kids = self.children(node);
        match self.kind(node) {
            NodeKind::Leaf => None,
            NodeKind::Category => {
                let v = x[self.feature(node)?];
                let ok = v.is_finite() && v >= 0.0 && v.fract() == 0.0 && (v as usize) < kids.len();
                ok.then(|| kids[v as usize])
            }
            NodeKind::Threshold => {
                let v = x[self.feature(node)?];
                if v.is_nan() {
                    None
                } else {
                    Some(if v <= self.threshold(node) {
                        kids[0]
                    } else {
                        kids[1]
                    })
                }
            }
            NodeKind::Oblique => {
                let s = self.oblique_test(node)?.evaluate(x);
                if s.is_nan() {
                    None
                } else {
                    Some(if s <= 0.0 { kids[0] } else { kids[1] })
                }
            }
        }
    }

    /// Calls `visit` on every node of `x`'s path from the root; returns the node where it stops.
    pub fn walk(&self, x: &[f64], mut visit: impl FnMut(usize)) -> usize {
        let mut node = 0;
        visit(node);
        while let Some(child) = self.next(node, x) {
            node = child;
            visit(node);
        }
        node
    }

    /// `(reached, predicting)`: the node where `x` stops, and the deepest node on its path with a
    /// non-zero class total (the one whose distribution predicts).
    pub fn route(&self, x: &[f64]) -> (usize, usize) {
        self.route_with(x, |i| self.value(i).iter().any(|&v| v > 0.0))
    }

    /// [`Tree::route`] with `predicts(i)` telling whether node `i` has a non-zero class total.
    fn route_with(&self, x: &[f64], predicts: impl Fn(usize) -> bool) -> (usize, usize) {
        let mut predicting = 0;
        let reached = self.walk(x, |i| {
            if predicts(i) {
                predicting = i;
            }
        });
        (reached, predicting)
    }

    /// Routes every row of a row-major `n_rows x n_features` matrix.
    pub fn route_rows(&self, x: &[f64]) -> (Vec<usize>, Vec<usize>) {
        let width = self.n_features().max(1);
        // Which nodes predict, once: rows outnumber nodes.
        let predicts: Vec<bool> = (0..self.n_nodes())
            .map(|i| self.value(i).iter().any(|&v| v > 0.0))
            .collect();
        (x.chunks(width))
            .map(|row| self.route_with(row, |i| predicts[i]))
            .unzip()
    }

    /// Decision paths of every row in CSR form: `(indptr, node indices)`.
    pub fn decision_paths(&self, x: &[f64]) -> (Vec<usize>, Vec<usize>) {
        let width = self.n_features().max(1);
        let mut indptr = vec![0];
        let mut nodes = Vec::new();
        for row in x.chunks(width) {
            self.walk(row, |i| nodes.push(i));
            indptr.push(nodes.len());
        }
        (indptr, nodes)
    }
}
