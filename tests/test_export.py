"""Tests of optitree.export: golden text/DOT output, JSON round trips, errors."""

from __future__ import annotations

import json
import math
import os

import numpy as np
import pytest

from optitree import StumpClassifier
from optitree.exceptions import DataError, InvalidParameterError, SchemaVersionError
from optitree.export import (
    export_dot,
    export_text,
    format_condition,
    format_number,
    format_oblique,
    from_json,
    load_json,
    save_json,
    to_json,
)
from optitree.tree import CATEGORY, LEAF, OBLIQUE, SCHEMA_VERSION, THRESHOLD, Tree

nan = np.nan


# ---------------------------------------------------------------------------
# Fixed trees
# ---------------------------------------------------------------------------


def threshold_tree() -> Tree:
    """Depth 2, thresholds only, with feature and class names."""
    return Tree(
        kind=np.array([THRESHOLD, LEAF, THRESHOLD, LEAF, LEAF], dtype=np.int8),
        feature=np.array([1, -1, 2, -1, -1]),
        threshold=np.array([2.45, nan, 1.75, nan, nan]),
        children_ptr=np.array([0, 2, 2, 4, 4, 4]),
        children=np.array([1, 2, 3, 4]),
        value=np.array(
            [[50.0, 50, 50], [50, 0, 0], [0, 50, 50], [0, 49, 5], [0, 1, 45]],
        ),
        n_features=3,
        feature_names=["sepal_length", "petal_length", "petal_width"],
        class_names=["setosa", "versicolor", "virginica"],
    )


def category_tree() -> Tree:
    """A 3-way categorical root whose last branch is an empty leaf."""
    return Tree(
        kind=np.array([CATEGORY, THRESHOLD, LEAF, LEAF, LEAF, LEAF], dtype=np.int8),
        feature=np.array([0, 1, -1, -1, -1, -1]),
        threshold=np.array([nan, 70.0, nan, nan, nan, nan]),
        children_ptr=np.array([0, 3, 5, 5, 5, 5, 5]),
        children=np.array([1, 2, 3, 4, 5]),
        value=np.array([[3.0, 6], [3, 2], [0, 4], [0, 0], [0, 2], [3, 0]]),
        n_features=2,
        feature_names=["outlook", "humidity"],
        class_names=["no", "yes"],
        categories=[["sunny", "overcast", "rainy"], None],
    )


def oblique_tree() -> Tree:
    """Two oblique tests, one with a squared term, one with a product; no names."""
    return Tree(
        kind=np.array([OBLIQUE, LEAF, OBLIQUE, LEAF, LEAF], dtype=np.int8),
        feature=np.array([-1, -1, -1, -1, -1]),
        threshold=np.full(5, nan),
        children_ptr=np.array([0, 2, 2, 4, 4, 4]),
        children=np.array([1, 2, 3, 4]),
        value=np.array([[7.0, 9], [6, 1], [1, 8], [1, 0], [0, 8]]),
        oblique_index=np.array([0, -1, 1, -1, -1]),
        oblique_ptr=np.array([0, 3, 6]),
        # test 0: -3 + 0.5*x0 + 1.25*x1*x1 (intercept stored first)
        # test 1: -1*x0*x1 + 2*x2 + 0.25
        term_coef=np.array([-3.0, 0.5, 1.25, -1.0, 2.0, 0.25]),
        term_ptr=np.array([0, 0, 1, 3, 5, 6, 6]),
        term_features=np.array([0, 1, 1, 0, 1, 2]),
        n_features=3,
    )


def leaf_tree() -> Tree:
    """A single leaf."""
    return Tree(
        kind=np.array([LEAF], dtype=np.int8),
        feature=np.array([-1]),
        threshold=np.array([nan]),
        children_ptr=np.array([0, 0]),
        children=np.array([], dtype=np.int64),
        value=np.array([[3.0, 1.0]]),
        n_features=2,
        class_names=["no", "yes"],
    )


_FIELDS = (
    "kind",
    "feature",
    "threshold",
    "children_ptr",
    "children",
    "value",
    "oblique_index",
    "oblique_ptr",
    "term_coef",
    "term_ptr",
    "term_features",
    "n_features",
    "feature_names",
    "class_names",
    "categories",
)


def rebuild(tree: Tree, **changes) -> Tree:
    """A copy of ``tree`` with some constructor arguments replaced."""
    kwargs = {name: getattr(tree, name) for name in _FIELDS}
    kwargs.update(changes)
    return Tree(**kwargs)


FIXED_TREES = {
    "threshold": threshold_tree,
    "category": category_tree,
    "oblique": oblique_tree,
    "leaf": leaf_tree,
}


# ---------------------------------------------------------------------------
# A small generator of random valid trees
# ---------------------------------------------------------------------------

_LABEL_POOL = ["a", "b c", 'q"uote', "back\\slash", 7, -2, 2.5, 0.1, True, False, None, "7"]


def random_tree(seed: int) -> Tree:
    rng = np.random.default_rng(seed)
    n_features = int(rng.integers(1, 5))
    n_classes = int(rng.integers(1, 4))
    n_categories = [int(rng.integers(2, 5)) if rng.random() < 0.5 else 0 for _ in range(n_features)]
    categorical = [f for f in range(n_features) if n_categories[f]]
    max_depth = int(rng.integers(0, 4))

    kinds: list[int] = []
    features: list[int] = []
    thresholds: list[float] = []
    oblique_index: list[int] = []
    child_lists: list[list[int]] = []
    values: list[np.ndarray] = []
    oblique_ptr = [0]
    term_coef: list[float] = []
    term_ptr = [0]
    term_features: list[int] = []

    def grow(depth: int) -> int:
        node = len(kinds)
        kinds.append(LEAF)
        features.append(-1)
        thresholds.append(nan)
        oblique_index.append(-1)
        child_lists.append([])
        values.append(np.zeros(n_classes))
        options = [LEAF, THRESHOLD, OBLIQUE] + ([CATEGORY] if categorical else [])
        kind = LEAF if depth >= max_depth else int(rng.choice(options))
        if kind == LEAF:
            if rng.random() < 0.2:
                values[node] = np.zeros(n_classes)  # an empty leaf
            elif rng.random() < 0.5:
                values[node] = rng.integers(0, 6, n_classes).astype(np.float64)
            else:
                values[node] = rng.random(n_classes) * 10  # full-precision weights
            return node
        kinds[node] = kind
        if kind == THRESHOLD:
            features[node] = int(rng.integers(0, n_features))
            thresholds[node] = float(rng.normal() * 10)
            n_children = 2
        elif kind == CATEGORY:
            features[node] = int(rng.choice(categorical))
            n_children = n_categories[features[node]]
        else:
            oblique_index[node] = len(oblique_ptr) - 1
            for _ in range(int(rng.integers(1, 5))):
                term_coef.append(float(rng.normal()))
                term_features.extend(
                    int(f) for f in rng.integers(0, n_features, rng.integers(0, 4))
                )
                term_ptr.append(len(term_features))
            oblique_ptr.append(len(term_coef))
            n_children = 2
        for _ in range(n_children):
            child = grow(depth + 1)
            child_lists[node].append(child)
            values[node] = values[node] + values[child]
        return node

    grow(0)
    children_ptr = np.cumsum([0] + [len(c) for c in child_lists])
    children = [c for cs in child_lists for c in cs]
    pool = list(_LABEL_POOL)

    def labels(n: int) -> list:
        return [pool[int(i)] for i in rng.permutation(len(pool))[:n]]

    class_names = None
    if rng.random() < 0.5:
        class_names = list(range(n_classes)) if rng.random() < 0.5 else labels(n_classes)
    categories = None
    if categorical and rng.random() < 0.7:
        categories = [
            labels(n_categories[f]) if n_categories[f] else None for f in range(n_features)
        ]
    feature_names = [f"f{f}" for f in range(n_features)] if rng.random() < 0.5 else None
    return Tree(
        kind=np.array(kinds, dtype=np.int8),
        feature=np.array(features, dtype=np.int64),
        threshold=np.array(thresholds, dtype=np.float64),
        children_ptr=np.asarray(children_ptr, dtype=np.int64),
        children=np.array(children, dtype=np.int64),
        value=np.array(values, dtype=np.float64).reshape(len(kinds), n_classes),
        oblique_index=np.array(oblique_index, dtype=np.int64),
        oblique_ptr=np.array(oblique_ptr, dtype=np.int64),
        term_coef=np.array(term_coef, dtype=np.float64),
        term_ptr=np.array(term_ptr, dtype=np.int64),
        term_features=np.array(term_features, dtype=np.int64),
        n_features=n_features,
        feature_names=feature_names,
        class_names=class_names,
        categories=categories,
    )


# ---------------------------------------------------------------------------
# format helpers
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "decimals", "expected"),
    [
        (2.45, 2, "2.45"),
        (2.5, 2, "2.5"),
        (3.0, 2, "3"),
        (-0.0, 2, "0"),
        (-0.004, 2, "0"),
        (1234.5678, 1, "1234.6"),
        (0.125, 0, "0"),
        (7.0, 0, "7"),
        (math.inf, 2, "inf"),
        (-math.inf, 2, "-inf"),
        (math.nan, 2, "nan"),
    ],
)
def test_format_number(value, decimals, expected):
    assert format_number(value, decimals) == expected


def test_format_number_rejects_negative_decimals():
    with pytest.raises(InvalidParameterError, match="decimals"):
        format_number(1.0, -1)


def test_format_oblique_powers_products_intercept_last_and_signs():
    tree = oblique_tree()
    assert format_oblique(tree, 0) == "0.5*x0 + 1.25*x1^2 - 3"
    assert format_oblique(tree, 2) == "-x0*x1 + 2*x2 + 0.25"
    assert format_oblique(tree, 2, ["a", "b", "c"], decimals=0) == "-a*b + 2*c + 0.25"
    assert format_oblique(tree, 0, decimals=1) == "0.5*x0 + 1.25*x1^2 - 3"
    # Names that are not plain identifiers are bracketed: 'c*d' squared is not c*d^2.
    assert format_oblique(tree, 0, ["a b", "c*d", "z"]) == "0.5*(a b) + 1.25*(c*d)^2 - 3"
    # A coefficient shows every digit rounding would lose: the printed rule is the rule.
    tree.term_coef = np.array([-3.0, 0.123456789, 1.25, -1.0, 2.0, 0.25])
    assert format_oblique(tree, 0) == "0.123456789*x0 + 1.25*x1^2 - 3"


def test_format_oblique_cubes_mixed_order_and_zero_terms():
    tree = Tree(
        kind=np.array([OBLIQUE, LEAF, LEAF], dtype=np.int8),
        feature=np.array([-1, -1, -1]),
        threshold=np.full(3, nan),
        children_ptr=np.array([0, 2, 2, 2]),
        children=np.array([1, 2]),
        value=np.array([[1.0, 1.0], [1.0, 0.0], [0.0, 1.0]]),
        oblique_index=np.array([0, -1, -1]),
        oblique_ptr=np.array([0, 4]),
        term_coef=np.array([-2.0, 0.0, 1.0, -1.5]),
        term_ptr=np.array([0, 4, 5, 5, 5]),
        term_features=np.array([1, 0, 1, 1, 0]),
        n_features=2,
        feature_names=["u", "v"],
    )
    # [1, 0, 1, 1] -> v^3*u (first-appearance order); the zero term is dropped;
    # the two constants (1 and -1.5) come last in stored order.
    assert format_oblique(tree, 0) == "-2*v^3*u + 1 - 1.5"


def test_format_oblique_rejects_non_oblique_node():
    with pytest.raises(InvalidParameterError, match="not an oblique node"):
        format_oblique(threshold_tree(), 0)
    with pytest.raises(InvalidParameterError, match="not an oblique node"):
        format_oblique(oblique_tree(), 99)


def test_format_condition():
    assert format_condition(threshold_tree(), 0, 0) == "petal_length <= 2.45"
    assert format_condition(threshold_tree(), 2, 1) == "petal_width > 1.75"
    assert format_condition(category_tree(), 0, 1) == "outlook = overcast"
    assert format_condition(oblique_tree(), 0, 1) == "0.5*x0 + 1.25*x1^2 - 3 > 0"
    with pytest.raises(InvalidParameterError, match="leaf"):
        format_condition(leaf_tree(), 0, 0)
    with pytest.raises(InvalidParameterError, match="child_index"):
        format_condition(category_tree(), 0, 3)


# ---------------------------------------------------------------------------
# export_text golden tests
# ---------------------------------------------------------------------------


def test_export_text_threshold_tree():
    expected = (
        "|--- petal_length <= 2.45\n"
        "|   |--- class: setosa\n"
        "|--- petal_length >  2.45\n"
        "|   |--- petal_width <= 1.75\n"
        "|   |   |--- class: versicolor\n"
        "|   |--- petal_width >  1.75\n"
        "|   |   |--- class: virginica\n"
    )
    assert export_text(threshold_tree()) == expected


def test_export_text_threshold_tree_show_weights():
    expected = (
        "|--- petal_length <= 2.45\n"
        "|   |--- weights: [50, 0, 0] class: setosa\n"
        "|--- petal_length >  2.45\n"
        "|   |--- petal_width <= 1.75\n"
        "|   |   |--- weights: [0, 49, 5] class: versicolor\n"
        "|   |--- petal_width >  1.75\n"
        "|   |   |--- weights: [0, 1, 45] class: virginica\n"
    )
    assert export_text(threshold_tree(), show_weights=True) == expected


def test_export_text_category_tree_with_empty_leaf():
    expected = (
        "|--- outlook = sunny\n"
        "|   |--- humidity <= 70\n"
        "|   |   |--- class: yes\n"
        "|   |--- humidity >  70\n"
        "|   |   |--- class: no\n"
        "|--- outlook = overcast\n"
        "|   |--- class: yes\n"
        "|--- outlook = rainy\n"
        "|   |--- class: yes (empty, predicts parent's class)\n"
    )
    assert export_text(category_tree()) == expected


def test_export_text_category_tree_show_weights():
    expected = (
        "|--- outlook = sunny\n"
        "|   |--- humidity <= 70\n"
        "|   |   |--- weights: [0, 2] class: yes\n"
        "|   |--- humidity >  70\n"
        "|   |   |--- weights: [3, 0] class: no\n"
        "|--- outlook = overcast\n"
        "|   |--- weights: [0, 4] class: yes\n"
        "|--- outlook = rainy\n"
        "|   |--- weights: [0, 0] class: yes (empty, predicts parent's class)\n"
    )
    assert export_text(category_tree(), show_weights=True) == expected


def test_export_text_category_codes_without_categories():
    tree = rebuild(category_tree(), categories=None)
    expected = (
        "|--- outlook = 0\n"
        "|   |--- humidity <= 70\n"
        "|   |   |--- class: yes\n"
        "|   |--- humidity >  70\n"
        "|   |   |--- class: no\n"
        "|--- outlook = 1\n"
        "|   |--- class: yes\n"
        "|--- outlook = 2\n"
        "|   |--- class: yes (empty, predicts parent's class)\n"
    )
    assert export_text(tree) == expected


def test_export_text_oblique_tree():
    expected = (
        "|--- 0.5*x0 + 1.25*x1^2 - 3 <= 0\n"
        "|   |--- class: 0\n"
        "|--- 0.5*x0 + 1.25*x1^2 - 3 >  0\n"
        "|   |--- -x0*x1 + 2*x2 + 0.25 <= 0\n"
        "|   |   |--- class: 0\n"
        "|   |--- -x0*x1 + 2*x2 + 0.25 >  0\n"
        "|   |   |--- class: 1\n"
    )
    assert export_text(oblique_tree()) == expected


def test_export_text_oblique_tree_with_names():
    expected = (
        "|--- 0.5*age + 1.25*income^2 - 3 <= 0\n"
        "|   |--- weights: [6, 1] class: bad\n"
        "|--- 0.5*age + 1.25*income^2 - 3 >  0\n"
        "|   |--- -age*income + 2*debt + 0.25 <= 0\n"
        "|   |   |--- weights: [1, 0] class: bad\n"
        "|   |--- -age*income + 2*debt + 0.25 >  0\n"
        "|   |   |--- weights: [0, 8] class: good\n"
    )
    text = export_text(
        oblique_tree(),
        feature_names=["age", "income", "debt"],
        class_names=["bad", "good"],
        show_weights=True,
    )
    assert text == expected


def test_export_text_single_leaf():
    assert export_text(leaf_tree()) == "|--- class: no\n"
    assert export_text(leaf_tree(), show_weights=True) == "|--- weights: [3, 1] class: no\n"


def test_export_text_empty_root():
    tree = rebuild(leaf_tree(), value=np.zeros((1, 2)))
    assert export_text(tree) == "|--- class: no (empty)\n"


def test_export_text_nested_empty_leaf_uses_nearest_nonempty_ancestor():
    # root [5, 1] -> (leaf [5, 0], node [0, 1] -> (leaf [0, 1], node [0, 0] -> two empty leaves))
    tree = Tree(
        kind=np.array([THRESHOLD, LEAF, THRESHOLD, LEAF, THRESHOLD, LEAF, LEAF], dtype=np.int8),
        feature=np.array([0, -1, 0, -1, 0, -1, -1]),
        threshold=np.array([1.0, nan, 2.0, nan, 3.0, nan, nan]),
        children_ptr=np.array([0, 2, 2, 4, 4, 6, 6, 6]),
        children=np.array([1, 2, 3, 4, 5, 6]),
        value=np.array([[5.0, 1], [5, 0], [0, 1], [0, 1], [0, 0], [0, 0], [0, 0]]),
        n_features=1,
        class_names=["A", "B"],
    )
    expected = (
        "|--- x0 <= 1\n"
        "|   |--- class: A\n"
        "|--- x0 >  1\n"
        "|   |--- x0 <= 2\n"
        "|   |   |--- class: B\n"
        "|   |--- x0 >  2\n"
        "|   |   |--- x0 <= 3\n"
        "|   |   |   |--- class: B (empty, predicts parent's class)\n"
        "|   |   |--- x0 >  3\n"
        "|   |   |   |--- class: B (empty, predicts parent's class)\n"
    )
    assert export_text(tree) == expected


def test_empty_leaf_class_agrees_with_tree_predict():
    # rainy (code 2) reaches the empty leaf; the text says "yes", so must predict.
    assert "rainy\n|   |--- class: yes (empty" in export_text(category_tree())
    assert category_tree().predict([[2, 50.0]]).tolist() == ["yes"]


def test_export_text_max_depth_truncation():
    expected_1 = (
        "|--- petal_length <= 2.45\n"
        "|   |--- class: setosa\n"
        "|--- petal_length >  2.45\n"
        "|   |--- truncated branch of depth 1\n"
    )
    assert export_text(threshold_tree(), max_depth=1) == expected_1
    assert export_text(threshold_tree(), max_depth=0) == "|--- truncated branch of depth 2\n"
    assert export_text(threshold_tree(), max_depth=2) == export_text(threshold_tree())
    assert export_text(leaf_tree(), max_depth=0) == "|--- class: no\n"


def _depth(tree: Tree, node: int = 0) -> int:
    kids = tree.children[tree.children_ptr[node] : tree.children_ptr[node + 1]]
    return 1 + max(_depth(tree, int(c)) for c in kids) if len(kids) else 0


@pytest.mark.parametrize("seed", range(30))
def test_export_text_max_depth_random_trees(seed):
    tree = random_tree(seed)
    depth = _depth(tree)
    full = export_text(tree)
    assert export_text(tree, max_depth=depth) == full
    if depth >= 1:
        cut = export_text(tree, max_depth=depth - 1)
        assert "truncated branch of depth 1\n" in cut
        assert "truncated branch of depth 2" not in cut
        assert cut.count("\n") < full.count("\n")
    assert export_text(tree, max_depth=0) == (
        f"|--- truncated branch of depth {depth}\n" if depth else full
    )


def test_export_text_spacing_and_decimals():
    expected = (
        "|- petal_length <= 2.45\n"
        "| |- class: setosa\n"
        "|- petal_length >  2.45\n"
        "| |- petal_width <= 1.75\n"
        "| | |- class: versicolor\n"
        "| |- petal_width >  1.75\n"
        "| | |- class: virginica\n"
    )
    assert export_text(threshold_tree(), spacing=1, decimals=1) == expected


def test_export_text_name_overrides():
    expected = (
        "|--- b <= 2.45\n"
        "|   |--- class: 10\n"
        "|--- b >  2.45\n"
        "|   |--- c <= 1.75\n"
        "|   |   |--- class: 20\n"
        "|   |--- c >  1.75\n"
        "|   |   |--- class: 30\n"
    )
    text = export_text(threshold_tree(), feature_names=["a", "b", "c"], class_names=[10, 20, 30])
    assert text == expected


def test_export_text_default_names():
    tree = rebuild(threshold_tree(), feature_names=None, class_names=None)
    expected = (
        "|--- x1 <= 2.45\n"
        "|   |--- class: 0\n"
        "|--- x1 >  2.45\n"
        "|   |--- x2 <= 1.75\n"
        "|   |   |--- class: 1\n"
        "|   |--- x2 >  1.75\n"
        "|   |   |--- class: 2\n"
    )
    assert export_text(tree) == expected


@pytest.mark.parametrize("exporter", [export_text, export_dot])
def test_default_names_of_a_huge_declared_width_are_made_only_as_read(exporter):
    # A hand-edited n_features of 10**9 once built a billion names before printing two.
    tree = rebuild(threshold_tree(), feature_names=None, n_features=10**9)
    assert "x2" in exporter(tree)


@pytest.mark.parametrize("exporter", [export_text, export_dot])
def test_unordered_names_are_refused(exporter):
    with pytest.raises(InvalidParameterError, match=r"feature_names must be a list .* got dict"):
        exporter(threshold_tree(), feature_names={"a": 0, "b": 1, "c": 2})
    with pytest.raises(InvalidParameterError, match=r"class_names must be a list .* got set"):
        exporter(threshold_tree(), class_names={"a", "b", "c"})


@pytest.mark.parametrize("exporter", [export_text, export_dot])
def test_wrong_length_names(exporter):
    with pytest.raises(InvalidParameterError, match=r"feature_names .*\(3\), got 2"):
        exporter(threshold_tree(), feature_names=["a", "b"])
    with pytest.raises(InvalidParameterError, match=r"class_names .*\(3\), got 4"):
        exporter(threshold_tree(), class_names=["a", "b", "c", "d"])
    with pytest.raises(InvalidParameterError, match="feature_names must be a list"):
        exporter(threshold_tree(), feature_names="abc")


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"decimals": -1}, "decimals"),
        ({"max_depth": -1}, "max_depth"),
        ({"max_depth": 1.5}, "max_depth"),
        ({"spacing": 0}, "spacing"),
    ],
)
def test_export_text_bad_parameters(kwargs, name):
    with pytest.raises(InvalidParameterError, match=name):
        export_text(threshold_tree(), **kwargs)


def test_export_text_rejects_non_tree():
    with pytest.raises(InvalidParameterError, match=r"optitree\.tree\.Tree"):
        export_text({"kind": [0]})


@pytest.mark.parametrize("seed", range(40))
def test_export_text_random_trees_one_line_per_branch_and_leaf(seed):
    tree = random_tree(seed)
    text = export_text(tree)
    n_leaves = int(np.sum(tree.kind == LEAF))
    assert text.count("\n") == (int(tree.n_nodes) - 1) + n_leaves
    dot = export_dot(tree, filled=True)
    assert dot.count(" -> ") == int(tree.n_nodes) - 1


# ---------------------------------------------------------------------------
# export_dot golden tests
# ---------------------------------------------------------------------------


def test_export_dot_threshold_tree():
    expected = (
        "digraph Tree {\n"
        'node [shape=box, style="rounded", fontname="helvetica"] ;\n'
        'edge [fontname="helvetica"] ;\n'
        '0 [label="petal_length\\nsamples = 150\\nvalue = [50, 50, 50]"] ;\n'
        '1 [label="class = setosa\\nsamples = 50\\nvalue = [50, 0, 0]"] ;\n'
        '2 [label="petal_width\\nsamples = 100\\nvalue = [0, 50, 50]"] ;\n'
        '3 [label="class = versicolor\\nsamples = 54\\nvalue = [0, 49, 5]"] ;\n'
        '4 [label="class = virginica\\nsamples = 46\\nvalue = [0, 1, 45]"] ;\n'
        '0 -> 1 [label="<= 2.45"] ;\n'
        '0 -> 2 [label="> 2.45"] ;\n'
        '2 -> 3 [label="<= 1.75"] ;\n'
        '2 -> 4 [label="> 1.75"] ;\n'
        "}\n"
    )
    assert export_dot(threshold_tree()) == expected


def test_export_dot_threshold_tree_filled_square_no_weights():
    expected = (
        "digraph Tree {\n"
        'node [shape=box, style="filled", fontname="helvetica"] ;\n'
        'edge [fontname="helvetica"] ;\n'
        '0 [label="petal_length\\nsamples = 150", fillcolor="#ffffff"] ;\n'
        '1 [label="class = setosa\\nsamples = 50", fillcolor="#9ecae9"] ;\n'
        '2 [label="petal_width\\nsamples = 100", fillcolor="#ffffff"] ;\n'
        '3 [label="class = versicolor\\nsamples = 54", fillcolor="#fdbf86"] ;\n'
        '4 [label="class = virginica\\nsamples = 46", fillcolor="#a6dba0"] ;\n'
        '0 -> 1 [label="<= 2.45"] ;\n'
        '0 -> 2 [label="> 2.45"] ;\n'
        '2 -> 3 [label="<= 1.75"] ;\n'
        '2 -> 4 [label="> 1.75"] ;\n'
        "}\n"
    )
    assert export_dot(threshold_tree(), filled=True, rounded=False, show_weights=False) == expected


def test_export_dot_category_tree_with_empty_leaf():
    expected = (
        "digraph Tree {\n"
        'node [shape=box, style="rounded", fontname="helvetica"] ;\n'
        'edge [fontname="helvetica"] ;\n'
        '0 [label="outlook\\nsamples = 9\\nvalue = [3, 6]"] ;\n'
        '1 [label="humidity\\nsamples = 5\\nvalue = [3, 2]"] ;\n'
        '2 [label="class = yes\\nsamples = 4\\nvalue = [0, 4]"] ;\n'
        "3 [label=\"class = yes\\n(empty, predicts parent's class)\\nsamples = 0"
        '\\nvalue = [0, 0]"] ;\n'
        '4 [label="class = yes\\nsamples = 2\\nvalue = [0, 2]"] ;\n'
        '5 [label="class = no\\nsamples = 3\\nvalue = [3, 0]"] ;\n'
        '0 -> 1 [label="= sunny"] ;\n'
        '0 -> 2 [label="= overcast"] ;\n'
        '0 -> 3 [label="= rainy"] ;\n'
        '1 -> 4 [label="<= 70"] ;\n'
        '1 -> 5 [label="> 70"] ;\n'
        "}\n"
    )
    assert export_dot(category_tree()) == expected


def test_export_dot_category_tree_filled():
    expected = (
        "digraph Tree {\n"
        'node [shape=box, style="rounded,filled", fontname="helvetica"] ;\n'
        'edge [fontname="helvetica"] ;\n'
        '0 [label="outlook\\nsamples = 9", fillcolor="#ffffff"] ;\n'
        '1 [label="humidity\\nsamples = 5", fillcolor="#ffffff"] ;\n'
        '2 [label="class = yes\\nsamples = 4", fillcolor="#fdbf86"] ;\n'
        '3 [label="class = yes\\n(empty, predicts parent\'s class)\\nsamples = 0", '
        'fillcolor="#fdbf86", style="rounded,filled,dashed"] ;\n'
        '4 [label="class = yes\\nsamples = 2", fillcolor="#fdbf86"] ;\n'
        '5 [label="class = no\\nsamples = 3", fillcolor="#9ecae9"] ;\n'
        '0 -> 1 [label="= sunny"] ;\n'
        '0 -> 2 [label="= overcast"] ;\n'
        '0 -> 3 [label="= rainy"] ;\n'
        '1 -> 4 [label="<= 70"] ;\n'
        '1 -> 5 [label="> 70"] ;\n'
        "}\n"
    )
    assert export_dot(category_tree(), filled=True, show_weights=False) == expected


def test_export_dot_oblique_tree():
    expected = (
        "digraph Tree {\n"
        'node [shape=box, style="rounded", fontname="helvetica"] ;\n'
        'edge [fontname="helvetica"] ;\n'
        '0 [label="0.5*x0 + 1.25*x1^2 - 3\\nsamples = 16\\nvalue = [7, 9]"] ;\n'
        '1 [label="class = 0\\nsamples = 7\\nvalue = [6, 1]"] ;\n'
        '2 [label="-x0*x1 + 2*x2 + 0.25\\nsamples = 9\\nvalue = [1, 8]"] ;\n'
        '3 [label="class = 0\\nsamples = 1\\nvalue = [1, 0]"] ;\n'
        '4 [label="class = 1\\nsamples = 8\\nvalue = [0, 8]"] ;\n'
        '0 -> 1 [label="<= 0"] ;\n'
        '0 -> 2 [label="> 0"] ;\n'
        '2 -> 3 [label="<= 0"] ;\n'
        '2 -> 4 [label="> 0"] ;\n'
        "}\n"
    )
    assert export_dot(oblique_tree()) == expected


def test_export_dot_single_leaf():
    expected = (
        "digraph Tree {\n"
        'node [shape=box, fontname="helvetica"] ;\n'
        'edge [fontname="helvetica"] ;\n'
        '0 [label="class = no\\nsamples = 4\\nvalue = [3, 1]"] ;\n'
        "}\n"
    )
    assert export_dot(leaf_tree(), rounded=False) == expected


def test_export_dot_escapes_quotes_and_backslashes():
    tree = rebuild(category_tree(), categories=[['say "hi"', "C:\\dir", "plain"], None])
    dot = export_dot(tree, feature_names=['the "outlook"', "hum\\idity"], show_weights=False)
    assert '0 [label="the \\"outlook\\"\\nsamples = 9"] ;\n' in dot
    assert '1 [label="hum\\\\idity\\nsamples = 5"] ;\n' in dot
    assert '0 -> 1 [label="= say \\"hi\\""] ;\n' in dot
    assert '0 -> 2 [label="= C:\\\\dir"] ;\n' in dot


# ---------------------------------------------------------------------------
# JSON
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(FIXED_TREES))
def test_json_round_trip_fixed_trees(name):
    tree = FIXED_TREES[name]()
    text = to_json(tree)
    assert from_json(text) == tree
    assert from_json(to_json(tree, indent=2)) == tree
    assert from_json(text.encode("utf-8")) == tree
    # the output is strict JSON: no NaN / Infinity literals
    json.loads(text, parse_constant=lambda c: pytest.fail(f"non-standard constant {c}"))


@pytest.mark.parametrize("seed", range(200))
def test_json_round_trip_random_trees(seed):
    tree = random_tree(seed)
    again = from_json(to_json(tree))
    assert again == tree
    # exact: floats bit for bit, labels with their types
    np.testing.assert_array_equal(again.value, tree.value)
    np.testing.assert_array_equal(again.term_coef, tree.term_coef)
    if tree.class_names is not None:
        assert [type(c) for c in again.class_names] == [type(c) for c in tree.class_names]
    if tree.categories is not None:
        for before, after in zip(tree.categories, again.categories):
            assert (before is None) == (after is None)
            if before is not None:
                assert [type(c) for c in after] == [type(c) for c in before]
    assert to_json(again) == to_json(tree)


def test_json_document_shape():
    document = json.loads(to_json(category_tree(), metadata={"status": "optimal"}))
    assert list(document) == ["format", "schema_version", "tree", "metadata"]
    assert document["format"] == "optitree.tree"
    # Saved with the oldest version that reads it: no class prior, so version 1.
    assert document["schema_version"] == 1 and SCHEMA_VERSION == 2
    assert document["metadata"] == {"status": "optimal"}
    stored = document["tree"]
    assert stored["threshold"] == [None, 70.0, None, None, None, None]
    assert stored["categories"] == [["sunny", "overcast", "rainy"], None]
    assert stored["class_names"] == ["no", "yes"]
    assert stored["n_features"] == 2


@pytest.mark.parametrize(
    ("labels", "types"),
    [
        ([0, 1, 2], [int, int, int]),
        ([np.int64(3), np.float64(1.5), "2"], [int, float, str]),
        ([True, False, None], [bool, bool, type(None)]),
        ([1.0, math.inf, -math.inf], [float, float, float]),
        (["1", 1, 1.0], [str, int, float]),
    ],
)
def test_json_typed_labels(labels, types):
    tree = rebuild(threshold_tree(), class_names=labels)
    again = from_json(to_json(tree))
    assert again.class_names == [np.asarray(c).item() for c in labels]
    assert [type(c) for c in again.class_names] == types


def test_json_nan_label():
    tree = rebuild(threshold_tree(), class_names=[math.nan, 0, 1])
    again = from_json(to_json(tree))
    assert math.isnan(again.class_names[0])
    assert again.class_names[1:] == [0, 1]


def test_json_typed_category_labels():
    tree = rebuild(category_tree(), categories=[[1, 2.5, "3"], None])
    again = from_json(to_json(tree))
    assert again.categories == [[1, 2.5, "3"], None]
    assert [type(c) for c in again.categories[0]] == [int, float, str]
    assert again == tree


def test_json_float_codec_handles_non_finite_values():
    # The tree validator rejects infinite thresholds and counts, but the codec
    # itself must still write strict JSON for any float and read it back.
    from optitree.export import _decode_float, _encode_float

    for x in [0.1, -2.5e-300, 1e308, math.inf, -math.inf, 0.0, -0.0]:
        encoded = _encode_float(x)
        assert json.loads(json.dumps(encoded, allow_nan=False)) == encoded
        assert _decode_float(encoded, "x") == x
    assert _encode_float(math.nan) is None
    assert math.isnan(_decode_float(None, "x"))
    with pytest.raises(DataError, match="x must be a number"):
        _decode_float("1.5", "x")


def test_json_unsupported_label_type():
    tree = rebuild(threshold_tree(), class_names=["a", ("b", 1), "c"])
    with pytest.raises(DataError, match=r"class_names\[1\].*tuple"):
        to_json(tree)


def test_json_metadata_must_be_serialisable():
    with pytest.raises(InvalidParameterError, match="metadata"):
        to_json(leaf_tree(), metadata={"when": object()})
    with pytest.raises(InvalidParameterError, match="metadata"):
        to_json(leaf_tree(), metadata={"score": math.nan})
    with pytest.raises(InvalidParameterError, match="metadata must be a dict"):
        to_json(leaf_tree(), metadata=[1, 2])


def test_from_json_newer_schema_version():
    document = json.loads(to_json(threshold_tree()))
    document["schema_version"] = SCHEMA_VERSION + 1
    with pytest.raises(SchemaVersionError) as info:
        from_json(json.dumps(document))
    message = str(info.value)
    assert f"version {SCHEMA_VERSION + 1}" in message
    assert f"up to {SCHEMA_VERSION}" in message
    assert "upgrade optitree" in message


@pytest.mark.parametrize(
    "text",
    [
        "",
        "this is not json",
        "[1, 2, 3]",
        '{"format": "sklearn.tree", "schema_version": 1}',
        '{"schema_version": 1, "tree": {}}',
        '{"format": "optitree.tree", "schema_version": "1"}',
        '{"format": "optitree.tree", "schema_version": 0}',
        '{"format": "optitree.tree"}',
        b"\xff\xfe\x00",
        42,
        None,
    ],
)
def test_from_json_garbage(text):
    with pytest.raises(SchemaVersionError, match="not an optitree model"):
        from_json(text)


def _document(tree: Tree | None = None) -> dict:
    return json.loads(to_json(tree if tree is not None else threshold_tree()))


def _corrupt(**changes) -> str:
    document = _document()
    for key, value in changes.items():
        document["tree"][key] = value
    return json.dumps(document)


@pytest.mark.parametrize(
    ("text", "match"),
    [
        (json.dumps({**_document(), "tree": None}), "'tree' entry"),
        (json.dumps({**_document(), "metadata": [1]}), "'metadata' entry"),
        (_corrupt(kind=[2, 0, 2, 0, 9]), "kind"),
        (_corrupt(kind=[2, 0, 2, 0]), "entries"),
        (_corrupt(kind="22020"), "kind"),
        (_corrupt(feature=[1, -1, 2.5, -1, -1]), "feature"),
        (_corrupt(feature=[7, -1, 2, -1, -1]), "node 0"),
        (_corrupt(threshold=[None, None, 1.75, None, None]), "node 0"),
        (_corrupt(threshold=["x", None, 1.75, None, None]), "threshold"),
        (_corrupt(children=[1, 2, 3, 9]), "children"),
        (_corrupt(children=[1, 1, 3, 4]), "children"),
        (_corrupt(children_ptr=[0, 2, 2, 4, 4]), "children_ptr"),
        (_corrupt(children_ptr=[0, 3, 1, 4, 4, 4]), "children_ptr"),
        (_corrupt(value=[[1, 2, 3]] * 4), "value"),
        (_corrupt(value=[[1, 2, 3]] * 4 + [[1, 2]]), "value"),
        (_corrupt(value=[[1, 2, -3]] * 5), "value"),
        (_corrupt(value=[]), "value"),
        (_corrupt(n_features=-1), "n_features"),
        (_corrupt(n_features=None), "n_features"),
        (_corrupt(feature_names=["a"]), "feature_names"),
        (_corrupt(feature_names=[1, 2, 3]), "feature_names"),
        (_corrupt(class_names=["a", {"x": 1}, "c"]), "class_names"),
        (_corrupt(categories=[None, "abc", None]), "categories"),
        (_corrupt(oblique_ptr=[]), "oblique_ptr"),
        (_corrupt(term_ptr=[0, 1]), "term_ptr"),
    ],
)
def test_from_json_structural_nonsense(text, match):
    with pytest.raises(DataError, match=match) as info:
        from_json(text)
    assert not isinstance(info.value, SchemaVersionError)


def test_from_json_rejects_cycles_detached_from_root():
    # root 0 -> leaves 1, 2 ; nodes 3 and 4 point at each other
    document = _document()
    document["tree"].update(
        kind=[2, 0, 0, 2, 2],
        feature=[0, -1, -1, 0, 0],
        threshold=[1.0, None, None, 1.0, 1.0],
        children_ptr=[0, 2, 2, 2, 4, 6],
        children=[1, 2, 4, 3, 3, 4],
    )
    with pytest.raises(DataError, match="children"):
        from_json(json.dumps(document))


def test_from_json_bad_oblique_tables():
    document = _document(oblique_tree())
    document["tree"]["term_features"] = [0, 1, 1, 0, 1, 5]
    with pytest.raises(DataError, match="term_features"):
        from_json(json.dumps(document))
    document = _document(oblique_tree())
    document["tree"]["oblique_index"] = [0, -1, 2, -1, -1]
    with pytest.raises(DataError, match="node 2"):
        from_json(json.dumps(document))


# ---------------------------------------------------------------------------
# save_json / load_json
# ---------------------------------------------------------------------------


def test_save_and_load_json(tmp_path):
    path = tmp_path / "model.json"
    save_json(category_tree(), path, metadata={"status": "optimal", "objective": 0.125})
    tree, metadata = load_json(path)
    assert tree == category_tree()
    assert metadata == {"status": "optimal", "objective": 0.125}
    save_json(oblique_tree(), str(path))  # overwrite, str path, no metadata
    tree, metadata = load_json(str(path))
    assert tree == oblique_tree()
    assert metadata == {}
    assert sorted(os.listdir(tmp_path)) == ["model.json"]


def test_save_json_unserialisable_metadata_leaves_no_file(tmp_path):
    path = tmp_path / "model.json"
    with pytest.raises(InvalidParameterError, match="metadata"):
        save_json(leaf_tree(), path, metadata={"bad": object()})
    assert os.listdir(tmp_path) == []


def test_save_json_failure_keeps_old_file(tmp_path):
    path = tmp_path / "model.json"
    save_json(threshold_tree(), path, metadata={"version": "old"})
    before = path.read_bytes()
    with pytest.raises(InvalidParameterError, match="metadata"):
        save_json(leaf_tree(), path, metadata={"bad": {1, 2}})
    assert path.read_bytes() == before
    assert os.listdir(tmp_path) == ["model.json"]


def test_save_json_failure_during_replace_keeps_old_file(tmp_path, monkeypatch):
    path = tmp_path / "model.json"
    path.write_text("old contents")

    def failing_replace(src, dst):
        raise OSError("disk full (simulated)")

    monkeypatch.setattr(os, "replace", failing_replace)
    with pytest.raises(OSError, match="simulated"):
        save_json(leaf_tree(), path)
    assert path.read_text() == "old contents"
    assert os.listdir(tmp_path) == ["model.json"]  # the temporary file was removed


def test_load_json_not_a_model(tmp_path):
    path = tmp_path / "other.json"
    path.write_text('{"hello": "world"}')
    with pytest.raises(SchemaVersionError, match="not an optitree model"):
        load_json(path)


def test_printed_thresholds_route_rows_as_predict_does():
    # At two decimals 1.0025 printed as 1, and the rule 'x0 <= 1' sent 1.002 the wrong way.
    from optitree import BranchesClassifier, MAPTreeClassifier

    X = np.array([[1.001], [1.002], [1.003], [1.004]])
    clf = BranchesClassifier(penalty=0.01).fit(X, [0, 0, 1, 1])
    assert "x0 <= 1.0025\n" in export_text(clf.tree_)
    assert '[label="<= 1.0025"]' in export_dot(clf.tree_)
    # MAPTree's derived features were named with ':g' (all three 'x0 > 1000').
    X = np.array([[1000.001], [1000.002], [1000.003], [1000.004]] * 4)
    names = MAPTreeClassifier().fit(X, [0, 1, 0, 1] * 4).binary_features_
    assert list(names) == ["x0 > 1000.0015", "x0 > 1000.0025", "x0 > 1000.0035"]


def test_oblique_coefficients_keep_four_significant_digits():
    # 0.004 printed as 0 at two decimals.
    assert format_oblique(oblique_tree(), 0, decimals=0) == "0.5*x0 + 1.25*x1^2 - 3"


def test_save_json_to_a_directory_names_the_problem(tmp_path):
    # The temporary file went beside the directory and the error named it.
    with pytest.raises(IsADirectoryError, match="needs a file name, not a directory"):
        save_json(leaf_tree(), str(tmp_path) + os.sep)
    with pytest.raises(IsADirectoryError, match="not a directory"):
        save_json(leaf_tree(), tmp_path)
    assert list(tmp_path.iterdir()) == []


def test_integer_labels_beyond_int64_stay_exact():
    from optitree import StumpClassifier

    big = 2**63 + 1
    y = np.array([big, big, 1, 1], dtype=np.uint64)
    tree = StumpClassifier().fit([[0], [0], [1], [1]], y).tree_
    assert tree.predict([[0], [1]]).tolist() == [big, 1]  # not 9.223372036854776e18


@pytest.mark.parametrize(
    "call, name",
    [
        (lambda t: export_text(t, show_weights="no"), "show_weights"),
        (lambda t: export_dot(t, filled="no"), "filled"),
        (lambda t: export_dot(t, rounded=1), "rounded"),
    ],
)
def test_switches_must_be_bools(call, name):
    # A string such as "no" read as True.
    with pytest.raises(InvalidParameterError, match=f"{name} must be True or False"):
        call(threshold_tree())


def test_hand_edited_numbers_out_of_range_are_named():
    # OverflowError and RecursionError came from deep inside before.
    document = json.loads(to_json(threshold_tree()))
    edited = json.loads(json.dumps(document))
    edited["tree"]["feature"][0] = 2**64
    with pytest.raises(DataError, match=r"tree\.feature\[0\] is 18446744073709551616"):
        from_json(json.dumps(edited))
    edited = json.loads(json.dumps(document))
    edited["tree"]["threshold"][0] = 10**400
    with pytest.raises(DataError, match=r"tree\.threshold\[0\] is too large for a float"):
        from_json(json.dumps(edited))
    with pytest.raises(SchemaVersionError, match="nests deeper"):
        from_json("[" * 100_000 + "]" * 100_000)


def test_labels_that_would_print_alike_are_quoted():
    # 1 and "1", or a blank and a space, printed the same: the rules could not be told apart.
    tree = Tree(
        kind=[CATEGORY, LEAF, LEAF, LEAF],
        feature=[0, -1, -1, -1],
        threshold=[nan] * 4,
        children_ptr=[0, 3, 3, 3, 3],
        children=[1, 2, 3],
        value=[[1, 2], [1, 0], [0, 1], [0, 1]],
        categories=[[1, "1", " "]],
        class_names=["", "no"],
    )
    assert export_text(tree).splitlines() == [
        "|--- x0 = 1",
        "|   |--- class: ''",
        "|--- x0 = '1'",
        "|   |--- class: no",  # the blank class is quoted alone: nothing prints like it
        "|--- x0 = ' '",
        "|   |--- class: no",
    ]
    assert "0 -> 2 [label=\"= '1'\"]" in export_dot(tree)
    # Labels that print distinctly stay as they are.
    plain = rebuild(tree, categories=[["a", "b", "c"]], class_names=["yes", "no"])
    assert "x0 = b" in export_text(plain) and "class: yes" in export_text(plain)


def test_quoted_numpy_labels_read_as_python_values():
    tree = rebuild(threshold_tree(), class_names=None)
    text = export_text(tree, class_names=np.array(["ham ", "spam", "eggs"]))
    assert "class: 'ham '" in text and "np.str_" not in text


def test_an_empty_root_shows_the_class_its_prior_predicts():
    tree = Tree(
        kind=[LEAF],
        feature=[-1],
        threshold=[nan],
        children_ptr=[0, 0],
        children=[],
        value=[[0.0, 0.0]],
        n_features=1,
        class_prior=[1.0, 5.0],
    )
    assert tree.predict([[0.0]]).tolist() == [1]
    assert export_text(tree).startswith("|--- class: 1")


def test_blank_names_and_line_breaks_are_quoted_so_each_rule_stays_one_line():
    tree = rebuild(category_tree(), feature_names=["", " "], categories=[["a\nb", "c", "d"], None])
    lines = export_text(tree).splitlines()
    assert all(line.startswith("|") for line in lines)  # no line broken by a label
    assert "|--- '' = 'a\\nb'" in lines
    assert "\n" not in export_dot(tree).split("label=")[1].split("]")[0]


@pytest.mark.parametrize("seed", range(40))
def test_a_tree_restricted_to_its_used_features_routes_alike(seed):
    tree = random_tree(seed)
    compact, used = tree.restricted_to_used_features()
    assert compact.n_features == max(len(used), 1 if tree.n_features else 0)
    X = np.random.default_rng(seed).integers(-1, 5, size=(50, tree.n_features)).astype(float)
    np.testing.assert_array_equal(compact.apply(X[:, used]), tree.apply(X))
    np.testing.assert_array_equal(compact.predict_proba(X[:, used]), tree.predict_proba(X))


def test_names_in_other_scripts_print_as_they_are():
    # A zero-width non-joiner is part of Persian spelling: it must not turn names into escapes.
    persian = "\u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645"
    tree = rebuild(threshold_tree(), feature_names=["a", "petal length", persian])
    text = export_text(tree)
    assert "|--- petal length <= 2.45" in text and f"|   |--- {persian} <= 1.75" in text


@pytest.mark.parametrize(
    "values, shown",
    [([-1e-300, 0.0, 1e-300, 2e-300], "5e-301"), ([1e20, 2e20, 3e20, 4e20], "2.5e+20")],
)
def test_extreme_thresholds_print_in_scientific_notation(values, shown):
    # Positionally, 5e-301 took some 300 zeros; the value printed is still exact.
    tree = StumpClassifier().fit([[v] for v in values], [0, 0, 1, 1]).tree_
    assert f"x0 <= {shown}\n" in export_text(tree) and float(shown) == tree.threshold[0]
