"""The Python Tree: construction, validation through the core, routing policy, pickling."""

import json
import pickle

import numpy as np
import pandas as pd
import pytest

import optitree
from optitree.exceptions import (
    DataError,
    InvalidParameterError,
    SchemaVersionError,
    UnseenCategoryWarning,
)
from optitree.tree import CATEGORY, LEAF, OBLIQUE, THRESHOLD, Tree

NAN = float("nan")


def mixed_tree(**meta):
    """Root: 3-way category on x0 (code 2 is an empty leaf); child 0: x1 <= 0.5;
    child 1: oblique x0*x1 - 2 <= 0."""
    return Tree(
        kind=[CATEGORY, THRESHOLD, LEAF, LEAF, OBLIQUE, LEAF, LEAF, LEAF],
        feature=[0, 1, -1, -1, -1, -1, -1, -1],
        threshold=[NAN, 0.5, NAN, NAN, NAN, NAN, NAN, NAN],
        oblique_index=[-1, -1, -1, -1, 0, -1, -1, -1],
        children_ptr=[0, 3, 5, 5, 5, 7, 7, 7, 7],
        children=[1, 4, 7, 2, 3, 5, 6],
        value=[[5, 4], [3, 1], [3, 0], [0, 1], [2, 3], [2, 0], [0, 3], [0, 0]],
        oblique_ptr=[0, 2],
        term_coef=[1.0, -2.0],
        term_ptr=[0, 2, 2],
        term_features=[0, 1],
        **meta,
    )


def test_shape_queries():
    t = mixed_tree()
    assert (t.n_nodes, t.n_classes, t.n_features) == (8, 2, 2)
    assert (t.get_depth(), t.get_n_leaves(), t.get_n_splits(), t.n_splits) == (2, 5, 3, 3)
    assert t.children_of(0).tolist() == [1, 4, 7]
    assert t.parent().tolist() == [-1, 0, 1, 1, 0, 4, 4, 0]
    assert t.node_depth().tolist() == [0, 1, 2, 2, 1, 2, 2, 1]


def test_routing_follows_every_kind_of_split():
    t = mixed_tree()
    X = np.array([[0, 0.2], [0, 0.7], [1, 1.5], [1, 3.0]])
    assert t.apply(X).tolist() == [2, 3, 5, 6]
    assert t.predict(X).tolist() == [0, 1, 0, 1]
    path = t.decision_path(X).toarray()
    assert path[2].tolist() == [1, 0, 0, 0, 1, 1, 0, 0]


def test_unseen_values_and_empty_leaves_predict_from_the_nearest_informed_node():
    t = mixed_tree(class_names=["no", "yes"])
    X = np.array([[2, 0.0], [7, 0.0], [-1, 0.0], [0, NAN]])
    assert t.apply(X).tolist() == [7, 0, 0, 1]
    assert t.prediction_nodes(X).tolist() == [0, 0, 0, 1]
    assert t.predict(X).tolist() == ["no", "no", "no", "no"]
    np.testing.assert_allclose(t.predict_proba(X)[0], [5 / 9, 4 / 9])


def test_laplace_smoothing():
    t = mixed_tree()
    np.testing.assert_allclose(t.predict_proba([[0, 0.2]], laplace=1), [[4 / 5, 1 / 5]])
    with pytest.raises(InvalidParameterError, match="laplace"):
        t.predict_proba([[0, 0.2]], laplace=-1)
    with pytest.raises(InvalidParameterError, match=r"laplace must be a number in .*got None"):
        t.predict_proba([[0, 0.2]], laplace=None)


def test_class_prior_adds_pseudo_counts_where_a_node_predicts():
    t = mixed_tree(class_names=["no", "yes"], class_prior=[0.0, 3.0])
    X = np.array([[0, 0.2], [1, 3.0]])  # leaves with totals [3, 0] and [0, 3]
    np.testing.assert_allclose(t.predict_proba(X), [[0.5, 0.5], [0.0, 1.0]])
    assert t.predict(X).tolist() == ["no", "yes"]  # a tie goes to the first class
    t = mixed_tree(class_names=["no", "yes"], class_prior=[0.0, 3.5])
    assert t.predict(X).tolist() == ["yes", "yes"]
    np.testing.assert_allclose(t.predict_proba(X, laplace=1)[0], [4 / 8.5, 4.5 / 8.5])
    assert t != mixed_tree(class_names=["no", "yes"])
    assert pickle.loads(pickle.dumps(t)) == t


def test_a_tree_is_saved_with_the_oldest_schema_that_reads_it():
    # Version 2 added class_prior: without one, a tree still loads in version-1 readers.
    plain, with_prior = mixed_tree(), mixed_tree(class_prior=[1.0, 2.0])
    assert (plain.schema_version(), with_prior.schema_version()) == (1, 2)
    assert plain.__getstate__()["schema_version"] == 1
    assert "class_prior" not in plain.__getstate__()
    assert with_prior.__getstate__()["schema_version"] == 2
    for tree, version in ((plain, 1), (with_prior, 2)):
        document = json.loads(optitree.to_json(tree))
        assert document["schema_version"] == version
        assert optitree.from_json(json.dumps(document)) == tree


@pytest.mark.parametrize(
    ("prior", "message"),
    [
        ([1.0], "class_prior has 1 entries but the tree has 2 classes"),
        ([1.0, -0.5], r"class_prior\[1\] is -0.5; pseudo-counts must be finite and >= 0"),
        ([1.0, NAN], r"class_prior\[1\] is nan"),
    ],
)
def test_class_prior_is_checked(prior, message):
    with pytest.raises(DataError, match=message):
        mixed_tree(class_prior=prior)


def test_predict_from_a_dataframe_maps_category_names():
    t = mixed_tree(feature_names=["colour", "size"], categories=[["red", "green", "blue"], None])
    df = pd.DataFrame({"size": [0.2, 3.0, 0.1], "colour": ["red", "green", "purple"]})
    with pytest.warns(UnseenCategoryWarning, match="'purple' at row 2"):
        assert t.apply(df).tolist() == [2, 6, 0]


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (dict(kind=[9, 2, 0, 0, 3, 0, 0, 0]), "node 0 has kind 9"),
        (dict(feature=[5, 1, -1, -1, -1, -1, -1, -1]), "feature of node 0 = 5"),
        (dict(children=[1, 4, 7, 2, 2, 5, 6]), "parents"),
        (dict(value=[[5, 4]] * 7 + [[-1, 0]]), "node 7 has class total -1"),
        (dict(value=[[1]] * 7), "shape"),
        (dict(threshold=[NAN] * 8), "threshold node 1"),
        (dict(term_features=[0, 9]), "oblique term"),
    ],
)
def test_invalid_trees_are_rejected_with_a_named_rule(edit, message):
    t = mixed_tree()
    kwargs = {name: getattr(t, name) for name in t._arrays()}
    kwargs.update(edit)
    with pytest.raises(DataError, match=message):
        Tree(**kwargs, n_features=2)


def test_metadata_lengths_are_checked():
    with pytest.raises(DataError, match="class_names has 3 entries"):
        mixed_tree(class_names=["a", "b", "c"])


@pytest.mark.parametrize(
    ("categories", "message"),
    [
        ([None, None], r"node 0 splits feature 0 by category, but categories\[0\] is None"),
        ([["red", "green"], None], r"node 0 has 3 children.*categories\[0\] lists only 2"),
    ],
)
def test_categories_must_fit_the_multiway_splits(categories, message):
    with pytest.raises(DataError, match=message):
        mixed_tree(categories=categories)
    # One label more than children is fine: that category predicts from the node itself.
    mixed_tree(categories=[["red", "green", "blue", "grey"], None])


@pytest.mark.parametrize(
    ("meta", "message"),
    [
        (dict(feature_names={"colour", "size"}), "feature_names must be a list .* got set"),
        (dict(class_names={0: "no", 1: "yes"}), "class_names must be a list .* got dict"),
        (dict(categories=[{"red", "green", "blue"}, None]), r"categories\[0\] must .* got set"),
    ],
)
def test_names_must_come_in_order(meta, message):
    # Names are matched by position: a set or a dict would pair them by chance.
    with pytest.raises(InvalidParameterError, match=message):
        mixed_tree(**meta)


def test_wrong_column_count_is_reported():
    with pytest.raises(DataError, match="3 columns but the tree reads 2"):
        mixed_tree().predict(np.zeros((1, 3)))


def test_arrays_are_read_only_copies():
    kind = np.array([LEAF], dtype=np.int8)
    t = Tree(
        kind=kind, feature=[-1], threshold=[NAN], children_ptr=[0, 0], children=[], value=[[1.0]]
    )
    kind[0] = 3
    assert t.kind[0] == LEAF
    with pytest.raises(ValueError):
        t.kind[0] = 2


def test_pickle_round_trip_and_newer_schema_refused():
    t = mixed_tree(class_names=np.array(["no", "yes"]), feature_names=["a", "b"])
    assert pickle.loads(pickle.dumps(t)) == t
    state = t.__getstate__()
    state["schema_version"] = 99
    clone = Tree.__new__(Tree)
    with pytest.raises(SchemaVersionError, match="schema version 99"):
        clone.__setstate__(state)


def test_equality_is_structural():
    assert mixed_tree() == mixed_tree()
    assert mixed_tree() != mixed_tree(class_names=["no", "yes"])
    assert mixed_tree(class_names=[0, 1]) != mixed_tree(class_names=["0", "1"])


@pytest.mark.parametrize(
    "X, y",
    [
        (np.array([[0, 1], [1, 0], [2, 1], [1, 1]], dtype=np.int64), np.array([3, 5, 3, 5])),
        (
            pd.DataFrame({"a": ["x", "y", "x", "z"], "b": pd.Categorical(["p", "q", "q", "p"])}),
            np.array(["no", "yes", "no", "yes"]),
        ),
        (np.array([[0.5, 1], [1.5, 0], [2.5, 1], [1.5, 1]]), np.array([1.0, 2.0, 1.0, 2.0])),
    ],
)
def test_a_fitted_tree_holds_plain_python_labels_in_arrays_of_its_own(X, y):
    # Trees from a fit take over the core's arrays and the encoder's labels (Tree._adopt):
    # the labels must already be plain Python values, and nothing may be shared with the
    # estimator's encoding.
    from optitree import BranchesClassifier

    clf = BranchesClassifier(penalty=0.01).fit(X, y)
    tree = clf.tree_
    plain = (int, float, str, bool)
    assert all(type(c) in plain for c in tree.class_names)
    for cats in tree.categories:
        assert cats is None or all(type(v) in plain for v in cats)
    for cats, encoded in zip(tree.categories, clf._encoding[1]):
        assert cats is None or cats is not encoded
    assert not any(arr.flags.writeable for arr in tree._arrays().values())
    assert Tree(**{k: v for k, v in tree.__getstate__().items() if k != "schema_version"}) == tree
