use super::*;
use crate::error::Error;

fn leaf(v: &[f64]) -> NodeSpec {
    NodeSpec::Leaf { value: v.to_vec() }
}

/// Root: category on feature 0 (3 values; value 2 is an empty leaf); child 0 splits on x1 <= 0.5;
/// child 1 is an oblique test x0*x1 - 2 <= 0.
fn sample() -> Tree {
    let oblique = ObliqueTest {
        terms: vec![
            Term {
                coef: 1.0,
                features: vec![0, 1],
            },
            Term {
                coef: -2.0,
                features: vec![],
            },
        ],
    };
    let root = NodeSpec::Category {
        feature: 0,
        value: vec![5.0, 4.0],
        children: vec![
            NodeSpec::Threshold {
                feature: 1,
                threshold: 0.5,
                value: vec![3.0, 1.0],
                low: Box::new(leaf(&[3.0, 0.0])),
                high: Box::new(leaf(&[0.0, 1.0])),
            },
            NodeSpec::Oblique {
                test: oblique,
                value: vec![2.0, 3.0],
                low: Box::new(leaf(&[2.0, 0.0])),
                high: Box::new(leaf(&[0.0, 3.0])),
            },
            leaf(&[0.0, 0.0]),
        ],
    };
    TreeSpec {
        root,
        n_features: 2,
        n_classes: 2,
    }
    .build()
    .expect("valid tree")
}

#[test]
fn spec_builds_in_preorder() {
    let t = sample();
    assert_eq!(t.n_nodes(), 8);
    assert_eq!(t.children(0), &[1, 4, 7]);
    assert_eq!(t.children(1), &[2, 3]);
    assert_eq!(t.children(4), &[5, 6]);
    assert_eq!((t.n_leaves(), t.n_splits(), t.depth()), (5, 3, 2));
}

#[test]
fn routing_follows_each_kind_of_test() {
    let t = sample();
    assert_eq!(t.route(&[0.0, 0.2]), (2, 2));
    assert_eq!(t.route(&[0.0, 0.7]), (3, 3));
    assert_eq!(t.route(&[1.0, 1.5]), (5, 5), "1*1.5 - 2 <= 0 goes low");
    assert_eq!(t.route(&[1.0, 3.0]), (6, 6));
}

#[test]
fn unroutable_values_stop_and_empty_leaves_predict_like_their_parent() {
    let t = sample();
    assert_eq!(
        t.route(&[2.0, 0.0]),
        (7, 0),
        "empty leaf predicts with the root"
    );
    assert_eq!(
        t.route(&[3.0, 0.0]),
        (0, 0),
        "unseen category stops at the root"
    );
    assert_eq!(t.route(&[0.5, 0.0]), (0, 0), "non-integer code stops");
    assert_eq!(
        t.route(&[0.0, f64::NAN]),
        (1, 1),
        "NaN stops at the threshold node"
    );
    let (indptr, nodes) = t.decision_paths(&[0.0, 0.2, 1.0, 3.0], 2);
    assert_eq!(indptr, vec![0, 3, 6]);
    assert_eq!(nodes, vec![0, 1, 2, 0, 4, 6]);
}

/// The routing policy stated plainly (see `routing.rs`): the child `x` goes to, or None.
fn policy_child(t: &Tree, node: usize, x: &[f64]) -> Option<usize> {
    let kids = t.children(node);
    match t.kind(node) {
        NodeKind::Leaf => None,
        NodeKind::Category => {
            let v = x[t.feature(node)?];
            let whole = v.is_finite() && v >= 0.0 && v.fract() == 0.0;
            (whole && v < kids.len() as f64).then(|| kids[v as usize])
        }
        NodeKind::Threshold => {
            let v = x[t.feature(node)?];
            (!v.is_nan()).then(|| {
                if v <= t.threshold(node) {
                    kids[0]
                } else {
                    kids[1]
                }
            })
        }
        NodeKind::Oblique => {
            let s = t.oblique_test(node)?.evaluate(x);
            (!s.is_nan()).then(|| if s <= 0.0 { kids[0] } else { kids[1] })
        }
    }
}

/// Routing rows, one by one or many at once, follows the policy for every kind of node and
/// every kind of value a node cannot read (NaN, infinities, negatives, fractions, -0.0,
/// subnormals, codes past the last child, huge codes, ±2^63).
#[test]
fn routing_follows_the_policy_on_awkward_values() {
    let t = sample();
    let values = [
        0.0,
        -0.0,
        1.0,
        2.0,
        3.0,
        0.5,
        0.7,
        1.5,
        -1.0,
        f64::MIN_POSITIVE / 2.0,
        f64::NAN,
        f64::INFINITY,
        f64::NEG_INFINITY,
        1e300,
        4_294_967_296.0,
        i64::MAX as f64,
        i64::MIN as f64,
    ];
    let rows: Vec<[f64; 2]> = values
        .iter()
        .flat_map(|&a| values.iter().map(move |&b| [a, b]))
        .collect();
    let x: Vec<f64> = rows.iter().flatten().copied().collect();
    let (reached, predicting) = t.route_rows(&x, rows.len());
    for (i, row) in rows.iter().enumerate() {
        let (mut node, mut last) = (0, 0);
        loop {
            if t.value(node).iter().any(|&v| v > 0.0) {
                last = node;
            }
            match policy_child(&t, node, row) {
                Some(child) => node = child,
                None => break,
            }
        }
        assert_eq!((reached[i], predicting[i]), (node, last), "row {row:?}");
        assert_eq!(t.route(row), (node, last), "row {row:?}");
    }
}

/// A tree of no features (one leaf) still routes every row of a matrix with no columns.
#[test]
fn a_leaf_without_features_routes_every_row() {
    let t = TreeSpec {
        root: leaf(&[2.0, 1.0]),
        n_features: 0,
        n_classes: 2,
    }
    .build()
    .expect("valid");
    assert_eq!(t.route_rows::<f64>(&[], 3), (vec![0; 3], vec![0; 3]));
    assert_eq!(t.decision_paths::<f64>(&[], 2), (vec![0, 1, 2], vec![0, 0]));
}

#[test]
fn arrays_round_trip() {
    let t = sample();
    assert_eq!(Tree::new(t.to_arrays()).expect("valid"), t);
}

fn broken(edit: impl FnOnce(&mut TreeArrays)) -> String {
    let mut a = sample().to_arrays();
    edit(&mut a);
    match Tree::new(a) {
        Err(Error::Data(m)) => m,
        other => panic!("expected a data error, got {other:?}"),
    }
}

#[test]
fn validation_names_the_broken_rule() {
    assert!(broken(|a| a.kind[0] = 9).contains("node 0 has kind 9"));
    assert!(broken(|a| a.children[0] = 0).contains("root (node 0) appears as a child"));
    assert!(broken(|a| a.children[1] = 2).contains("parents"));
    assert!(broken(|a| a.feature[1] = 7).contains("the feature of node 1 = 7"));
    assert!(broken(|a| a.threshold[1] = f64::NAN).contains("threshold node 1"));
    assert!(broken(|a| a.value[3] = -1.0).contains("node 1 has class total -1"));
    assert!(broken(|a| a.kind[1] = 0).contains("leaf 1 has 2 children"));
    assert!(broken(|a| a.term_features[0] = 5).contains("oblique term 0"));
    assert!(broken(|a| a.oblique_index[4] = 3).contains("oblique test of node 4"));
    assert!(broken(|a| a.value.pop().map(|_| ()).unwrap_or(())).contains("value has 15 entries"));
    assert!(broken(|a| a.children_ptr[1] = 10).contains("non-decreasing"));
}

#[test]
fn detached_cycles_are_rejected() {
    // Root leaf; nodes 1 and 2 are each other's parent (plus leaves 3, 4): one parent each,
    // yet unreachable from the root.
    let a = TreeArrays {
        kind: vec![0, 2, 2, 0, 0],
        feature: vec![-1, 0, 0, -1, -1],
        threshold: vec![f64::NAN, 0.0, 0.0, f64::NAN, f64::NAN],
        oblique_index: vec![-1; 5],
        children_ptr: vec![0, 0, 2, 4, 4, 4],
        children: vec![2, 3, 4, 1],
        value: vec![1.0; 5],
        n_features: 1,
        n_classes: 1,
        ..TreeArrays::default()
    };
    let msg = Tree::new(a).expect_err("detached cycle").to_string();
    assert!(msg.contains("not reachable from the root"), "{msg}");
}

/// Codes in one or two bytes route as the same numbers in float64 do: category, threshold and
/// oblique nodes, an unseen category (3) stopping at the root, paths included.
#[test]
fn byte_codes_route_as_their_floats() {
    let t = sample();
    let mut word = crate::oracle::xorshift(5);
    let small: Vec<u8> = (0..2 * 300).map(|_| (word() % 5) as u8).collect();
    let floats: Vec<f64> = small.iter().map(|&c| f64::from(c)).collect();
    let wide: Vec<u16> = small.iter().map(|&c| u16::from(c)).collect();
    let expected = t.route_rows(&floats, 300);
    assert_eq!(t.route_rows(&small, 300), expected);
    assert_eq!(t.route_rows(&wide, 300), expected);
    assert_eq!(
        t.decision_paths(&small, 300),
        t.decision_paths(&floats, 300)
    );
    assert!(expected.0.contains(&0), "some row stops at the root");
    assert!(expected.0.contains(&6), "some row passes the oblique test");
}
