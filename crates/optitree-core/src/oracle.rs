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

/// A reproducible random instance (xorshift; no external randomness).
pub fn random_instance(n: usize, d: usize, values: u32, classes: u32, seed: u64) -> Instance {
    let mut s = seed | 1;
    let mut next = move |m: u32| {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        (s % u64::from(m)) as u32
    };
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
