//! Brute-force reference computations used only by tests. Deliberately naive and independent of
//! the bitset machinery: rows are scanned one by one.

use crate::tree::Tree;

/// A small categorical instance in row-major form.
pub struct Instance {
    pub n_rows: usize,
    pub n_features: usize,
    pub codes: Vec<u32>,
    pub labels: Vec<u32>,
}

/// A reproducible stream of pseudo-random words (xorshift64; no external randomness). `seed`
/// must not be 0.
pub fn xorshift(seed: u64) -> impl FnMut() -> u64 {
    let mut s = seed;
    move || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        s
    }
}

/// A reproducible random instance (xorshift; no external randomness).
pub fn random_instance(n: usize, d: usize, values: u32, classes: u32, seed: u64) -> Instance {
    let mut word = xorshift(seed | 1);
    let mut next = move |m: u32| (word() % u64::from(m)) as u32;
    let codes = (0..n * d).map(|_| next(values)).collect();
    let labels = (0..n).map(|_| next(classes)).collect();
    Instance {
        n_rows: n,
        n_features: d,
        codes,
        labels,
    }
}

fn majority_correct(rows: &[usize], inst: &Instance) -> u64 {
    let mut counts = std::collections::HashMap::new();
    for &r in rows {
        *counts.entry(inst.labels[r]).or_insert(0u64) += 1;
    }
    counts.values().copied().max().unwrap_or(0)
}

/// The most rows any tree with at most one split classifies correctly, and that split's feature.
pub fn best_stump_correct(inst: &Instance) -> (u64, Option<usize>) {
    let all: Vec<usize> = (0..inst.n_rows).collect();
    let mut best = (majority_correct(&all, inst), None);
    for f in 0..inst.n_features {
        let mut groups: std::collections::BTreeMap<u32, Vec<usize>> = Default::default();
        for r in 0..inst.n_rows {
            groups
                .entry(inst.codes[r * inst.n_features + f])
                .or_default()
                .push(r);
        }
        let c = groups.values().map(|g| majority_correct(g, inst)).sum();
        if c > best.0 {
            best = (c, Some(f));
        }
    }
    best
}

/// Rows a tree classifies correctly, by routing each row and taking the argmax of the predicting
/// node's class totals (first class on ties).
pub fn tree_correct(tree: &Tree, inst: &Instance) -> u64 {
    (0..inst.n_rows)
        .filter(|&r| {
            let x: Vec<f64> = (0..inst.n_features)
                .map(|f| f64::from(inst.codes[r * inst.n_features + f]))
                .collect();
            let (_, node) = tree.route(&x);
            let v = tree.value(node);
            let argmax = (0..v.len()).fold(0, |b, k| if v[k] > v[b] { k } else { b });
            argmax as u32 == inst.labels[r]
        })
        .count() as u64
}

/// The best sparse tree by exhaustive recursion over paths (features used at most once per path,
/// every multiway split tried, no memo, no bound): returns `(correct weight, splits)` of an
/// optimum of `correct/W − (p/q)·splits`, ties going to fewer splits. Non-empty children of a
/// split must hold at least `min_leaf` rows.
pub fn best_sparse_tree(
    inst: &Instance,
    weights: &[u64],
    (p, q): (u64, u64),
    max_depth: Option<u32>,
    min_leaf: u64,
) -> (u64, u64) {
    let total: u64 = weights.iter().sum();
    let n_values: Vec<u32> = (0..inst.n_features)
        .map(|f| {
            (0..inst.n_rows)
                .map(|r| inst.codes[r * inst.n_features + f] + 1)
                .max()
                .unwrap_or(1)
        })
        .collect();
    let value = |(c, s): (u64, u64)| {
        i128::from(q) * i128::from(c) - i128::from(p) * i128::from(total) * i128::from(s)
    };
    let better =
        |a: (u64, u64), b: (u64, u64)| value(a) > value(b) || (value(a) == value(b) && a.1 < b.1);
    #[allow(clippy::too_many_arguments)]
    fn rec(
        inst: &Instance,
        weights: &[u64],
        n_values: &[u32],
        rows: &[usize],
        used: &mut Vec<bool>,
        depth_left: Option<u32>,
        min_leaf: u64,
        better: &dyn Fn((u64, u64), (u64, u64)) -> bool,
    ) -> (u64, u64) {
        let mut per_class = std::collections::HashMap::new();
        for &r in rows {
            *per_class.entry(inst.labels[r]).or_insert(0u64) += weights[r];
        }
        let mut best = (per_class.values().copied().max().unwrap_or(0), 0);
        if depth_left == Some(0) {
            return best;
        }
        for f in 0..inst.n_features {
            if used[f] {
                continue;
            }
            let groups: Vec<Vec<usize>> = (0..n_values[f])
                .map(|v| {
                    rows.iter()
                        .copied()
                        .filter(|&r| inst.codes[r * inst.n_features + f] == v)
                        .collect()
                })
                .collect();
            if groups
                .iter()
                .any(|g| !g.is_empty() && (g.len() as u64) < min_leaf)
            {
                continue;
            }
            used[f] = true;
            let mut total = (0, 1);
            for g in &groups {
                let (c, s) = rec(
                    inst,
                    weights,
                    n_values,
                    g,
                    used,
                    depth_left.map(|d| d - 1),
                    min_leaf,
                    better,
                );
                total = (total.0 + c, total.1 + s);
            }
            used[f] = false;
            if better(total, best) {
                best = total;
            }
        }
        best
    }
    let rows: Vec<usize> = (0..inst.n_rows).collect();
    let mut used = vec![false; inst.n_features];
    rec(
        inst, weights, &n_values, &rows, &mut used, max_depth, min_leaf, &better,
    )
}
