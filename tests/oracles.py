"""Independent pure-Python brute-force references for the solvers' tests.

Nothing here imports optitree: every reference is computed from plain lists and dicts, so an
agreement with the compiled solvers is evidence, not an echo.
"""

from __future__ import annotations

import heapq
import itertools
import math
import random
from collections import Counter, defaultdict
from fractions import Fraction

import numpy as np


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


# ---------------------------------------------------------------------------------------------
# Query learning: identify an object (or its group) by binary membership queries
# (spec: shared/specs/query-learning.md)
#
# Conventions shared by every function below:
# - ``B`` is a list of M rows of N values in {0, 1}; row i is object i, column q is query q.
# - ``prior`` is a list of M non-negative numbers; it is normalised here (floats).
# - ``groups`` is None (object identification) or a list of M hashable labels.
# - a tree is nested tuples: ``("leaf",)`` or ``(q, child_no, child_yes)``, where child_no
#   receives the objects with ``B[i][q] == 0``. Routing objects through it is done here.
# - ``lam`` is the cost base, a float in [1, inf] (``math.inf`` allowed where stated).
# ---------------------------------------------------------------------------------------------

LEAF_NODE = ("leaf",)
_LN2 = math.log(2.0)


def alpha_of(lam: float) -> float:
    """The Rényi order α = 1 / (1 + log2 λ) that matches the cost base λ.

    Examples: λ = 1 → 1, λ = 2 → 1/2, λ = 4 → 1/3, λ = inf → 0.
    """
    if lam == math.inf:
        return 0.0
    if not lam >= 1:
        raise ValueError(f"lam must be in [1, inf], got {lam}")
    # log1p(λ - 1) rather than log(λ): λ - 1 is exact, so t keeps its relative precision
    # for λ just above 1.
    t = math.log1p(lam - 1.0) / _LN2
    return 1.0 / (1.0 + t)


def _one_minus_alpha(lam: float) -> float:
    """1 - α computed as t / (1 + t): no cancellation for λ near 1 (spec §3.8)."""
    t = math.log1p(lam - 1.0) / _LN2
    return t / (1.0 + t)


def _normalised(masses) -> list[float]:
    values = [float(m) for m in masses]
    if any(m < 0 for m in values):
        raise ValueError("masses must be non-negative")
    total = math.fsum(values)
    if total <= 0:
        raise ValueError("masses must have a positive sum")
    return [m / total for m in values]


def renyi_entropy_bits(p, alpha: float) -> float:
    """Rényi entropy of order ``alpha``, in bits, of the masses ``p`` (normalised here).

    Zero masses are ignored. ``alpha == 1`` gives the Shannon entropy and ``alpha == 0`` the
    log2 of the support size. Otherwise the stable form of spec §3.8 is used,
    ``log1p(Σ p_i expm1((α - 1) ln p_i)) / ((1 - α) ln 2)``, which keeps full relative
    precision for α close to 1, where the textbook formula cancels.
    """
    q = [m for m in _normalised(p) if m > 0]
    if alpha == 1:
        return -math.fsum(m * math.log2(m) for m in q)
    if alpha == 0:
        return math.log2(len(q))
    u = math.fsum(m * math.expm1((alpha - 1.0) * math.log(m)) for m in q)
    return math.log1p(u) / ((1.0 - alpha) * _LN2)


def _binary_entropy(p: float) -> float:
    if p <= 0 or p >= 1:
        return 0.0
    return -p * math.log2(p) - (1 - p) * math.log2(1 - p)


def _shannon_bits(masses) -> float:
    total = math.fsum(masses)
    if total <= 0:
        return 0.0
    return -math.fsum(m / total * math.log2(m / total) for m in masses if m > 0)


def _check_tree_shape(tree) -> None:
    if tree == LEAF_NODE:
        return
    if not (isinstance(tree, tuple) and len(tree) == 3 and isinstance(tree[0], int)):
        raise ValueError(f"not a query tree node: {tree!r}")
    _check_tree_shape(tree[1])
    _check_tree_shape(tree[2])


def _walk(B, tree, objects, depth=0):
    """Yield ``(depth, objects, split)`` for every node in preorder (node, no-child, yes-child).

    ``split`` is None at a leaf and ``(q, objects_no, objects_yes)`` at an internal node; the
    objects are routed by their own rows of ``B``.
    """
    if tree == LEAF_NODE:
        yield depth, objects, None
        return
    q, no, yes = tree
    left = [i for i in objects if not B[i][q]]
    right = [i for i in objects if B[i][q]]
    yield depth, objects, (q, left, right)
    yield from _walk(B, no, left, depth + 1)
    yield from _walk(B, yes, right, depth + 1)


def tree_leaves(B, tree) -> list[tuple[int, list[int]]]:
    """``(depth, objects)`` of every leaf of ``tree``, in preorder (empty leaves included)."""
    _check_tree_shape(tree)
    return [(d, objs) for d, objs, split in _walk(B, tree, list(range(len(B)))) if split is None]


def leaf_depths(B, prior, groups, tree) -> list[int]:
    """Number of queries the tree asks before it stops for each object (its leaf depth).

    ``prior`` and ``groups`` are accepted for a uniform signature; depths depend only on the
    rows of ``B``.
    """
    depths = [0] * len(B)
    for d, objs in tree_leaves(B, tree):
        for i in objs:
            depths[i] = d
    return depths


def campbell_cost(masses, depths, lam: float) -> float:
    """L_λ = log_λ Σ_i π_i λ^{d_i} of masses (normalised here) at depths ``depths``.

    λ = 1 gives the expected depth and λ = inf the largest depth with a positive mass.
    Evaluated without overflow for huge λ and without cancellation for λ near 1.
    """
    pairs = [(m, d) for m, d in zip(_normalised(masses), depths) if m > 0]
    if lam == 1:
        return math.fsum(m * d for m, d in pairs)
    dmax = max(d for _, d in pairs)
    if lam == math.inf:
        return float(dmax)
    t = math.log1p(lam - 1.0)  # ln λ
    if t * dmax < 1.0:
        # Σ π λ^d = 1 + Σ π expm1(d ln λ): the small excess over 1 is kept exactly.
        return math.log1p(math.fsum(m * math.expm1(d * t) for m, d in pairs)) / t
    # Factor out λ^dmax so that nothing overflows.
    return dmax + math.log(math.fsum(m * math.exp((d - dmax) * t) for m, d in pairs)) / t


def cost_from_tree(B, prior, groups, tree, lam: float) -> float:
    """L_λ of ``tree`` under ``prior``: log_λ Σ_leaves π_leaf λ^{d_leaf} (spec §1.3).

    λ = 1 gives the expected depth; λ = inf the largest depth of a leaf with positive mass.
    """
    return campbell_cost(prior, leaf_depths(B, prior, groups, tree), lam)


def _labels(groups, M: int) -> list:
    # Object identification is group identification with singleton groups.
    return list(range(M)) if groups is None else list(groups)


def _splits(B, S: frozenset, N: int):
    """Every ``(S_no, S_yes)`` of a query that splits S into two non-empty parts."""
    for q in range(N):
        yes = frozenset(i for i in S if B[i][q])
        if 0 < len(yes) < len(S):
            yield q, S - yes, yes


def optimal_cost(B, prior, groups, lam: float, max_depth: int | None = None) -> float:
    """Exact optimum L* by the dynamic programme of spec §3.11 (memoised on frozensets).

    - λ > 1: F(S) = π_S at a leaf, else min over splitting q of λ·[F(S_0) + F(S_1)];
      L* = log_λ F(Θ).
    - λ = 1: G(S) = 0 at a leaf, else π_S + min_q [G(S_0) + G(S_1)]; L* = G(Θ).
    - λ = inf: W(S) = 0 at a leaf, else 1 + min_q max(W(S_0), W(S_1)); sets of zero mass
      count as -inf, so only leaves with positive mass matter; L* = W(Θ).

    A set is a leaf when it is pure (one object, or one group when ``groups`` is given), when
    no query splits it (an impure leaf), or when it sits at depth ``max_depth``.
    """
    M = len(B)
    N = len(B[0]) if M else 0
    w = _normalised(prior)
    label = _labels(groups, M)
    everything = frozenset(range(M))

    def mass(S):
        return math.fsum(w[i] for i in S)

    def is_leaf(S, depth):
        if len({label[i] for i in S}) <= 1:
            return True
        return max_depth is not None and depth >= max_depth

    memo: dict = {}

    def solve(S, depth, leaf_value, combine):
        key = (S, depth) if max_depth is not None else S
        if key in memo:
            return memo[key]
        best = None
        if not is_leaf(S, depth):
            for _, S0, S1 in _splits(B, S, N):
                v = combine(
                    S,
                    solve(S0, depth + 1, leaf_value, combine),
                    solve(S1, depth + 1, leaf_value, combine),
                )
                if best is None or v < best:
                    best = v
        if best is None:  # pure, cut off, or no query splits S: a leaf
            best = leaf_value(S)
        memo[key] = best
        return best

    if lam == 1:
        return solve(everything, 0, lambda S: 0.0, lambda S, a, b: mass(S) + a + b)
    if lam == math.inf:

        def w_leaf(S):
            return 0.0 if mass(S) > 0 else -math.inf

        return solve(everything, 0, w_leaf, lambda S, a, b: 1.0 + max(a, b))

    t = math.log1p(lam - 1.0)  # ln λ
    deepest = max(M - 1, 1) if max_depth is None else max(min(max_depth, M - 1), 1)
    if t * deepest < 600:
        # Excess E(S) = F(S) - π_S: E = 0 at a leaf, else λ·(E_0 + E_1) + (λ - 1)·π_S.
        # λ - 1 is exact, so the excess keeps its relative precision even for λ near 1.
        e = solve(
            everything, 0, lambda S: 0.0, lambda S, a, b: lam * (a + b) + (lam - 1.0) * mass(S)
        )
        return math.log1p(e / mass(everything)) / t

    # Huge λ: work with ln F to avoid overflow.
    def ln_leaf(S):
        m = mass(S)
        return math.log(m) if m > 0 else -math.inf

    lnf = solve(everything, 0, ln_leaf, lambda S, a, b: t + _logaddexp(a, b))
    return lnf / t


def _logaddexp(a: float, b: float) -> float:
    if a == -math.inf:
        return b
    if b == -math.inf:
        return a
    hi, lo = max(a, b), min(a, b)
    return hi + math.log1p(math.exp(lo - hi))


def exponential_huffman_cost(weights, lam: float) -> float:
    """Optimal L_λ of a binary prefix code for ``weights`` (normalised here), by Huffman.

    λ = 1: classic Huffman, the cost is the sum of the merged weights. λ > 1: exponential
    Huffman (Hu-Kleitman-Tamaki / Humblet), repeatedly replacing the two smallest weights
    w1, w2 by λ(w1 + w2); the cost is log_λ of the final weight. λ = inf: ceil(log2 n) (all
    weights must then be positive). With a complete query set this is the optimal query
    tree's cost (spec §3.11).
    """
    w = _normalised(weights)
    n = len(w)
    if n == 1:
        return 0.0
    if lam == math.inf:
        if any(x == 0 for x in w):
            raise ValueError("lam=inf needs positive weights")
        return float(math.ceil(math.log2(n) - 1e-12))
    if lam == 1:
        heap = list(w)
        heapq.heapify(heap)
        total = 0.0
        while len(heap) > 1:
            merged = heapq.heappop(heap) + heapq.heappop(heap)
            total += merged
            heapq.heappush(heap, merged)
        return total
    t = math.log1p(lam - 1.0)
    if t * (n - 1) < 600:
        # Entries (weight, mass, excess) with weight = mass + excess; a merge gives excess
        # λ(e1 + e2) + (λ - 1)(m1 + m2). Tracking the excess keeps its relative precision
        # for λ near 1, where the final weight is 1 + (something small).
        heap = [(x, x, 0.0) for x in w]
        heapq.heapify(heap)
        while len(heap) > 1:
            _, m1, e1 = heapq.heappop(heap)
            _, m2, e2 = heapq.heappop(heap)
            m, e = m1 + m2, lam * (e1 + e2) + (lam - 1.0) * (m1 + m2)
            heapq.heappush(heap, (m + e, m, e))
        _, m, e = heap[0]
        return math.log1p(e / m) / t
    # Huge λ: the same merges on ln w (a monotone map keeps the heap order).
    heap = [math.log(x) if x > 0 else -math.inf for x in w]
    heapq.heapify(heap)
    while len(heap) > 1:
        heapq.heappush(heap, t + _logaddexp(heapq.heappop(heap), heapq.heappop(heap)))
    return heap[0] / t


def _group_masses(objs, w, label) -> dict:
    masses: dict = defaultdict(float)
    for i in objs:
        masses[label[i]] += w[i]
    return masses


def _diversity(masses, alpha: float) -> float:
    """D_α = [Σ_i (m_i / m)^α]^{1/α}, the exponentiated Rényi entropy of the masses."""
    total = math.fsum(masses)
    return math.fsum((m / total) ** alpha for m in masses if m > 0) ** (1.0 / alpha)


def node_diversity(prior, groups, objects, lam: float) -> float:
    """D_α of an object set: over its groups (or its objects when ``groups`` is None).

    Equals λ^{H_α} of the normalised group masses at the node; 1 for a pure node.
    """
    w = _normalised(prior)
    label = _labels(groups, len(w))
    return _diversity(list(_group_masses(objects, w, label).values()), alpha_of(lam))


def theorem2_breakdown(B, prior, groups, lam: float, tree) -> dict:
    """Every term of Theorem 2 (Theorem 1 when ``groups`` is None), for 1 < λ < inf.

    Returns a dict with:

    - ``entropy_term``: λ^{H_α(Π_y)} = ‖Π_y‖_α;
    - ``nodes``: one dict per internal node in preorder, with ``objects`` (frozenset),
      ``depth``, ``mass``, ``diversity`` (D_a), ``diversity_no``, ``diversity_yes``,
      ``score`` (C_a = (π_l D_l + π_r D_r) / π_a) and
      ``bracket`` ((λ - 1) λ^{d_a} - D_a + C_a); a node of zero mass has NaN entries and
      contributes nothing;
    - ``leaf_correction``: Σ_leaves π_j (D_j - 1) (zero when every leaf is pure);
    - ``total``: entropy_term + Σ π_a bracket_a - leaf_correction;
    - ``direct``: Σ_leaves π_j λ^{d_j}, which ``total`` must equal (spec §2.1).
    """
    if not 1 < lam < math.inf:
        raise ValueError("Theorem 2 needs 1 < lam < inf")
    M = len(B)
    w = _normalised(prior)
    label = _labels(groups, M)
    alpha = alpha_of(lam)

    def div(objs):
        return _diversity(list(_group_masses(objs, w, label).values()), alpha)

    entropy_term = div(range(M))
    nodes, leaf_correction, direct = [], 0.0, 0.0
    for d, objs, split in _walk(B, tree, list(range(M))):
        m = math.fsum(w[i] for i in objs)
        if split is None:
            if m > 0:
                leaf_correction += m * (div(objs) - 1.0)
                direct += m * lam**d
            continue
        _, left, right = split
        if m == 0:
            nan = float("nan")
            nodes.append(
                dict(
                    objects=frozenset(objs),
                    depth=d,
                    mass=0.0,
                    diversity=nan,
                    diversity_no=nan,
                    diversity_yes=nan,
                    score=nan,
                    bracket=nan,
                )
            )
            continue
        m0 = math.fsum(w[i] for i in left)
        m1 = math.fsum(w[i] for i in right)
        d0 = div(left) if m0 > 0 else 1.0
        d1 = div(right) if m1 > 0 else 1.0
        da = div(objs)
        score = (m0 * d0 + m1 * d1) / m
        nodes.append(
            dict(
                objects=frozenset(objs),
                depth=d,
                mass=m,
                diversity=da,
                diversity_no=d0,
                diversity_yes=d1,
                score=score,
                bracket=(lam - 1.0) * lam**d - da + score,
            )
        )
    gap = math.fsum(n["mass"] * n["bracket"] for n in nodes if n["mass"] > 0)
    return dict(
        entropy_term=entropy_term,
        nodes=nodes,
        leaf_correction=leaf_correction,
        total=entropy_term + gap - leaf_correction,
        direct=direct,
    )


def theorem2_total(B, prior, groups, lam: float, tree) -> float:
    """λ^{H_α(Π_y)} + Σ_a π_a[(λ-1)λ^{d_a} - D_a + (π_l/π_a)D_l + (π_r/π_a)D_r]
    - Σ_j π_j(D_j - 1), which equals Σ_leaves π_j λ^{d_j} = λ^{L_λ} (spec §2.1)."""
    return theorem2_breakdown(B, prior, groups, lam, tree)["total"]


def corollary3_breakdown(B, prior, groups, tree) -> dict:
    """Every term of Corollary 3 (Corollary 1 when ``groups`` is None), the λ = 1 case.

    Returns a dict with ``entropy_term`` (H(Π_y) in bits), ``nodes`` (preorder dicts with
    ``objects``, ``depth``, ``mass``, ``rho`` and ``bracket`` = 1 - H(ρ_a) +
    Σ_i (π_a^i/π_a) H(ρ_a^i)), ``leaf_correction`` (Σ_j π_j H(Y | leaf j)), ``total``
    (entropy_term + Σ π_a bracket_a - leaf_correction) and ``direct`` (Σ_j π_j d_j).
    """
    M = len(B)
    w = _normalised(prior)
    label = _labels(groups, M)
    entropy_term = _shannon_bits(list(_group_masses(range(M), w, label).values()))
    nodes, leaf_correction, direct = [], 0.0, 0.0
    for d, objs, split in _walk(B, tree, list(range(M))):
        m = math.fsum(w[i] for i in objs)
        if split is None:
            leaf_correction += m * _shannon_bits(list(_group_masses(objs, w, label).values()))
            direct += m * d
            continue
        _, left, right = split
        if m == 0:
            nodes.append(
                dict(
                    objects=frozenset(objs),
                    depth=d,
                    mass=0.0,
                    rho=float("nan"),
                    bracket=float("nan"),
                )
            )
            continue
        m0 = math.fsum(w[i] for i in left)
        m1 = math.fsum(w[i] for i in right)
        rho = max(m0, m1) / m
        g0 = _group_masses(left, w, label)
        g1 = _group_masses(right, w, label)
        within = 0.0
        for g, ga in _group_masses(objs, w, label).items():
            if ga > 0:  # groups absent at the node contribute nothing (spec §1.4)
                within += ga / m * _binary_entropy(max(g0.get(g, 0.0), g1.get(g, 0.0)) / ga)
        nodes.append(
            dict(
                objects=frozenset(objs),
                depth=d,
                mass=m,
                rho=rho,
                bracket=1.0 - _binary_entropy(rho) + within,
            )
        )
    gap = math.fsum(n["mass"] * n["bracket"] for n in nodes if n["mass"] > 0)
    return dict(
        entropy_term=entropy_term,
        nodes=nodes,
        leaf_correction=leaf_correction,
        total=entropy_term + gap - leaf_correction,
        direct=direct,
    )


def corollary3_total(B, prior, groups, tree) -> float:
    """H(Π_y) + Σ_a π_a[1 - H(ρ_a) + Σ_i (π_a^i/π_a) H(ρ_a^i)] - Σ_j π_j H(Y|j) = L_1."""
    return corollary3_breakdown(B, prior, groups, tree)["total"]


GREEDY_RULES = ("gbs", "lambda", "ggbs", "lambda-ggbs", "count", "group-count")


def greedy_reference_tree(
    B,
    prior,
    groups,
    lam: float,
    rule: str,
    return_unique: bool = False,
    unique_tol: float = 1e-9,
):
    """A slow reference of the greedy top-down builders, with the plain (textbook) scores.

    Rules (minimised at each node; l, r are the no/yes children of the node a):

    - ``"gbs"``: ρ_a = max(π_l, π_r) / π_a;
    - ``"lambda"``: (‖π restricted to l‖_α + ‖π restricted to r‖_α) / π_a, object level;
    - ``"ggbs"``: 1 - H(ρ_a) + Σ_i (π_a^i/π_a) H(ρ_a^i);
    - ``"lambda-ggbs"``: (‖group masses in l‖_α + ‖group masses in r‖_α) / π_a;
    - ``"count"``: max(|Θ_l|, |Θ_r|); ``"group-count"``: max(N_l, N_r) (groups present).

    Candidates are the queries that split the node into two non-empty parts; the chosen one
    is the lowest query index among the scores within 1e-12 (relative) of the minimum.
    A node stops at one object, or at one group when ``groups`` is given (whatever the
    rule); a node no query splits becomes an impure leaf. A node of zero mass is scored with
    uniform weights (spec §3.9). The plain "lambda" formulas cancel near λ = 1: use them at
    λ away from 1 (1.5, 2, 4, ...).

    With ``return_unique=True`` returns ``(tree, unique)``, where ``unique`` is False when at
    some node a query inducing a *different* partition scores within ``unique_tol``
    (relative) of the minimum, i.e. when another implementation (other rounding, or a
    continuous variant of the score such as λ-GBS at λ near 1) could choose differently.
    """
    if rule not in GREEDY_RULES:
        raise ValueError(f"unknown rule {rule!r}")
    M = len(B)
    N = len(B[0]) if M else 0
    w = _normalised(prior)
    label = _labels(groups, M)
    alpha = alpha_of(lam) if rule in ("lambda", "lambda-ggbs") else 1.0
    unique = True

    def quasi_norm(masses):
        return math.fsum(m**alpha for m in masses if m > 0) ** (1.0 / alpha)

    def score(objs, left, right, weight):
        ma = math.fsum(weight[i] for i in objs)
        if rule == "count":
            return float(max(len(left), len(right)))
        if rule == "group-count":
            return float(max(len({label[i] for i in left}), len({label[i] for i in right})))
        m0 = math.fsum(weight[i] for i in left)
        m1 = math.fsum(weight[i] for i in right)
        if rule == "gbs":
            return max(m0, m1) / ma
        if rule == "lambda":
            return (
                quasi_norm([weight[i] for i in left]) + quasi_norm([weight[i] for i in right])
            ) / ma
        g0 = _group_masses(left, weight, label)
        g1 = _group_masses(right, weight, label)
        if rule == "lambda-ggbs":
            return (quasi_norm(g0.values()) + quasi_norm(g1.values())) / ma
        within = 0.0  # "ggbs"
        for g, ga in _group_masses(objs, weight, label).items():
            if ga > 0:
                within += ga / ma * _binary_entropy(max(g0.get(g, 0.0), g1.get(g, 0.0)) / ga)
        return 1.0 - _binary_entropy(max(m0, m1) / ma) + within

    def build(objs):
        nonlocal unique
        if len({label[i] for i in objs}) <= 1:
            return LEAF_NODE
        weight = w if math.fsum(w[i] for i in objs) > 0 else [1.0] * M
        scored = []
        for q in range(N):
            right = [i for i in objs if B[i][q]]
            left = [i for i in objs if not B[i][q]]
            if left and right:
                scored.append((score(objs, left, right, weight), q, left, right))
        if not scored:
            return LEAF_NODE  # nothing splits this set: an impure (ambiguous) leaf
        best = min(s for s, *_ in scored)
        chosen = next(c for c in scored if c[0] <= best + 1e-12 * abs(best))
        _, q, left, right = chosen
        partition = {frozenset(left), frozenset(right)}
        for s, _, l2, r2 in scored:
            if s <= best + unique_tol * abs(best) and {frozenset(l2), frozenset(r2)} != partition:
                unique = False
        return (q, build(left), build(right))

    tree = build(list(range(M)))
    return (tree, unique) if return_unique else tree


def random_query_problem(
    rng: random.Random, M: int, N: int, with_groups: bool = False, n_groups: int = 2
):
    """A random identifiable problem ``(B, prior, groups)``.

    ``B`` is an M × N list of 0/1 rows: distinct rows for object identification, or, with
    groups, rows that differ between any two objects of different groups (resampled until
    so). ``prior`` is random, positive and normalised; ``groups`` is None or a list of labels
    in ``range(n_groups)``.
    """
    if not with_groups and M > 2**N:
        raise ValueError(f"{M} distinct rows need at least {math.ceil(math.log2(M))} queries")
    prior = _normalised([rng.uniform(0.05, 1.0) for _ in range(M)])
    if not with_groups:
        # Uniform over ordered tuples of distinct rows, i.e. iid rows conditioned on
        # distinctness.
        codes = rng.sample(range(2**N), M)
        return [[(c >> j) & 1 for j in range(N)] for c in codes], prior, None
    groups = [rng.randrange(n_groups) for _ in range(M)]
    for _ in range(100_000):
        B = [[rng.randrange(2) for _ in range(N)] for _ in range(M)]
        seen: dict = {}
        if all(seen.setdefault(tuple(row), g) == g for row, g in zip(B, groups)):
            return B, prior, groups
    raise ValueError("could not draw rows that identify the groups; use more queries")


def complete_query_set(M: int) -> list[list[int]]:
    """The M × (2^M - 2) matrix whose columns are all proper non-empty subsets of objects.

    Column k (k = 0 .. 2^M - 3) is the subset whose bitmask is k + 1 (bit i = object i).
    """
    return [[(mask >> i) & 1 for mask in range(1, 2**M - 1)] for i in range(M)]


# ---------------------------------------------------------------------------------------------
# MAPTree: the BCART posterior with Dirichlet leaves (spec: shared/specs/maptree.md)
#
# Conventions shared by every function below:
# - ``X`` is a list of N rows of F values in {0, 1} (anything whose items ``int()`` accepts);
#   ``y`` is a list of N labels in 0..K-1, where K = len(rho).
# - ``rho`` is a list of K pseudo-counts (label order); ``alpha`` in (0, 1), ``beta`` >= 0.
# - a tree is a string in the reference format: "" is a leaf, "(" T0 f T1 ")" splits on the
#   0-based feature f, with T0 receiving the rows whose feature f is 0.
# - costs are -log P(T, Y | X) (spec §1.4), in Python's own math.lgamma / math.log.
# ---------------------------------------------------------------------------------------------


def _as_rows(X) -> list[list[int]]:
    return [[int(v) for v in row] for row in X]


def maptree_log_split(alpha: float, beta: float, depth: int) -> float:
    """ln p_split(d) = ln(alpha * (1 + d)^-beta) (spec §1.2)."""
    return math.log(alpha * (1.0 + depth) ** (-beta))


def maptree_log_leaf(alpha: float, beta: float, depth: int, splittable: bool) -> float:
    """ln p_leaf(d, I): 0 for a node no feature divides, else ln(1 - p_split(d)) (spec §1.2)."""
    if not splittable:
        return 0.0
    return math.log1p(-alpha * (1.0 + depth) ** (-beta))


def maptree_log_multibeta(a) -> float:
    """ln B_K(a) = sum_k lgamma(a_k) - lgamma(sum_k a_k)."""
    return sum(math.lgamma(v) for v in a) - math.lgamma(sum(a))


def maptree_leaf_loglik(counts, rho) -> float:
    """LL(c) = ln B_K(c + rho) - ln B_K(rho): the Dirichlet-Multinomial marginal (spec §1.3)."""
    if len(counts) != len(rho):
        raise ValueError("one count per pseudo-count")
    return maptree_log_multibeta([c + r for c, r in zip(counts, rho)]) - maptree_log_multibeta(
        list(rho)
    )


def _maptree_counts(rows, y, k: int) -> list[int]:
    counts = [0] * k
    for r in rows:
        counts[y[r]] += 1
    return counts


def _maptree_valid(X: list[list[int]], rows, n_features: int) -> list[int]:
    """The features that divide ``rows`` (both sides non-empty), ascending."""
    out = []
    for f in range(n_features):
        values = {X[r][f] for r in rows}
        if len(values) == 2:
            out.append(f)
    return out


def parse_maptree_string(tree: str):
    """The reference string as nested tuples: None (leaf) or (feature, child0, child1)."""

    def node(i: int):
        if i < len(tree) and tree[i] == "(":
            left, i = node(i + 1)
            j = i
            while j < len(tree) and tree[j].isdigit():
                j += 1
            if j == i:
                raise ValueError(f"no feature index at position {i} of {tree!r}")
            feature = int(tree[i:j])
            right, j = node(j)
            if j >= len(tree) or tree[j] != ")":
                raise ValueError(f"expected ')' at position {j} of {tree!r}")
            return (feature, left, right), j + 1
        return None, i

    parsed, end = node(0)
    if end != len(tree):
        raise ValueError(f"trailing characters in {tree!r}")
    return parsed


def maptree_cost(X, y, tree: str, alpha: float, beta: float, rho) -> float:
    """cost(T) = -log P(T, Y | X) of a reference-format tree (spec §1.2-§1.4).

    A leaf at depth d costs -(ln p_leaf + LL(counts)); an internal node costs
    -ln p_split(d) + ln |V| with |V| the number of features dividing its rows. A split on a
    feature that does not divide its rows makes the tree impossible: +inf.
    """
    X = _as_rows(X)
    y = [int(v) for v in y]
    rho = [float(r) for r in rho]
    k = len(rho)
    n_features = len(X[0]) if X else 0
    parsed = parse_maptree_string(tree)

    def walk(node, rows: list[int], depth: int) -> float:
        valid = _maptree_valid(X, rows, n_features)
        if node is None:
            log_leaf = maptree_log_leaf(alpha, beta, depth, bool(valid))
            return -(log_leaf + maptree_leaf_loglik(_maptree_counts(rows, y, k), rho))
        feature, left, right = node
        if feature not in valid:
            return math.inf
        penalty = -maptree_log_split(alpha, beta, depth) + math.log(len(valid))
        rows0 = [r for r in rows if X[r][feature] == 0]
        rows1 = [r for r in rows if X[r][feature] == 1]
        return penalty + walk(left, rows0, depth + 1) + walk(right, rows1, depth + 1)

    return walk(parsed, list(range(len(y))), 0)


def maptree_optimum(X, y, alpha: float, beta: float, rho) -> tuple[float, str]:
    """The MAP cost and one MAP tree, by the exact dynamic programme of spec §6 D::

        best(I, d) = min( leaf cost(I, d),
                          min over f in V(I) of -ln p_split(d) + ln|V(I)|
                                                + best(I|f=0, d+1) + best(I|f=1, d+1) )

    memoised on (frozenset(I), d). Ties keep the leaf, then the lowest feature.
    """
    X = _as_rows(X)
    y = [int(v) for v in y]
    rho = [float(r) for r in rho]
    k = len(rho)
    n_features = len(X[0]) if X else 0
    memo: dict = {}

    def best(rows: frozenset, depth: int) -> tuple[float, str]:
        key = (rows, depth)
        if key in memo:
            return memo[key]
        valid = _maptree_valid(X, rows, n_features)
        leaf = -(
            maptree_log_leaf(alpha, beta, depth, bool(valid))
            + maptree_leaf_loglik(_maptree_counts(rows, y, k), rho)
        )
        result = (leaf, "")
        if valid:
            penalty = -maptree_log_split(alpha, beta, depth) + math.log(len(valid))
            for f in valid:
                c0, t0 = best(frozenset(r for r in rows if X[r][f] == 0), depth + 1)
                c1, t1 = best(frozenset(r for r in rows if X[r][f] == 1), depth + 1)
                value = penalty + c0 + c1
                if value < result[0]:
                    result = (value, f"({t0}{f}{t1})")
        memo[key] = result
        return result

    return best(frozenset(range(len(y))), 0)


def all_maptree_trees(X, n_features: int) -> list[str]:
    """Every tree of non-zero prior on ``X`` (only dividing splits, hence each feature at most
    once per path), as reference strings; the leaf "" first."""
    X = _as_rows(X)
    memo: dict = {}

    def trees(rows: frozenset) -> list[str]:
        if rows in memo:
            return memo[rows]
        out = [""]
        for f in _maptree_valid(X, rows, n_features):
            left = trees(frozenset(r for r in rows if X[r][f] == 0))
            right = trees(frozenset(r for r in rows if X[r][f] == 1))
            out.extend(f"({a}{f}{b})" for a in left for b in right)
        memo[rows] = out
        return out

    return trees(frozenset(range(len(X))))


def random_binary_problem(
    rng: random.Random, n: int, f: int, k: int
) -> tuple[list[list[int]], list[int]]:
    """Random 0/1 rows (n x f) and labels in 0..k-1.

    About a quarter of the rows copy an earlier row's features with a freshly drawn label, so
    duplicate rows (often with conflicting labels) are common, not just possible.
    """
    X: list[list[int]] = []
    for _ in range(n):
        if X and rng.random() < 0.25:
            X.append(list(rng.choice(X)))
        else:
            X.append([rng.randrange(2) for _ in range(f)])
    y = [rng.randrange(k) for _ in range(n)]
    return X, y


# ---------------------------------------------------------------------------------------------
# ---- proper trees (He & Little) ----  (spec: shared/specs/proper-trees.md)
#
# Conventions shared by every function below:
# - ``X`` is an (N, D) float array, ``y`` a length-N sequence of labels (any hashable values).
# - a rule is a pair ``(plus, defining)``: ``plus`` a length-N bool array (the r+ side, which
#   is the LEFT child), ``defining`` a tuple of point indices P(r).
# - a tree over rule ids is ``None`` (a leaf / empty child slot) or ``(rule, left, right)``.
# - everything is plain enumeration: permutations are decoded by insertion (spec §2.3),
#   nothing uses the splits/SODT recursion, so agreement with the solver is evidence.
# ---------------------------------------------------------------------------------------------

ProperRule = tuple[np.ndarray, tuple[int, ...]]
ProperTree = tuple  # (rule_id, left, right); a leaf is None


def proper_axis_rules(X) -> list[ProperRule]:
    """Axis rules ``x_d <= X[n, d]``, one per (d, n) in d-major order, ties kept (spec §3.6)."""
    X = np.asarray(X, dtype=float)
    n_points, n_dims = X.shape
    return [(X[:, d] <= X[n, d], (n,)) for d in range(n_dims) for n in range(n_points)]


def proper_hyperplane_rules(X, sides: str = "all") -> list[ProperRule]:
    """Hyperplanes through every D-subset of the points (spec §3.6).

    The plane w.x = b is the null space of [X_P, -1]; rank-deficient subsets are skipped, and so
    are subsets whose plane passes through a non-defining point (degenerate data). The
    orientation is fixed so that the first non-zero component of w is positive; the off-plane
    points with w.x - b < 0 form the base of PLUS. ``sides="all"`` then yields one rule per
    assignment in itertools.product((True, False), repeat=D) (True: that defining point is in
    PLUS); ``sides="closed"`` only the all-True and the all-False assignments.
    """
    if sides not in ("all", "closed"):
        raise ValueError(f"sides must be 'all' or 'closed', not {sides!r}")
    X = np.asarray(X, dtype=float)
    n_points, n_dims = X.shape
    scale = max(1.0, float(np.abs(X).max())) if X.size else 1.0
    if sides == "all":
        assignments = list(itertools.product((True, False), repeat=n_dims))
    else:
        assignments = [(True,) * n_dims, (False,) * n_dims]
    rules: list[ProperRule] = []
    for subset in itertools.combinations(range(n_points), n_dims):
        P = list(subset)
        A = np.hstack([X[P], -np.ones((n_dims, 1))])
        _, sv, vt = np.linalg.svd(A)
        if sv.size < n_dims or sv[n_dims - 1] <= 1e-10 * max(1.0, sv[0]):
            continue  # rank < D: the points do not span a unique hyperplane
        v = vt[-1]
        w, b = v[:n_dims], v[n_dims]
        nonzero = np.flatnonzero(np.abs(w) > 1e-12)
        if nonzero.size == 0:
            continue
        if w[nonzero[0]] < 0:
            w, b = -w, -b
        r = X @ w - b
        tol = 1e-9 * scale * (1.0 + float(np.linalg.norm(w)))
        off = np.ones(n_points, dtype=bool)
        off[P] = False
        if np.any(np.abs(r[off]) <= tol):
            continue  # another data point lies on the plane: degenerate, skipped
        base = off & (r < 0)
        for s in assignments:
            plus = base.copy()
            for p, side in zip(P, s):
                plus[p] = side
            rules.append((plus, tuple(P)))
    return rules


def proper_lift(X, degree: int) -> np.ndarray:
    """All monomials of total degree 1..degree (G = C(D+degree, D) - 1 columns).

    Column order: by degree, then itertools.combinations_with_replacement over the dimensions.
    """
    X = np.asarray(X, dtype=float)
    n_points, n_dims = X.shape
    cols = []
    for deg in range(1, degree + 1):
        for combo in itertools.combinations_with_replacement(range(n_dims), deg):
            col = np.ones(n_points)
            for d in combo:
                col = col * X[:, d]
            cols.append(col)
    return np.column_stack(cols) if cols else np.zeros((n_points, 0))


def proper_polynomial_rules(X, degree: int, sides: str = "all") -> list[ProperRule]:
    """Degree-``degree`` hypersurfaces: the hyperplane generator on ``proper_lift(X, degree)``."""
    return proper_hyperplane_rules(proper_lift(X, degree), sides=sides)


def proper_ancestry(rules: list[ProperRule]) -> np.ndarray:
    """The M x M ancestry matrix of spec §1.4.

    K[i][j] = +1 if every defining point of rule j is in plus(i), -1 if none is, else 0;
    K[i][i] = 0.
    """
    M = len(rules)
    K = np.zeros((M, M), dtype=int)
    if M == 0:
        return K
    plus = np.array([np.asarray(p, dtype=bool) for p, _ in rules])
    for j, (_, defining) in enumerate(rules):
        if len(defining) == 0:
            raise ValueError(f"rule {j} has no defining points")
        inside = plus[:, list(defining)]
        col = np.where(inside.all(axis=1), 1, np.where(~inside.any(axis=1), -1, 0))
        K[:, j] = col
    np.fill_diagonal(K, 0)
    return K


def proper_decode(perm, K) -> ProperTree | None:
    """Insertion decoder (spec §2.3). Returns the tree, or None when a K entry is 0 on the way.

    Each rule walks down from the root (K = +1: left, -1: right) and takes the first empty
    child slot. The empty permutation decodes to the single leaf, which is also None (it never
    fails), so only a non-empty ``perm`` can signal failure with None.
    """
    root: list | None = None  # mutable nodes [rule, left, right] while building
    for j in perm:
        new = [j, None, None]
        if root is None:
            root = new
            continue
        node = root
        while True:
            k = K[node[0]][j]
            if k == 0:
                return None
            slot = 1 if k > 0 else 2
            if node[slot] is None:
                node[slot] = new
                break
            node = node[slot]

    def freeze(node):
        return None if node is None else (node[0], freeze(node[1]), freeze(node[2]))

    return freeze(root)


def proper_level_order(tree: ProperTree | None) -> list[int]:
    """Left-first level order (breadth-first) of the rule ids of ``tree``."""
    out: list[int] = []
    queue = [tree]
    while queue:
        nxt = []
        for node in queue:
            if node is None:
                continue
            out.append(node[0])
            nxt.extend((node[1], node[2]))
        queue = nxt
    return out


def proper_gen_trees(rule_ids, K) -> list[ProperTree | None]:
    """All proper trees over exactly these rules: {decode(s) : s a permutation, decode succeeds}.

    Deduplicated on the level order, in order of first appearance over
    itertools.permutations(rule_ids). ``[None]`` (the single leaf) for an empty rule list.
    """
    rule_ids = list(rule_ids)
    if not rule_ids:
        return [None]
    seen: dict[tuple[int, ...], ProperTree] = {}
    for perm in itertools.permutations(rule_ids):
        tree = proper_decode(perm, K)
        if tree is None:
            continue
        key = tuple(proper_level_order(tree))
        if key not in seen:
            seen[key] = tree
    return list(seen.values())


def _proper_leaf_cost(labels: np.ndarray, objective: str) -> float:
    n = labels.shape[0]
    if n == 0:
        return 0.0
    if objective == "sse":
        values = labels.astype(float)
        return float(((values - values.mean()) ** 2).sum())
    _, counts = np.unique(labels, return_counts=True)
    if objective == "misclassification":
        return float(n - counts.max())
    if objective == "gini":
        return float(n * (1.0 - ((counts / n) ** 2).sum()))
    if objective == "entropy":
        return float(-(counts * np.log(counts / n)).sum())
    raise ValueError(f"unknown objective {objective!r}")


def proper_tree_is_proper(tree: ProperTree | None, rules: list[ProperRule]) -> bool:
    """Whether every rule's defining points lie in the data of the node where it sits.

    Computed from the PLUS sets along the paths, without the K matrix. Also False when a rule
    id appears twice in the tree.
    """
    if tree is None:
        return True
    n_points = len(rules[0][0])
    used: list[int] = []

    def walk(node, mask: np.ndarray) -> bool:
        if node is None:
            return True
        rule, left, right = node
        used.append(rule)
        plus, defining = rules[rule]
        plus = np.asarray(plus, dtype=bool)
        if not all(mask[p] for p in defining):
            return False
        return walk(left, mask & plus) and walk(right, mask & ~plus)

    ok = walk(tree, np.ones(n_points, dtype=bool))
    return ok and len(set(used)) == len(used)


def _proper_depth(tree: ProperTree | None) -> int:
    if tree is None:
        return 0
    return 1 + max(_proper_depth(tree[1]), _proper_depth(tree[2]))


def proper_tree_cost(
    tree: ProperTree | None,
    rules: list[ProperRule],
    y,
    objective: str = "misclassification",
    min_samples_leaf: int = 0,
    max_depth: int | None = None,
) -> float | None:
    """E(tree): the sum over leaves of the leaf loss, all N points routed (left = plus side).

    Leaf losses: "misclassification" |leaf| - max class count; "gini" n(1 - sum p_c^2);
    "entropy" n H(p) in nats; "sse" sum (y - mean)^2 (numeric y). An empty leaf costs 0.
    None when infeasible: a leaf with fewer than ``min_samples_leaf`` points (so a leaf with
    exactly min_samples_leaf points is allowed), depth (rule nodes on the longest root-to-leaf
    path) above ``max_depth``, or a tree that is not proper on the data.
    """
    y = np.asarray(y)
    if max_depth is not None and _proper_depth(tree) > max_depth:
        return None
    if tree is not None and not proper_tree_is_proper(tree, rules):
        return None
    total = 0.0

    def walk(node, mask: np.ndarray) -> bool:
        nonlocal total
        if node is None:
            if int(mask.sum()) < min_samples_leaf:
                return False
            total += _proper_leaf_cost(y[mask], objective)
            return True
        plus = np.asarray(rules[node[0]][0], dtype=bool)
        return walk(node[1], mask & plus) and walk(node[2], mask & ~plus)

    if not walk(tree, np.ones(y.shape[0], dtype=bool)):
        return None
    return total


def proper_brute_force(
    X,
    y,
    rules: list[ProperRule],
    n_splits: int,
    *,
    exactly: bool = False,
    objective: str = "misclassification",
    min_samples_leaf: int = 0,
    max_depth: int | None = None,
) -> float | None:
    """The optimum over proper trees by plain enumeration (None when no tree is feasible).

    ``exactly=True``: over all trees using exactly ``n_splits`` distinct rules (every
    combination of rule indices, every permutation decoded). ``exactly=False``: the minimum of
    that over k = 0..n_splits, where k = 0 is the single leaf.
    """
    y = np.asarray(y)
    if len(X) != y.shape[0]:
        raise ValueError("X and y have different lengths")
    if any(len(p) != y.shape[0] for p, _ in rules):
        raise ValueError("a rule's plus set does not have N entries")
    K = proper_ancestry(rules)
    ks = [n_splits] if exactly else list(range(n_splits + 1))
    best: float | None = None
    for k in ks:
        for combo in itertools.combinations(range(len(rules)), k):
            for tree in proper_gen_trees(combo, K):
                # Decoded trees are proper by construction; check it independently of K.
                assert tree is None or proper_tree_is_proper(tree, rules)
                cost = proper_tree_cost(tree, rules, y, objective, min_samples_leaf, max_depth)
                if cost is not None and (best is None or cost < best):
                    best = cost
    return best


def proper_separable_dichotomies(X) -> set[frozenset]:
    """All strictly linearly separable unordered dichotomies of range(N), by LP feasibility.

    Each labelling s (point 0 fixed to +1) is tested for w, b with s_i (w.x_i - b) >= 1. A
    dichotomy is returned as the frozenset of the side holding point 0; the trivial one
    (everything on one side) is included.
    """
    from scipy.optimize import linprog

    X = np.asarray(X, dtype=float)
    n_points, n_dims = X.shape
    out: set[frozenset] = set()
    if n_points == 0:
        return out
    lifted = np.hstack([X, -np.ones((n_points, 1))])
    for rest in itertools.product((1.0, -1.0), repeat=n_points - 1):
        s = np.array((1.0, *rest))
        res = linprog(
            np.zeros(n_dims + 1),
            A_ub=-s[:, None] * lifted,
            b_ub=-np.ones(n_points),
            bounds=[(None, None)] * (n_dims + 1),
            method="highs",
        )
        if res.status == 0:
            out.add(frozenset(int(i) for i in np.flatnonzero(s > 0)))
        elif res.status != 2:
            raise RuntimeError(f"linprog failed: {res.message}")
    return out
