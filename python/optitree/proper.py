"""Proper trees with arbitrary splitting rules: provably optimal trees with a few axis-parallel,
hyperplane or polynomial-surface splits (He & Little, "Provably optimal decision trees with
arbitrary splitting rules in polynomial time").

The candidate rules are defined by the data: a threshold at a row's value, a hyperplane through
``D`` rows, or a degree-``m`` surface through ``C(D + m, D) - 1`` rows. A rule may only be used in
a region of the tree that holds the rows defining it (the tree is *proper*); among all proper
trees with at most (or exactly) ``n_splits`` rules, the search returns one of least training
loss, and proves it.
"""

from __future__ import annotations

import functools
import math
import sys
from collections.abc import Callable
from typing import Any

import numpy as np

from optitree import _core
from optitree._params import (
    check_bool,
    check_choice,
    check_int,
    check_memory_limit,
    check_n_jobs,
    check_time_limit,
    check_verbose,
)
from optitree._validation import check_labels, encode_fit
from optitree.base import BaseTreeClassifier, CategoricalView, FitData, forget_fit
from optitree.exceptions import (
    DataError,
    InfeasibleError,
    InternalError,
    InvalidParameterError,
)
from optitree.tree import Tree

__all__ = ["ProperTreeClassifier", "candidate_rules"]

#: Work the search would need in the worst case, in seconds, above which ``fit`` refuses to start
#: unless a ``time_limit`` is given.
HOPELESS_SECONDS = 3600.0

_RULES = ("axis", "hyperplane", "polynomial", "mixed")
_OBJECTIVES = ("misclassification", "gini", "entropy")


#: Largest ``n_splits`` taken.
MAX_SPLITS = 1024


class ProperTreeClassifier(BaseTreeClassifier):
    """The best proper tree with at most (or exactly) ``n_splits`` splitting rules, proven.

    Parameters
    ----------
    n_splits : int, default=2
        Number of splitting rules K (internal nodes), at most 1024.
    rule : {"axis", "hyperplane", "polynomial", "mixed"}, default="axis"
        The candidate rules: ``x_d <= t`` (one per feature and row), hyperplanes through
        ``n_features`` rows, degree-``degree`` surfaces (hyperplanes over all monomials of degree
        1..``degree``), or all of axis, hyperplane and (when ``degree >= 2``) polynomial rules.
    degree : int, default=2
        Degree of polynomial surfaces.
    exactly : bool, default=False
        ``True``: exactly ``n_splits`` rules (the paper's problem; may be infeasible).
        ``False``: the best tree with at most ``n_splits`` rules.
    objective : {"misclassification", "gini", "entropy"}, default="misclassification"
        Training loss summed over leaves: misclassified rows, ``n·Gini`` or ``n·entropy``
        (nats).
    max_depth : int or None, default=None
        Most splits on any root-to-leaf path (a single split has depth 1).
    min_samples_leaf : int, default=1
        Smallest allowed leaf. ``0`` also allows empty leaves (the paper's convention; only
        matters with ``exactly=True``).
    time_limit : float or None, default=None
        Seconds; the best tree so far comes back with status ``time_limit``. Without a time limit
        a search whose worst case looks hopeless (over an hour) is refused before it starts. If
        it passes while the candidate rules are generated, a tree grown greedily from the rules
        made so far comes back (of exactly ``n_splits`` splits with ``exactly=True`` if greedy
        growth finds one, else a leaf).
    n_jobs : int, default=1
        Threads (``-1``: all cores). The result does not depend on it.
    verbose : int, default=0
        Print progress with an ETA to stderr about twice a second.
    side_assignment : {"all", "closed"}, default="all"
        Which sides the rows defining a surface may take: every assignment (complete), or all on
        one side ("closed": half the rules, complete only for hyperplanes in at most 2-D).
    engine : {"auto", "topdown", "combinations"}, default="auto"
        "topdown": the memoised branch-and-bound recursion over (rows, splits left) — at most
        ``n_splits``. "combinations": the paper's enumeration of every K-combination of rules
        (``exactly=True`` needs it). "auto" picks topdown unless ``exactly=True``.
    memory_limit : int or None, default=None
        Bytes the candidate rules and the search's cache may hold; past it the best tree so far
        comes back with status ``memory_limit``. A rule list estimated above 6 GB is refused
        up front, whatever the limits.

    Attributes
    ----------
    tree_ : Tree
        Threshold nodes for axis rules, oblique nodes (``Σ coef·monomial <= 0`` goes left) for
        the others; every node holds its training class counts.
    objective_ : float
        Training loss of ``tree_``, recomputed by routing the rows (misclassified rows for the
        default objective).
    status_ : str
        ``optimal`` or ``time_limit`` / ``memory_limit`` / ``interrupted``.
    lower_bound_, upper_bound_ : float
        Bounds on the optimal loss (equal when proven).
    statistics_ : dict
        ``candidate_rules``, ``rules_thinned`` (rules no feasible tree can use),
        ``duplicate_rules``, ``combinations`` / ``combinations_pruned`` / ``sodt_calls``
        (combination engine) or ``candidates`` (distinct partitions) / ``subproblems`` /
        ``splits_evaluated`` (top-down engine), and ``seconds``. A solve stopped while
        generating rules counts the rules made so far and ``greedy_rules_scanned`` (rules tried
        at the leaves of the greedy tree).
    classes_, n_features_in_, feature_names_in_

    Examples
    --------
    >>> import numpy as np
    >>> from optitree import ProperTreeClassifier
    >>> X = np.array([[0, 0], [1, 0.2], [0.1, 1], [1, 1.1], [2, 0.1], [0.2, 2]])
    >>> y = [0, 0, 0, 1, 1, 1]  # x0 + x1 > 1.5: one oblique split, but no single threshold
    >>> clf = ProperTreeClassifier(n_splits=1, rule="hyperplane").fit(X, y)
    >>> clf.status_, clf.objective_
    ('optimal', 0.0)
    """

    _threads_help = True

    #: Estimators pickled before ``memory_limit`` existed read it as not set.
    memory_limit = None

    def __init__(
        self,
        n_splits: int = 2,
        rule: str = "axis",
        degree: int = 2,
        exactly: bool = False,
        objective: str = "misclassification",
        max_depth: int | None = None,
        min_samples_leaf: int = 1,
        time_limit: float | None = None,
        n_jobs: int = 1,
        verbose: int = 0,
        side_assignment: str = "all",
        engine: str = "auto",
        memory_limit: int | None = None,
    ) -> None:
        self.n_splits = n_splits
        self.rule = rule
        self.degree = degree
        self.exactly = exactly
        self.objective = objective
        self.max_depth = max_depth
        self.min_samples_leaf = min_samples_leaf
        self.time_limit = time_limit
        self.memory_limit = memory_limit
        self.n_jobs = n_jobs
        self.verbose = verbose
        self.side_assignment = side_assignment
        self.engine = engine

    def _check_params(self) -> dict[str, Any]:
        n_jobs = check_n_jobs(self.n_jobs)
        n_splits = check_int("n_splits", self.n_splits, low=1)
        if n_splits > MAX_SPLITS:
            # The work grows like N^(DK): far fewer are out of reach already, and sizes of
            # this order overflowed the search's arithmetic.
            raise InvalidParameterError(
                f"n_splits must be at most {MAX_SPLITS} (the work grows like N^(DK)), got "
                f"{n_splits}"
            )
        return {
            "n_splits": n_splits,
            "rule": check_choice("rule", self.rule, _RULES),
            "degree": check_int("degree", self.degree, low=1),
            "side_assignment": check_choice(
                "side_assignment", self.side_assignment, ("all", "closed")
            ),
            "exactly": check_bool("exactly", self.exactly),
            "objective": check_choice("objective", self.objective, _OBJECTIVES),
            "max_depth": check_int("max_depth", self.max_depth, low=0, allow_none=True),
            "min_samples_leaf": check_int("min_samples_leaf", self.min_samples_leaf, low=0),
            "n_jobs": n_jobs,
            "engine": check_choice("engine", self.engine, ("auto", "topdown", "combinations")),
            "time_limit": check_time_limit(self.time_limit),
            "memory_limit": check_memory_limit(self.memory_limit),
            "verbose": check_verbose(self.verbose),
        }

    def _predict_matrix(self, X: Any) -> np.ndarray:
        return super()._predict_matrix(_bools_as_numbers(X))

    def fit(self, X: Any, y: Any) -> ProperTreeClassifier:
        """Finds the best proper tree for ``(X, y)``.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_rows, n_features)
            Numeric columns (finite). Categorical columns must be encoded first (for example
            with :class:`optitree.preprocessing.OneHotEncoder`).
        y : array-like of shape (n_rows,)
            Class labels of any hashable type.

        Returns
        -------
        self

        Raises
        ------
        InvalidParameterError
            Bad parameters, or a search that is hopeless without a time limit (the message says
            how big it is and what to change).
        InfeasibleError
            No proper tree satisfies the constraints (``exactly=True`` with too few rows, or a
            depth too small for ``n_splits``).
        """
        forget_fit(self)
        params = self._check_params()
        encoded = encode_fit(_bools_as_numbers(X))
        for name, cats in zip(encoded.feature_names, encoded.categories):
            if cats is not None:
                raise DataError(
                    f"column {name!r} is categorical (values such as {cats[0]!r}); proper-tree "
                    "rules compare numbers: encode it first, e.g. with "
                    "optitree.preprocessing.OneHotEncoder"
                )
        y_codes, classes = check_labels(y, n_rows=encoded.X.shape[0])
        self.classes_ = classes
        self.n_features_in_ = encoded.X.shape[1]
        if encoded.had_names:
            self.feature_names_in_ = np.asarray(encoded.feature_names, dtype=object)
        elif hasattr(self, "feature_names_in_"):
            del self.feature_names_in_
        time_limit = params.pop("time_limit")
        verbose = params.pop("verbose")
        x = np.ascontiguousarray(encoded.X, dtype=np.float64)
        result = _core.fit_proper(
            x,
            np.asarray(y_codes, dtype=np.int64),
            max(len(classes), 1),
            params.pop("n_splits"),
            **params,
            time_limit=time_limit,
            refuse_above_seconds=None if time_limit is not None else HOPELESS_SECONDS,
            progress=_print_progress if verbose > 0 else None,
        )
        if not result["feasible"]:
            raise InfeasibleError(
                f"no proper tree with {'exactly' if self.exactly else 'at most'} "
                f"{self.n_splits} split(s) satisfies max_depth={self.max_depth} and "
                f"min_samples_leaf={self.min_samples_leaf} on these {x.shape[0]} rows"
                + (
                    f" (status {result['status']})"
                    if result["status"] != "optimal"
                    else "; use exactly=False, fewer splits or looser constraints"
                )
            )
        arrays = dict(result["tree"])
        arrays["n_features"] = x.shape[1]
        build = functools.partial(
            Tree,
            feature_names=encoded.feature_names,
            class_names=[c.item() if isinstance(c, np.generic) else c for c in classes],
            categories=encoded.categories,
        )
        tree = _with_short_coefficients(arrays, x, build)
        data = FitData(encoded, y_codes, None, CategoricalView(np.zeros((x.shape[0], 0)), []))
        self._finish_fit(result, data, tree=tree)
        self.objective_ = _rescored_loss(self.tree_, x, y_codes, len(classes), self.objective)
        if abs(self.objective_ - float(result["cost"])) > 1e-9 * max(1.0, abs(self.objective_)):
            raise InternalError(
                f"the returned tree's loss recomputes to {self.objective_!r} but the search "
                f"reported {result['cost']!r}; please report this bug"
            )
        return self


def _with_short_coefficients(
    arrays: dict[str, Any], x: np.ndarray, build: Callable[..., Tree]
) -> Tree:
    """The tree with each oblique test's coefficients rounded to the fewest significant digits
    (four at least) that still send every training row where the exact ones do. Exports print
    a coefficient with its digits when they are that few (and in full otherwise), so a printed
    rule is the rule ``predict`` follows: rounded for display only, 0.559 for 0.55902554 sent
    a training row on the surface's other side. A surface passes through its defining rows,
    so rounding its slope moves them off it: the constant term is then chosen afresh, the
    shortest decimal that keeps every row reaching the test on its side."""
    tree = build(**arrays)
    coef = np.asarray(arrays["term_coef"], dtype=np.float64)
    if len(coef) == 0:
        return tree
    where = tree.apply(x)
    paths = tree.decision_path(x).tocsc()
    for node in np.flatnonzero(np.asarray(arrays["oblique_index"]) >= 0):
        k = int(arrays["oblique_index"][node])
        terms = range(int(arrays["oblique_ptr"][k]), int(arrays["oblique_ptr"][k + 1]))
        exact = coef[terms.start : terms.stop].copy()
        reaching = paths[:, node].nonzero()[0]
        left = paths[reaching, int(tree.children_of(node)[0])].toarray().ravel() > 0
        for digits in range(4, 16):
            rounded = np.array([float(f"{c:.{digits - 1}e}") for c in exact])
            rounded = _refit_constant(arrays, terms, rounded, x[reaching], left)
            coef[terms.start : terms.stop] = rounded
            trial = build(**{**arrays, "term_coef": coef})
            if np.array_equal(trial.apply(x), where):
                tree = trial
                break
        else:
            coef[terms.start : terms.stop] = exact
    return tree


def _refit_constant(
    arrays: dict[str, Any], terms: range, coef: np.ndarray, rows: np.ndarray, left: np.ndarray
) -> np.ndarray:
    """``coef`` with its constant term (if any) replaced by the shortest decimal that puts
    ``rows`` on their sides (``left``: the test ``<= 0`` holds), when one exists."""
    ptr, features = arrays["term_ptr"], arrays["term_features"]
    constant = [i for i, t in enumerate(terms) if ptr[t] == ptr[t + 1]]
    if len(constant) != 1 or len(rows) == 0:
        return coef
    rest = np.zeros(len(rows))
    for i, t in enumerate(terms):
        if i != constant[0]:
            rest += coef[i] * np.prod(rows[:, features[ptr[t] : ptr[t + 1]]], axis=1)
    # Left rows need rest + b <= 0, right rows rest + b > 0.
    high = float(np.min(-rest[left], initial=np.inf))
    low = float(np.max(-rest[~left], initial=-np.inf))
    if not low < high:
        return coef
    out = coef.copy()
    out[constant[0]] = _shortest_in(low, high, coef[constant[0]])
    return out


def _shortest_in(low: float, high: float, near: float) -> float:
    """The shortest decimal in ``(low, high]``; a side left open (no row on it) is closed
    one unit past ``near`` (the exact constant) or the other side."""
    if not math.isfinite(low):
        low = min(high, near) - 1.0
    if not math.isfinite(high):
        high = max(low, near) + 1.0
    for digits in range(1, 17):
        for value in (high, (low + high) / 2, low, near):
            candidate = float(f"{value:.{digits - 1}e}")
            if low < candidate <= high:
                return candidate
    return high


def _rescored_loss(
    tree: Tree, X: np.ndarray, y: np.ndarray, n_classes: int, objective: str
) -> float:
    """The tree's training loss from routing every row: shares no code with the search."""
    leaves = tree.apply(X)
    loss = 0.0
    for leaf in np.unique(leaves):
        counts = np.bincount(y[leaves == leaf], minlength=n_classes).astype(np.float64)
        n = counts.sum()
        if objective == "misclassification":
            loss += n - counts.max()
        elif objective == "gini":
            loss += n - float(np.sum(counts * counts)) / n
        else:
            p = counts[counts > 0]
            loss += float(-np.sum(p * np.log(p / n)))
    return float(loss)


def candidate_rules(
    X: Any, rule: str = "axis", degree: int = 2, side_assignment: str = "all"
) -> tuple[np.ndarray, list[list[int]]]:
    """The candidate rules the search chooses from, after exact duplicates are removed.

    Parameters
    ----------
    X : array-like of shape (n_rows, n_features)
        Numeric data.
    rule, degree, side_assignment
        As in :class:`ProperTreeClassifier`.

    Returns
    -------
    plus : ndarray of bool, shape (n_rules, n_rows)
        ``plus[r, i]`` is true when row ``i`` goes left of rule ``r``.
    defining : list of list of int
        The rows defining each rule (the rule may only be used where they all are).

    Examples
    --------
    >>> from optitree.proper import candidate_rules
    >>> plus, defining = candidate_rules([[0.0], [1.0], [2.0]])
    >>> plus.astype(int).tolist(), defining
    ([[1, 0, 0], [1, 1, 0], [1, 1, 1]], [[0], [1], [2]])
    """
    check_choice("rule", rule, _RULES)
    x = np.ascontiguousarray(encode_fit(X).X, dtype=np.float64)
    plus, defining = _core.proper_candidate_rules(x, rule, degree, side_assignment)
    return np.asarray(plus), [list(d) for d in defining]


def _print_progress(p: dict[str, Any]) -> None:
    done, total, seconds = p["iterations"], max(p["expansions"], 1), p["seconds"]
    frac = done / total
    # Unknown until a first unit of work is done.
    eta = f"{seconds * (1 - frac) / frac:8.1f}s" if frac > 0 else f"{'?':>9}"
    if p.get("phase") == "rules":
        print(
            f"[proper] {seconds:8.1f}s  generating rules: {done:>12,} / {total:,} row subsets "
            f"({100 * frac:5.1f}%)  ETA {eta}  {p['cached']:,} rules, "
            f"{p['memory_bytes'] / 2**20:,.0f} MiB",
            file=sys.stderr,
            flush=True,
        )
        return
    print(
        f"[proper] {seconds:8.1f}s  {done:>12,} / {total:,} ({100 * frac:5.1f}%)  "
        f"ETA {eta}  best loss {p['upper_bound']:.6g}",
        file=sys.stderr,
        flush=True,
    )


def _bools_as_numbers(X: Any) -> Any:
    """Boolean columns as 0/1 numbers (rules compare numbers; scikit-learn reads booleans so),
    in an array or a DataFrame; anything else unchanged."""
    if hasattr(X, "dtypes") and hasattr(X, "columns"):
        flags = [c for c in X.columns if str(X[c].dtype) in ("bool", "boolean")]
        return X.astype({c: "float64" for c in flags}) if flags else X
    if isinstance(X, np.ndarray) and X.dtype == bool:
        return X.astype(np.float64)
    return X
