"""Independent pure-Python brute-force references for the solvers' tests.

Nothing here imports optitree: every reference is computed from plain lists and dicts, so an
agreement with the compiled solvers is evidence, not an echo.
"""

from __future__ import annotations

import random
from collections import Counter, defaultdict
from fractions import Fraction


def random_categorical(
    rng: random.Random, n_rows: int, n_features: int, n_values: int, n_classes: int
) -> tuple[list[list[int]], list[int]]:
    """A random instance with codes in 0..n_values-1 and labels in 0..n_classes-1."""
    X = [[rng.randrange(n_values) for _ in range(n_features)] for _ in range(n_rows)]
    y = [rng.randrange(n_classes) for _ in range(n_rows)]
    return X, y


def _majority_weight(rows: list[int], y: list, w: list[float]) -> float:
    totals: dict = defaultdict(float)
    for r in rows:
        totals[y[r]] += w[r]
    return max(totals.values(), default=0.0)


def best_stump_accuracy(X: list[list], y: list, w: list[float] | None = None) -> float:
    """Best weighted accuracy of a tree with at most one multiway split on a categorical column."""
    n = len(y)
    w = [1.0] * n if w is None else list(w)
    everything = list(range(n))
    best = _majority_weight(everything, y, w)
    for j in range(len(X[0]) if X else 0):
        groups: dict = defaultdict(list)
        for r in range(n):
            groups[X[r][j]].append(r)
        best = max(best, sum(_majority_weight(g, y, w) for g in groups.values()))
    return best / sum(w)


def majority(labels: list) -> object:
    """The most frequent label (first seen on ties)."""
    return Counter(labels).most_common(1)[0][0]


# ---------------------------------------------------------------------------------------------
# Branches: sparse multiway trees maximising accuracy - penalty * splits
# ---------------------------------------------------------------------------------------------


def _fraction_weights(n_rows: int, sample_weight) -> list[Fraction]:
    if sample_weight is None:
        return [Fraction(1)] * n_rows
    # str() first, so that a float such as 0.1 means the decimal the user wrote.
    return [w if isinstance(w, Fraction) else Fraction(str(w)) for w in sample_weight]


def branches_optimum(
    X: list[list[int]],
    y: list,
    penalty,
    *,
    n_values: list[int] | None = None,
    max_depth: int | None = None,
    min_samples_leaf: int = 1,
    sample_weight=None,
) -> tuple[Fraction, int]:
    """Optimal value of ``accuracy - penalty * splits`` over multiway trees, by brute force.

    Exhaustive memoised recursion over *branches*, keyed by the set of ``(feature, value)``
    tests that define them (not by the rows they select), in exact rational arithmetic::

        R(l) = max( H(l),  max over features i unused on l of
                           -penalty + sum over v in 0..C_i-1 of R(l and X_i = v) )

    where ``H(l)`` is the weight of the majority class of the rows of ``l`` over the total
    weight and an empty branch is worth 0. Exact ties go to fewer splits: every subtree is
    scored as the pair ``(value, -splits)`` and pairs compare lexicographically (the order is
    compatible with sums, so the recursion stays exact for the tie-break too).

    Parameters
    ----------
    X : list of rows of int
        Category codes; column ``i`` holds values in ``0 .. n_values[i] - 1``.
    y : list
        Class labels (any hashable values).
    penalty : Fraction, int or str
        The price of one split (a float is read through its ``str``).
    n_values : list of int, optional
        Number of categories of each column (default: largest code + 1). Categories absent
        from the rows make empty children, which cost nothing and are worth 0.
    max_depth : int, optional
        Longest root-to-leaf path (number of tests in a branch).
    min_samples_leaf : int
        A split is allowed only if each of its non-empty children holds at least this many
        rows (counted without weights).
    sample_weight : list of numbers, optional
        Row weights (ints, Fractions, or decimals read through ``str``).

    Returns
    -------
    (Fraction, int)
        The optimal value and the number of splits of the optimal tree with fewest splits.
    """
    n = len(y)
    q = len(X[0]) if n else 0
    lam = penalty if isinstance(penalty, Fraction) else Fraction(str(penalty))
    if n_values is None:
        n_values = [max(row[i] for row in X) + 1 for i in range(q)]
    w = _fraction_weights(n, sample_weight)
    total = sum(w)
    if total <= 0:
        raise ValueError("the total weight must be positive")
    memo: dict[frozenset, tuple[Fraction, int]] = {}

    def solve(tests: frozenset, rows: list[int]) -> tuple[Fraction, int]:
        """``rows``: the rows satisfying every test (any superset filtered by the tests)."""
        if tests in memo:
            return memo[tests]
        rows = [r for r in rows if all(X[r][f] == v for f, v in tests)]
        if not rows:
            memo[tests] = (Fraction(0), 0)
            return memo[tests]
        per_class: dict = defaultdict(Fraction)
        for r in rows:
            per_class[y[r]] += w[r]
        best = (max(per_class.values()) / total, 0)
        if max_depth is None or len(tests) < max_depth:
            used = {f for f, _ in tests}
            for f in range(q):
                if f in used:
                    continue
                sizes = Counter(X[r][f] for r in rows)
                if any(0 < s < min_samples_leaf for s in sizes.values()):
                    continue
                value, splits = -lam, 1
                for v in range(n_values[f]):
                    child_value, child_splits = solve(tests | {(f, v)}, rows)
                    value += child_value
                    splits += child_splits
                if (value, -splits) > (best[0], -best[1]):
                    best = (value, splits)
        memo[tests] = best
        return best

    return solve(frozenset(), list(range(n)))


def evaluate_multiway_tree(
    X: list[list[int]],
    y: list,
    penalty,
    feature: list[int],
    children: list[list[int]],
    *,
    sample_weight=None,
) -> tuple[Fraction, int, list[dict]]:
    """Exact value of a given multiway tree, by routing every row.

    The tree is described by plain lists: node 0 is the root, ``feature[i]`` is the column
    tested at node ``i`` (ignored for leaves) and ``children[i]`` its children (empty for a
    leaf), child ``j`` taking the rows whose code is ``j``. Every leaf predicts the majority
    class of its own rows.

    Returns
    -------
    (Fraction, int, list of dict)
        ``accuracy - penalty * splits``, the number of splits, and for every node the total
        weight of each class among the rows that reach it.
    """
    lam = penalty if isinstance(penalty, Fraction) else Fraction(str(penalty))
    w = _fraction_weights(len(y), sample_weight)
    totals: list[dict] = [defaultdict(Fraction) for _ in feature]
    for r, row in enumerate(X):
        node = 0
        totals[node][y[r]] += w[r]
        while children[node]:
            node = children[node][row[feature[node]]]
            totals[node][y[r]] += w[r]
    splits = sum(1 for c in children if c)
    correct = sum(
        (max(t.values(), default=Fraction(0)) for t, c in zip(totals, children) if not c),
        Fraction(0),
    )
    return correct / sum(w) - lam * splits, splits, [dict(t) for t in totals]


def one_hot_columns(
    X: list[list[int]], n_values: list[int], drop: str | None = None
) -> list[list[int]]:
    """One 0/1 column per category of each column, in order; ``drop`` leaves out each
    column's ``"first"`` or ``"last"`` category (a single-category column then vanishes)."""
    out: list[list[int]] = [[] for _ in X]
    for f, size in enumerate(n_values):
        kept = list(range(size))
        if drop == "first":
            kept = kept[1:]
        elif drop == "last":
            kept = kept[:-1]
        for v in kept:
            for r, row in enumerate(X):
                out[r].append(int(row[f] == v))
    return out


def dense_codes(column: list) -> tuple[list[int], int]:
    """Codes 0..C-1 of a column by the rank of each value among its sorted distinct values."""
    distinct = sorted(set(column))
    rank = {v: k for k, v in enumerate(distinct)}
    return [rank[v] for v in column], len(distinct)
