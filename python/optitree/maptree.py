"""MAPTree: the maximum-a-posteriori decision tree under the Bayesian CART prior, proven.

The search of Sullivan, Tiwari & Thrun ("MAPTree: Beating 'Optimal' Decision Trees with Bayesian
Decision Trees"), in the Rust core: best-first AND/OR search with the Perfect Split heuristic,
in the reference implementation's order (its bounds after k expansions agree bit for bit), with
the reference's three defects fixed (rows with identical features and different labels; data
sizes that are multiples of 64; merged subproblems).
"""

from __future__ import annotations

import math
import sys
import time
from typing import Any

import numpy as np

from optitree import _core
from optitree._params import (
    available_cores,
    check_choice,
    check_int,
    check_memory_limit,
    check_n_jobs,
    check_real,
    check_time_limit,
    check_verbose,
    time_left,
)
from optitree.base import BaseTreeClassifier, FitData, forget_fit, integer_columns
from optitree.exceptions import InternalError, InvalidParameterError
from optitree.tree import Tree

__all__ = ["MAPTreeClassifier", "tree_log_posterior"]


class MAPTreeClassifier(BaseTreeClassifier):
    """The maximum-a-posteriori tree under the BCART prior, with a proof or an anytime gap.

    The model (Chipman, George & McCulloch's Bayesian CART as used by MAPTree): a node at depth
    ``d`` splits with probability ``p_split(d) = alpha · (1 + d)^-beta``, shared equally among the
    binary features that divide its rows (a node no feature divides is a leaf for free); a leaf
    with class counts ``c`` has the Dirichlet–Multinomial marginal likelihood

        ``ℓ(c) = B(c + ρ) / B(ρ)``,  ``B(a) = Π_k Γ(a_k) / Γ(Σ_k a_k)``,

    which for two classes is the paper's Beta–Binomial ``B(c1 + ρ1, c0 + ρ0) / B(ρ1, ρ0)``. The
    search minimises the cost ``−log P(T, Y | X)``; the MAP tree has the smallest cost.

    Parameters
    ----------
    alpha : float in (0, 1), default=0.95
    beta : float >= 0, default=0.5
    rho : float or sequence of float, default=(2.5, 2.5)
        Dirichlet pseudo-counts in (0, 1e6], one per class (in ``classes_`` order). A single
        number, or a sequence whose entries are all equal, is used for every class whatever
        their number. ``tree_.class_prior`` holds them, so the tree and its exports predict
        with the posterior mean as the estimator does.
    max_expansions : int or None
        Stop after this many expansions (status ``node_limit``); the search is deterministic,
        so this is the reproducible way to cap it.
    time_limit : float or None
        Seconds, counted from the start of ``fit`` (preparing the data included); the best tree
        so far comes back with status ``time_limit``.
    memory_limit : int or None
        Bytes for the search graph; status ``memory_limit`` when reached. In the fast mode the
        graph grows more slowly from half the limit on: an expansion keeps only its most
        promising splits and looks the others up again if they are ever needed, trading time
        for memory (``statistics_['shed_splits']`` counts them). The data (their codes and the
        core's copy, one byte a cell for binary features) come on top.
    verbose : int, default=0
        Print progress (expansions, bounds, memory) to stderr about twice a second.
    mode : {"fast", "reference"}, default="fast"
        "reference" runs the authors' search order exactly: after ``max_expansions=k`` its
        bounds and tree equal the reference implementation's, bit for bit (on data its defects
        do not touch). "fast" finds the same optimum with tighter admissible bounds (each fresh
        node knows which features divide it: an unsplittable node is settled at once, and the
        leaf prior and the ``ln |V|`` split factor enter its bound; with two classes it also
        looks one split ahead, bounding each child from its class counts and the features that
        surely divide it), evaluates a node's splits lazily, most promising first, and solves
        nodes of at most 12 rows exactly; among equally probable trees it may return a
        different one. It also improves the best tree so far (what a time or memory limit
        returns): now and then each of its top nodes is regrown, choosing every
        split by the best it allows one level further down, and the regrown subtree replaces
        the old one where it is more probable (``statistics_['regrown_subtrees']`` counts
        them).
    n_jobs : int, default=1
        Threads (``-1``: all cores). The fast mode uses at most two: with two, a second thread
        looks up half of the splits each expansion evaluates (up to about 1.3× faster:
        mushroom, heart-cleveland; on some data, such as hypothyroid, no faster). It searches
        exactly as one thread does, so the result, the bounds and the statistics do not depend
        on ``n_jobs``. It is not used beyond the cores the process may run on (the second
        thread waits for work by spinning, which on a busy core would slow the search down).

    Attributes
    ----------
    tree_ : Tree
        Over the binary features the search splits on (see Notes); leaves hold class counts.
    classes_, n_features_in_, feature_names_in_
    status_ : str
        ``optimal`` (lower bound = upper bound), ``time_limit``, ``node_limit``,
        ``memory_limit`` or ``interrupted``.
    lower_bound_, upper_bound_ : float
        Bounds on the MAP tree's cost ``−log P(T, Y | X)``; equal when proven.
    log_posterior_ : float
        ``log P(T, Y | X)`` of the returned tree, recomputed by :func:`tree_log_posterior`, which
        shares no code with the search. It sums the same terms in another order, so
        ``-log_posterior_`` matches ``upper_bound_`` to rounding (checked to 1e-9 relative), not
        bit for bit.
    binary_features_ : list of str
        What each binary feature means: a 0/1 column as is, ``"col=v"`` for a category of a
        column with more than two, ``"col > t"`` for a threshold of a numeric column.
    statistics_ : dict
        ``expansions``, ``or_nodes`` (cached subproblems), ``and_nodes``, ``memory_bytes``,
        ``seconds`` and more.

    Notes
    -----
    MAPTree's prior is defined over binary splits. Integer and boolean columns with two values
    are used as they are; categorical (or integer) columns with more values are one-hot encoded;
    float columns are binarised at the midpoints between their sorted distinct values
    (:class:`optitree.preprocessing.ThresholdBinarizer`). ``tree_`` splits those binary features,
    and ``predict`` applies the same encoding.

    Examples
    --------
    >>> from optitree import MAPTreeClassifier
    >>> X = [[0, 0], [0, 1], [1, 0], [1, 1]] * 3
    >>> y = [0, 1, 1, 0] * 3
    >>> clf = MAPTreeClassifier().fit(X, y)
    >>> clf.status_, clf.to_reference_string(), round(clf.upper_bound_, 6)
    ('optimal', '((1)0(1))', 8.23608)
    """

    _threads_help = True

    _limit_covers_preparation = True

    def __init__(
        self,
        alpha: float = 0.95,
        beta: float = 0.5,
        rho: Any = (2.5, 2.5),
        max_expansions: int | None = None,
        time_limit: float | None = None,
        memory_limit: int | None = None,
        verbose: int = 0,
        mode: str = "fast",
        n_jobs: int = 1,
    ) -> None:
        self.alpha = alpha
        self.beta = beta
        self.rho = rho
        self.max_expansions = max_expansions
        self.time_limit = time_limit
        self.memory_limit = memory_limit
        self.verbose = verbose
        self.mode = mode
        self.n_jobs = n_jobs

    def _categorical_columns(self, X: Any) -> Any:
        return integer_columns(X)

    def _rho_for(self, n_classes: int) -> list[float]:
        values = np.atleast_1d(np.asarray(self.rho, dtype=object)).tolist()
        for v in values:
            # Above 1e6 the lgamma differences of the likelihood lose their digits.
            check_real("rho", v, low=0, low_open=True, high=1e6)
        values = [float(v) for v in values]
        if len(values) == n_classes:
            return values
        if len(set(values)) == 1:
            return values[:1] * n_classes
        raise InvalidParameterError(
            f"rho has {len(values)} pseudo-counts but y has {n_classes} classes; give one per "
            "class, or a single number for all"
        )

    def fit(self, X: Any, y: Any) -> MAPTreeClassifier:
        """Searches for the MAP tree of ``(X, y)``.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_rows, n_features)
            Binary (0/1, bool) columns as in the paper; other columns are encoded (see Notes).
        y : array-like of shape (n_rows,)
            Class labels of any hashable type; two or more classes.

        Returns
        -------
        self
        """
        started = time.perf_counter()  # the time limit covers the whole fit
        forget_fit(self)  # a fit refused for its parameters leaves no stale tree behind
        alpha = check_real("alpha", self.alpha, low=0, high=1, low_open=True, high_open=True)
        beta = check_real("beta", self.beta, low=0)
        max_expansions = check_int("max_expansions", self.max_expansions, low=1, allow_none=True)
        time_limit = check_time_limit(self.time_limit)
        memory_limit = check_memory_limit(self.memory_limit)
        verbose = check_verbose(self.verbose)
        mode = check_choice("mode", self.mode, ("fast", "reference"))
        threads = min(check_n_jobs(self.n_jobs), available_cores(), 2)
        data = self._prepare_fit(X, y)
        n_classes = max(len(self.classes_), 2)  # one class: a second, empty one keeps ρ defined
        rho = self._rho_for(n_classes)
        binary, spec = _binary_features(data.view.codes, data.view.n_values, data.view.source)
        self._binary_spec = spec
        result = _core.fit_maptree(
            binary,
            data.y,
            alpha,
            beta,
            rho,
            n_classes=n_classes,
            max_expansions=max_expansions,
            time_limit=time_left(time_limit, started),
            memory_limit=memory_limit,
            progress=_print_progress if verbose > 0 else None,
            fast=mode == "fast",
            threads=threads,
        )
        self.binary_features_ = [_feature_name(data.encoded, entry) for entry in spec]
        self._binary_categories = [_feature_categories(data.encoded, entry) for entry in spec]
        arrays = dict(result["tree"])
        arrays["value"] = np.asarray(arrays["value"])[:, : len(self.classes_)]
        result = dict(result, tree=arrays)
        self._finish_fit(result, data, tree=self._binary_tree(arrays, rho))
        self._compact_tree = (self._routing_key(), *self.tree_.restricted_to_used_features())
        cost = -tree_log_posterior(self.tree_, binary, data.y, alpha, beta, rho)
        self.log_posterior_ = -cost
        tol = 1e-9 * max(1.0, abs(cost))
        if cost > result["upper_bound"] + tol or (
            self.status_ == "optimal" and abs(cost - result["upper_bound"]) > tol
        ):
            raise InternalError(
                f"the returned tree's cost recomputes to {cost!r} but the search's upper bound "
                f"is {result['upper_bound']!r}; please report this bug"
            )
        return self

    def __setstate__(self, state: dict[str, Any]) -> None:
        # Pickles from before the tree held rho as its class prior kept it in
        # `_alpha_beta_rho`; without it they would predict the counts' frequencies.
        legacy = state.pop("_alpha_beta_rho", None)
        super().__setstate__(state)
        tree = getattr(self, "tree_", None)
        if legacy is not None and tree is not None and tree.class_prior is None:
            tree.class_prior = tree._prior_array(legacy[2][: tree.value.shape[1]])
        if tree is not None:  # an unpickled tree holds new arrays: its route is made anew
            self._compact_tree = (self._routing_key(), *tree.restricted_to_used_features())

    def _binary_tree(self, arrays: dict[str, Any], rho: list[float]) -> Tree:
        # The tree lives on the binary features the search split. Its leaves predict with the
        # posterior mean, so the exports show the class the estimator predicts (with unequal
        # rho that need not be the majority).
        return Tree(
            **arrays,
            feature_names=self.binary_features_,
            class_names=[v.item() if isinstance(v, np.generic) else v for v in self.classes_],
            categories=self._binary_categories,
            class_prior=rho[: len(self.classes_)],
        )

    def _compact(self) -> tuple[Tree, np.ndarray]:
        """``tree_`` over the binary features it splits, and their indices, to route rows: made
        at fit; remade, not stored, if ``tree_`` or its routing arrays were replaced since
        (predict must not change the estimator). Totals are read from ``tree_`` itself."""
        cached = getattr(self, "_compact_tree", None)
        key = self._routing_key()
        if cached is not None and all(a is b for a, b in zip(cached[0], key)):
            return cached[1], cached[2]
        return self.tree_.restricted_to_used_features()

    def _routing_key(self) -> tuple[Any, ...]:
        # The objects themselves, compared by identity (held, so none is freed and its id
        # reused): a new tree or new routing arrays mean a new route.
        tree = self.tree_
        return (tree, tree.kind, tree.feature, tree.children_ptr, tree.children)

    def _router(self) -> Tree:
        # Rows are routed over the binary features the tree splits only (`_predict_matrix`
        # derives no others): on wide numeric data they are a handful of 30,000.
        return self._compact()[0]

    def _search_source(self, data: FitData) -> list[tuple[int, Any]]:
        # A column of more than two categories is one binary feature per category here.
        return [source for _, _, source in self._binary_spec]

    def _columns_read(self) -> set[int]:
        # The tree splits binary features; each reads one input column.
        return {self._binary_spec[f][2][0] for f in self.tree_.used_features().tolist()}

    def _predict_matrix(self, X: Any) -> np.ndarray:
        encoded = super()._predict_matrix(X)
        return _apply_binary(encoded, self._binary_spec, self._compact()[1])

    def predict_proba(self, X: Any) -> np.ndarray:
        """Posterior predictive class probabilities: ``(c_k + ρ_k) / (n + Σ ρ)`` of the leaf
        (the Dirichlet posterior mean), columns in ``classes_`` order."""
        return super().predict_proba(X)

    def predict(self, X: Any) -> np.ndarray:
        """The class of highest posterior predictive probability (ties: first in ``classes_``)."""
        proba = self.predict_proba(X)  # checks that the estimator is fitted
        return self.classes_[np.argmax(proba, axis=1)]

    def _binary_sources(self) -> list[dict[str, Any]]:
        """How each binary feature of ``tree_`` reads the input columns, for a saved tree to
        predict raw data (the command line's ``predict``): ``{"column", "above"}`` (a
        threshold), ``{"column", "equals", "categories"}`` (one category of a column) or
        ``{"column", "categories"}`` (a two-valued column as it is)."""
        names, categories = self._encoding
        sources: list[dict[str, Any]] = []
        for _, value, (column, threshold) in self._binary_spec:
            entry: dict[str, Any] = {"column": names[column]}
            if threshold is not None:
                entry["above"] = float(threshold)
            else:
                entry["categories"] = categories[column]
                if value is not None:
                    entry["equals"] = categories[column][value]
            sources.append(entry)
        return sources

    def to_reference_string(self) -> str:
        """The tree in the reference implementation's format: ``""`` for a leaf,
        ``"(" T0 feature T1 ")"`` for a split (feature = binary feature index)."""
        tree = self.tree_

        def walk(node: int) -> str:
            kids = tree.children_of(node)
            if len(kids) == 0:
                return ""
            return f"({walk(int(kids[0]))}{int(tree.feature[node])}{walk(int(kids[1]))})"

        return walk(0)


def tree_log_posterior(
    tree: Tree, X: np.ndarray, y: np.ndarray, alpha: float, beta: float, rho: list[float]
) -> float:
    """``log P(T, Y | X)`` of ``tree`` on binary data ``X`` (class codes ``y``), from scratch.

    Independent of the search: plain numpy counting and Python's own ``math.lgamma``. A split on
    a feature that does not divide its node's rows makes the tree impossible (``-inf``).
    """
    X = np.asarray(X)
    y = np.asarray(y)
    k = len(rho)
    rho_sum = math.fsum(rho)
    log_beta_rho = math.fsum(math.lgamma(r) for r in rho) - math.lgamma(rho_sum)

    def log_likelihood(rows: np.ndarray) -> float:
        counts = np.bincount(y[rows], minlength=k)
        a = [c + r for c, r in zip(counts, rho)]
        return math.fsum(math.lgamma(v) for v in a) - math.lgamma(math.fsum(a)) - log_beta_rho

    by_column = X.ndim == 2 and X.flags.f_contiguous and not X.flags.c_contiguous
    if by_column and X.dtype in (np.uint8, np.bool_) and X.size and X.max() <= 1:
        # 0/1 bytes held column by column (as the estimator builds them): gathering rows would
        # read the whole matrix cell by cell, 15 times slower than packing each column's bits
        # once and masking them for each node.
        bits = np.packbits(X.T, axis=1)

        def dividing(rows: np.ndarray) -> int:
            mask = np.zeros(len(X), dtype=bool)
            mask[rows] = True
            m = np.packbits(mask)
            return int(np.count_nonzero((bits & m).any(axis=1) & (~bits & m).any(axis=1)))
    else:

        def dividing(rows: np.ndarray) -> int:
            sub = X if len(rows) == len(X) else X[rows]  # the root's rows are all of X
            return int(np.count_nonzero(sub.min(axis=0) != sub.max(axis=0)))

    def walk(node: int, rows: np.ndarray, depth: int) -> float:
        valid = dividing(rows) if len(rows) else 0
        log_split = math.log(alpha) - beta * math.log(depth + 1)
        kids = tree.children_of(node)
        if len(kids) == 0:
            log_leaf = 0.0 if valid == 0 else math.log1p(-math.exp(log_split))
            return log_leaf + log_likelihood(rows)
        f = int(tree.feature[node])
        side = X[rows, f]
        if valid == 0 or side.min() == side.max():
            return -math.inf
        total = log_split - math.log(valid)
        for value, child in enumerate(kids):
            total += walk(int(child), rows[side == value], depth + 1)
        return total

    return walk(0, np.arange(len(y)), 0)


def _binary_features(codes: np.ndarray, n_values: list[int], source: list) -> tuple:
    """0/1 columns for the core: two-valued features as they are, one-hot for more values."""
    spec = []
    for j, (nv, src) in enumerate(zip(n_values, source)):
        if nv <= 2:
            spec.append((j, None, src))
        else:
            spec.extend((j, v, src) for v in range(nv))
    if len(spec) == codes.shape[1]:
        # Every feature already binary (binarised numeric data, 0/1 columns): no copy.
        return codes, spec
    # One matrix filled column by column: a list of columns stacked would hold it twice. Held
    # column by column, as the core stores it.
    binary = np.empty((codes.shape[0], len(spec)), dtype=np.uint8, order="F")
    for k, (j, v, _) in enumerate(spec):
        binary[:, k] = codes[:, j] if v is None else codes[:, j] == v
    return binary, spec


def _apply_binary(encoded: np.ndarray, spec: list, used: Any) -> np.ndarray:
    """The binary features ``used`` (indices into ``spec``) of encoded rows, one column each
    (NaN where a value cannot be read: a category unseen at fit time, coded -1; a numeric
    value below 0 is just a number)."""
    out = np.empty((encoded.shape[0], len(used)))
    for j, k in enumerate(used):
        _, value, (column, threshold) = spec[int(k)]
        x = encoded[:, column].astype(np.float64)
        unknown = np.isnan(x) if threshold is not None else np.isnan(x) | (x < 0)
        if threshold is not None:
            col = (x > threshold).astype(np.float64)
        elif value is not None:
            col = (x == value).astype(np.float64)
        else:
            col = x.copy()
        col[unknown] = np.nan
        out[:, j] = col
    return out


def _feature_name(encoded: Any, entry: tuple) -> str:
    _, value, (column, threshold) = entry
    name = encoded.feature_names[column]
    if threshold is not None:
        # Exact: ':g' gave 1000.001 and 1000.002 the same name.
        return f"{name} > {np.format_float_positional(threshold, unique=True, trim='-')}"
    if value is not None:
        return f"{name}={encoded.categories[column][value]}"
    return name


def _feature_categories(encoded: Any, entry: tuple) -> list[Any]:
    # A column used as it is keeps its own two values; derived features read as no/yes.
    _, value, (column, threshold) = entry
    if threshold is None and value is None:
        cats = list(encoded.categories[column] or [0, 1])
        return cats if len(cats) >= 2 else [*cats, "(absent)"]
    return ["no", "yes"]


def _print_progress(p: dict[str, Any]) -> None:
    gap = p["upper_bound"] - p["lower_bound"]
    print(
        f"[maptree] {p['seconds']:8.1f}s  expansions {p['expansions']:>10,}  "
        f"cost bounds [{p['lower_bound']:.6f}, {p['upper_bound']:.6f}] gap {gap:.6f}  "
        f"subproblems {p['cached']:>10,}  memory {p['memory_bytes'] / 2**20:8.1f} MiB",
        file=sys.stderr,
        flush=True,
    )
