"""Branches: provably optimal sparse decision trees with multiway splits on categorical data.

The solver of Chaouki, Read & Bifet ("Branches: Efficiently Seeking Optimal Sparse Decision Trees
via AO*"), in the Rust core: a best-first branch and bound over the subproblems of the data,
with exact integer arithmetic.
"""

from __future__ import annotations

import functools
import math
import sys
import time
import warnings
from fractions import Fraction
from typing import Any

import numpy as np

from optitree import _core
from optitree._params import (
    check_bool,
    check_choice,
    check_int,
    check_memory_limit,
    check_real,
    check_time_limit,
    check_verbose,
    time_left,
)
from optitree.base import BaseTreeClassifier, forget_fit, integer_columns
from optitree.exceptions import InternalError, InvalidParameterError

__all__ = ["BranchesClassifier"]


def exact_penalty(penalty: Any) -> Fraction:
    """The penalty as an exact fraction: ``0.01`` means exactly 1/100 (its decimal text).

    Examples
    --------
    >>> exact_penalty(0.005)
    Fraction(1, 200)
    """
    if isinstance(penalty, Fraction):
        value = penalty
    else:
        check_real("penalty", penalty, low=0, high=1)
        # The shortest decimal text of a float is what the user typed: 0.1 -> 1/10 exactly.
        value = Fraction(repr(float(penalty)))
    # Integer comparisons (a fit's fixed cost counts on small data); denominators are positive.
    if not 0 <= value.numerator <= value.denominator:
        raise InvalidParameterError(f"penalty must be in [0, 1], got {penalty!r}")
    if value.denominator > 10**12:
        raise InvalidParameterError(
            f"penalty {penalty!r} needs more than 12 significant digits; round it"
        )
    return value


def integer_weights(
    sample_weight: np.ndarray | None,
) -> tuple[np.ndarray | None, str, tuple[float, float]]:
    """Whole-number weights with the same ratios as ``sample_weight``; how they were rounded
    (``""`` when exact); ``(divisor, factor)``: a whole number ``x`` weighs ``x / divisor *
    factor`` (a pair, so that weights of 1e-305 need no scale past the largest float).

    Weights that become whole numbers after scaling by 10**k (k <= 6), or by a common
    denominator of their fractions (see :func:`_common_denominator`), are exact, as long as
    they add up to less than 2**52 (the search counts weight sums exactly); others are rounded to
    9 significant digits relative to the largest weight, and a positive weight below half of
    that step counts as one step rather than vanishing (its row stays in the fit). The whole
    numbers are about ``divisor / factor`` times the weights.
    """
    if sample_weight is None:
        return None, "", (1.0, 1.0)
    for k in range(7):
        scaled = sample_weight * 10**k
        whole = np.round(scaled)
        # Within rounding error of a whole number, and no positive weight rounded away (1e-10
        # is within 1e-9 of 0, and a fit of such weights had no weight left at all).
        near = np.abs(scaled - whole) <= 1e-9 * np.maximum(1.0, scaled)
        if np.all(near & ((whole > 0) | (sample_weight == 0))):
            if scaled.sum() < 2**52:
                return whole, "", (float(10**k), 1.0)
    fractions = _common_denominator(sample_weight)
    if fractions is not None:
        return fractions
    top = float(sample_weight.max())
    whole = np.round(sample_weight / top * 1e9)
    note = (
        "sample weights are neither decimal numbers with at most 6 places nor fractions with "
        "a common denominator, adding up to less than 2**52; they were rounded to 9 "
        "significant digits relative to the largest weight (ratios of weights within 1e-9 of "
        "them: the tree can differ only where rows' weights nearly tie)"
    )
    vanishing = (whole == 0) & (sample_weight > 0)
    if vanishing.any():
        whole[vanishing] = 1.0
        note += (
            f", and {int(vanishing.sum())} positive weight(s) below 5e-10 of it (the first at "
            f"row {int(np.argmax(vanishing))}) count as 1e-9 of it rather than as 0"
        )
    return whole, note, (1e9, top)


def _common_denominator(
    sample_weight: np.ndarray,
) -> tuple[np.ndarray, str, tuple[float, float]] | None:
    """:func:`integer_weights` of weights that are the floats of fractions with a common
    denominator of at most 10**9, such as scikit-learn's ``"balanced"`` class weights
    (``n / (k · count)``): exact whole numbers, instead of a rounding and its warning. None for
    other weights (or more than 1,000 distinct values, or sums past 2**52)."""
    distinct = np.unique(sample_weight)
    if len(distinct) > 1000:
        return None
    denominator = 1
    for value in distinct.tolist():
        fraction = Fraction(value).limit_denominator(10**6)
        if float(fraction) != value:
            return None
        denominator = (
            denominator * fraction.denominator // math.gcd(denominator, fraction.denominator)
        )
        if denominator > 10**9:
            return None
    scaled = sample_weight * denominator
    whole = np.round(scaled)
    exact = np.abs(scaled - whole) <= 1e-6 * np.maximum(1.0, scaled)
    if not np.all(exact & ((whole > 0) | (sample_weight == 0))) or whole.sum() >= 2**52:
        return None
    return whole, "", (float(denominator), 1.0)


class BranchesClassifier(BaseTreeClassifier):
    """Provably optimal sparse decision tree: maximises ``accuracy − penalty × splits``.

    Categorical columns split multiway (one child per category, a split costs ``penalty`` once
    whatever its number of children); binary features are the special case. The search is the
    Branches algorithm (best-first branch and bound with the purification bound), run on the
    exact objective with the memo keyed by each subproblem's set of rows.

    Parameters
    ----------
    penalty : float or Fraction, default=0.01
        Price λ of one split, in training accuracy, in [0, 1]. Taken exactly as written
        (``0.005`` is 1/200), so the objective is compared without rounding. Small penalties
        make the search much harder; ``penalty=0`` needs ``max_depth``.
    max_depth : int or None, default=None
        Longest root-to-leaf path. With ``penalty=0`` this is the DL8.5/MurTree problem
        (most accurate tree of bounded depth; see ``fewest_splits``).
    min_samples_leaf : int, default=1
        Fewest training rows a non-empty leaf may hold. (A multiway split may create empty
        leaves for categories absent from its rows; they predict like their parent.)
    time_limit : float or None, default=None
        Seconds, counted from the start of ``fit`` (preparing the data included), after which
        the search returns its best tree with status ``"time_limit"``.
    memory_limit : int or None, default=None
        Bytes the search may hold; reaching it returns the best tree with status
        ``"memory_limit"``. The data are not counted: their codes, and the core's copy of them
        (a byte a cell when no feature has over 256 values, else four; binarised numeric
        columns make many cells), come on top.
    n_jobs : int, default=1
        Accepted for scikit-learn compatibility; the search runs on one thread today and its
        result never depends on ``n_jobs``.
    verbose : int, default=0
        When positive, prints the search's progress (iterations, bounds, gap, memory, time) to
        standard error about twice a second.
    categorical : "auto", "all" or list, default="auto"
        Which columns split multiway. ``"auto"``: category, string, bool and integer columns;
        float columns are numeric (an integer column of more than 32 values, over half as many
        as rows, is split multiway all the same, with a warning: it is probably a quantity).
        ``"all"``: every column. A list names (or indexes) the columns to treat as
        categorical in addition to the non-numeric ones (``[]``: integers are numeric).
    max_thresholds : int or None, default=None
        For numeric columns: candidate thresholds per column (``None``: every midpoint between
        consecutive distinct values). A numeric column enters the search as binary features
        ``x <= t`` and comes back as threshold nodes on the column.
    fewest_splits : bool, default=True
        Among trees of equal objective, return one with the fewest splits, and prove it.
        ``False`` returns an optimal tree (the objective is still proven) without proving that
        no equally good tree has fewer splits. With ``penalty=0`` every equally accurate tree
        ties, and when many do (several perfect trees within ``max_depth``), proving the
        fewest splits can take orders of magnitude longer than proving the accuracy;
        ``False`` then solves the depth-bounded accuracy problem of DL8.5. With
        ``penalty=0``, the default and a ``time_limit`` or ``memory_limit``, the search gets
        four fifths of the time limit (all of it with only a memory limit); if it is stopped
        before it has proven its tree's accuracy optimal, a search without the tie-break runs
        in the rest and the more accurate of the two trees is returned (on a tie, the one with
        fewer splits). A fit that needed more than four fifths of ``time_limit`` then stops
        early with a warning, and while the second search runs the first one's memory may
        not be released yet.

    Attributes
    ----------
    tree_ : optitree.tree.Tree
        The fitted tree.
    classes_ : ndarray
        Class labels, sorted.
    n_features_in_ : int
        Number of input columns.
    feature_names_in_ : ndarray of str
        Input column names (DataFrame input only).
    objective_ : float
        ``accuracy − penalty × splits`` of ``tree_``, re-scored by routing the training rows
        (independently of the search) and checked against the search's exact value.
    status_ : str
        ``"optimal"``, or why the search stopped: ``"time_limit"``, ``"memory_limit"``,
        ``"interrupted"`` (Ctrl-C).
    lower_bound_, upper_bound_ : float
        Bounds on the optimal objective; equal when ``status_ == "optimal"``, and also when
        the objective is proven but not that no equally good tree has fewer splits.
    statistics_ : dict
        ``iterations`` (selection passes; the paper counts passes + 1), ``expansions``,
        ``cached_subproblems`` (subproblem nodes held), ``memo_hits`` (subproblems reached
        again through another path), ``dominated_splits`` (splits discarded by a bound),
        ``chain_bounds`` (upper bounds of subproblems lowered from a neighbouring threshold of
        the same numeric column), ``similarity_bounds`` (upper bounds of subproblems lowered
        from an expanded sibling sharing most of their rows; on data of 32 columns or more
        with ``max_depth``, 100 or more without), ``depth_two_solves`` (subproblems
        two levels above the depth limit, solved outright and counted among the expansions),
        ``peak_memory_bytes`` (the search's own accounting), ``seconds``. After the fallback
        search of ``fewest_splits`` the counts are the first search's, ``seconds`` is both
        searches' and ``fallback_expansions`` the second's expansions.

    Notes
    -----
    Ties between trees of equal objective go to the one with fewer splits, then to the lowest
    feature index (with ``fewest_splits=False``: to the first tree the search proves optimal);
    results are deterministic either way.
    Sample weights are used exactly when they are whole numbers after scaling by a power of ten
    (up to 10**6), or fractions with a common denominator of at most 10**9 (scikit-learn's
    ``"balanced"`` weights), adding up to less than 2**52; otherwise they are rounded to 9
    significant digits relative to the largest weight (with a warning).

    Examples
    --------
    >>> from optitree import BranchesClassifier
    >>> from optitree.datasets import load_monks
    >>> X, y = load_monks(1, return_X_y=True)
    >>> clf = BranchesClassifier(penalty=0.01).fit(X, y)
    >>> clf.status_, round(clf.objective_, 6), clf.get_n_splits()
    ('optimal', 0.9, 10)
    """

    _limit_covers_preparation = True

    def __init__(
        self,
        penalty: float = 0.01,
        max_depth: int | None = None,
        min_samples_leaf: int = 1,
        time_limit: float | None = None,
        memory_limit: int | None = None,
        n_jobs: int = 1,
        verbose: int = 0,
        categorical: Any = "auto",
        max_thresholds: int | None = None,
        fewest_splits: bool = True,
    ) -> None:
        self.penalty = penalty
        self.max_depth = max_depth
        self.min_samples_leaf = min_samples_leaf
        self.time_limit = time_limit
        self.memory_limit = memory_limit
        self.n_jobs = n_jobs
        self.verbose = verbose
        self.categorical = categorical
        self.max_thresholds = max_thresholds
        self.fewest_splits = fewest_splits

    def _categorical_columns(self, X: Any) -> Any:
        if isinstance(self.categorical, str):
            check_choice("categorical", self.categorical, ("auto", "all"))
            if self.categorical == "all":
                n = X.shape[1] if hasattr(X, "shape") else len(np.asarray(X, dtype=object)[0])
                return [True] * n  # a mask: nothing to look up
            return integer_columns(X)
        return self.categorical

    def _warn_lookup_columns(self, X: Any, data: Any) -> None:
        """Integer columns split multiway under ``categorical="auto"``; one holding about as
        many values as rows (an amount, an age, an id) then fits a lookup table, one child per
        value, and predicts unseen values from the node above. Said once, with the remedy."""
        n_rows = len(data.y)
        categories = data.encoded.categories
        many = [
            (data.encoded.feature_names[j], len(categories[j]))
            for j, integer in enumerate(integer_columns(X))
            if integer
            and categories[j] is not None
            and len(categories[j]) > 32
            and 2 * len(categories[j]) > n_rows
        ]
        if many:
            listing = ", ".join(f"{name!r} ({k} values)" for name, k in many[:5])
            more = f" and {len(many) - 5} more" if len(many) > 5 else ""
            warnings.warn(
                f"integer column(s) {listing}{more} in {n_rows} rows split multiway under "
                "categorical='auto', one child per value (a lookup table that predicts new "
                "values from the node above); if they are quantities, pass categorical=[] or "
                "convert them to float to split them by thresholds",
                UserWarning,
                stacklevel=3,
            )

    def fit(self, X: Any, y: Any, sample_weight: Any = None) -> BranchesClassifier:
        """Finds the tree maximising ``accuracy − penalty × splits`` on ``(X, y)``.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_rows, n_features)
            Integer category codes, categorical/string/bool columns, or numeric columns.
        y : array-like of shape (n_rows,)
            Class labels of any hashable type; any number of classes.
        sample_weight : array-like of shape (n_rows,), optional
            Non-negative row weights (accuracy becomes weighted accuracy).

        Returns
        -------
        self
        """
        started = time.perf_counter()  # the time limit covers the whole fit
        forget_fit(self)  # a fit refused for its parameters leaves no stale tree behind
        penalty = exact_penalty(self.penalty)
        max_depth = check_int("max_depth", self.max_depth, low=0, allow_none=True)
        min_leaf = check_int("min_samples_leaf", self.min_samples_leaf, low=1)
        time_limit = check_time_limit(self.time_limit)
        memory_limit = check_memory_limit(self.memory_limit)
        check_int("n_jobs", self.n_jobs, low=-1)
        verbose = check_verbose(self.verbose)
        fewest_splits = check_bool("fewest_splits", self.fewest_splits)
        self._max_thresholds = check_int(
            "max_thresholds", self.max_thresholds, low=1, allow_none=True
        )
        if penalty == 0 and max_depth is None:
            raise InvalidParameterError(
                "penalty=0 without max_depth asks for the most accurate tree of any size, "
                "which is just a lookup table; set max_depth (or a positive penalty)"
            )
        data = self._prepare_fit(X, y, sample_weight)
        if isinstance(self.categorical, str) and self.categorical == "auto":
            self._warn_lookup_columns(X, data)
        weights, rounding, (divisor, factor) = integer_weights(data.sample_weight)
        if rounding:
            warnings.warn(rounding, UserWarning, stacklevel=2)
        search = functools.partial(
            _core.fit_branches,
            data.view.codes,
            data.y,
            penalty.numerator,
            penalty.denominator,
            n_classes=len(self.classes_),
            n_values=data.view.n_values,
            sample_weight=weights,
            max_depth=max_depth,
            min_samples_leaf=min_leaf,
            memory_limit=memory_limit,
            progress=_print_progress if verbose > 0 else None,
            # The thresholds of one numeric column bound one another's splits.
            chains=[j if t is not None else None for j, t in data.view.source],
        )
        # At penalty 0 the proof of the fewest splits finds its first most accurate tree only
        # near its end. Under a limit, a fifth of the time is kept for a search without the
        # tie-break, which finds the most accurate tree far sooner, should the first be stopped.
        fallback = penalty == 0 and fewest_splits and (time_limit, memory_limit) != (None, None)
        budget = time_left(time_limit, started)
        result = search(
            fewest_splits=fewest_splits,
            time_limit=budget * 0.8 if fallback and budget is not None else budget,
        )
        stopped = result["status"] in ("time_limit", "memory_limit")
        if fallback and stopped and result["lower_bound"] < result["upper_bound"]:
            if verbose > 0:
                print(
                    "[branches] the fewest-splits search stopped; searching for the most "
                    "accurate tree without the tie-break",
                    file=sys.stderr,
                    flush=True,
                )
            other = search(fewest_splits=False, time_limit=time_left(time_limit, started))
            result = _better_of(result, other)
        self._finish_fit(result, data)
        if (divisor, factor) != (1.0, 1.0):
            # The core counted integer_weights' whole numbers (750 for 0.75): the tree keeps
            # the weighted class totals. Divided, not re-summed, so that its ties stay ties and
            # predict picks the classes the search scored.
            totals = self.tree_.value / divisor * factor
            totals.setflags(write=False)
            self.tree_.value = totals
        accuracy = self._rescored_accuracy(data, weights)
        # Exact, then rounded once: the bounds are, so a proven objective equals them.
        self.objective_ = float(accuracy - penalty * self.tree_.get_n_splits())
        if not math.isclose(self.objective_, result["objective"], rel_tol=0, abs_tol=1e-9):
            raise InternalError(
                f"the returned tree re-scores to {self.objective_!r} but the search reported "
                f"{result['objective']!r}; please report this bug"
            )
        return self

    def _unproven_note(self) -> str:
        if self.lower_bound_ < self.upper_bound_:
            note = super()._unproven_note()
            if self.penalty == 0 and self.fewest_splits:
                # The fallback search had a fifth of the limit (see fit): too little here.
                note += (
                    "; at penalty=0, fewest_splits=False proves the most accurate tree far "
                    "sooner (it does not prove that no equally accurate tree has fewer splits)"
                )
            return note
        # Only the tie-break is unsettled (a stopped fewest-splits search, see fit).
        return (
            f"the objective {self.upper_bound_:.6g} is proven optimal, but not that no equally "
            "good tree has fewer splits"
        )

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        # With the default penalty a tree stops splitting once a split gains under 1%.
        tags.classifier_tags.poor_score = True
        return tags


def _better_of(stopped: dict[str, Any], other: dict[str, Any]) -> dict[str, Any]:
    """A stopped search's result, with the other search's tree if that one is more accurate
    (penalty 0: the objective is the correct weight) or as accurate with fewer splits, and the
    bounds of both. The status stays the stopped search's, since which of the equally good trees
    has the fewest splits is not proven, unless Ctrl-C interrupted the other search."""
    best = dict(other if _rank(other) > _rank(stopped) else stopped)
    best["status"] = "interrupted" if other["status"] == "interrupted" else stopped["status"]
    best["lower_bound"] = max(stopped["lower_bound"], other["lower_bound"])
    best["upper_bound"] = min(stopped["upper_bound"], other["upper_bound"])
    statistics = dict(stopped["statistics"])
    statistics["seconds"] = stopped["statistics"]["seconds"] + other["statistics"]["seconds"]
    statistics["peak_memory_bytes"] = max(
        stopped["statistics"]["peak_memory_bytes"], other["statistics"]["peak_memory_bytes"]
    )
    statistics["fallback_expansions"] = other["statistics"]["expansions"]
    best["statistics"] = statistics
    return best


def _rank(result: dict[str, Any]) -> tuple[int, int]:
    return result["correct"], -result["splits"]


def _print_progress(p: dict[str, Any]) -> None:
    gap = p["upper_bound"] - p["lower_bound"]
    print(
        f"[branches] {p['seconds']:8.1f}s  iterations {p['iterations']:>10,}  "
        f"expansions {p['expansions']:>10,}  bounds [{p['lower_bound']:.6f}, "
        f"{p['upper_bound']:.6f}] gap {gap:.6f}  cached {p['cached']:>9,}  "
        f"memory {p['memory_bytes'] / 2**20:8.1f} MiB",
        file=sys.stderr,
        flush=True,
    )
