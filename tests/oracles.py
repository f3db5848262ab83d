"""Independent pure-Python brute-force references for the solvers' tests.

Nothing here imports optitree: every reference is computed from plain lists and dicts, so an
agreement with the compiled solvers is evidence, not an echo.
"""

from __future__ import annotations

import random
from collections import Counter, defaultdict


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
