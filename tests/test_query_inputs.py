"""Query trees on awkward input, and the cost identities on arbitrary (not greedy) trees."""

from __future__ import annotations

import math
import random

import numpy as np
import pandas as pd
import pytest

import optitree
from optitree import DataError, InvalidParameterError, QueryTree
from optitree.cli import main
from optitree.query import QuestionTree
from oracles import corollary3_total, cost_from_tree, random_query_problem, theorem2_total


def _random_tree(rng: random.Random, B, objects, queries):
    """A random tree that splits on random splitting queries until the objects are alone."""
    if len(objects) == 1:
        return ("leaf",)
    splitting = [q for q in queries if 0 < sum(B[i][q] for i in objects) < len(objects)]
    q = rng.choice(splitting)
    no = [i for i in objects if B[i][q] == 0]
    yes = [i for i in objects if B[i][q] == 1]
    return (q, _random_tree(rng, B, no, queries), _random_tree(rng, B, yes, queries))


def _question_tree(nested, B, prior, groups=None) -> QuestionTree:
    query, children, leaf_of = [], [], [0] * len(B)

    def add(node, objects):
        me = len(query)
        query.append(-1)
        children.append([-1, -1])
        if node[0] == "leaf":
            for i in objects:
                leaf_of[i] = me
            return me
        q = node[0]
        no = add(node[1], [i for i in objects if B[i][q] == 0])
        yes = add(node[2], [i for i in objects if B[i][q] == 1])
        query[me], children[me] = q, [no, yes]
        return me

    add(nested, list(range(len(B))))
    names = [str(i) for i in range(len(B))]
    if groups is None:
        target, target_names = list(range(len(B))), names
    else:
        labels = sorted(set(groups))
        target, target_names = [labels.index(g) for g in groups], labels
    return QuestionTree(
        query=query,
        children=children,
        leaf_of_object=leaf_of,
        prior=prior,
        target=target,
        object_names=names,
        query_names=[f"x{j}" for j in range(len(B[0]))],
        target_names=target_names,
    )


@pytest.mark.parametrize("seed", range(60))
def test_identities_on_random_splitting_trees(seed):
    rng = random.Random(seed)
    B, prior, _ = random_query_problem(rng, rng.randint(2, 8), rng.randint(3, 7))
    nested = _random_tree(rng, B, list(range(len(B))), list(range(len(B[0]))))
    tree = _question_tree(nested, B, prior)
    for lam in (1.0001, 1.5, 2.0, 3.7, 10.0):
        d = tree.decompose(lam)
        assert d.total == pytest.approx(lam**d.cost, rel=1e-9)
        assert d.total == pytest.approx(theorem2_total(B, prior, None, lam, nested), rel=1e-9)
        assert d.cost == pytest.approx(cost_from_tree(B, prior, None, nested, lam), rel=1e-9)
    d1 = tree.decompose(1.0)
    assert d1.total == pytest.approx(d1.cost, abs=1e-12)
    assert d1.cost == pytest.approx(corollary3_total(B, prior, None, nested), abs=1e-12)


def test_huge_priors_and_max_depth_are_handled():
    B = np.eye(4, dtype=np.uint8)
    # Their sum is past the largest float: shown as the product it is, not as inf.
    with pytest.warns(UserWarning, match=r"sums to 2 × 1e\+308, not 1; it was normalised"):
        est = QueryTree().fit(B, prior=[1e308, 1e308, 1.0, 1.0])
    assert est.prior_[:2] == pytest.approx([0.5, 0.5])
    deep = QueryTree(max_depth=2**40).fit(B)
    assert deep.max_depth_ == 4 and deep.tree_.n_leaves == 4


def test_bad_shapes_and_values_raise_data_errors():
    with pytest.raises(DataError, match="rectangular"):
        QueryTree().fit([[0, 1], [1]])
    with pytest.raises(DataError, match="2-D"):
        QueryTree().fit([0, 1, 1])
    with pytest.raises(DataError, match="no objects"):
        QueryTree().fit(np.zeros((0, 3)))
    with pytest.raises(DataError, match="query column 'x1'"):
        QueryTree().fit([[0, np.nan], [1, 0]])
    with pytest.raises(DataError, match="prior of object 1"):
        QueryTree().fit([[0], [1]], prior=[1.0, np.nan])
    with pytest.raises(InvalidParameterError, match="cost_base"):
        QueryTree(cost_base="2").fit([[0], [1]])


def test_pandas_inputs_are_matched_by_index():
    B = pd.DataFrame({"a": [1, 0, 0], "b": [0, 1, 0]}, index=["x", "y", "z"])
    prior = pd.Series([0.2, 0.3, 0.5], index=["z", "x", "y"])
    est = QueryTree().fit(B, prior=prior)
    assert est.prior_.tolist() == pytest.approx([0.3, 0.5, 0.2])
    with pytest.raises(DataError, match="index does not match"):
        QueryTree().fit(B, prior=pd.Series([0.2, 0.3, 0.5], index=["p", "q", "r"]))
    groups = pd.Series(["u", "v", "v"], index=["y", "z", "x"])
    est = QueryTree().fit(B, groups=groups)
    assert list(est.groups_) == ["v", "u", "v"]


def test_named_objects_are_named_in_errors(tmp_path, capsys):
    B = pd.DataFrame({"q1": [1, 0, 1], "q2": [0, 1, 1]}, index=["cat", "dog", "cow"])
    with pytest.raises(DataError, match=r"the prior of object 'dog' is -0\.3"):
        QueryTree().fit(B, prior=[0.5, -0.3, 0.8])
    with pytest.raises(
        DataError, match="the prior must be numbers, but that of object 'cow' is 'x'"
    ):
        QueryTree().fit(B, prior=["0.5", "0.3", "x"])
    with pytest.raises(DataError, match=r"query column 'q1' must hold .* object 'dog' has 2"):
        QueryTree().fit(B.assign(q1=[1, 2, 1]))
    with pytest.raises(DataError, match="'cat' names rows 0 and 2 of the query matrix"):
        QueryTree().fit(B.set_axis(["cat", "dog", "cat"]))
    path = tmp_path / "animals.csv"
    path.write_text("name,q1,q2,p\ncat,1,0,0.5\ndog,0,1,x\ncow,1,1,0.2\n", encoding="utf-8")
    assert main(["query", str(path), "--prior", "p"]) == 1
    assert "the prior must be numbers, but that of object 'dog' is 'x'" in capsys.readouterr().err


def test_identify_edge_cases():
    est = QueryTree().fit(np.eye(3, dtype=np.uint8))
    assert len(est.identify(np.zeros((0, 3)))) == 0
    with pytest.raises(DataError, match="answers must be 0/1"):
        est.identify(pd.DataFrame({"x0": ["yes"], "x1": [0], "x2": [0]}))


def test_malformed_question_trees_are_refused():
    with pytest.raises(DataError):
        QuestionTree(
            query=[0, -1, -1, 0, -1],
            children=[[1, 2], [-1, -1], [-1, -1], [4, 3], [-1, -1]],
            leaf_of_object=[1, 2],
            prior=[0.5, 0.5],
            target=[0, 1],
            object_names=["a", "b"],
            query_names=["q"],
            target_names=["a", "b"],
        )


def test_export_options_are_checked_for_question_trees():
    tree = QueryTree().fit(np.eye(3, dtype=np.uint8)).tree_
    with pytest.raises(InvalidParameterError, match="decimals"):
        optitree.export_text(tree, decimals="x")
    with pytest.raises(InvalidParameterError, match="max_depth"):
        optitree.export_text(tree, max_depth=1)
    assert "p = 0.333" in optitree.export_text(tree, decimals=3)
    with pytest.raises(InvalidParameterError, match="spacing is not used for question trees"):
        optitree.export_text(tree, spacing=5)
    for exporter in (optitree.export_text, optitree.export_dot):
        with pytest.raises(InvalidParameterError, match=r"one entry per query .* \(3\), got 2"):
            exporter(tree, feature_names=["a", "b"])
        with pytest.raises(InvalidParameterError, match=r"class_names must be a list .* set"):
            exporter(tree, class_names={"a", "b", "c"})


def test_export_options_apply_to_question_trees():
    # They were ignored without a word: a renamed query printed under its old name.
    tree = QueryTree().fit(np.array([[0, 1], [1, 0], [1, 1]]), groups=[0, 1, 1]).tree_
    text = optitree.export_text(tree, feature_names=["fever", "cough"], class_names=["flu", "cold"])
    assert text.splitlines()[:3] == [
        "Q1. fever?",
        "    no  -> flu  (p = 0.33, 1 question)",
        "    yes -> cold  (p = 0.67, 1 question)",
    ]
    assert "p =" not in optitree.export_text(tree, show_weights=False)
    dot = optitree.export_dot(
        tree, feature_names=["fever", "cough"], filled=True, rounded=False, show_weights=False
    )
    assert '0 [shape=box, label="fever?"];' in dot
    assert "p =" not in dot and dot.count("style=filled, fillcolor=") == 2
    assert "style=rounded" in optitree.export_dot(tree)


def test_question_tree_names_that_print_alike_are_quoted():
    tree = QuestionTree(
        query=[0, -1, -1],
        children=[[1, 2], [-1, -1], [-1, -1]],
        leaf_of_object=[1, 2],
        prior=[0.75, 0.25],
        target=[0, 1],
        object_names=["cat", "dog"],
        query_names=["barks"],
        target_names=[1, "1"],
    )
    text = optitree.export_text(tree, show_weights=np.False_)
    assert text.splitlines()[1:] == ["    no  -> 1  (1 question)", "    yes -> '1'  (1 question)"]
    assert "label=\"'1'\\np = 0.25\"" in optitree.export_dot(tree)


def test_a_plotted_ambiguous_leaf_names_every_object_it_holds():
    # The plot showed the general tree's majority (one object) where the text says "0 or 1".
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    B = np.array([[0, 0], [0, 0], [1, 0], [1, 1]])
    tree = QueryTree(on_unidentifiable="leaf").fit(B).tree_
    assert "0 or 1" in optitree.export_text(tree)
    try:
        artists = optitree.plot_tree(tree)
    finally:
        plt.close("all")
    texts = [a.get_text() for a in artists if hasattr(a, "get_text")]
    assert any(t.startswith("class = 0 or 1\n") for t in texts)


def test_a_plotted_question_tree_takes_the_names_given():
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    tree = QueryTree().fit(np.array([[0, 0], [0, 1], [1, 0], [1, 1]])).tree_
    try:
        artists = optitree.plot_tree(
            tree, feature_names=["fur", "fins"], class_names=["cat", "dog", "eel", "fox"]
        )
    finally:
        plt.close("all")
    texts = " ".join(a.get_text() for a in artists if hasattr(a, "get_text"))
    assert all(f"class = {name}" in texts for name in ("cat", "dog", "eel", "fox"))
    assert "fur" in texts


def test_a_plotted_question_tree_shows_probabilities_not_samples():
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    tree = QueryTree().fit(np.array([[0, 1], [1, 0], [1, 1]]), groups=[0, 1, 1]).tree_
    import matplotlib.pyplot as plt

    try:
        artists = optitree.plot_tree(tree)
    finally:
        plt.close("all")  # later tests check that plot_tree leaves no figure open
    texts = [a.get_text() for a in artists if hasattr(a, "get_text")]
    assert any("p = 0.67" in t for t in texts)
    assert not any("samples" in t or "value" in t for t in texts)


def test_decomposition_refuses_overflowing_cost_bases():
    est = QueryTree().fit(np.eye(4, dtype=np.uint8))
    with pytest.raises(InvalidParameterError, match="overflow"):
        est.cost_decomposition(1e300)
    assert math.isfinite(est.cost(1e300))


def test_cli_group_column_first(tmp_path, capsys):
    path = tmp_path / "objects.csv"
    path.write_text("class,q1,q2\nA,1,0\nB,0,1\nA,0,0\n", encoding="utf-8")
    assert main(["query", str(path), "--group", "class"]) == 0
    assert "identify the group" in capsys.readouterr().out


def test_a_sparse_matrix_is_refused_by_name():
    import scipy.sparse

    with pytest.raises(DataError, match="the query matrix is sparse"):
        QueryTree().fit(scipy.sparse.csr_matrix(np.eye(3)))
