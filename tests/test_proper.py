"""ProperTreeClassifier: He & Little proper trees (spec: shared/specs/proper-trees.md, §6 T1-T14).

What is checked, and against what:

- oracle agreement (T4/T5): on random tiny Gaussian instances of every rule type (axis,
  hyperplane, degree-2 polynomial, mixed), every objective, ``min_samples_leaf`` in {0, 1, 2},
  ``max_depth`` in {None, 1, 2}, ``exactly`` in {False, True} and K = 1..3, ``objective_`` equals
  the brute-force optimum of ``oracles.proper_brute_force`` over the oracle's own candidate
  rules, or the fit raises ``InfeasibleError`` exactly when the oracle finds no tree. The oracle
  is asked for "exactly k" at k = 0..K and the "at most K" optimum is the minimum of those (the
  definition of ``proper_brute_force(exactly=False)``). Both engines and ``n_jobs`` 1 / 2 are
  compared on subsets;
- every returned tree is re-scored by routing the rows (a loss computed here), its node counts
  are checked, it has the right number of splits and depth, leaves respect the size limit and
  partition the rows, and it is *proper*: each node's split of the rows reaching it is the split
  of an oracle candidate rule whose defining rows all reach that node (for thresholds: the
  threshold selects the same rows as a data value of a row in the node);
- axis rules, K = 3, depth 2 = an exhaustive depth-2 threshold search written here, on random
  instances and on the wine data (known optima 6 and 54);
- T6 through ``optitree.proper.candidate_rules``: hyperplane partitions = the LP-separable
  dichotomies (Cover counts 22 and 42), and the "closed" convention is incomplete in 3-D;
- T10 determinism on all-equal labels, T11 invariants (relabelling, duplicated rows, depth
  bounds), T12 (K = 1 = best LP-separable dichotomy), T13 (infeasible instances are reached);
- the API: time limits, the hopeless-search refusal, parameter and data errors, clone/pickle,
  DataFrames and names, probabilities, and that ``predict`` and ``export_text`` follow exactly
  the equations stored in ``tree_``.

The long campaigns (≥ 5,000 instances per rule type, K = 3 hyperplanes, K = 2 polynomials) are
marked ``slow`` (``pytest -m slow``). They score the oracle's enumerated trees
(``proper_gen_trees``) for all constraint settings at once with a vectorised evaluator, which is
itself checked against ``proper_brute_force`` in the default run and on a sample in the slow run.
"""

from __future__ import annotations

import itertools
import math
import pickle
import random
import re

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone

from optitree import NotProvenOptimalWarning, ProperTreeClassifier, export_text
from optitree.exceptions import DataError, InfeasibleError, InvalidParameterError
from optitree.export import format_oblique
from optitree.proper import candidate_rules
from optitree.tree import LEAF, OBLIQUE, THRESHOLD
from oracles import (
    proper_ancestry,
    proper_axis_rules,
    proper_brute_force,
    proper_gen_trees,
    proper_hyperplane_rules,
    proper_polynomial_rules,
    proper_separable_dichotomies,
)

OBJECTIVES = ("misclassification", "gini", "entropy")
MIN_LEAF = (0, 1, 2)
DEPTHS = (None, 1, 2)


# ---- helpers -------------------------------------------------------------------------------


def _gaussian(seed: int, n: int, d: int) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal((n, d))


def _labels(seed: int, n: int, n_classes: int) -> np.ndarray:
    return np.random.default_rng(10_000 + seed).integers(0, n_classes, size=n)


def _oracle_rules(X: np.ndarray, rule: str, degree: int = 2) -> dict[str, list]:
    """The oracle's candidate rules, by the node kind that must represent them."""
    if rule == "axis":
        return {"axis": proper_axis_rules(X), "surface": []}
    if rule == "hyperplane":
        return {"axis": [], "surface": proper_hyperplane_rules(X)}
    if rule == "polynomial":
        return {"axis": [], "surface": proper_polynomial_rules(X, degree)}
    surface = proper_hyperplane_rules(X)
    if degree >= 2:
        surface = surface + proper_polynomial_rules(X, degree)
    return {"axis": proper_axis_rules(X), "surface": surface}


def _all_rules(by_kind: dict[str, list]) -> list:
    return by_kind["axis"] + by_kind["surface"]


def _leaf_loss(counts: np.ndarray, objective: str) -> float:
    """Loss of one leaf from its class counts (written here; empty leaves cost 0)."""
    counts = np.asarray(counts, dtype=float)
    n = counts.sum()
    if n == 0:
        return 0.0
    if objective == "misclassification":
        return float(n - counts.max())
    if objective == "gini":
        return float(n - (counts**2).sum() / n)
    c = counts[counts > 0]
    return float(-(c * np.log(c / n)).sum())


def _test_value(tree, node: int, x: np.ndarray) -> float:
    """The node's test evaluated from the raw arrays: ``<= 0`` goes to child 0."""
    if tree.kind[node] == THRESHOLD:
        return float(x[tree.feature[node]] - tree.threshold[node])
    assert tree.kind[node] == OBLIQUE
    k = tree.oblique_index[node]
    total = 0.0
    for t in range(tree.oblique_ptr[k], tree.oblique_ptr[k + 1]):
        term = float(tree.term_coef[t])
        for f in tree.term_features[tree.term_ptr[t] : tree.term_ptr[t + 1]]:
            term *= float(x[f])
        total += term
    return total


def _goes_left(tree, node: int, x: np.ndarray) -> bool:
    if tree.kind[node] == THRESHOLD:
        return bool(x[tree.feature[node]] <= tree.threshold[node])
    return _test_value(tree, node, x) <= 0


def _manual_leaf(tree, x: np.ndarray) -> int:
    node = 0
    while tree.kind[node] != LEAF:
        kids = tree.children_of(node)
        assert len(kids) == 2
        node = int(kids[0] if _goes_left(tree, node, x) else kids[1])
    return node


def _codes(clf, y) -> np.ndarray:
    return np.searchsorted(clf.classes_, np.asarray(y))


def _check_tree(
    clf,
    X: np.ndarray,
    y,
    rules: dict[str, list],
    *,
    n_splits: int,
    exactly: bool,
    objective: str,
    min_samples_leaf: int,
    max_depth: int | None,
    ctx: str = "",
) -> None:
    """Independent checks of a fitted tree (see the module docstring)."""
    tree = clf.tree_
    y_codes = _codes(clf, y)
    n_classes = len(clf.classes_)
    N = X.shape[0]
    leaves = tree.apply(X)
    assert np.all(tree.kind[leaves] == LEAF), ctx
    # Routing from the raw arrays, written here, agrees with the core's routing.
    manual = np.array([_manual_leaf(tree, x) for x in X])
    np.testing.assert_array_equal(manual, leaves, err_msg=ctx)
    regions = np.asarray(tree.decision_path(X).todense(), dtype=bool).T  # (n_nodes, N)
    is_leaf = tree.kind == LEAF
    # The leaves partition the rows: every row lies in exactly one leaf region.
    np.testing.assert_array_equal(regions[is_leaf].sum(axis=0), np.ones(N), err_msg=ctx)
    for node in range(tree.n_nodes):
        np.testing.assert_array_equal(
            tree.value[node], np.bincount(y_codes[regions[node]], minlength=n_classes), ctx
        )
    # Size, depth, leaf sizes.
    if exactly:
        assert tree.get_n_splits() == n_splits, ctx
    else:
        assert tree.get_n_splits() <= n_splits, ctx
    if max_depth is not None:
        assert tree.get_depth() <= max_depth, ctx
    sizes = regions[is_leaf].sum(axis=1)
    assert np.all(sizes >= min_samples_leaf), (ctx, sizes)
    # Re-scored loss.
    loss = sum(
        _leaf_loss(np.bincount(y_codes[leaves == leaf], minlength=n_classes), objective)
        for leaf in np.flatnonzero(is_leaf)
    )
    assert clf.objective_ == pytest.approx(loss, abs=1e-9), ctx
    # Properness: each split is a candidate rule whose defining rows reach the node.
    for node in np.flatnonzero(~is_leaf):
        kids = tree.children_of(node)
        assert len(kids) == 2, ctx
        region, left = regions[node], regions[kids[0]]
        assert region.any(), (ctx, "internal node reached by no row")
        np.testing.assert_array_equal(regions[kids[1]], region & ~left, err_msg=ctx)
        if tree.kind[node] == THRESHOLD:
            pool = rules["axis"]
            d, t = tree.feature[node], tree.threshold[node]
            below = X[:, d][X[:, d] <= t]
            assert below.size > 0, (ctx, "threshold below every training value")
            # The threshold selects the same rows as the value of a row inside the node.
            assert np.any(X[region, d] == below.max()), (ctx, "threshold defined outside")
        else:
            assert tree.kind[node] == OBLIQUE, ctx
            pool = rules["surface"]
        assert pool, (ctx, f"node kind {tree.kind[node]} not allowed for this rule type")
        plus = np.array([p for p, _ in pool], dtype=bool)
        usable = np.array([bool(region[list(P)].all()) for _, P in pool])
        same = ((plus & region) == left).all(axis=1)
        assert np.any(usable & same), (ctx, f"node {node} is not a proper use of a candidate")
        # The stored test reproduces, on every training row, the side set of such a rule.
        whole = np.array([_goes_left(tree, node, x) for x in X])
        assert np.any(usable & same & (plus == whole).all(axis=1)), (
            ctx,
            f"node {node}: the stored test does not reproduce its rule on all training rows",
        )


def _fit_and_compare(
    X,
    y,
    rule,
    degree,
    rules,
    expected,
    *,
    n_splits,
    exactly,
    objective,
    min_samples_leaf,
    max_depth,
    engine="auto",
    n_jobs=1,
    ctx="",
):
    """Fits and compares with the oracle value; returns the estimator (None when infeasible)."""
    clf = ProperTreeClassifier(
        n_splits=n_splits,
        rule=rule,
        degree=degree,
        exactly=exactly,
        objective=objective,
        min_samples_leaf=min_samples_leaf,
        max_depth=max_depth,
        engine=engine,
        n_jobs=n_jobs,
    )
    ctx = (
        f"{ctx} rule={rule} degree={degree} K={n_splits} exactly={exactly} objective={objective}"
        f" min_samples_leaf={min_samples_leaf} max_depth={max_depth} engine={engine}"
        f" n_jobs={n_jobs}: expected {expected}"
    )
    if expected is None:
        with pytest.raises(InfeasibleError):
            clf.fit(X, y)
        return None
    clf.fit(X, y)
    assert clf.status_ == "optimal", ctx
    assert clf.objective_ == pytest.approx(expected, abs=1e-9), (ctx, clf.objective_)
    assert clf.lower_bound_ <= clf.objective_ + 1e-9, ctx
    assert clf.upper_bound_ == pytest.approx(clf.objective_, abs=1e-9), ctx
    _check_tree(
        clf,
        X,
        y,
        rules,
        n_splits=n_splits,
        exactly=exactly,
        objective=objective,
        min_samples_leaf=min_samples_leaf,
        max_depth=max_depth,
        ctx=ctx,
    )
    return clf


def _at_most(exact: list, K: int):
    feasible = [v for v in exact[: K + 1] if v is not None]
    return min(feasible) if feasible else None


class _Tally:
    """Counts of oracle comparisons: ``instances`` (distinct data and parameters) and ``extra``
    (the same instance refitted with the other engine or two threads)."""

    def __init__(self) -> None:
        self.instances = 0
        self.infeasible = 0
        self.extra = 0
        self.exactly_worse = 0  # exactly-K optimum strictly above the at-most-K optimum
        # None: a different tree with two threads fails at once; a list: collected
        self.thread_mismatches: list | None = None


def _sweep(
    tally: _Tally,
    seed: int,
    rule: str,
    *,
    N,
    D,
    n_classes,
    K_max,
    degree,
    objective,
    min_samples_leaf,
    max_depth,
    check_engines=False,
    check_jobs=False,
    exact=None,
):
    """One random instance: the oracle for exactly k = 0..K_max, then every (K, exactly)."""
    X = _gaussian(seed, N, D)
    y = _labels(seed, N, n_classes)
    rules = _oracle_rules(X, rule, degree)
    if exact is None:
        exact = [
            proper_brute_force(
                X,
                y,
                _all_rules(rules),
                k,
                exactly=True,
                objective=objective,
                min_samples_leaf=min_samples_leaf,
                max_depth=max_depth,
            )
            for k in range(K_max + 1)
        ]
    ctx = f"seed={seed} N={N} D={D} classes={n_classes}"
    common = dict(objective=objective, min_samples_leaf=min_samples_leaf, max_depth=max_depth)
    for K in range(1, K_max + 1):
        for exactly in (False, True):
            expected = exact[K] if exactly else _at_most(exact, K)
            clf = _fit_and_compare(
                X,
                y,
                rule,
                degree,
                rules,
                expected,
                n_splits=K,
                exactly=exactly,
                ctx=ctx,
                **common,
            )
            tally.instances += 1
            tally.infeasible += clf is None
            if exactly and expected is not None and _at_most(exact, K) < expected - 1e-9:
                tally.exactly_worse += 1
            if check_engines and not exactly:
                # The paper's enumeration finds the same optimum as the top-down engine.
                _fit_and_compare(
                    X,
                    y,
                    rule,
                    degree,
                    rules,
                    expected,
                    n_splits=K,
                    exactly=False,
                    engine="combinations",
                    ctx=ctx,
                    **common,
                )
                tally.extra += 1
            if check_jobs:
                # Two threads return the very same tree as one.
                for engine in ("topdown", "combinations") if not exactly else ("combinations",):
                    one = _fit_and_compare(
                        X,
                        y,
                        rule,
                        degree,
                        rules,
                        expected,
                        n_splits=K,
                        exactly=exactly,
                        engine=engine,
                        ctx=ctx,
                        **common,
                    )
                    two = _fit_and_compare(
                        X,
                        y,
                        rule,
                        degree,
                        rules,
                        expected,
                        n_splits=K,
                        exactly=exactly,
                        engine=engine,
                        n_jobs=2,
                        ctx=ctx,
                        **common,
                    )
                    tally.extra += 1
                    if one is not None and (
                        one.tree_ != two.tree_ or export_text(one.tree_) != export_text(two.tree_)
                    ):
                        what = (
                            f"{ctx} K={K} exactly={exactly} engine={engine} {common}: "
                            "n_jobs=2 returned another tree than n_jobs=1"
                        )
                        if tally.thread_mismatches is None:
                            raise AssertionError(what)
                        tally.thread_mismatches.append(what)
    return exact


def _draw_constraints(rng: random.Random) -> dict:
    return dict(
        objective=rng.choice(OBJECTIVES),
        min_samples_leaf=rng.choice(MIN_LEAF),
        max_depth=rng.choice(DEPTHS),
    )


# ---- 1. oracle agreement (default run) -----------------------------------------------------


def _plan(rule: str, rng: random.Random) -> dict:
    """Instance sizes per rule type (the default run keeps the oracle cheap)."""
    if rule == "axis":
        D = rng.choice((1, 2, 3))
        if D == 1:
            return dict(N=rng.choice((5, 6, 7)), D=1, K_max=3, degree=2)
        K_max = 3 if D == 2 and rng.random() < 0.3 else 2
        return dict(N=5, D=D, K_max=K_max, degree=2)
    if rule == "hyperplane":
        if rng.random() < 0.1:
            return dict(N=5, D=3, K_max=1, degree=2)
        return dict(N=5, D=2, K_max=rng.choice((1, 2)), degree=2)
    if rule == "polynomial":
        return dict(N=rng.choice((6, 6, 6, 7)), D=2, K_max=1, degree=2)
    # mixed: axis + hyperplanes (+ conics through 5 rows when degree = 2)
    if rng.random() < 0.15:
        return dict(N=5, D=2, K_max=2, degree=1)
    return dict(N=rng.choice((5, 6)), D=2, K_max=1, degree=2)


@pytest.mark.parametrize("rule", ["axis", "hyperplane", "polynomial", "mixed"])
def test_oracle_agreement(rule):
    rng = random.Random(f"proper-{rule}")
    tally = _Tally()
    seed = 0
    while tally.instances < 300:
        seed += 1
        size = _plan(rule, rng)
        _sweep(
            tally,
            seed,
            rule,
            n_classes=rng.choice((2, 3)),
            **size,
            **_draw_constraints(rng),
            check_engines=seed % 3 == 0,
            check_jobs=seed % 10 == 0,
        )
    if rule != "polynomial":  # (K = 1 with N = 6 rows is always feasible)
        assert tally.infeasible > 0  # T13: some exactly-K instances have no proper tree at all
    assert tally.instances - tally.infeasible > 200
    assert tally.extra > 50


# ---- the tree table: the oracle's enumeration, scored for every setting at once ----------


def _tree_table(X, y, rules: list, K_max: int, n_classes: int) -> list:
    """For k = 0..K_max: every proper tree over exactly k distinct candidate rules, enumerated
    by the oracle (``proper_gen_trees`` over every k-combination, ``proper_ancestry``), as
    (depths, class counts of each leaf). Rows are bits of Python ints."""
    y = np.asarray(y)
    N = len(y)
    ancestry = proper_ancestry(rules)
    plus_bits = [sum(1 << int(i) for i in np.flatnonzero(p)) for p, _ in rules]
    class_bits = [sum(1 << int(i) for i in np.flatnonzero(y == c)) for c in range(n_classes)]

    def walk(node, mask: int, leaves: list) -> int:
        if node is None:
            leaves.append([bin(mask & bits).count("1") for bits in class_bits])
            return 0
        rule, left, right = node
        return 1 + max(
            walk(left, mask & plus_bits[rule], leaves),
            walk(right, mask & ~plus_bits[rule], leaves),
        )

    table = []
    for k in range(K_max + 1):
        depths, counts = [], []
        for combo in itertools.combinations(range(len(rules)), k):
            for tree in proper_gen_trees(combo, ancestry):
                leaves: list = []
                depths.append(walk(tree, (1 << N) - 1, leaves))
                counts.append(leaves)
        counts_array = np.array(counts, dtype=float).reshape(-1, k + 1, n_classes)
        table.append((np.array(depths, dtype=int), counts_array))
    return table


def _table_optimum(table, k: int, objective: str, min_samples_leaf: int, max_depth):
    """Least loss over the trees of ``table[k]`` that meet the constraints (None: none do)."""
    depths, counts = table[k]
    n = counts.sum(axis=2)
    feasible = (n >= min_samples_leaf).all(axis=1)
    if max_depth is not None:
        feasible &= depths <= max_depth
    if not feasible.any():
        return None
    if objective == "misclassification":
        loss = n - counts.max(axis=2)
    elif objective == "gini":
        loss = n - (counts**2).sum(axis=2) / np.where(n > 0, n, 1.0)
    else:
        with np.errstate(divide="ignore", invalid="ignore"):
            terms = np.where(counts > 0, counts * np.log(counts / n[..., None]), 0.0)
        loss = -terms.sum(axis=2)
    return float(loss.sum(axis=1)[feasible].min())


SETTINGS = list(itertools.product(OBJECTIVES, MIN_LEAF, DEPTHS))


@pytest.mark.parametrize(
    "rule, N, D, K_max, degree",
    [
        ("axis", 5, 2, 3, 2),
        ("axis", 6, 1, 3, 2),
        ("hyperplane", 5, 2, 2, 2),
        ("polynomial", 6, 2, 1, 2),
        ("mixed", 5, 2, 1, 2),
    ],
)
def test_tree_table_matches_brute_force(rule, N, D, K_max, degree):
    """The vectorised scoring used by the slow campaign = ``proper_brute_force``."""
    rng = random.Random(f"table-{rule}")
    for seed in range(2):
        X, y = _gaussian(1500 + seed, N, D), _labels(1500 + seed, N, 3)
        rules = _all_rules(_oracle_rules(X, rule, degree))
        table = _tree_table(X, y, rules, K_max, 3)
        for objective, msl, depth in rng.sample(SETTINGS, 4):
            for k in range(K_max + 1):
                expected = proper_brute_force(
                    X,
                    y,
                    rules,
                    k,
                    exactly=True,
                    objective=objective,
                    min_samples_leaf=msl,
                    max_depth=depth,
                )
                got = _table_optimum(table, k, objective, msl, depth)
                assert (got is None) == (expected is None)
                if got is not None:
                    assert got == pytest.approx(expected, abs=1e-9)


def test_tree_checker_rejects_an_improper_tree():
    """The properness check above is not vacuous: a threshold taken from a row outside the node
    is refused, and so is a wrong reported loss."""
    from types import SimpleNamespace

    from optitree.tree import Tree

    X = np.array([[0.0], [1.0], [2.0], [3.0]])
    y = np.array([0, 0, 1, 1])
    nan = float("nan")
    tree = Tree(
        kind=[THRESHOLD, THRESHOLD, LEAF, LEAF, LEAF],
        feature=[0, 0, -1, -1, -1],
        threshold=[1.0, 2.0, nan, nan, nan],  # node 1 (rows 0, 1) splits at row 2's value
        children_ptr=[0, 2, 4, 4, 4, 4],
        children=[1, 4, 2, 3],
        value=[[2, 2], [2, 0], [2, 0], [0, 0], [0, 2]],
    )
    fake = SimpleNamespace(tree_=tree, classes_=np.array([0, 1]), objective_=0.0)
    kw = dict(
        n_splits=2, exactly=True, objective="misclassification", min_samples_leaf=0, max_depth=None
    )
    with pytest.raises(AssertionError, match="threshold defined outside"):
        _check_tree(fake, X, y, _oracle_rules(X, "axis"), **kw)
    proper = Tree(
        kind=[THRESHOLD, THRESHOLD, LEAF, LEAF, LEAF],
        feature=[0, 0, -1, -1, -1],
        threshold=[1.0, 0.0, nan, nan, nan],
        children_ptr=[0, 2, 4, 4, 4, 4],
        children=[1, 4, 2, 3],
        value=[[2, 2], [2, 0], [1, 0], [1, 0], [0, 2]],
    )
    fake = SimpleNamespace(tree_=proper, classes_=np.array([0, 1]), objective_=0.0)
    _check_tree(fake, X, y, _oracle_rules(X, "axis"), **kw)
    fake.objective_ = 1.0
    with pytest.raises(AssertionError):
        _check_tree(fake, X, y, _oracle_rules(X, "axis"), **kw)


# ---- 3. axis rules, K = 3, depth 2 = exhaustive depth-2 threshold search -----------------


def _best_leaf_or_stump(X, y_codes, mask, n_classes, orders) -> int:
    """Fewest errors of a leaf or one threshold split (any feature, any data value) on the rows
    in ``mask``."""
    n = int(mask.sum())
    if n == 0:
        return 0
    total = np.bincount(y_codes[mask], minlength=n_classes)
    best = n - int(total.max())
    eye = np.eye(n_classes, dtype=np.int64)
    for d, order in enumerate(orders):
        idx = order[mask[order]]
        vals = X[idx, d]
        cut = np.flatnonzero(vals[:-1] < vals[1:])  # left = positions 0..cut
        if cut.size == 0:
            continue
        left = np.cumsum(eye[y_codes[idx]], axis=0)[cut]
        right = total - left
        err = (cut + 1 - left.max(axis=1)) + (n - cut - 1 - right.max(axis=1))
        best = min(best, int(err.min()))
    return best


def _exhaustive_depth2(X, y_codes, n_classes) -> tuple[int, int]:
    """(best depth <= 1, best depth <= 2) misclassification over all threshold trees."""
    N, D = X.shape
    orders = [np.argsort(X[:, d], kind="stable") for d in range(D)]
    depth1 = _best_leaf_or_stump(X, y_codes, np.ones(N, dtype=bool), n_classes, orders)
    best = depth1
    for d in range(D):
        for t in np.unique(X[:, d])[:-1]:
            left = X[:, d] <= t
            best = min(
                best,
                _best_leaf_or_stump(X, y_codes, left, n_classes, orders)
                + _best_leaf_or_stump(X, y_codes, ~left, n_classes, orders),
            )
    return depth1, best


def _depth2_instances(count: int, seed: int):
    rng = random.Random(seed)
    for i in range(count):
        N, D, C = rng.randint(4, 20), rng.randint(1, 3), rng.choice((2, 3))
        X = _gaussian(seed * 100_000 + i, N, D)
        if rng.random() < 0.3:
            X = np.round(X, 1)  # ties too: thresholds shared by several rows
        yield X, _labels(seed * 100_000 + i, N, C), C


def _depth2_failures(count: int, seed: int, check_every: int) -> list:
    """Both engines against the exhaustive search on random instances; the disagreements."""
    failures = []
    for i, (X, y, C) in enumerate(_depth2_instances(count, seed)):
        depth1, depth2 = _exhaustive_depth2(X, y, C)
        for engine in ("topdown", "combinations"):
            clf = ProperTreeClassifier(n_splits=3, max_depth=2, engine=engine).fit(X, y)
            assert clf.status_ == "optimal"
            assert clf.get_depth() <= 2 and clf.get_n_splits() <= 3
            stump = ProperTreeClassifier(n_splits=1, engine=engine).fit(X, y).objective_
            if (clf.objective_, stump) != (depth2, depth1):
                failures.append(
                    f"instance {i} {engine}: got {(clf.objective_, stump)}, exhaustive "
                    f"{(depth2, depth1)}, X={X.tolist()}, y={y.tolist()}"
                )
            if i % check_every == 0:
                _check_tree(
                    clf,
                    X,
                    y,
                    _oracle_rules(X, "axis"),
                    n_splits=3,
                    exactly=False,
                    objective="misclassification",
                    min_samples_leaf=1,
                    max_depth=2,
                )
    return failures


def test_axis_depth2_equals_exhaustive_threshold_search():
    failures = _depth2_failures(60, seed=1, check_every=1)
    assert not failures, failures


@pytest.mark.slow
def test_axis_depth2_campaign():
    failures = _depth2_failures(1000, seed=2, check_every=5)
    assert not failures, (len(failures), failures[:3])


# Found by the slow campaign (and a search of 80,000 random configurations, 3 hits): the
# top-down engine with max_depth=2 and the misclassification objective returns a tree of 1
# error, reported "optimal", where a depth-2 tree of 3 splits has none (combinations engine,
# oracle and exhaustive search agree on 0). Gini and entropy are right on the same data.
DEPTH2_REGRESSIONS = [
    (
        [[-0.195, -0.865], [0.148, 0.593], [1.767, -1.093], [-0.022, 1.358], [2.111, -0.299],
         [-0.494, -0.555], [-1.996, -1.671]],
        [1, 1, 2, 2, 2, 2, 1],
    ),
    (
        [[3.116, 0.314], [0.385, 1.081], [0.126, 2.291], [-0.108, 0.57], [0.392, 0.992],
         [-0.518, -0.433], [-0.712, -0.649], [-0.878, -1.304]],
        [1, 1, 0, 1, 1, 0, 1, 1],
    ),
    (
        [[-0.736, -0.851], [0.401, 0.892], [0.618, -0.277], [1.625, -0.723], [-1.198, -1.21],
         [-0.961, -1.188], [-0.235, 0.589], [-1.422, -1.535]],
        [1, 0, 1, 1, 0, 1, 1, 1],
    ),
]  # fmt: skip


@pytest.mark.parametrize("case", range(len(DEPTH2_REGRESSIONS)))
@pytest.mark.parametrize("engine", ["topdown", "combinations"])
def test_depth2_regressions(case, engine):
    X, y = (np.array(v) for v in DEPTH2_REGRESSIONS[case])
    expected = proper_brute_force(X, y, proper_axis_rules(X), 3, max_depth=2, min_samples_leaf=1)
    assert expected == 0.0 == _exhaustive_depth2(X, y, int(y.max()) + 1)[1]
    clf = ProperTreeClassifier(n_splits=3, max_depth=2, engine=engine).fit(X, y)
    assert clf.status_ == "optimal"
    assert clf.objective_ == expected, export_text(clf.tree_, show_weights=True)


def test_wine_depth2():
    from sklearn.datasets import load_wine

    X, y = load_wine(return_X_y=True)
    assert _exhaustive_depth2(X, y, 3) == (54, 6)
    clf = ProperTreeClassifier(n_splits=3, max_depth=2).fit(X, y)
    assert (clf.status_, clf.objective_) == ("optimal", 6.0)
    assert clf.get_depth() == 2
    assert np.count_nonzero(clf.predict(X) != y) == 6
    assert ProperTreeClassifier(n_splits=1).fit(X, y).objective_ == 54.0
    assert ProperTreeClassifier(n_splits=3, max_depth=1).fit(X, y).objective_ == 54.0


# ---- 4. T6: hyperplane candidates = all linearly separable dichotomies ---------------------


def _canonical(plus) -> frozenset:
    """The unordered dichotomy {plus, complement} as the side holding row 0."""
    plus = np.asarray(plus, dtype=bool)
    side = plus if plus[0] else ~plus
    return frozenset(int(i) for i in np.flatnonzero(side))


def _partitions(X, side_assignment="all") -> set:
    plus, _ = candidate_rules(X, "hyperplane", side_assignment=side_assignment)
    return {_canonical(p) for p in plus} | {frozenset(range(len(X)))}


@pytest.mark.parametrize("D, count", [(2, 22), (3, 42)])
def test_hyperplane_candidates_are_the_separable_dichotomies(D, count):
    X = _gaussian(700 + D, 7, D)
    plus, defining = candidate_rules(X, "hyperplane")
    assert plus.shape == (2**D * math.comb(7, D), 7)  # every D-subset, 2^D side assignments
    assert all(len(P) == D for P in defining)
    separable = proper_separable_dichotomies(X)
    assert _partitions(X) == separable
    assert len(separable) == count  # Cover: sum_{k <= D} C(N - 1, k)
    closed = _partitions(X, "closed")
    assert closed <= separable
    if D == 2:
        assert closed == separable


def test_closed_side_assignment_is_incomplete_in_3d():
    missed = []
    for seed in range(10):
        X = _gaussian(800 + seed, 7, 3)
        separable = proper_separable_dichotomies(X)
        closed = _partitions(X, "closed")
        assert closed <= separable
        if closed != separable:
            missed.append(seed)
            break
    assert missed, "the closed convention found every dichotomy on 10 seeds"


def _rule_set(plus, defining) -> set:
    return {
        (tuple(bool(v) for v in p), tuple(sorted(int(i) for i in P)))
        for p, P in zip(plus, defining)
    }


@pytest.mark.parametrize(
    "rule, N, D, degree",
    [
        ("axis", 6, 3, 2),
        ("hyperplane", 6, 2, 2),
        ("hyperplane", 6, 3, 2),
        ("polynomial", 7, 2, 2),
        ("polynomial", 5, 1, 3),
        ("mixed", 6, 2, 2),
        ("mixed", 6, 2, 1),
    ],
)
def test_candidate_rules_are_the_oracle_rules(rule, N, D, degree):
    """Same (PLUS, defining rows) pairs as the oracle's generators, up to exact duplicates."""
    for seed in range(3):
        X = _gaussian(900 + seed, N, D)
        plus, defining = candidate_rules(X, rule, degree=degree)
        assert plus.shape == (len(defining), N)
        mine = _rule_set(plus, defining)
        assert len(mine) == len(defining)  # exact duplicates removed
        rules = _all_rules(_oracle_rules(X, rule, degree))
        assert mine == _rule_set([p for p, _ in rules], [P for _, P in rules])


# ---- 5. T10: determinism on tied optima ----------------------------------------------------


@pytest.mark.parametrize("rule", ["axis", "hyperplane", "mixed"])
def test_all_equal_labels(rule):
    X = _gaussian(31, 7, 2)
    y = np.full(7, "same")
    leaf = ProperTreeClassifier(n_splits=2, rule=rule).fit(X, y)
    assert leaf.objective_ == 0.0 and leaf.tree_.n_nodes == 1
    assert leaf.predict(_gaussian(32, 5, 2)).tolist() == ["same"] * 5
    trees = []
    for n_jobs in (1, 2, 3, 1, 2):
        clf = ProperTreeClassifier(n_splits=2, rule=rule, exactly=True, n_jobs=n_jobs).fit(X, y)
        assert clf.objective_ == 0.0 and clf.status_ == "optimal"
        assert clf.get_n_splits() == 2
        _check_tree(
            clf,
            X,
            y,
            _oracle_rules(X, rule),
            n_splits=2,
            exactly=True,
            objective="misclassification",
            min_samples_leaf=1,
            max_depth=None,
        )
        trees.append(clf.tree_)
    assert all(t == trees[0] for t in trees)
    assert len({export_text(t) for t in trees}) == 1


def test_thread_count_does_not_change_the_tree_on_tied_entropy_optima():
    """T10 with ties between cost +0.0 (a tree with an empty leaf) and -0.0 (pure leaves: the
    core's entropy of a pure leaf is -c * ln(1) = -0.0). Found by the slow campaign (seed
    100030): with n_jobs >= 2 the combination engine returns another tree in about 40% of the
    runs, while n_jobs=1 always returns the same one."""
    X, y = _gaussian(100030, 6, 2), _labels(100030, 6, 2)
    params = dict(
        n_splits=2, rule="polynomial", exactly=True, objective="entropy", min_samples_leaf=0
    )
    ref = ProperTreeClassifier(**params).fit(X, y)
    assert ref.objective_ == 0.0
    others = [ProperTreeClassifier(**params, n_jobs=n_jobs).fit(X, y) for n_jobs in (2, 3) * 10]
    assert all(o.objective_ == 0.0 for o in others)
    differ = [i for i, o in enumerate(others) if o.tree_ != ref.tree_]
    assert not differ, f"{len(differ)} of {len(others)} multi-threaded fits returned another tree"


# ---- 6. T11: invariants --------------------------------------------------------------------


@pytest.mark.parametrize("rule", ["axis", "hyperplane"])
@pytest.mark.parametrize("objective", OBJECTIVES)
def test_relabelling_keeps_the_loss(rule, objective):
    names = np.array(["zebra", "apple", "mango"])
    for seed in range(4):
        X, y = _gaussian(40 + seed, 8, 2), _labels(40 + seed, 8, 3)
        a = ProperTreeClassifier(n_splits=2, rule=rule, objective=objective).fit(X, y)
        b = ProperTreeClassifier(n_splits=2, rule=rule, objective=objective).fit(X, names[y])
        c = ProperTreeClassifier(n_splits=2, rule=rule, objective=objective).fit(X, 2 - y)
        assert b.objective_ == pytest.approx(a.objective_, abs=1e-9)
        assert c.objective_ == pytest.approx(a.objective_, abs=1e-9)
        assert set(b.predict(X)) <= set(names)


@pytest.mark.parametrize("objective", OBJECTIVES)
def test_duplicating_rows_doubles_the_loss(objective):
    for seed in range(5):
        X, y = _gaussian(50 + seed, 8, 2), _labels(50 + seed, 8, 2 + seed % 2)
        for K in (1, 2, 3):
            one = ProperTreeClassifier(n_splits=K, objective=objective).fit(X, y)
            two = ProperTreeClassifier(n_splits=K, objective=objective).fit(
                np.vstack([X, X]), np.concatenate([y, y])
            )
            assert two.objective_ == pytest.approx(2 * one.objective_, abs=1e-9), (seed, K)


def test_depth_bounds():
    for seed in range(6):
        X, y = _gaussian(60 + seed, 9, 2), _labels(60 + seed, 9, 3)
        for rule, K in (("axis", 3), ("hyperplane", 2)):
            free = ProperTreeClassifier(n_splits=K, rule=rule).fit(X, y).objective_
            for d in (K, K + 1, 5):
                bounded = ProperTreeClassifier(n_splits=K, rule=rule, max_depth=d).fit(X, y)
                assert bounded.objective_ == pytest.approx(free, abs=1e-9)
            exact = ProperTreeClassifier(n_splits=K, rule=rule, exactly=True)
            free_exact = exact.fit(X, y).objective_
            bounded = clone(exact).set_params(max_depth=K).fit(X, y).objective_
            assert bounded == pytest.approx(free_exact, abs=1e-9)
    for rule, N in (("axis", 10), ("hyperplane", 6)):
        X, y = _gaussian(70, N, 2), _labels(70, N, 2)
        # A K-tree needs depth >= ceil(log2(K + 1)).
        for K, d in ((3, 1), (2, 1), (4, 2)):
            with pytest.raises(InfeasibleError, match="exactly"):
                ProperTreeClassifier(n_splits=K, rule=rule, exactly=True, max_depth=d).fit(X, y)
            # "at most K" is always feasible (at worst a single leaf).
            clf = ProperTreeClassifier(n_splits=K, rule=rule, max_depth=d).fit(X, y)
            assert clf.get_depth() <= d
        with pytest.raises(InfeasibleError):
            ProperTreeClassifier(n_splits=1, rule=rule, exactly=True, max_depth=0).fit(X, y)
        leaf = ProperTreeClassifier(n_splits=2, rule=rule, max_depth=0).fit(X, y)
        assert leaf.tree_.n_nodes == 1 and leaf.objective_ == N - np.bincount(y).max()
        # too few rows for K + 1 leaves of the minimum size
        with pytest.raises(InfeasibleError):
            ProperTreeClassifier(
                n_splits=3, rule=rule, exactly=True, min_samples_leaf=N // 4 + 1
            ).fit(X, y)


@pytest.mark.parametrize(
    "N, K, constraint",
    [(30, 3, dict(max_depth=1)), (30, 4, dict(max_depth=2)), (40, 3, dict(min_samples_leaf=11))],
)
def test_counting_infeasibility_is_reported_at_once(N, K, constraint):
    """exactly=True with K > 2^max_depth - 1 splits, or with (K + 1) * min_samples_leaf > N
    rows, has no tree whatever the rules: the fit should say so at once (as it does for axis
    rules), not enumerate every K-combination of the hyperplanes first, nor call it hopeless.
    (Found while writing these tests: N=30, K=3, max_depth=1 took 196 s without a time limit;
    with ``time_limit`` it ends with "(status time_limit)", i.e. infeasibility not proven; N=30,
    K=4, max_depth=2 was refused as "hopeless".)"""
    import time

    X, y = _gaussian(71, N, 2), _labels(71, N, 2)
    time_limit = None if constraint.get("max_depth") == 2 else 1.0
    start = time.perf_counter()
    with pytest.raises(InfeasibleError) as err:
        ProperTreeClassifier(
            n_splits=K, rule="hyperplane", exactly=True, time_limit=time_limit, **constraint
        ).fit(X, y)
    assert "time_limit" not in str(err.value)
    assert time.perf_counter() - start < 0.5


# ---- 7. T12: one hyperplane = the best linearly separable dichotomy ------------------------


@pytest.mark.parametrize("N, D, C", [(6, 2, 2), (7, 2, 3), (8, 2, 2), (7, 3, 2), (8, 3, 3)])
def test_one_hyperplane_is_the_best_separable_dichotomy(N, D, C):
    for seed in range(2):
        X, y = _gaussian(1200 + 10 * N + seed, N, D), _labels(1200 + 10 * N + seed, N, C)

        def errors(side, y=y) -> int:
            labels = y[sorted(side)]
            return len(labels) - int(np.bincount(labels).max()) if len(labels) else 0

        best = min(errors(A) + errors(set(range(N)) - A) for A in proper_separable_dichotomies(X))
        clf = ProperTreeClassifier(n_splits=1, rule="hyperplane").fit(X, y)
        assert clf.objective_ == best
        # exactly one split with empty leaves allowed: the trivial split is a candidate too
        exact = ProperTreeClassifier(
            n_splits=1, rule="hyperplane", exactly=True, min_samples_leaf=0
        ).fit(X, y)
        assert exact.objective_ == best and exact.get_n_splits() == 1


# ---- 9. API and errors ---------------------------------------------------------------------


def test_time_limit_returns_the_best_tree_so_far():
    X, y = _gaussian(1300, 150, 2), _labels(1300, 150, 2)
    with pytest.warns(NotProvenOptimalWarning, match="time_limit"):
        clf = ProperTreeClassifier(n_splits=3, rule="hyperplane", time_limit=1e-3).fit(X, y)
    assert clf.status_ == "time_limit"
    assert clf.lower_bound_ <= clf.upper_bound_
    assert clf.objective_ <= clf.upper_bound_ + 1e-9
    assert clf.get_n_splits() <= 3
    assert clf.predict(X).shape == (150,)
    assert set(clf.predict(X)) <= set(clf.classes_)


@pytest.mark.parametrize("rule", ["axis", "hyperplane"])
@pytest.mark.parametrize("exactly", [False, True])
def test_a_limit_reached_while_generating_rules_returns_a_greedy_tree(rule, exactly):
    # With time_limit=0 the solve stops once its rules are made, before any search: a tree
    # grown greedily from them, each rule used where its defining rows lie, is a proper tree
    # (it came back as a leaf, then as the best single split). Exactly K gets K splits.
    X, y = _gaussian(1302, 60, 2), _labels(1302, 60, 2)
    with pytest.warns(NotProvenOptimalWarning, match="time_limit"):
        clf = ProperTreeClassifier(n_splits=3, rule=rule, exactly=exactly, time_limit=0).fit(X, y)
    best_stump = ProperTreeClassifier(n_splits=1, rule=rule).fit(X, y)
    assert clf.status_ == "time_limit"
    assert clf.objective_ == clf.upper_bound_
    if exactly:
        assert clf.get_n_splits() == 3
    else:
        assert 1 <= clf.get_n_splits() <= 3
        assert clf.objective_ <= best_stump.objective_  # a loss: the first split is the stump's
    stats = clf.statistics_
    assert stats["greedy_rules_scanned"] >= stats["candidate_rules"] > 0


def test_memory_limit_stops_rule_generation_with_a_greedy_tree():
    X, y = _gaussian(1303, 300, 3), _labels(1303, 300, 3)
    with pytest.warns(NotProvenOptimalWarning, match="memory_limit"):
        clf = ProperTreeClassifier(
            n_splits=4, rule="hyperplane", time_limit=60, memory_limit=10 * 2**20
        ).fit(X, y)
    assert clf.status_ == "memory_limit"
    assert 1 <= clf.get_n_splits() <= 4
    assert 0 < clf.statistics_["candidate_rules"] < 10 * 2**20 // 40  # 40+ bytes a rule
    # The rules stop short of the limit: a doubling of their arrays would have passed it.
    assert 10 * 2**20 / 2 < clf.statistics_["memory_bytes"] <= 10 * 2**20
    assert clf.objective_ == clf.upper_bound_


def test_limits_stop_polynomial_generation_whose_subsets_make_thousands_of_rules():
    # Each 14-row subset of a degree-4 surface makes 2^14 rules; the budget was read every
    # 4,096 subsets, so never: 3 s and 1.6 GB past a 1 s limit of 100 MB.
    rng = np.random.default_rng(2)
    X = rng.normal(size=(17, 2))
    y = (X[:, 0] * X[:, 1] > 0).astype(int)
    with pytest.warns(NotProvenOptimalWarning, match="memory_limit"):
        clf = ProperTreeClassifier(
            n_splits=2, rule="polynomial", degree=4, time_limit=60, memory_limit=10**8
        ).fit(X, y)
    assert clf.status_ == "memory_limit"
    assert clf.statistics_["candidate_rules"] < 10**8 // 8
    assert clf.statistics_["memory_bytes"] <= 10**8


def test_limits_stop_degenerate_surfaces_evaluated_on_every_row():
    # Five collinear rows make every quartic through them degenerate: each of its 2^14 side
    # assignments is evaluated on all rows, which the budget's work count left out.
    rng = np.random.default_rng(2)
    X = rng.normal(size=(16, 2))
    X[:5, 0] = 0.0
    y = (X[:, 0] * X[:, 1] > 0).astype(int)
    y[:5] = np.arange(5) % 2
    limit = 20 * 2**20
    with pytest.warns(NotProvenOptimalWarning, match="memory_limit"):
        clf = ProperTreeClassifier(
            n_splits=2, rule="polynomial", degree=4, time_limit=60, memory_limit=limit
        ).fit(X, y)
    assert clf.status_ == "memory_limit"
    assert clf.statistics_["memory_bytes"] <= limit


def test_rule_generation_reports_its_progress(capsys):
    X, y = _gaussian(1303, 300, 3), _labels(1303, 300, 3)
    with pytest.warns(NotProvenOptimalWarning):
        ProperTreeClassifier(n_splits=4, rule="hyperplane", time_limit=1.2, verbose=1).fit(X, y)
    err = capsys.readouterr().err
    assert re.search(r"generating rules: +[\d,]+ / 4,455,100 row subsets .* [\d,]+ rules", err)


def test_the_search_reports_its_progress_while_a_root_takes_long(capsys):
    # Progress was posted only when a root candidate finished: one line after 4 s here.
    X = _gaussian(1304, 3000, 10)
    y = (X[:, 0] + X[:, 1] * X[:, 2] > 0).astype(int)
    with pytest.warns(NotProvenOptimalWarning):
        ProperTreeClassifier(n_splits=3, time_limit=1.3, verbose=1).fit(X, y)
    lines = [line for line in capsys.readouterr().err.splitlines() if " 0 / 10 " in line]
    assert len(lines) >= 2 and f"ETA {'?':>9}  best" in lines[0]


def test_hopeless_search_is_refused_without_a_time_limit():
    X, y = _gaussian(1301, 300, 2), _labels(1301, 300, 2)
    with pytest.raises(InvalidParameterError, match="hopeless") as err:
        ProperTreeClassifier(n_splits=4, rule="hyperplane").fit(X, y)
    assert "time_limit" in str(err.value)
    # A memory limit does not bound the time: still refused, and the message says why.
    with pytest.raises(InvalidParameterError, match="memory_limit bounds memory, not time"):
        ProperTreeClassifier(n_splits=4, rule="hyperplane", memory_limit=10**8).fit(X, y)


@pytest.mark.parametrize(
    "n_features, params, message",
    [
        (40, dict(rule="hyperplane"), "hyperplanes over 40 features pass through 40 rows each"),
        (
            8,
            dict(rule="polynomial", degree=3),
            "degree-3 surfaces over 8 features pass through 164",
        ),
        (12, dict(rule="hyperplane"), r"candidate rules would need about \d\.\de\d+ GB: use"),
    ],
)
def test_searches_too_large_to_hold_are_refused_by_their_size(n_features, params, message):
    X, y = _gaussian(1302, 200, n_features), _labels(1302, 200, 2)
    with pytest.raises(InvalidParameterError, match=message):
        ProperTreeClassifier(**params).fit(X, y)


@pytest.mark.parametrize(
    "params, name",
    [
        (dict(n_splits=0), "n_splits"),
        (dict(n_splits=2.5), "n_splits"),
        # Sizes of this order overflowed the search's arithmetic (a panic, as InternalError).
        (dict(n_splits=2**63, time_limit=1), "n_splits must be at most 1024"),
        (dict(rule="foo"), "rule"),
        (dict(objective="foo"), "objective"),
        (dict(engine="foo"), "engine"),
        (dict(engine="topdown", exactly=True), "engine"),
        (dict(degree=0), "degree"),
        (dict(side_assignment="some"), "side_assignment"),
        (dict(min_samples_leaf=-1), "min_samples_leaf"),
        (dict(max_depth=-1), "max_depth"),
        (dict(exactly="yes"), "exactly"),
        (dict(n_jobs=-2), "n_jobs"),
    ],
)
def test_bad_parameters(params, name):
    X, y = _gaussian(1302, 6, 2), _labels(1302, 6, 2)
    with pytest.raises(InvalidParameterError, match=name):
        ProperTreeClassifier(**params).fit(X, y)


def test_bad_data():
    frame = pd.DataFrame({"size": [1.0, 2.0, 3.0, 4.0], "colour": ["red", "blue", "red", "red"]})
    with pytest.raises(DataError, match="colour"):
        ProperTreeClassifier().fit(frame, [0, 1, 0, 1])
    X = _gaussian(1303, 6, 2)
    X[3, 1] = np.nan
    with pytest.raises(DataError):
        ProperTreeClassifier(rule="hyperplane").fit(X, [0, 1] * 3)
    with pytest.raises(DataError):
        ProperTreeClassifier().fit(pd.DataFrame(X, columns=["a", "b"]), [0, 1] * 3)


@pytest.mark.parametrize("rule", ["axis", "hyperplane", "polynomial"])
def test_clone_pickle_frames_and_probabilities(rule):
    rng = np.random.default_rng(1304)
    X = pd.DataFrame(rng.standard_normal((14, 2)), columns=["height", "weight"])
    y = np.where(X["height"] + X["weight"] ** 2 > 0.5, "tall", "short")
    clf = ProperTreeClassifier(n_splits=2, rule=rule).fit(X, y)
    assert clf.feature_names_in_.tolist() == ["height", "weight"]
    assert clf.n_features_in_ == 2 and clf.classes_.tolist() == ["short", "tall"]
    text = export_text(clf.tree_)
    assert "height" in text or "weight" in text
    assert "x0" not in text and "x1" not in text
    new = pd.DataFrame(rng.standard_normal((50, 2)), columns=["height", "weight"])
    restored = pickle.loads(pickle.dumps(clf))
    assert restored.tree_ == clf.tree_
    np.testing.assert_array_equal(restored.predict(new), clf.predict(new))
    copy = clone(clf)
    assert copy.get_params() == clf.get_params() and not hasattr(copy, "tree_")
    refit = copy.fit(X, y)
    assert refit.tree_ == clf.tree_
    proba = clf.predict_proba(new)
    assert proba.shape == (50, 2)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    np.testing.assert_array_equal(clf.classes_[proba.argmax(axis=1)], clf.predict(new))
    with pytest.warns(UserWarning, match="does not have valid feature names"):
        assert set(clf.predict(new.to_numpy())) <= {"short", "tall"}


# ---- 10. export and prediction follow exactly the stored equations -------------------------


def _parse_expression(expr: str, names: list[str]):
    """``0.5*a - b + 2*a^2 - 0.1`` -> list of (coef, [feature indices])."""
    terms = []
    for raw in expr.replace(" - ", " + -").split(" + "):
        raw = raw.strip()
        sign = -1.0 if raw.startswith("-") else 1.0
        raw = raw.lstrip("-")
        factors = raw.split("*")
        try:
            coef = float(factors[0])
            factors = factors[1:]
        except ValueError:
            coef = 1.0
        features = []
        for factor in factors:
            name, _, power = factor.partition("^")
            features += [names.index(name)] * (int(power) if power else 1)
        terms.append((sign * coef, features))
    return terms


def _preorder_internal(tree, node=0):
    if tree.kind[node] == LEAF:
        return []
    kids = tree.children_of(node)
    return [node, *_preorder_internal(tree, kids[0]), *_preorder_internal(tree, kids[1])]


@pytest.mark.parametrize("rule, K", [("hyperplane", 3), ("polynomial", 2), ("mixed", 2)])
def test_predict_and_export_follow_the_stored_equations(rule, K):
    rng = np.random.default_rng(1400)
    names = ["alpha", "beta"]
    X = rng.standard_normal((9 if rule != "hyperplane" else 14, 2))
    y = (np.sin(2 * X[:, 0]) + X[:, 1] ** 2 > 0.6).astype(int)
    clf = ProperTreeClassifier(n_splits=K, rule=rule).fit(pd.DataFrame(X, columns=names), y)
    tree = clf.tree_
    assert np.any(tree.kind == OBLIQUE)
    text = export_text(tree)
    assert "<= 0" in text and ">  0" in text
    assert "alpha" in text and "beta" in text
    new = rng.uniform(-3, 3, size=(3000, 2))
    # predict = manual routing through the raw arrays + majority of the leaf reached
    leaves = np.array([_manual_leaf(tree, x) for x in new])
    np.testing.assert_array_equal(leaves, tree.apply(new))
    expected = clf.classes_[np.argmax(tree.value[leaves], axis=1)]
    np.testing.assert_array_equal(clf.predict(pd.DataFrame(new, columns=names)), expected)
    # the printed equations (full precision) are the stored ones, node by node in pre-order
    full = export_text(tree, decimals=17)
    shown = [line.split("|--- ")[1] for line in full.splitlines() if " <= " in line]
    nodes = _preorder_internal(tree)
    assert len(shown) == len(nodes)
    for node, condition in zip(nodes, shown):
        expr, _, rhs = condition.rpartition(" <= ")
        if tree.kind[node] == THRESHOLD:
            assert expr == names[tree.feature[node]]
            assert float(rhs) == pytest.approx(tree.threshold[node], rel=1e-15)
            continue
        assert rhs == "0", condition
        terms = _parse_expression(expr, names)
        k = tree.oblique_index[node]
        assert len(terms) == tree.oblique_ptr[k + 1] - tree.oblique_ptr[k], expr
        for x in new[:300]:
            printed = sum(c * np.prod([x[f] for f in fs]) for c, fs in terms)
            stored = _test_value(tree, node, x)
            assert printed == pytest.approx(stored, rel=1e-12, abs=1e-12), expr


# ---- slow: the big oracle campaigns ---------------------------------------------------------


def _slow_plan(rule: str, rng: random.Random) -> dict:
    if rule == "axis":
        D = rng.choice((1, 2, 3))
        return dict(N=rng.randint(5, 8), D=D, K_max=3, degree=2)
    if rule == "hyperplane":
        r = rng.random()
        if r < 0.2:
            return dict(N=rng.choice((5, 6)), D=2, K_max=3, degree=2)
        if r < 0.3:
            return dict(N=rng.choice((5, 6)), D=3, K_max=2 if rng.random() < 0.5 else 1, degree=2)
        return dict(N=rng.randint(5, 7), D=2, K_max=2, degree=2)
    if rule == "polynomial":
        r = rng.random()
        if r < 0.25:  # 1-D: quadratics and cubics through 2 or 3 rows
            return dict(N=rng.randint(5, 7), D=1, K_max=2, degree=rng.choice((2, 3)))
        if r < 0.35:
            return dict(N=7, D=2, K_max=2, degree=2)
        return dict(N=6, D=2, K_max=2, degree=2)
    if rng.random() < 0.5:
        return dict(N=rng.choice((5, 6)), D=2, K_max=2, degree=1)
    return dict(N=rng.choice((5, 6)), D=2, K_max=2, degree=2)


@pytest.mark.slow
@pytest.mark.parametrize("rule", ["axis", "hyperplane", "polynomial", "mixed"])
def test_oracle_agreement_campaign(rule):
    """≥ 5,000 instances per rule type: every constraint setting on each random data set."""
    rng = random.Random(f"proper-slow-{rule}")
    tally = _Tally()
    tally.thread_mismatches = []  # reported at the end, after every oracle comparison
    seed = 100_000
    brute_checked = 0
    while tally.instances < 5000:
        seed += 1
        size = _slow_plan(rule, rng)
        n_classes = rng.choice((2, 3))
        X = _gaussian(seed, size["N"], size["D"])
        y = _labels(seed, size["N"], n_classes)
        rules = _all_rules(_oracle_rules(X, rule, size["degree"]))
        table = _tree_table(X, y, rules, size["K_max"], n_classes)
        # a sample straight from proper_brute_force, on the cheaper tables
        if len(table[-1][0]) < 3000:
            objective, msl, depth = rng.choice(SETTINGS)
            k = size["K_max"]
            expected = proper_brute_force(
                X,
                y,
                rules,
                k,
                exactly=True,
                objective=objective,
                min_samples_leaf=msl,
                max_depth=depth,
            )
            got = _table_optimum(table, k, objective, msl, depth)
            assert (got is None) == (expected is None), seed
            assert got is None or got == pytest.approx(expected, abs=1e-9), seed
            brute_checked += 1
        for i, (objective, msl, depth) in enumerate(SETTINGS):
            exact = [
                _table_optimum(table, k, objective, msl, depth) for k in range(size["K_max"] + 1)
            ]
            _sweep(
                tally,
                seed,
                rule,
                n_classes=n_classes,
                **size,
                objective=objective,
                min_samples_leaf=msl,
                max_depth=depth,
                exact=exact,
                check_engines=(seed + i) % 4 == 0,
                check_jobs=(seed + i) % 8 == 0,
            )
    assert tally.infeasible > 0 and tally.exactly_worse > 0
    assert brute_checked >= 10
    assert not tally.thread_mismatches, (len(tally.thread_mismatches), tally.thread_mismatches[:5])


def test_boolean_columns_are_numbers():
    """Rules compare numbers, and booleans read as 0/1 (as scikit-learn reads them), in an
    array or in a DataFrame, when fitting and when predicting."""
    rng = np.random.default_rng(0)
    X = rng.integers(0, 2, (40, 3)).astype(bool)
    y = X[:, 0] ^ X[:, 1]
    clf = ProperTreeClassifier(n_splits=3).fit(X, y)
    assert clf.status_ == "optimal" and clf.score(X, y) == 1.0
    np.testing.assert_array_equal(clf.predict(X), clf.predict(X.astype(float)))
    frame = pd.DataFrame(X, columns=["a", "b", "c"]).assign(d=rng.normal(size=40))
    clf = ProperTreeClassifier(n_splits=3).fit(frame, y)
    assert clf.score(frame, y) == 1.0


def _printed_numbers(text: str) -> set[float]:
    return {float(m) for m in re.findall(r"\d+(?:\.\d+)?(?:e[-+]?\d+)?", text)}


def test_printed_oblique_rules_are_the_rules_predict_follows():
    """Coefficients printed to four digits sent a wine row across the printed surface while
    predict kept it on the stored one's side. The estimator now stores short decimals that
    keep every training row's side (the constant term refitted), and exports print each
    coefficient exactly."""
    from sklearn.datasets import load_wine

    X, y = load_wine(return_X_y=True)
    wine = ProperTreeClassifier(n_splits=2, rule="hyperplane").fit(X[:, [6, 9]], y)
    assert "0.559*x0 + 1.001*x1 - 4.9823 <= 0" in export_text(wine.tree_)
    for seed in range(12):
        rule, n_splits = (("hyperplane", 2), ("polynomial", 1))[seed % 2]
        X, y = _gaussian(1400 + seed, 20, 2), _labels(1400 + seed, 20, 2)
        clf = ProperTreeClassifier(n_splits=n_splits, rule=rule).fit(X, y)
        tree = clf.tree_
        for node in np.flatnonzero(tree.kind == OBLIQUE):
            k = tree.oblique_index[node]
            coef = tree.term_coef[tree.oblique_ptr[k] : tree.oblique_ptr[k + 1]]
            shown = _printed_numbers(format_oblique(tree, int(node)))
            assert {abs(c) for c in coef if c not in (0, 1, -1)} <= shown, seed
        assert clf.objective_ == pytest.approx(clf.lower_bound_), seed  # same rows, same loss
