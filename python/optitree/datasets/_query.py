"""Query-learning problems: the zoo as animals × yes/no questions, and the synthetic
active-learning benchmark of Bellala, Bhavnani & Scott (spec §4.1).
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["load_zoo_queries", "make_threshold_active_learning", "zipf_prior"]

#: Class names of the zoo's 'type' codes (zoo.names).
ZOO_TYPES = {
    1: "mammal",
    2: "bird",
    3: "reptile",
    4: "fish",
    5: "amphibian",
    6: "insect",
    7: "invertebrate",
}


def load_zoo_queries() -> tuple[Any, Any]:
    """The zoo animals as a query-learning problem.

    Returns
    -------
    B : pandas.DataFrame of uint8, shape (101, 21)
        One row per animal (the index holds its name; the second 'frog' is ``frog (2)``), one
        yes/no question per column: the 15 boolean attributes ("hair", "feathers", ...) and one
        question per number of legs ("legs=0", "legs=2", ...).
    groups : pandas.Series
        The animal's class ("mammal", "bird", "reptile", "fish", "amphibian", "insect",
        "invertebrate").

    Notes
    -----
    Some animals answer every question alike (several fish, for instance), so identifying the
    animal needs ``on_unidentifiable="merge"`` or ``"leaf"``; identifying its class does not.

    Examples
    --------
    >>> from optitree.datasets import load_zoo_queries
    >>> B, groups = load_zoo_queries()
    >>> B.shape, groups.nunique()
    ((101, 21), 7)
    """
    import pandas as pd

    from optitree.datasets import load_zoo

    bunch = load_zoo()
    names, seen = [], {}
    for name in bunch.object_names:
        seen[name] = seen.get(name, 0) + 1
        names.append(name if seen[name] == 1 else f"{name} ({seen[name]})")
    columns = {}
    for col in bunch.data.columns:
        values = bunch.data[col].astype(int).to_numpy()
        if col == "legs":
            for legs in sorted(set(values)):
                columns[f"legs={legs}"] = (values == legs).astype(np.uint8)
        else:
            columns[col] = values.astype(np.uint8)
    B = pd.DataFrame(columns, index=pd.Index(names, name="animal"))
    groups = pd.Series([ZOO_TYPES[int(t)] for t in bunch.target], index=B.index, name="type")
    return B, groups


def zipf_prior(n: int, beta: float, rng: Any = None) -> np.ndarray:
    """Zipf's law over ``n`` objects: ``π_k ∝ k^-β`` for ranks ``k = 1..n``, ranks assigned by a
    random permutation when ``rng`` (a seed or Generator) is given, else in order.

    >>> zipf_prior(3, 1.0).round(4).tolist()
    [0.5455, 0.2727, 0.1818]
    """
    weights = np.arange(1, n + 1, dtype=np.float64) ** -float(beta)
    weights /= weights.sum()
    if rng is not None:
        weights = weights[np.random.default_rng(rng).permutation(n)]
    return weights


def make_threshold_active_learning(
    beta: float = 1.0, n_grid: int = 26, n_thresholds: int = 25
) -> tuple[np.ndarray, np.ndarray]:
    """The synthetic active-learning problem of the query-learning paper (spec §4.1).

    Objects are the 2-D axis-aligned threshold classifiers ``sign(s·(x_i − c))`` for axis
    ``i ∈ {1, 2}``, orientation ``s = ±1`` and ``n_thresholds`` integer thresholds ``c``
    centred on 0; queries are the points of an ``n_grid × n_grid`` grid at half-integer
    coordinates, answered by the classifier's label. Classifiers near the axes are more likely:
    the Zipf rank of threshold ``c`` is ``1 + |c|`` and ``π ∝ rank^-β``.

    Returns
    -------
    B : ndarray of uint8, shape (4·n_thresholds, n_grid²)
    prior : ndarray of shape (4·n_thresholds,)

    Examples
    --------
    >>> B, prior = make_threshold_active_learning(beta=1.0)
    >>> B.shape, len({row.tobytes() for row in B})
    ((100, 676), 100)
    """
    grid = np.arange(n_grid, dtype=np.float64) - (n_grid - 1) / 2.0
    thresholds = np.arange(n_thresholds) - (n_thresholds - 1) // 2
    xs, ys = np.meshgrid(grid, grid, indexing="ij")
    points = np.column_stack([xs.ravel(), ys.ravel()])
    rows, ranks = [], []
    for axis in (0, 1):
        for sign in (1.0, -1.0):
            for c in thresholds:
                rows.append((sign * (points[:, axis] - c) > 0).astype(np.uint8))
                ranks.append(1 + abs(int(c)))
    prior = np.asarray(ranks, dtype=np.float64) ** -float(beta)
    return np.vstack(rows), prior / prior.sum()
