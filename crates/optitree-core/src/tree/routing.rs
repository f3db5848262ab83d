//! Routing rows through a tree: `apply`, prediction nodes and decision paths.
//!
//! Policy for values a node cannot route (an unseen or non-integer category code, NaN): the row
//! stops at that node. Predictions use the deepest node on the row's path whose class totals are
//! not all zero, so an empty leaf (a category absent from the training rows of its parent) predicts
//! like its parent.

use super::{NodeKind, Tree};

/// A cell of the row-major matrices routing reads: float64 values, or the one- and two-byte
/// category codes the encoder gives integer data, read as the numbers they are (a fit
/// re-scores its tree on its codes without a float64 copy).
pub trait Cell: Copy {
    /// The cell as a float.
    fn value(self) -> f64;
}

impl Cell for f64 {
    #[inline(always)]
    fn value(self) -> f64 {
        self
    }
}

impl Cell for u8 {
    #[inline(always)]
    fn value(self) -> f64 {
        f64::from(self)
    }
}

impl Cell for u16 {
    #[inline(always)]
    fn value(self) -> f64 {
        f64::from(self)
    }
}

/// What routing a row through a node needs (see [`Tree::step`]).
struct Step {
    kind: NodeKind,
    /// The split feature of a category or threshold node (0 for the others, which do not read
    /// it here).
    feature: usize,
    threshold: f64,
    first_child: usize,
    n_children: usize,
    /// Some class total is positive: the node can predict (filled by `route_rows` only, the
    /// one reader).
    predicts: bool,
}

impl Tree {
    /// The child of `node` that `x` goes to, or None when the node cannot route `x`.
    fn next<T: Cell>(&self, node: usize, x: &[T]) -> Option<usize> {
        self.follow(&self.step(node), node, x)
    }

    /// The routing facts of node `i`.
    fn step(&self, i: usize) -> Step {
        Step {
            kind: self.kind(i),
            feature: self.feature(i).unwrap_or(0),
            threshold: self.threshold(i),
            first_child: self.children_ptr[i],
            n_children: self.children(i).len(),
            predicts: false,
        }
    }

    /// The child of `node` (whose facts are `step`) that `x` goes to: the routing policy, in
    /// this one place. Inlined into the loop over rows (a call per node took a fifth of a
    /// route), the oblique test kept out of line.
    #[inline(always)]
    fn follow<T: Cell>(&self, step: &Step, node: usize, x: &[T]) -> Option<usize> {
        let child = |side: usize| self.children[step.first_child + side];
        match step.kind {
            NodeKind::Leaf => None,
            NodeKind::Category => {
                // The cast saturates: NaN, fractions and infinities do not convert back equal,
                // negatives fail the range, -0.0 is category 0. Signed, as x86 converts
                // natively.
                let v = x[step.feature].value();
                let code = v as i64;
                (code as f64 == v && (code as u64) < step.n_children as u64)
                    .then(|| child(code as usize))
            }
            NodeKind::Threshold => {
                let v = x[step.feature].value();
                (!v.is_nan()).then(|| child(usize::from(v > step.threshold)))
            }
            NodeKind::Oblique => self.follow_oblique(step, node, x),
        }
    }

    /// [`Tree::follow`] for an oblique node.
    #[inline(never)]
    fn follow_oblique<T: Cell>(&self, step: &Step, node: usize, x: &[T]) -> Option<usize> {
        let s = self.oblique_test(node)?.evaluate(x);
        (!s.is_nan()).then(|| self.children[step.first_child + usize::from(s > 0.0)])
    }

    /// Calls `visit` on every node of `x`'s path from the root; returns the node where it stops.
    pub fn walk<T: Cell>(&self, x: &[T], mut visit: impl FnMut(usize)) -> usize {
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
        let mut predicting = 0;
        let reached = self.walk(x, |i| {
            if self.predicts(i) {
                predicting = i;
            }
        });
        (reached, predicting)
    }

    /// Whether node `i` has a non-zero class total (can predict).
    fn predicts(&self, i: usize) -> bool {
        self.value(i).iter().any(|&v| v > 0.0)
    }

    /// The rows of a row-major `n_rows x n_features` matrix (each empty when the tree reads no
    /// feature: the matrix alone could not tell how many rows it has).
    fn rows<'a, T>(&self, x: &'a [T], n_rows: usize) -> impl Iterator<Item = &'a [T]> {
        let width = self.n_features();
        (0..n_rows).map(move |r| x.get(r * width..(r + 1) * width).unwrap_or(&[]))
    }

    /// Routes every row of a row-major `n_rows x n_features` matrix: [`Tree::route`] of each.
    pub fn route_rows<T: Cell>(&self, x: &[T], n_rows: usize) -> (Vec<usize>, Vec<usize>) {
        // Each node's routing facts in one record, read once per node a row passes: looking
        // them up in five arrays at every step took most of a route.
        let steps: Vec<Step> = (0..self.n_nodes())
            .map(|i| Step {
                predicts: self.predicts(i),
                ..self.step(i)
            })
            .collect();
        let (mut reached, mut predicting) = (Vec::new(), Vec::new());
        reached.reserve_exact(n_rows);
        predicting.reserve_exact(n_rows);
        for row in self.rows(x, n_rows) {
            let (mut node, mut last) = (0, 0);
            loop {
                let step = &steps[node];
                if step.predicts {
                    last = node;
                }
                match self.follow(step, node, row) {
                    Some(child) => node = child,
                    None => break,
                }
            }
            reached.push(node);
            predicting.push(last);
        }
        (reached, predicting)
    }

    /// Decision paths of every row of a row-major `n_rows x n_features` matrix in CSR form:
    /// `(indptr, node indices)`.
    pub fn decision_paths<T: Cell>(&self, x: &[T], n_rows: usize) -> (Vec<usize>, Vec<usize>) {
        let mut indptr = vec![0];
        let mut nodes = Vec::new();
        for row in self.rows(x, n_rows) {
            self.walk(row, |i| nodes.push(i));
            indptr.push(nodes.len());
        }
        (indptr, nodes)
    }
}
