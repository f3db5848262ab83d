"""QueryTree: query trees that identify an object or its group.

Spec: shared/specs/query-learning.md.

What is checked, and against what:

- the worked examples E1, E2 and E3 of spec §6 (chosen queries, costs, scores, the Theorem 1
  and Corollary 1/3 breakdowns, Rényi bounds, the tie at λ = 5/3, greedy suboptimality);
- random small problems (M <= 8 objects, N <= 8 queries, with and without groups) against
  the independent pure-Python references of ``oracles.py``: the exact DP optimum, the cost of
  the very tree the estimator returns, the greedy rules with their plain textbook formulas,
  Theorem 2 / Corollary 3 node by node, (exponential) Huffman on complete query sets;
- properties: bounds, Kraft equality, monotonicity in λ, invariances, depth cut-offs,
  numerical stability near λ = 1 and for huge λ;
- non-identifiable objects under each policy, the interactive session, ``identify``,
  exports, pickling, cloning, names and parameter/data validation.

The thousand-instance campaigns are marked ``slow`` (``pytest -m slow``).
"""

from __future__ import annotations

import functools
import json
import math
import pickle
import random
import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone

import optitree
from optitree import DataError, InvalidParameterError, QueryTree
from optitree.query import QuestionTree, alpha_from_lambda, lower_bound, renyi_entropy
from oracles import (
    LEAF_NODE,
    alpha_of,
    complete_query_set,
    corollary3_breakdown,
    cost_from_tree,
    exponential_huffman_cost,
    greedy_reference_tree,
    leaf_depths,
    optimal_cost,
    random_query_problem,
    renyi_entropy_bits,
    theorem2_breakdown,
    tree_leaves,
)

INF = math.inf
L = LEAF_NODE
APPROX = 1e-6  # the spec's "≈" (golden numbers are printed with 7 decimals)
TOL = 1e-9  # agreement with the oracles

# ---------------------------------------------------------------------------------------------
# The worked examples of spec §6 (0-indexed here: q1 is column 0, θ1 is row 0)
# ---------------------------------------------------------------------------------------------

E1_B = [[0, 1, 1], [1, 1, 0], [0, 1, 0], [1, 0, 0]]
E1_Y = [1, 1, 1, 2]

E2_B = [[1, 0, 0, 1], [0, 1, 0, 1], [0, 0, 1, 0], [0, 0, 0, 0]]
E2_PRIOR = [0.5, 0.2, 0.15, 0.15]
E2_GBS = (0, (1, (2, L, L), L), L)  # depths (1, 2, 3, 3)
E2_BALANCED = (3, (2, L, L), (0, L, L))  # all depths 2

E3_B = [[1, 0, 1], [1, 1, 1], [0, 0, 1], [0, 0, 0], [0, 1, 0], [1, 0, 0]]
E3_Y = [2, 1, 3, 1, 1, 2]
E3_PRIOR = [x / 32 for x in (1, 8, 2, 5, 8, 8)]
E3_GGBS = (1, (0, (2, L, L), L), L)
E3_LAMBDA_GGBS = (0, (2, L, L), (1, L, L))


# ---------------------------------------------------------------------------------------------
# Helpers
# ---------------------------------------------------------------------------------------------


def fit(B, prior=None, groups=None, **params) -> QueryTree:
    """Fit a QueryTree on plain lists (B as an int array)."""
    return QueryTree(**params).fit(
        np.asarray(B, dtype=np.int64),
        prior=None if prior is None else np.asarray(prior, dtype=float),
        groups=None if groups is None else list(groups),
    )


def nested(tree: QuestionTree, node: int = 0):
    """The oracle's nested form of a fitted tree, read from ``query`` and ``children``."""
    q = int(tree.query[node])
    if q < 0:
        return L
    no, yes = (int(c) for c in tree.children[node])
    return (q, nested(tree, no), nested(tree, yes))


def same_structure(a: QuestionTree, b: QuestionTree) -> bool:
    """Same questions, same shape, same leaf per object (names may differ)."""
    return (
        np.array_equal(a.query, b.query)
        and np.array_equal(a.children, b.children)
        and np.array_equal(a.leaf_of_object, b.leaf_of_object)
    )


def route(tree: QuestionTree, row) -> list[int]:
    """The nodes an answer row visits, root first, ending at its leaf."""
    path = [0]
    while tree.query[path[-1]] >= 0:
        path.append(int(tree.children[path[-1], int(row[int(tree.query[path[-1]])])]))
    return path


def node_objects(tree: QuestionTree, B) -> list[frozenset]:
    """For every node id, the set of objects (row indices) that reach it."""
    sets: list[set] = [set() for _ in range(tree.n_nodes)]
    for i, row in enumerate(B):
        for node in route(tree, row):
            sets[node].add(i)
    return [frozenset(s) for s in sets]


def leaf_ids(tree: QuestionTree) -> list[int]:
    return [n for n in range(tree.n_nodes) if tree.query[n] < 0]


def swap_children(tree, column: int):
    """The nested tree with the children swapped wherever ``column`` is asked."""
    if tree == L:
        return L
    q, no, yes = tree
    no, yes = swap_children(no, column), swap_children(yes, column)
    return (q, yes, no) if q == column else (q, no, yes)


def truncate(tree, depth: int):
    """The nested tree cut at ``depth`` (nodes at that depth become leaves)."""
    if tree == L or depth == 0:
        return L
    q, no, yes = tree
    return (q, truncate(no, depth - 1), truncate(yes, depth - 1))


def group_masses(prior, groups) -> list[float]:
    if groups is None:
        return list(prior)
    totals: dict = {}
    for p, g in zip(prior, groups):
        totals[g] = totals.get(g, 0.0) + p
    return list(totals.values())


def rule_for(criterion: str, lam: float, grouped: bool) -> str:
    """The oracle rule that a criterion (resolved as documented) must follow."""
    if criterion == "auto":
        if lam == INF:
            return "group-count" if grouped else "count"
        if lam == 1:
            return "ggbs" if grouped else "gbs"
        return "lambda-ggbs" if grouped else "lambda"
    return {
        "gbs": "gbs",
        "lambda-gbs": "lambda",
        "ggbs": "ggbs",
        "lambda-ggbs": "lambda-ggbs",
        "worst-case": "group-count" if grouped else "count",
    }[criterion]


def rel_close(a: float, b: float, tol: float = TOL) -> bool:
    return abs(a - b) <= tol * max(1.0, abs(a), abs(b))


@functools.cache
def problems(count: int, seed: int) -> tuple:
    """``count`` random identifiable problems ``(label, B, prior, groups)``; a third have groups.

    M in 2..8, N in ceil(log2 M)..8 (at least 1), positive normalised priors. Cached: treat as
    read-only.
    """
    rng = random.Random(seed)
    out = []
    for k in range(count):
        M = rng.randint(2, 8)
        N = rng.randint(max(1, math.ceil(math.log2(M))), 8)
        grouped = k % 3 == 2
        B, prior, groups = random_query_problem(rng, M, N, grouped, rng.randint(2, 4))
        out.append((f"seed={seed} k={k} M={M} N={N}", B, prior, groups))
    return tuple(out)


# Each default campaign has 300 problems; the slow ones 3000 with another seed.
CAMPAIGNS = [
    pytest.param(300, 11, id="300"),
    pytest.param(3000, 12, id="3000", marks=pytest.mark.slow),
]


# ---------------------------------------------------------------------------------------------
# API surface and criterion resolution
# ---------------------------------------------------------------------------------------------


def test_public_names():
    assert optitree.QueryTree is QueryTree
    assert callable(lower_bound)
    assert alpha_from_lambda(1.0) == 1.0
    assert alpha_from_lambda(2.0) == pytest.approx(0.5, abs=1e-15)
    assert alpha_from_lambda(4.0) == pytest.approx(1 / 3, abs=1e-15)
    assert alpha_from_lambda(1024.0) == pytest.approx(1 / 11, abs=1e-15)
    assert alpha_from_lambda(1.5) == pytest.approx(0.6309298, abs=APPROX)
    assert alpha_from_lambda(INF) == 0.0
    for lam in (1.0, 1.5, 2.0, 16.0, 1e10):
        assert alpha_from_lambda(lam) == pytest.approx(alpha_of(lam), rel=1e-14)


@pytest.mark.parametrize(
    "lam, grouped, expected",
    [
        (1.0, False, "gbs"),
        (1.5, False, "lambda-gbs"),
        (4.0, False, "lambda-gbs"),
        (INF, False, "worst-case"),
        (1.0, True, "ggbs"),
        (2.0, True, "lambda-ggbs"),
        (INF, True, "worst-case"),
    ],
)
def test_auto_criterion_resolution(lam, grouped, expected):
    est = fit(E1_B, groups=E1_Y if grouped else None, cost_base=lam)
    assert est.criterion_ == expected
    assert est.status_ == "greedy"


@pytest.mark.parametrize("criterion", ["gbs", "lambda-gbs", "ggbs", "lambda-ggbs", "worst-case"])
def test_explicit_criterion_is_kept(criterion):
    est = fit(E2_B, E2_PRIOR, criterion=criterion, cost_base=2.0)
    assert est.criterion_ == criterion
    assert est.status_ == "greedy"
    est = fit(E2_B, E2_PRIOR, criterion="optimal", cost_base=2.0)
    assert est.criterion_ == "optimal"
    assert est.status_ == "optimal"


def test_fitted_attributes_and_tree_arrays():
    est = fit(E2_B, E2_PRIOR, cost_base=2.0)
    assert isinstance(est.tree_, QuestionTree)
    assert est.n_objects_ == 4 and est.n_queries_ == 4
    assert est.object_names_ == ["0", "1", "2", "3"]
    assert est.query_names_ == ["x0", "x1", "x2", "x3"]
    assert est.groups_ is None
    np.testing.assert_allclose(est.prior_, E2_PRIOR, rtol=0, atol=1e-15)
    _check_tree_arrays(est, E2_B, E2_PRIOR)

    grouped = fit(E3_B, E3_PRIOR, E3_Y)
    assert list(grouped.groups_) == E3_Y
    _check_tree_arrays(grouped, E3_B, E3_PRIOR)


def _check_tree_arrays(est: QueryTree, B, prior) -> None:
    """Structural invariants of ``tree_`` and their agreement with routing the rows."""
    tree = est.tree_
    n = tree.n_nodes
    assert tree.query.dtype == np.int64 and tree.query.shape == (n,)
    assert tree.children.dtype == np.int64 and tree.children.shape == (n, 2)
    leaves = leaf_ids(tree)
    assert tree.n_leaves == len(leaves)
    assert n == 2 * tree.n_leaves - 1  # full binary tree
    assert tree.depth[0] == 0
    assert tree.mass[0] == pytest.approx(1.0, abs=1e-12)
    for node in range(n):
        if tree.query[node] < 0:
            assert list(tree.children[node]) == [-1, -1]
            continue
        no, yes = (int(c) for c in tree.children[node])
        assert tree.depth[no] == tree.depth[yes] == tree.depth[node] + 1
        assert tree.mass[no] + tree.mass[yes] == pytest.approx(tree.mass[node], abs=1e-12)
    reached = node_objects(tree, B)
    for node in range(n):
        assert tree.mass[node] == pytest.approx(sum(prior[i] for i in reached[node]), abs=1e-12)
    for i, row in enumerate(B):
        assert int(tree.leaf_of_object[i]) == route(tree, row)[-1]


def test_single_object_and_pure_root():
    est = fit([[0, 1]])
    assert est.tree_.n_nodes == 1 and est.tree_.n_leaves == 1
    assert est.cost_ == 0 and est.expected_queries_ == 0 and est.max_queries_ == 0
    assert est.lower_bound_ == 0
    grouped = fit([[0, 1], [1, 0]], groups=["a", "a"], cost_base=2.0)
    assert grouped.tree_.n_nodes == 1 and grouped.cost_ == 0
    assert list(grouped.identify(np.array([[0, 1], [1, 0]]))) == ["a", "a"]


# ---------------------------------------------------------------------------------------------
# E1: the paper's toy example
# ---------------------------------------------------------------------------------------------


def test_e1_gbs_object_identification():
    est = fit(E1_B)
    assert est.criterion_ == "gbs"
    assert nested(est.tree_) == (0, (2, L, L), (1, L, L))
    assert est.cost_ == pytest.approx(2.0, abs=1e-12)
    for lam in (1.2, 1.5, 2.0, 4.0, 100.0, INF):
        assert est.cost(lam) == pytest.approx(2.0, abs=1e-12)
    assert est.expected_queries_ == pytest.approx(2.0, abs=1e-12) and est.max_queries_ == 2
    assert est.lower_bound_ == pytest.approx(2.0, abs=1e-12)  # = H(Π), tight


def test_e1_gbs_with_group_stopping():
    est = fit(E1_B, groups=E1_Y, criterion="gbs")
    assert nested(est.tree_) == (0, L, (1, L, L))  # the tree of the paper's Figure 2
    assert est.cost_ == pytest.approx(1.5, abs=1e-12)
    assert est.cost(2.0) == pytest.approx(math.log2(3), abs=1e-12)
    assert est.cost(2.0) == pytest.approx(1.5849625, abs=APPROX)
    assert est.cost(4.0) == pytest.approx(1.6609640, abs=APPROX)
    assert est.lower_bound_ == pytest.approx(0.8112781, abs=APPROX)
    dec = est.cost_decomposition()  # Corollary 3 at λ = 1
    assert dec.cost_base == 1
    assert dec.entropy_term == pytest.approx(0.8112781, abs=APPROX)
    rows = dec.nodes.sort_values("depth")
    np.testing.assert_allclose(rows["bracket"], [0.6887219, 0.0], atol=APPROX)
    assert dec.leaf_correction == pytest.approx(0.0, abs=1e-12)
    assert dec.total == pytest.approx(1.5, abs=1e-12)
    assert dec.cost == pytest.approx(1.5, abs=1e-12)


def test_e1_ggbs_and_lambda_ggbs_pick_q2():
    est = fit(E1_B, groups=E1_Y)
    assert est.criterion_ == "ggbs"
    assert nested(est.tree_) == (1, L, L)  # one query suffices, as the paper notes
    for lam in (1.0, 2.0, 4.0, INF):
        assert est.cost(lam) == pytest.approx(1.0, abs=1e-12)
    for lam in (2.0, 4.0):
        est = fit(E1_B, groups=E1_Y, cost_base=lam)
        assert est.criterion_ == "lambda-ggbs"
        assert nested(est.tree_) == (1, L, L)
        assert est.cost_ == pytest.approx(1.0, abs=1e-12)
        root = est.cost_decomposition().nodes.sort_values("depth").iloc[0]
        assert root["score"] == pytest.approx(1.0, abs=APPROX)  # C(q2) = 1 at λ = 2 and 4
    est = fit(E1_B, groups=E1_Y, cost_base=INF)
    assert est.criterion_ == "worst-case"
    assert nested(est.tree_) == (1, L, L)
    assert est.cost_ == 1 and est.max_queries_ == 1
    assert est.lower_bound_ == pytest.approx(1.0, abs=1e-12)  # log2(2 groups)
    assert fit(E1_B, groups=E1_Y, criterion="optimal", cost_base=2.0).cost_ == pytest.approx(1.0)


# ---------------------------------------------------------------------------------------------
# E2: λ-GBS switches between the GBS tree and the balanced tree
# ---------------------------------------------------------------------------------------------

E2_GBS_COSTS = {1.0: 1.8, 1.2: 1.8705043, 1.5: 1.9585485, 2.0: 2.0703893, 4.0: 2.3044046, INF: 3}


def test_e2_gbs_tree_and_costs():
    est = fit(E2_B, E2_PRIOR)
    assert est.criterion_ == "gbs"
    assert nested(est.tree_) == E2_GBS
    assert [int(est.tree_.depth[est.tree_.leaf_of_object[i]]) for i in range(4)] == [1, 2, 3, 3]
    assert est.cost_ == pytest.approx(1.8, abs=1e-12)
    assert est.expected_queries_ == pytest.approx(1.8, abs=1e-12)
    assert est.max_queries_ == 3
    for lam, value in E2_GBS_COSTS.items():
        assert est.cost(lam) == pytest.approx(value, abs=APPROX)
        if lam not in (1.0, INF):
            exact = math.log(0.5 * lam + 0.2 * lam**2 + 0.3 * lam**3, lam)
            assert est.cost(lam) == pytest.approx(exact, abs=1e-12)
    # The same GBS tree evaluated at the estimator's own λ
    assert fit(E2_B, E2_PRIOR, criterion="gbs", cost_base=2.0).cost_ == pytest.approx(
        2.0703893, abs=APPROX
    )


@pytest.mark.parametrize(
    "lam, tree, root_score",
    [
        (1.2, E2_GBS, 1.166185),
        (1.5, E2_GBS, 1.447381),
        (2.0, E2_BALANCED, 1.932456),
        (4.0, E2_BALANCED, 3.819535),
    ],
)
def test_e2_lambda_gbs_switch(lam, tree, root_score):
    est = fit(E2_B, E2_PRIOR, cost_base=lam)
    assert est.criterion_ == "lambda-gbs"
    assert nested(est.tree_) == tree
    expected = E2_GBS_COSTS[lam] if tree == E2_GBS else 2.0
    assert est.cost_ == pytest.approx(expected, abs=APPROX)
    root = est.cost_decomposition().nodes.sort_values("depth").iloc[0]
    assert root["score"] == pytest.approx(root_score, abs=APPROX)
    # λ-GBS is optimal on E2: the optimum is min(GBS tree, balanced tree)
    best = fit(E2_B, E2_PRIOR, criterion="optimal", cost_base=lam)
    assert best.cost_ == pytest.approx(min(E2_GBS_COSTS[lam], 2.0), abs=APPROX)
    assert est.cost_ == pytest.approx(best.cost_, abs=1e-12)


def test_e2_worst_case_and_optimum_at_limits():
    est = fit(E2_B, E2_PRIOR, cost_base=INF)
    assert est.criterion_ == "worst-case"
    assert nested(est.tree_) == E2_BALANCED
    assert est.cost_ == 2 and est.max_queries_ == 2
    assert est.lower_bound_ == pytest.approx(2.0, abs=1e-12)
    assert fit(E2_B, E2_PRIOR, criterion="optimal", cost_base=INF).cost_ == 2
    assert fit(E2_B, E2_PRIOR, criterion="optimal").cost_ == pytest.approx(1.8, abs=1e-12)
    assert fit(E2_B, E2_PRIOR, criterion="worst-case").cost_ == pytest.approx(2.0, abs=1e-12)


def test_e2_tie_at_five_thirds_first():
    est = fit(E2_B, E2_PRIOR, cost_base=5 / 3)
    assert int(est.tree_.query[0]) == 0
    assert nested(est.tree_) == E2_GBS
    assert est.cost_ == pytest.approx(2.0, abs=1e-12)
    root = est.cost_decomposition().nodes.sort_values("depth").iloc[0]
    assert root["score"] == pytest.approx(1.6189750, abs=APPROX)


def test_e2_tie_at_five_thirds_random():
    roots = set()
    for seed in range(40):
        a = fit(E2_B, E2_PRIOR, cost_base=5 / 3, tie_break="random", random_state=seed)
        b = fit(E2_B, E2_PRIOR, cost_base=5 / 3, tie_break="random", random_state=seed)
        assert a.tree_ == b.tree_, seed  # reproducible with a seed
        assert a.cost_ == pytest.approx(2.0, abs=1e-12), seed  # both trees cost exactly 2
        roots.add(int(a.tree_.query[0]))
    assert roots == {0, 3}


def test_e2_renyi_bounds():
    bounds = {
        1.0: 1.7854753,
        1.2: 1.8315644,
        1.5: 1.8670121,
        5 / 3: 1.8791009,
        2.0: 1.8955822,
        4.0: 1.9313526,
        INF: 2.0,
    }
    previous = -INF
    for lam, value in bounds.items():
        assert fit(E2_B, E2_PRIOR, cost_base=lam).lower_bound_ == pytest.approx(value, abs=APPROX)
        h = renyi_entropy(np.array(E2_PRIOR), alpha_from_lambda(lam))
        assert h == pytest.approx(value, abs=APPROX)
        assert h == pytest.approx(renyi_entropy_bits(E2_PRIOR, alpha_of(lam)), abs=1e-12)
        assert h >= previous - 1e-15  # non-decreasing in λ
        previous = h


def test_e2_theorem1_breakdown():
    est = fit(E2_B, E2_PRIOR, criterion="gbs")
    dec = est.cost_decomposition(cost_base=2.0)
    assert dec.cost_base == 2.0
    assert dec.entropy_term == pytest.approx(3.7207210, abs=APPROX)
    rows = dec.nodes.sort_values("depth")
    assert list(rows["depth"]) == [0, 1, 2]
    np.testing.assert_allclose(rows["mass"], [1.0, 0.5, 0.3], atol=1e-12)
    np.testing.assert_allclose(rows["diversity"], [3.7207210, 2.9856406, 2.0], atol=APPROX)
    np.testing.assert_allclose(rows["diversity_no"], [2.9856406, 2.0, 1.0], atol=APPROX)
    np.testing.assert_allclose(rows["diversity_yes"], [1.0, 1.0, 1.0], atol=APPROX)
    np.testing.assert_allclose(rows["score"], [1.9928203, 1.6, 1.0], atol=APPROX)
    # The spec prints the weighted terms π_a·bracket: -0.7279006 + 0.3071797 + 0.9; the
    # bracket itself is (λ-1)λ^d - D + C (it can be negative: only the total gap is >= 0).
    np.testing.assert_allclose(
        rows["mass"] * rows["bracket"], [-0.7279006, 0.3071797, 0.9], atol=APPROX
    )
    np.testing.assert_allclose(rows["bracket"], [-0.7279006, 0.6143594, 3.0], atol=APPROX)
    assert dec.leaf_correction == pytest.approx(0.0, abs=1e-12)
    assert dec.total == pytest.approx(4.2, abs=1e-12)
    assert dec.cost == pytest.approx(math.log2(4.2), abs=1e-12)
    assert dec.total == pytest.approx(2.0**dec.cost, rel=1e-12)


def test_e2_corollary1_breakdown():
    dec = fit(E2_B, E2_PRIOR).cost_decomposition()
    assert dec.cost_base == 1
    assert dec.entropy_term == pytest.approx(1.7854753, abs=APPROX)
    gap = float((dec.nodes["mass"] * dec.nodes["bracket"]).sum())
    assert gap == pytest.approx(0.0145247, abs=APPROX)  # 0.5·(1 - H(0.6))
    assert dec.leaf_correction == pytest.approx(0.0, abs=1e-12)
    assert dec.total == pytest.approx(1.8, abs=1e-12) and dec.cost == pytest.approx(1.8)


def test_cost_decomposition_rejects_infinite_lambda():
    with pytest.raises(InvalidParameterError):
        fit(E2_B, E2_PRIOR).cost_decomposition(cost_base=INF)
    with pytest.raises(InvalidParameterError):
        fit(E2_B, E2_PRIOR, cost_base=INF).cost_decomposition()


# ---------------------------------------------------------------------------------------------
# E3: λ-GGBS versus GGBS, where greedy is not optimal
# ---------------------------------------------------------------------------------------------


def test_e3_ggbs():
    est = fit(E3_B, E3_PRIOR, E3_Y)
    assert est.criterion_ == "ggbs"
    assert nested(est.tree_) == E3_GGBS
    assert est.cost_ == pytest.approx(55 / 32, abs=1e-12)
    for lam, value in [(1.5, 1.8544922), (2.0, 1.9541963), (4.0, 2.1787760), (INF, 3.0)]:
        assert est.cost(lam) == pytest.approx(value, abs=APPROX)
    assert est.lower_bound_ == pytest.approx(1.1635003, abs=APPROX)
    dec = est.cost_decomposition()
    assert dec.entropy_term == pytest.approx(1.1635003, abs=APPROX)
    rows = dec.nodes.sort_values("depth")
    np.testing.assert_allclose(rows["mass"], [1.0, 0.5, 0.21875], atol=1e-12)
    np.testing.assert_allclose(rows["bracket"], [0.5196570, 0.0113006, 0.1368794], atol=APPROX)
    assert dec.total == pytest.approx(55 / 32, abs=1e-12)
    # GGBS's tree is optimal at λ = 1
    assert fit(E3_B, E3_PRIOR, E3_Y, criterion="optimal").cost_ == pytest.approx(55 / 32)


def test_e3_lambda_ggbs_and_suboptimality():
    est = fit(E3_B, E3_PRIOR, E3_Y, cost_base=2.0)
    assert est.criterion_ == "lambda-ggbs"
    assert nested(est.tree_) == E3_LAMBDA_GGBS
    assert est.cost_ == pytest.approx(2.0, abs=1e-12)
    scores = _scores_by_objects(est, E3_B)
    assert scores[frozenset(range(6))] == pytest.approx(1.8490188, abs=APPROX)
    assert scores[frozenset({2, 3, 4})] == pytest.approx(1.0, abs=APPROX)  # q3 at {θ3,θ4,θ5}
    assert scores[frozenset({0, 1, 5})] == pytest.approx(1.0, abs=APPROX)  # q2 at {θ1,θ2,θ6}
    best = fit(E3_B, E3_PRIOR, E3_Y, criterion="optimal", cost_base=2.0)
    assert best.cost_ == pytest.approx(1.9541963, abs=APPROX)
    assert est.cost_ > best.cost_ + 0.04  # λ-GGBS is strictly suboptimal at λ = 2
    ggbs_at_2 = fit(E3_B, E3_PRIOR, E3_Y, criterion="ggbs", cost_base=2.0)
    assert ggbs_at_2.cost_ == pytest.approx(1.9541963, abs=APPROX)

    at4 = fit(E3_B, E3_PRIOR, E3_Y, cost_base=4.0)
    assert int(at4.tree_.query[0]) == 0
    assert at4.cost_ == pytest.approx(2.0, abs=1e-12)
    assert fit(E3_B, E3_PRIOR, E3_Y, criterion="optimal", cost_base=4.0).cost_ == pytest.approx(2.0)
    at15 = fit(E3_B, E3_PRIOR, E3_Y, cost_base=1.5)
    assert int(at15.tree_.query[0]) == 1
    worst = fit(E3_B, E3_PRIOR, E3_Y, cost_base=INF)
    assert int(worst.tree_.query[0]) == 0
    assert worst.lower_bound_ == pytest.approx(math.log2(3), abs=1e-12)
    for lam, value in [(1.5, 1.2863920), (2.0, 1.3388205), (4.0, 1.4128339)]:
        assert fit(E3_B, E3_PRIOR, E3_Y, cost_base=lam).lower_bound_ == pytest.approx(
            value, abs=APPROX
        )


def _scores_by_objects(est: QueryTree, B) -> dict:
    """The decomposition's ``score`` column keyed by the object set of each internal node."""
    sets = node_objects(est.tree_, B)
    nodes = est.cost_decomposition().nodes
    return {sets[int(n)]: float(s) for n, s in zip(nodes["node"], nodes["score"])}


# ---------------------------------------------------------------------------------------------
# Tightness cases (spec §6, item 6)
# ---------------------------------------------------------------------------------------------


def test_tightness_uniform_complete_set():
    B8 = complete_query_set(8)  # 8 objects, all 254 proper non-empty subsets
    for lam in (1.0, 1.5, 2.0, 4.0, 10.0, INF):
        est = fit(B8, cost_base=lam)
        assert est.cost_ == pytest.approx(3.0, abs=1e-12)
        assert est.lower_bound_ == pytest.approx(3.0, abs=1e-12)


def test_tightness_dyadic_prior():
    B = complete_query_set(4)
    prior = [0.5, 0.25, 0.125, 0.125]
    est = fit(B, prior)
    assert est.cost_ == pytest.approx(1.75, abs=1e-15)
    assert est.lower_bound_ == pytest.approx(1.75, abs=1e-15)
    best = fit(B, prior, criterion="optimal", cost_base=2.0)
    assert best.cost_ == pytest.approx(2.0, abs=1e-12)
    assert best.lower_bound_ == pytest.approx(1.8735036, abs=APPROX)


# ---------------------------------------------------------------------------------------------
# Random problems against the oracles
# ---------------------------------------------------------------------------------------------

LAMS_ALL = (1.0, 1.5, 2.0, 4.0, INF)


@pytest.mark.parametrize("count, seed", CAMPAIGNS)
def test_optimal_matches_dp_and_orders_the_bounds(count, seed):
    for k, (label, B, prior, groups) in enumerate(problems(count, seed)):
        lams = LAMS_ALL if count <= 300 else (LAMS_ALL[k % len(LAMS_ALL)],)
        for lam in lams:
            greedy = fit(B, prior, groups, cost_base=lam)
            best = fit(B, prior, groups, criterion="optimal", cost_base=lam)
            assert best.status_ == "optimal"
            expected = optimal_cost(B, prior, groups, lam)
            assert rel_close(best.cost_, expected), (label, lam, best.cost_, expected)
            # The optimum's own tree is worth what it claims
            own = cost_from_tree(B, prior, groups, nested(best.tree_), lam)
            assert rel_close(best.cost_, own), (label, lam)
            assert greedy.cost_ >= best.cost_ - TOL, (label, lam)
            assert best.cost_ >= best.lower_bound_ - TOL, (label, lam)
            assert greedy.lower_bound_ == pytest.approx(best.lower_bound_, abs=1e-12)
            if lam == INF:
                n = len(set(groups)) if groups is not None else len(B)
                assert best.lower_bound_ == pytest.approx(math.log2(n), abs=1e-12)
            else:
                h = renyi_entropy_bits(group_masses(prior, groups), alpha_of(lam))
                assert best.lower_bound_ == pytest.approx(h, abs=1e-9), (label, lam)


@pytest.mark.parametrize("M", [2, 3, 4, 5])
def test_optimal_on_complete_sets_is_huffman(M):
    rng = random.Random(100 + M)
    B = complete_query_set(M)
    for _ in range(8):
        prior = [rng.uniform(0.01, 1.0) for _ in range(M)]
        total = sum(prior)
        prior = [p / total for p in prior]
        for lam in (1.0, 1.5, 2.0, 4.0, 37.0):
            est = fit(B, prior, criterion="optimal", cost_base=lam)
            assert est.cost_ == pytest.approx(exponential_huffman_cost(prior, lam), abs=1e-12)
        est = fit(B, prior, criterion="optimal", cost_base=INF)
        assert est.cost_ == math.ceil(math.log2(M))


@pytest.mark.parametrize("count, seed", CAMPAIGNS)
def test_reported_costs_are_the_costs_of_the_returned_tree(count, seed):
    lams = (1.0, 1.5, 2.0, 4.0, INF, 1.01, 10.0)
    for k, (label, B, prior, groups) in enumerate(problems(count, seed)):
        lam = lams[k % len(lams)]
        est = fit(B, prior, groups, cost_base=lam)
        tree = nested(est.tree_)
        assert est.cost_ == pytest.approx(cost_from_tree(B, prior, groups, tree, lam), rel=TOL)
        assert est.expected_queries_ == pytest.approx(
            cost_from_tree(B, prior, groups, tree, 1.0), rel=TOL
        )
        assert est.max_queries_ == cost_from_tree(B, prior, groups, tree, INF)
        assert isinstance(est.max_queries_, (int, np.integer)), label
        for other in (1.0, 1.3, 3.0, INF):
            assert est.cost(other) == pytest.approx(
                cost_from_tree(B, prior, groups, tree, other), rel=TOL
            ), (label, other)
        # Re-evaluation under another prior (e.g. a misspecified one)
        rng = random.Random(k)
        other_prior = [rng.uniform(0.05, 1.0) for _ in B]
        s = sum(other_prior)
        other_prior = [p / s for p in other_prior]
        assert est.cost(2.0, prior=np.array(other_prior)) == pytest.approx(
            cost_from_tree(B, other_prior, groups, tree, 2.0), rel=TOL
        ), label
        assert est.cost(prior=np.array(other_prior)) == pytest.approx(
            cost_from_tree(B, other_prior, groups, tree, lam), rel=TOL
        ), label
        depths = leaf_depths(B, prior, groups, tree)
        assert [int(est.tree_.depth[est.tree_.leaf_of_object[i]]) for i in range(len(B))] == depths
        if k < 40:
            _check_tree_arrays(est, B, prior)


@pytest.mark.parametrize("count, seed", CAMPAIGNS)
def test_greedy_trees_match_the_reference_rules(count, seed):
    compared = 0
    for k, (label, B, prior, groups) in enumerate(problems(count, seed)):
        grouped = groups is not None
        lam = (1.5, 2.0, 4.0)[k % 3]
        runs = [("auto", lam), ("gbs", 1.0), ("ggbs", 1.0), ("lambda-ggbs", lam)]
        runs += [("lambda-gbs", lam), ("gbs", lam)]
        for criterion, fit_lam in runs:
            est = fit(B, prior, groups, criterion=criterion, cost_base=fit_lam)
            rule = rule_for(criterion, fit_lam, grouped)
            expected, unique = greedy_reference_tree(
                B, prior, groups, fit_lam, rule, return_unique=True
            )
            if unique:
                compared += 1
                assert nested(est.tree_) == expected, (label, criterion, fit_lam)
        # The count rules have exact integer scores: "first" must match even among ties.
        est = fit(B, prior, groups, criterion="worst-case")
        expected = greedy_reference_tree(
            B, prior, groups, INF, rule_for("worst-case", INF, grouped)
        )
        assert nested(est.tree_) == expected, label
        assert fit(B, prior, groups, cost_base=INF).tree_ == est.tree_, label
    assert compared >= 5 * count  # most random instances have unique minimisers


@pytest.mark.parametrize("count, seed", CAMPAIGNS)
def test_singleton_groups_reduce_to_object_identification(count, seed):
    for k, (label, B, prior, groups) in enumerate(problems(count, seed)):
        if groups is not None:
            continue
        lam = (1.0, 2.0, 4.0, INF)[k % 4]
        plain = fit(B, prior, cost_base=lam)
        singletons = fit(B, prior, list(range(len(B))), cost_base=lam)
        assert singletons.cost_ == pytest.approx(plain.cost_, rel=TOL), label
        _, unique = greedy_reference_tree(
            B, prior, None, lam, rule_for("auto", lam, False), return_unique=True
        )
        if unique:
            assert same_structure(singletons.tree_, plain.tree_), label


@pytest.mark.parametrize("count, seed", CAMPAIGNS)
def test_theorem2_and_corollary3_node_by_node(count, seed):
    lams = (1.0, 1.5, 2.0, 3.7, 10.0, 100.0)
    for k, (label, B, prior, groups) in enumerate(problems(count, seed)):
        lam = lams[k % len(lams)]
        est = fit(B, prior, groups, cost_base=(2.0, 1.0, INF)[k % 3])
        _check_decomposition(est, B, prior, groups, lam, label)


def _check_decomposition(est: QueryTree, B, prior, groups, lam: float, label) -> None:
    """Compare ``cost_decomposition(lam)`` with the oracle's breakdown of the same tree."""
    tree = nested(est.tree_)
    dec = est.cost_decomposition(cost_base=lam)
    cost = cost_from_tree(B, prior, groups, tree, lam)
    assert dec.cost_base == lam
    assert dec.cost == pytest.approx(cost, rel=TOL), label
    if lam == 1:
        oracle = corollary3_breakdown(B, prior, groups, tree)
        assert dec.total == pytest.approx(dec.cost, rel=TOL), label
        columns = ("depth", "mass", "bracket")
    else:
        oracle = theorem2_breakdown(B, prior, groups, lam, tree)
        assert dec.total == pytest.approx(lam**dec.cost, rel=TOL), (label, lam)
        columns = (
            "depth",
            "mass",
            "diversity",
            "diversity_no",
            "diversity_yes",
            "score",
            "bracket",
        )
    assert dec.total == pytest.approx(oracle["total"], rel=TOL), (label, lam)
    assert dec.entropy_term == pytest.approx(oracle["entropy_term"], rel=TOL), (label, lam)
    assert dec.leaf_correction == pytest.approx(oracle["leaf_correction"], rel=TOL, abs=1e-12)
    gap = float((dec.nodes["mass"] * dec.nodes["bracket"]).sum())
    assert dec.total == pytest.approx(dec.entropy_term + gap - dec.leaf_correction, rel=TOL)
    by_set = {n["objects"]: n for n in oracle["nodes"]}
    sets = node_objects(est.tree_, B)
    assert len(dec.nodes) == len(oracle["nodes"]) == est.tree_.n_nodes - est.tree_.n_leaves
    for _, row in dec.nodes.iterrows():
        node = int(row["node"])
        assert est.tree_.query[node] >= 0
        expected = by_set[sets[node]]
        for column in columns:
            assert row[column] == pytest.approx(expected[column], rel=TOL, abs=1e-12), (
                label,
                lam,
                node,
                column,
            )


@pytest.mark.parametrize("count, seed", CAMPAIGNS)
def test_kraft_monotonicity_and_limits(count, seed):
    grid = (1.0, 1 + 1e-6, 1.01, 1.5, 2.0, 3.0, 10.0, 100.0, 1e6, 1e50, INF)
    for k, (label, B, prior, groups) in enumerate(problems(count, seed)):
        est = fit(B, prior, groups, cost_base=(1.0, 2.0, 4.0, INF)[k % 4])
        tree = est.tree_
        # Every internal node has two non-empty children: Kraft's inequality is an equality.
        assert math.fsum(2.0 ** -int(tree.depth[n]) for n in leaf_ids(tree)) == 1.0, label
        assert tree.depth.max() <= min(len(B) - 1, len(B[0])), label
        costs = [est.cost(lam) for lam in grid]
        assert all(math.isfinite(c) for c in costs), label
        assert costs[0] == pytest.approx(est.expected_queries_, rel=1e-12), label
        assert costs[-1] == est.max_queries_, label
        for a, b in zip(costs, costs[1:]):
            assert a <= b + 1e-9, (label, costs)


@pytest.mark.parametrize("count, seed", CAMPAIGNS)
def test_invariances(count, seed):
    for k, (label, B, prior, groups) in enumerate(problems(count, seed)):
        if k % 3 == 0 and count > 300:
            continue
        lam = (1.0, 2.0, 4.0, INF)[k % 4]
        base = fit(B, prior, groups, cost_base=lam)
        tree = nested(base.tree_)

        # Scaling the prior changes nothing (it is normalised, with a warning)
        with pytest.warns(UserWarning):
            scaled = fit(B, [7.3 * p for p in prior], groups, cost_base=lam)
        assert nested(scaled.tree_) == tree, label
        assert scaled.cost_ == pytest.approx(base.cost_, rel=1e-12), label

        # Complementing a column keeps the scores: same tree with children swapped there
        j = k % len(B[0])
        flipped = [[*row[:j], 1 - row[j], *row[j + 1 :]] for row in B]
        comp = fit(flipped, prior, groups, cost_base=lam)
        assert nested(comp.tree_) == swap_children(tree, j), (label, j)
        assert comp.cost_ == pytest.approx(base.cost_, rel=1e-12), label

        # Permuting the objects (rows, prior and labels together) keeps the queries asked
        perm = list(range(len(B)))
        random.Random(k).shuffle(perm)
        permuted = fit(
            [B[i] for i in perm],
            [prior[i] for i in perm],
            None if groups is None else [groups[i] for i in perm],
            cost_base=lam,
        )
        assert nested(permuted.tree_) == tree, label
        assert permuted.cost_ == pytest.approx(base.cost_, rel=1e-12), label
        assert permuted.lower_bound_ == pytest.approx(base.lower_bound_, rel=1e-12), label


@pytest.mark.parametrize("count, seed", CAMPAIGNS)
def test_max_depth_cuts_the_greedy_tree(count, seed):
    for k, (label, B, prior, groups) in enumerate(problems(count, seed)):
        if k % 2:
            continue
        lam = (1.0, 2.0, 4.0)[k % 3]
        full = nested(fit(B, prior, groups, cost_base=lam).tree_)
        depth = 1 + k % 3
        est = fit(B, prior, groups, cost_base=lam, max_depth=depth)
        assert est.tree_.depth.max() <= depth, label
        # The score does not depend on depth, so the cut tree is the full tree truncated.
        assert nested(est.tree_) == truncate(full, depth), label
        if lam > 1:
            _check_decomposition(est, B, prior, groups, lam, label)
        _check_decomposition(est, B, prior, groups, 1.0, label)
        best = fit(B, prior, groups, criterion="optimal", cost_base=lam, max_depth=depth)
        expected = optimal_cost(B, prior, groups, lam, max_depth=depth)
        assert best.cost_ == pytest.approx(expected, rel=TOL), label
        assert best.tree_.depth.max() <= depth, label


# ---------------------------------------------------------------------------------------------
# Numerical stability near λ = 1 and for huge λ
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("lam", [1 + 1e-9, 1 + 1e-12])
@pytest.mark.parametrize("count, seed", CAMPAIGNS)
def test_lambda_just_above_one_builds_the_gbs_tree(lam, count, seed):
    # At λ = 1 + 1e-12 the raw C_a of every query agree to ~1e-13, inside the 1e-12 tie
    # tolerance: only the continuous score of spec §3.8 still tells them apart.
    compared = 0
    for label, B, prior, groups in problems(count, seed):
        est = fit(B, prior, groups, cost_base=lam)
        assert est.criterion_ == ("lambda-ggbs" if groups is not None else "lambda-gbs")
        rule = "ggbs" if groups is not None else "gbs"
        # The continuous score differs from the λ = 1 one by O(λ - 1): demand a clear margin.
        expected, unique = greedy_reference_tree(
            B, prior, groups, 1.0, rule, return_unique=True, unique_tol=1e-6
        )
        if unique:
            compared += 1
            assert nested(est.tree_) == expected, label
        assert math.isfinite(est.cost_)
        assert est.cost_ == pytest.approx(est.expected_queries_, abs=1e-6), label
        h = renyi_entropy_bits(group_masses(prior, groups), 1.0)
        assert est.lower_bound_ == pytest.approx(h, abs=1e-7), label
    assert compared >= count // 2


def test_renyi_entropy_is_stable_near_alpha_one():
    p = np.array([0.4, 0.3, 0.2, 0.1])
    shannon = renyi_entropy(p, 1.0)
    assert shannon == pytest.approx(renyi_entropy_bits(list(p), 1.0), abs=1e-15)
    for lam in (1 + 1e-9, 1 + 1e-12):
        # The textbook formula is off by ~1e-5 at λ = 1 + 1e-12; the stable one by ~1e-13.
        h = renyi_entropy(p, alpha_from_lambda(lam))
        assert abs(h - shannon) < 1e-9
        assert h == pytest.approx(renyi_entropy_bits(list(p), alpha_of(lam)), abs=1e-11)
    assert renyi_entropy(p, 0.0) == pytest.approx(2.0, abs=1e-15)
    assert renyi_entropy(np.array([0.5, 0.5, 0.0]), 0.0) == pytest.approx(1.0, abs=1e-15)


@pytest.mark.parametrize("lam", [2.0**200, 1e50])
@pytest.mark.parametrize("count, seed", CAMPAIGNS)
def test_huge_lambda_is_finite_and_follows_the_count_rule(lam, count, seed):
    compared = 0
    for label, B, prior, groups in problems(count, seed):
        est = fit(B, prior, groups, cost_base=lam)
        assert math.isfinite(est.cost_) and math.isfinite(est.lower_bound_), label
        assert est.expected_queries_ - 1e-12 <= est.cost_ <= est.max_queries_ + 1e-12, label
        n = len(set(groups)) if groups is not None else len(B)
        assert est.lower_bound_ <= math.log2(n) + 1e-12, label
        rule = "group-count" if groups is not None else "count"
        expected, unique = greedy_reference_tree(B, prior, groups, INF, rule, return_unique=True)
        if unique:
            compared += 1
            assert nested(est.tree_) == expected, label
        assert est.cost_ == pytest.approx(
            cost_from_tree(B, prior, groups, nested(est.tree_), lam), rel=1e-9
        ), label
    assert compared >= count // 10


def test_zero_prior_is_refused_at_fit_but_allowed_for_evaluation():
    with pytest.raises(DataError, match=r"prior of object 2 is 0\.0"):
        fit(E2_B, [0.5, 0.5, 0.0, 0.0])
    # Evaluating a fitted tree under a prior with zeros is well defined: zero-mass leaves
    # count in neither the expected nor the worst-case number of questions.
    est = fit(E2_B, [0.5, 0.2, 0.15, 0.15])
    prior = [0.5, 0.5, 0.0, 0.0]
    depths = [int(est.tree_.depth[est.tree_.leaf_of_object[i]]) for i in range(4)]
    assert est.cost(INF, prior=prior) == max(d for d, p in zip(depths, prior) if p > 0)
    assert est.cost(1.0, prior=prior) == pytest.approx(0.5 * depths[0] + 0.5 * depths[1])


def test_entropy_bound_holds_with_ambiguous_leaves():
    # Two pairs of identical rows: the bound is over what can be told apart at all.
    B = [[0, 1], [0, 1], [1, 0], [1, 0]]
    est = QueryTree(on_unidentifiable="leaf").fit(B)
    assert est.cost_ == pytest.approx(1.0) and est.lower_bound_ <= est.cost_ + 1e-12
    same = QueryTree(on_unidentifiable="leaf").fit([[1, 1]] * 3)
    assert same.cost_ == 0.0 and same.lower_bound_ == 0.0


def test_exact_optimum_near_lambda_one():
    # The exact programme keeps the excess E = (F − π)/(λ − 1), so λ just above 1 is as
    # accurate as λ = 1 (spec E2: the optimum is the GBS tree, L = 1.8).
    for lam in (1 + 1e-13, 1 + 1e-10, 1 + 1e-6):
        est = fit(E2_B, E2_PRIOR, criterion="optimal", cost_base=lam)
        assert est.status_ == "optimal"
        assert est.cost_ == pytest.approx(1.8, abs=1e-5)


def test_session_suggestion_is_stable_and_redundant_answers_stay_on_the_tree():
    B = np.array([[1, 0, 0, 1, 1], [0, 1, 0, 1, 1], [0, 0, 1, 0, 1], [0, 0, 0, 0, 1]])
    est = QueryTree(tie_break="random", random_state=3).fit(B)
    s = est.session()
    s.answer("x4", True)  # everyone answers yes: no candidate removed, still on the tree
    assert s.next_query() == est.query_names_[int(est.tree_.query[0])]
    s.answer("x0", False)  # off the tree's path unless the tree asks x0 first
    first = s.next_query()
    assert all(s.next_query() == first for _ in range(5)) and s.done is False


# ---------------------------------------------------------------------------------------------
# Non-identifiable objects
# ---------------------------------------------------------------------------------------------


def _with_duplicates(rng: random.Random, B, prior, groups):
    """Append copies of some rows (new objects with their own prior mass)."""
    B = [list(r) for r in B]
    prior = list(prior)
    groups = None if groups is None else list(groups)
    for _ in range(rng.randint(1, 3)):
        i = rng.randrange(len(B))
        B.append(list(B[i]))
        prior.append(rng.uniform(0.05, 1.0))
        if groups is not None:
            groups.append(rng.randrange(4))  # a copy may sit in another group
    s = sum(prior)
    return B, [p / s for p in prior], groups


def test_identical_rows_error_names_the_objects():
    frame = pd.DataFrame(
        [[0, 1, 1], [1, 1, 0], [0, 1, 0], [1, 1, 0]],
        index=["obj_A", "obj_B", "obj_C", "obj_D"],
        columns=["wings", "legs", "fur"],
    )
    with pytest.raises(DataError) as info:
        QueryTree().fit(frame)
    assert "obj_B" in str(info.value) and "obj_D" in str(info.value)
    assert "obj_A" not in str(info.value) and "obj_C" not in str(info.value)
    # Identical rows in different groups cannot be told apart either
    with pytest.raises(DataError):
        QueryTree().fit(frame, groups=["x", "y", "x", "z"])
    # Identical rows within one group are fine for group identification
    QueryTree().fit(frame, groups=["x", "y", "x", "y"])


@pytest.mark.parametrize("count, seed", CAMPAIGNS)
def test_leaf_policy_gives_ambiguous_leaves_and_corrected_identities(count, seed):
    for k, (label, B0, prior0, groups0) in enumerate(problems(count, seed)):
        if k % 3 and count <= 300:
            continue
        B, prior, groups = _with_duplicates(random.Random(k), B0, prior0, groups0)
        lam = (1.0, 2.0, 4.0)[k % 3]
        est = fit(B, prior, groups, cost_base=lam, on_unidentifiable="leaf")
        labels = list(range(len(B))) if groups is None else groups
        for _, members in tree_leaves(B, nested(est.tree_)):
            pure = len({labels[i] for i in members}) <= 1
            identical = len({tuple(B[i]) for i in members}) <= 1
            assert members and (pure or identical), (label, members)
        _check_decomposition(est, B, prior, groups, 1.0, label)
        _check_decomposition(est, B, prior, groups, lam if lam > 1 else 3.0, label)
        assert est.cost_ == pytest.approx(
            cost_from_tree(B, prior, groups, nested(est.tree_), lam), rel=TOL
        )


@pytest.mark.parametrize("count, seed", CAMPAIGNS)
def test_merge_policy_is_group_identification_on_row_classes(count, seed):
    for k, (label, B0, prior0, groups0) in enumerate(problems(count, seed)):
        if groups0 is not None or (k % 2 and count <= 300):
            continue
        B, prior, _ = _with_duplicates(random.Random(k), B0, prior0, None)
        first: dict = {}
        classes = [first.setdefault(tuple(row), i) for i, row in enumerate(B)]
        for lam in (1.0, 2.0, INF):
            merged = fit(B, prior, cost_base=lam, on_unidentifiable="merge")
            grouped = fit(B, prior, classes, cost_base=lam)
            assert nested(merged.tree_) == nested(grouped.tree_), (label, lam)
            assert merged.cost_ == pytest.approx(grouped.cost_, rel=1e-12), (label, lam)
            assert merged.lower_bound_ == pytest.approx(grouped.lower_bound_, rel=1e-12)


# ---------------------------------------------------------------------------------------------
# Interactive session and identify
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("count, seed", CAMPAIGNS)
def test_session_reproduces_the_tree_path(count, seed):
    for k, (label, B, prior, groups) in enumerate(problems(count, seed)):
        if k % 5 and count <= 300:
            continue
        lam = (1.0, 2.0, 4.0, INF)[k % 4]
        est = fit(B, prior, groups, cost_base=lam)
        names = est.query_names_
        for i, row in enumerate(B):
            path = route(est.tree_, row)
            expected_questions = [names[int(est.tree_.query[n])] for n in path[:-1]]
            session = est.session()
            asked = []
            while not session.done:
                assert session.result is None
                q = session.next_query()
                assert q is not None
                asked.append(q)
                session.answer(q, row[names.index(q)])
            assert session.next_query() is None
            assert asked == expected_questions, (label, i)
            assert len(asked) == int(est.tree_.depth[est.tree_.leaf_of_object[i]])
            assert session.history == [(q, bool(row[names.index(q)])) for q in asked]
            assert session.result == (groups[i] if groups is not None else est.object_names_[i])


def test_session_candidates_inconsistent_answers_and_undo():
    est = fit(E2_B, E2_PRIOR)
    session = est.session()
    start = session.candidates()
    assert [name for name, _ in start][:2] == ["0", "1"]
    assert sorted(name for name, _ in start) == ["0", "1", "2", "3"]
    assert [p for _, p in start] == sorted((p for _, p in start), reverse=True)
    assert math.fsum(p for _, p in start) == pytest.approx(1.0)
    assert session.next_query() == "x0"

    # A query the session did not suggest is accepted; posteriors are renormalised.
    session.answer("x3", True)
    cands = session.candidates()
    assert [name for name, _ in cands] == ["0", "1"]
    np.testing.assert_allclose([p for _, p in cands], [5 / 7, 2 / 7], atol=1e-12)
    assert session.history == [("x3", True)]
    assert not session.done and session.result is None

    # Both candidates answer q3 with 0: "yes" leaves nobody, raises, and changes nothing.
    with pytest.raises(DataError):
        session.answer(2, 1)
    assert session.candidates() == cands
    assert session.history == [("x3", True)]
    assert session.next_query() == "x0"

    session.answer(0, 0)  # by index, int value
    assert session.done and session.result == "1"
    session.undo()
    assert not session.done and session.result is None
    assert session.candidates() == cands
    session.undo()
    assert session.history == []
    assert sorted(session.candidates()) == sorted(start)
    assert session.next_query() == "x0"


def test_session_group_result():
    est = fit(E1_B, groups=E1_Y)
    session = est.session()
    assert session.next_query() == "x1"
    session.answer("x1", False)
    assert session.done and session.result == 2


def test_identify_full_rows_partial_rows_and_frames():
    est = fit(E2_B, E2_PRIOR, cost_base=2.0)
    assert list(est.identify(np.array(E2_B))) == ["0", "1", "2", "3"]
    assert est.identify(np.array(E2_B[2])) == "2"  # a single row gives a single label
    # Only the queries on the path are needed; the others may be NaN.
    partial = np.full((4, 4), np.nan)
    for i, row in enumerate(E2_B):
        for node in route(est.tree_, row)[:-1]:
            q = int(est.tree_.query[node])
            partial[i, q] = row[q]
    assert np.isnan(partial).any()
    assert list(est.identify(partial)) == ["0", "1", "2", "3"]
    frame = pd.DataFrame(partial, columns=est.query_names_)
    assert list(est.identify(frame)) == ["0", "1", "2", "3"]
    with pytest.raises(DataError):
        est.identify(np.full(4, np.nan))
    grouped = fit(E3_B, E3_PRIOR, E3_Y)
    assert list(grouped.identify(np.array(E3_B))) == E3_Y


# ---------------------------------------------------------------------------------------------
# Names, exports, pickling, cloning
# ---------------------------------------------------------------------------------------------


def _fruit_frame() -> pd.DataFrame:
    return pd.DataFrame(
        E2_B, index=["apple", "pear", "plum", "fig"], columns=["red", "green", "small", "sweet"]
    )


def test_dataframe_names_are_kept():
    frame = _fruit_frame()
    est = QueryTree(cost_base=2.0).fit(frame, prior=np.array(E2_PRIOR))
    assert est.object_names_ == ["apple", "pear", "plum", "fig"]
    assert est.query_names_ == ["red", "green", "small", "sweet"]
    assert nested(est.tree_) == E2_BALANCED
    assert list(est.identify(frame)) == ["apple", "pear", "plum", "fig"]
    assert est.session().next_query() == "sweet"
    text = optitree.export_text(est.tree_)
    assert isinstance(text, str)
    for q in ("sweet", "small", "red"):
        assert q in text
    dot = optitree.export_dot(est.tree_)
    assert isinstance(dot, str) and "digraph" in dot and "sweet" in dot
    # One line break per leaf, not a drawn backslash-n.
    assert 'label="apple\\np = ' in dot and "\\\\n" not in dot


def test_bool_int_and_float_matrices_agree():
    base = fit(E3_B, E3_PRIOR, E3_Y, cost_base=2.0).tree_
    for dtype in (bool, np.int8, np.float64, np.float32):
        est = QueryTree(cost_base=2.0).fit(
            np.asarray(E3_B, dtype=dtype), prior=np.array(E3_PRIOR), groups=np.array(E3_Y)
        )
        assert est.tree_ == base


def test_json_round_trip_and_tree_equality():
    est = QueryTree(cost_base=4.0).fit(_fruit_frame(), prior=np.array(E2_PRIOR))
    text = optitree.to_json(est.tree_)
    back = optitree.from_json(text)
    assert isinstance(back, QuestionTree)
    assert back == est.tree_
    assert back != fit(E2_B, E2_PRIOR).tree_  # the GBS tree differs from the balanced one
    grouped = fit(E3_B, E3_PRIOR, E3_Y).tree_
    assert optitree.from_json(optitree.to_json(grouped)) == grouped


@pytest.mark.parametrize("bad", [-0.25, float("nan")])
def test_a_saved_question_tree_with_a_bad_prior_is_refused(bad):
    tree = QueryTree().fit(_fruit_frame(), prior=np.array(E2_PRIOR)).tree_
    doc = json.loads(optitree.to_json(tree))
    doc["tree"]["prior"][2] = bad
    name = tree.object_names[2]
    with pytest.raises(DataError, match=f"the prior of object '{name}' is .*finite and >= 0"):
        optitree.from_json(json.dumps(doc))


def test_pickle_and_clone():
    est = QueryTree(cost_base=2.0, tie_break="random", random_state=3).fit(
        _fruit_frame(), prior=np.array(E2_PRIOR)
    )
    back = pickle.loads(pickle.dumps(est))
    assert back.tree_ == est.tree_
    assert back.cost_ == est.cost_ and back.lower_bound_ == est.lower_bound_
    assert back.object_names_ == est.object_names_ and back.query_names_ == est.query_names_
    assert list(back.identify(_fruit_frame())) == list(est.identify(_fruit_frame()))
    assert pickle.loads(pickle.dumps(est.tree_)) == est.tree_

    fresh = clone(est)
    assert fresh.get_params() == est.get_params()
    assert not hasattr(fresh, "tree_")
    assert clone(QueryTree(cost_base=INF, criterion="worst-case")).get_params()["cost_base"] == INF
    params = QueryTree().get_params()
    assert params == {
        "criterion": "auto",
        "cost_base": 1.0,
        "tie_break": "first",
        "random_state": None,
        "max_depth": None,
        "on_unidentifiable": "error",
        "time_limit": None,
    }


# ---------------------------------------------------------------------------------------------
# Validation
# ---------------------------------------------------------------------------------------------


def test_non_binary_matrix_names_column_and_value():
    frame = pd.DataFrame([[0, 1], [1, 2], [0, 0]], columns=["fever", "cough"])
    with pytest.raises(DataError) as info:
        QueryTree().fit(frame)
    assert "cough" in str(info.value) and "2" in str(info.value)
    for bad in (0.5, -1, 2, np.nan):
        B = np.array(E2_B, dtype=float)
        B[1, 2] = bad
        with pytest.raises(DataError):
            QueryTree().fit(B)


def test_bad_prior_and_groups():
    with pytest.raises(DataError):
        fit(E2_B, [0.5, 0.6, -0.1, 0.0])
    with pytest.raises(DataError):
        fit(E2_B, [0.5, 0.5])
    with pytest.raises(DataError):
        fit(E2_B, groups=[1, 2])
    with pytest.warns(UserWarning):
        est = fit(E2_B, [5, 2, 1.5, 1.5])
    np.testing.assert_allclose(est.prior_, E2_PRIOR, atol=1e-15)
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        fit(E2_B, E2_PRIOR)  # a normalised prior does not warn


@pytest.mark.parametrize(
    "params",
    [
        {"cost_base": 0.5},
        {"cost_base": 0.0},
        {"cost_base": -2.0},
        {"criterion": "gisa"},
        {"criterion": "lambda"},
        {"tie_break": "last"},
        {"on_unidentifiable": "ignore"},
    ],
)
def test_invalid_parameters(params):
    with pytest.raises(InvalidParameterError):
        QueryTree(**params).fit(np.array(E2_B))


def test_optimal_size_limit():
    codes = list(range(21))
    B21 = [[(c >> j) & 1 for j in range(5)] for c in codes]
    with pytest.raises(InvalidParameterError, match="20"):
        fit(B21, criterion="optimal")
    est = fit(B21[:20], criterion="optimal", cost_base=2.0)  # the limit itself is allowed
    assert est.status_ == "optimal"
    assert est.cost_ == pytest.approx(optimal_cost(B21[:20], [1] * 20, None, 2.0), rel=TOL)
