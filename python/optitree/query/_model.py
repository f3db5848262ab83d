"""The fitted question tree and everything computed from it: costs, depths, the decomposition.

This module evaluates trees with its own arithmetic and shares no code with the core's greedy
scores or exact programme, so a cost it reproduces is an independent check of the search.

Costs (spec §1.3): ``L_λ = log_λ Σ_leaves π_leaf λ^depth``; ``L_1`` is the expected number of
questions, ``L_∞`` the largest depth among leaves with positive mass.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from optitree.exceptions import DataError, InvalidParameterError
from optitree.query._entropy import _renyi_at, shannon_entropy

__all__ = ["CostDecomposition", "QuestionTree"]


def exponential_cost(masses: np.ndarray, depths: np.ndarray, cost_base: float) -> float:
    """``log_λ Σ m_j λ^{d_j}`` over leaves, accurate from λ = 1 to ∞."""
    masses = np.asarray(masses, dtype=np.float64)
    depths = np.asarray(depths, dtype=np.float64)
    pos = masses > 0
    if not pos.any():
        return 0.0
    m, d = masses[pos] / masses[pos].sum(), depths[pos]
    if cost_base == 1.0:
        return float((m * d).sum())
    if math.isinf(cost_base):
        return float(d.max())
    t = math.log1p(cost_base - 1.0)
    if t * d.max() < 500:
        # log1p/expm1 keep the accuracy near λ = 1, where ln λ is tiny.
        return math.log1p(float((m * np.expm1(d * t)).sum())) / t
    terms = np.log(m) + d * t
    top = terms.max()
    return float(top + math.log(np.exp(terms - top).sum())) / t


@dataclass(frozen=True)
class CostDecomposition:
    """The exact decomposition of a tree's cost (Theorems 1–2, Corollaries 1 and 3).

    For λ > 1: ``total = entropy_term + Σ_nodes mass·bracket − leaf_correction = λ^cost``, with
    ``entropy_term = λ^{H_α(Π_y)}``, ``bracket = (λ − 1)λ^depth − D + w_no·D_no + w_yes·D_yes``
    (``D`` the α-diversity of the targets at a node) and ``leaf_correction = Σ_leaves π(D − 1)``
    (zero when every leaf is pure). At λ = 1: ``total = H(Π_y) + Σ mass·(1 − H(ρ) + Σ_i w_i
    H(ρ_i)) − Σ_leaves π·H(Y | leaf) = cost``.
    """

    cost_base: float
    nodes: Any  # pandas.DataFrame, one row per internal node
    entropy_term: float
    leaf_correction: float
    total: float
    cost: float


class QuestionTree:
    """A binary question tree: each internal node asks one yes/no query.

    Parameters
    ----------
    query : array-like of int, shape (n_nodes,)
        Query (column of the query matrix) asked at each node; -1 at leaves.
    children : array-like of int, shape (n_nodes, 2)
        ``children[a, 0]`` receives the objects answering no (0), ``children[a, 1]`` those answering
        yes; -1 at leaves. Node 0 is the root.
    leaf_of_object : array-like of int, shape (n_objects,)
        The leaf every object reaches.
    prior : array-like of float, shape (n_objects,)
        The (normalised) prior the tree was built with.
    target : array-like of int, shape (n_objects,)
        What must be identified: the object itself, or its group (an index into ``target_names``).
    object_names, query_names, target_names : list
        Display names.

    Examples
    --------
    >>> from optitree.query import QuestionTree
    >>> t = QuestionTree(query=[0, -1, -1], children=[[1, 2], [-1, -1], [-1, -1]],
    ...                  leaf_of_object=[1, 2], prior=[0.5, 0.5], target=[0, 1],
    ...                  object_names=["cat", "dog"], query_names=["barks"],
    ...                  target_names=["cat", "dog"])
    >>> t.cost(1.0), t.n_leaves
    (1.0, 2)
    """

    def __init__(
        self,
        query: Any,
        children: Any,
        leaf_of_object: Any,
        prior: Any,
        target: Any,
        *,
        object_names: list[Any],
        query_names: list[Any],
        target_names: list[Any],
    ) -> None:
        self.query = _frozen(query, np.int64)
        self.children = _frozen(children, np.int64).reshape(-1, 2)
        self.leaf_of_object = _frozen(leaf_of_object, np.int64)
        self.prior = _frozen(prior, np.float64)
        self.target = _frozen(target, np.int64)
        self.object_names = [str(n) for n in object_names]
        self.query_names = [str(n) for n in query_names]
        self.target_names = list(target_names)
        self._check()
        self._depth = self._depths()
        self._members: list[np.ndarray] | None = None

    # ------------------------------------------------------------------ structure
    def _check(self) -> None:
        n, m = len(self.query), len(self.leaf_of_object)
        if self.children.shape != (n, 2):
            raise DataError(f"children must have shape ({n}, 2), got {self.children.shape}")
        if len(self.prior) != m or len(self.target) != m or len(self.object_names) != m:
            raise DataError("prior, target and object_names need one entry per object")
        bad = np.flatnonzero(~np.isfinite(self.prior) | (self.prior < 0))
        if len(bad):
            i = int(bad[0])
            raise DataError(
                f"the prior of object {self.object_names[i]!r} is {float(self.prior[i])!r}; "
                f"priors must be finite and >= 0"
            )
        inner = self.query >= 0
        if np.any(self.query >= len(self.query_names)):
            raise DataError(f"a node asks a query >= the {len(self.query_names)} queries")
        if np.any(inner != (self.children[:, 0] >= 0)) or np.any(
            inner != (self.children[:, 1] >= 0)
        ):
            raise DataError("internal nodes need two children and leaves none")
        kids = self.children[inner].ravel()
        if np.any(kids >= n) or len(np.unique(kids)) != len(kids) or np.any(kids == 0):
            raise DataError("children must be distinct nodes other than the root")
        if n and len(kids) != n - 1:
            raise DataError("every node except the root must be the child of exactly one node")
        if m and (np.any(self.leaf_of_object >= n) or np.any(inner[self.leaf_of_object])):
            raise DataError("leaf_of_object must name leaves")
        if np.any(self.target < 0) or np.any(self.target >= len(self.target_names)):
            raise DataError("target codes must index target_names")

    def _depths(self) -> np.ndarray:
        # Level by level from the root: vectorised, and it visits every node exactly once.
        depth = np.zeros(self.n_nodes, dtype=np.int64)
        level, d, seen = np.array([0]), 0, 1
        while len(level):
            inner = level[self.query[level] >= 0]
            level = self.children[inner].ravel()
            d += 1
            seen += len(level)
            if seen > self.n_nodes:
                break
            depth[level] = d
        if seen != self.n_nodes:
            raise DataError("every node must be reachable from the root exactly once")
        return depth

    @property
    def n_nodes(self) -> int:
        """Number of nodes."""
        return len(self.query)

    @property
    def n_leaves(self) -> int:
        """Number of leaves."""
        return int(np.count_nonzero(self.query < 0))

    @property
    def n_objects(self) -> int:
        """Number of objects."""
        return len(self.leaf_of_object)

    @property
    def depth(self) -> np.ndarray:
        """Depth of every node (the root has depth 0)."""
        return self._depth

    def is_leaf(self, node: int) -> bool:
        """Whether ``node`` asks no question."""
        return bool(self.query[node] < 0)

    def parent(self) -> np.ndarray:
        """Parent of every node (-1 for the root)."""
        parent = np.full(self.n_nodes, -1, dtype=np.int64)
        inner = np.flatnonzero(self.query >= 0)
        parent[self.children[inner, 0]] = inner
        parent[self.children[inner, 1]] = inner
        return parent

    def objects_at(self, node: int) -> np.ndarray:
        """Indices of the objects that reach ``node``."""
        if self._members is None:
            parent = self.parent()
            lists: list[list[int]] = [[] for _ in range(self.n_nodes)]
            for i, leaf in enumerate(self.leaf_of_object):
                a = int(leaf)
                while a >= 0:
                    lists[a].append(i)
                    a = int(parent[a])
            self._members = [np.asarray(x, dtype=np.int64) for x in lists]
        return self._members[node]

    def leaf_label(self, node: int) -> Any:
        """What a leaf identifies: a target name, or a tuple of them for an ambiguous leaf."""
        targets = np.unique(self.target[self.objects_at(node)])
        if len(targets) == 1:
            return self.target_names[int(targets[0])]
        return tuple(self.target_names[int(t)] for t in targets)

    @property
    def mass(self) -> np.ndarray:
        """Prior mass of every node."""
        return self._node_masses(self.prior)

    def _node_masses(self, prior: np.ndarray) -> np.ndarray:
        mass = np.zeros(self.n_nodes)
        np.add.at(mass, self.leaf_of_object, prior)
        # Node numbering is not topological, so sum bottom-up one depth level at a time.
        inner = self.query >= 0
        for d in range(int(self._depth.max(initial=0)) - 1, -1, -1):
            level = np.flatnonzero(inner & (self._depth == d))
            mass[level] = mass[self.children[level, 0]] + mass[self.children[level, 1]]
        return mass

    # ------------------------------------------------------------------ costs
    def _prior_or(self, prior: Any) -> np.ndarray:
        if prior is None:
            return self.prior
        from optitree.query._inputs import check_prior

        p, _ = check_prior(prior, self.n_objects, warn=False, allow_zero=True)
        return p

    def object_depths(self) -> np.ndarray:
        """Number of questions asked to reach each object's leaf."""
        return self._depth[self.leaf_of_object]

    def cost(self, cost_base: float = 1.0, prior: Any = None) -> float:
        """``L_λ`` of the tree under ``prior`` (default: the prior it was built with).

        Parameters
        ----------
        cost_base : float in [1, inf]
            λ: 1 gives the expected number of questions, ``inf`` the worst case.
        prior : array-like of shape (n_objects,), optional
            Another prior, e.g. the true one when the tree was built with a guess.
        """
        lam = _check_cost_base(cost_base)
        p = self._prior_or(prior)
        leaves = np.flatnonzero(self.query < 0)
        masses = self._node_masses(p)[leaves]
        return exponential_cost(masses, self._depth[leaves], lam)

    def decompose(self, cost_base: float) -> CostDecomposition:
        """The cost split into the entropy bound and per-node terms (:class:`CostDecomposition`)."""
        import pandas as pd

        lam = _check_cost_base(cost_base)
        deepest = float(self._depth.max(initial=0)) + max(1.0, math.log2(max(self.n_objects, 1)))
        if math.isinf(lam) or deepest * math.log(lam) > 700:
            raise InvalidParameterError(
                f"the cost decomposition is written in powers of λ = {lam:g}, which overflow "
                f"for this tree's depth; use a smaller cost_base (at infinity the cost is the "
                "largest depth)"
            )
        mass = self.mass

        def diversity(node: int) -> float:
            # λ > 1: D_α of the target distribution at the node; λ = 1: Shannon entropy in bits.
            objs = self.objects_at(node)
            t = np.bincount(self.target[objs], weights=self.prior[objs])
            if lam == 1.0:
                return shannon_entropy(t)
            h = _renyi_at(t, lam) if t.sum() > 0 else 0.0
            return float(lam**h)

        rows = []
        for a in np.flatnonzero(self.query >= 0):
            no, yes = (int(c) for c in self.children[a])
            m_a = mass[a]
            if m_a <= 0:
                rows.append((a, self._depth[a], 0.0, 1.0, 1.0, 1.0, 1.0, 0.0))
                continue
            w_no, w_yes = mass[no] / m_a, mass[yes] / m_a
            d_a, d_no, d_yes = diversity(a), diversity(no), diversity(yes)
            if lam == 1.0:
                # 1 − IG: H(Y|a) − Σ_c w_c H(Y|c) is the information gain (bits).
                bracket = 1.0 - (d_a - w_no * d_no - w_yes * d_yes)
                score = bracket
            else:
                score = w_no * d_no + w_yes * d_yes
                bracket = (lam - 1.0) * lam ** float(self._depth[a]) - d_a + score
            rows.append((a, self._depth[a], m_a, d_a, d_no, d_yes, score, bracket))
        nodes = pd.DataFrame(
            rows,
            columns=[
                "node",
                "depth",
                "mass",
                "diversity",
                "diversity_no",
                "diversity_yes",
                "score",
                "bracket",
            ],
        ).astype({"node": np.int64, "depth": np.int64})
        leaves = np.flatnonzero(self.query < 0)
        excess = 0.0 if lam == 1.0 else 1.0  # D − 1 for λ > 1, H(Y | leaf) − 0 at λ = 1
        leaf_correction = float(
            sum(mass[j] * (diversity(j) - excess) for j in leaves if mass[j] > 0)
        )
        entropy_term = diversity(0)
        total = entropy_term + float((nodes["mass"] * nodes["bracket"]).sum()) - leaf_correction
        return CostDecomposition(
            cost_base=lam,
            nodes=nodes,
            entropy_term=entropy_term,
            leaf_correction=leaf_correction,
            total=total,
            cost=self.cost(lam),
        )

    # ------------------------------------------------------------------ identity
    def _state(self) -> dict[str, Any]:
        return {
            "query": self.query,
            "children": self.children,
            "leaf_of_object": self.leaf_of_object,
            "prior": self.prior,
            "target": self.target,
            "object_names": self.object_names,
            "query_names": self.query_names,
            "target_names": self.target_names,
        }

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, QuestionTree):
            return NotImplemented
        a, b = self._state(), other._state()
        return all(
            np.array_equal(a[k], b[k]) if isinstance(a[k], np.ndarray) else a[k] == b[k] for k in a
        )

    __hash__ = None  # compared by value

    def __getstate__(self) -> dict[str, Any]:
        return {k: (v.copy() if isinstance(v, np.ndarray) else v) for k, v in self._state().items()}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(**state)  # type: ignore[misc]  # re-validates

    def __repr__(self) -> str:
        return (
            f"QuestionTree(n_nodes={self.n_nodes}, n_leaves={self.n_leaves}, "
            f"depth={int(self._depth.max(initial=0))}, n_queries={len(self.query_names)})"
        )

    def to_tree(self):
        """This tree as a general :class:`optitree.tree.Tree` (two-way category splits on the
        queries; class totals = prior mass of each target), for plotting and routing.

        The general model stores a dense (n_nodes × n_targets) table, so this is refused above
        10 million entries.
        """
        from optitree.tree import CATEGORY, LEAF, Tree

        n_targets = len(self.target_names)
        if self.n_nodes * n_targets > 10_000_000:
            raise InvalidParameterError(
                f"converting a {self.n_nodes}-node tree with {n_targets} targets to the general "
                "tree model needs a table of more than 10 million entries"
            )
        value = np.zeros((self.n_nodes, n_targets))
        for a in range(self.n_nodes):
            objs = self.objects_at(a)
            value[a] = np.bincount(self.target[objs], weights=self.prior[objs], minlength=n_targets)
        inner = self.query >= 0
        kids = [list(self.children[a]) if inner[a] else [] for a in range(self.n_nodes)]
        ptr = np.concatenate([[0], np.cumsum([len(k) for k in kids])])
        return Tree(
            kind=np.where(inner, CATEGORY, LEAF),
            feature=self.query,
            threshold=np.full(self.n_nodes, np.nan),
            children_ptr=ptr,
            children=[c for k in kids for c in k],
            value=value,
            feature_names=self.query_names,
            class_names=[_label_text(t) for t in self.target_names],
            categories=[["no", "yes"] for _ in self.query_names],
        )


def _label_text(label: Any) -> Any:
    return " | ".join(map(str, label)) if isinstance(label, tuple) else label


def _frozen(values: Any, dtype: Any) -> np.ndarray:
    arr = np.array(values, dtype=dtype, copy=True)
    arr.setflags(write=False)
    return arr


def _check_cost_base(cost_base: Any) -> float:
    from optitree._params import check_real

    return check_real("cost_base", cost_base, low=1.0)
