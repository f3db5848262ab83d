"""Shared estimator machinery: input validation and encoding, the categorical view the Rust core
searches, turning the core's tree back into a tree over the user's columns, and fitted status.

Every estimator family (``branches.py``, ``maptree.py``, ...) derives from
:class:`BaseTreeClassifier` and only adds its parameters and its call into the core.

Numeric columns
---------------
The core searches categorical data. A numeric column enters the search as one binary feature per
candidate threshold ``t`` (code 0 when ``x <= t``, code 1 otherwise), computed by
:class:`optitree.preprocessing.ThresholdBinarizer`. A split chosen on such a feature comes back to
the user as a ``THRESHOLD`` node ``x <= t`` on the original column, so trees, exports and saved
models always speak about the user's own columns.
"""

from __future__ import annotations

import math
import time
import warnings
from collections import Counter
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.validation import check_is_fitted

from optitree._validation import (
    EncodedInput,
    check_labels,
    check_sample_weight,
    encode_fit,
    encode_predict,
)
from optitree.exceptions import DataError, InternalError, NotProvenOptimalWarning
from optitree.tree import CATEGORY, THRESHOLD, Tree

__all__ = ["BaseTreeClassifier", "CategoricalView", "FitData", "categorical_view"]


@dataclass(frozen=True)
class CategoricalView:
    """The data as the core sees them: integer codes, one column per core feature.

    Attributes
    ----------
    codes : ndarray of uint8, uint16 or int64, shape (n_rows, n_core_features)
        The narrowest of these that holds every code (see :func:`code_dtype`).
    n_values : list of int
        Number of categories of each core feature.
    source : list of (int, float or None)
        For each core feature, the input column it comes from and, for a binarised numeric
        column, the threshold ``t`` (code 0 means ``x <= t``).
    identity : bool
        Every core feature is the input column of the same index, none binarised (a tree over
        core features is already a tree over the input columns).
    """

    codes: np.ndarray
    n_values: list[int]
    source: list[tuple[int, float | None]] = field(default_factory=list)
    identity: bool = False


def code_dtype(n_values: list[int]) -> np.dtype:
    """The narrowest integer type the core reads that holds codes ``0 .. n_values - 1``: a
    binarised numeric column is one byte a cell rather than eight (30,000 thresholds on 3,000
    rows: 90 MB instead of 720 MB to fill, hand over and read within a time limit)."""
    largest = max(n_values, default=0)
    if largest <= 1 << 8:
        return np.dtype(np.uint8)
    if largest <= 1 << 16:
        return np.dtype(np.uint16)
    return np.dtype(np.int64)


def categorical_view(
    enc: EncodedInput,
    *,
    max_thresholds: int | None = None,
    sample_weight: np.ndarray | None = None,
) -> CategoricalView:
    """Builds the categorical view of encoded input (see the module docstring).

    Candidate thresholds come from the rows with positive weight only, so that a row of weight
    zero changes nothing, exactly as if it were absent.
    """
    from optitree.preprocessing import ThresholdBinarizer

    n_rows = enc.X.shape[0]
    if all(cats is not None for cats in enc.categories):
        # All categorical (the common case for this solver family): one cast, no per-column work.
        n_values = [len(cats) for cats in enc.categories]
        codes = enc.X.astype(code_dtype(n_values), copy=False)  # integer data: already
        return CategoricalView(
            codes,
            n_values,
            [(j, None) for j in range(codes.shape[1])],
            identity=True,
        )
    # Each categorical column is one feature; a numeric one a binary feature per threshold.
    source: list[tuple[int, float | None]] = []
    n_values: list[int] = []
    for j, cats in enumerate(enc.categories):
        if cats is not None:
            source.append((j, None))
            n_values.append(len(cats))
            continue
        col = enc.X[:, j]
        counted = col if sample_weight is None else col[sample_weight > 0]
        binarizer = ThresholdBinarizer(max_thresholds=max_thresholds)
        binarizer.fit(counted.reshape(-1, 1))
        source.extend((j, float(t)) for t in binarizer.thresholds_[0])
        n_values.extend(2 for _ in binarizer.thresholds_[0])
    _check_view_size(enc, n_rows, len(source), code_dtype(n_values), max_thresholds)
    # One matrix filled a column's block at a time: a list of columns stacked would hold it
    # twice, and a numpy call per threshold took 0.8 s for 30,000 thresholds. Held column by
    # column, as the core stores it, so that handing it over is a copy, not a transpose.
    codes = np.empty((n_rows, len(source)), dtype=code_dtype(n_values), order="F")
    # Comparisons written as bools straight into one-byte codes: casting each took 40% longer.
    flags = codes.view(np.bool_) if codes.dtype == np.uint8 else None
    k = 0
    while k < len(source):
        j, t = source[k]
        if t is None:
            codes[:, k] = enc.X[:, j]
            k += 1
            continue
        end = k
        while end < len(source) and source[end][0] == j:
            end += 1
        thresholds = np.array([t for _, t in source[k:end]])
        column, bounds = enc.X[:, j, None], thresholds[None, :]
        if flags is not None:
            np.greater(column, bounds, out=flags[:, k:end])
        else:
            np.greater(column, bounds, out=codes[:, k:end], casting="unsafe")
        k = end
    return CategoricalView(codes, n_values, source)


#: Bytes the codes of a fit may take: the view's (one, two or eight bytes a cell, see
#: :func:`code_dtype`) and the core's copy of them (one byte a cell for ``uint8`` codes, else
#: four), which its data layer then indexes.
MAX_VIEW_BYTES = 2 << 30

#: A search stopped by a limit after fewer expansions than one per ``FEATURES_PER_EXPANSION``
#: features (or at most 10), on data of at least ``WIDE_FEATURES`` features, is told that the
#: width is the cause (and the remedy). Breast cancer's 426 training rows x 30 numeric columns
#: give 12,000 thresholds, and Branches made 17 expansions in 20 s.
FEATURES_PER_EXPANSION = 100
WIDE_FEATURES = 1_000
#: Thresholds per numeric column the warnings suggest when a column has more.
FEW_THRESHOLDS = 32


def _check_view_size(
    enc: EncodedInput, n_rows: int, n_features: int, dtype: np.dtype, max_thresholds: int | None
) -> None:
    """Refuses, with the numbers and the remedy, a view too large to fit in memory: numeric
    columns with many distinct values give a binary feature per threshold."""
    size = n_rows * n_features * (dtype.itemsize + (1 if dtype.itemsize == 1 else 4))
    if size <= MAX_VIEW_BYTES:
        return
    numeric = sum(cats is None for cats in enc.categories)
    cap = "" if max_thresholds is None else f", at most {max_thresholds} per column"
    raise DataError(
        f"the {numeric} numeric column(s) of X give {n_features:,} binary features (one per "
        f"candidate threshold{cap}) on {n_rows:,} rows: {size / 2**30:.1f} GiB as codes, more "
        f"than the {MAX_VIEW_BYTES / 2**30:.0f} GiB a fit may use; try fewer thresholds per "
        "column: max_thresholds=32 (BranchesClassifier), or bin the columns beforehand, for "
        "example with optitree.preprocessing.ThresholdBinarizer(max_thresholds=32)"
    )


def tree_from_core(
    arrays: dict[str, Any], view: CategoricalView, enc: EncodedInput, classes: np.ndarray
) -> Tree:
    """Turns a tree over core features into a tree over the input columns.

    A categorical node on a binarised numeric feature becomes the threshold node ``x <= t``
    (its two children are already in the order code 0 = low side, code 1 = high side). The
    core's arrays, made for this tree alone, are taken over and remapped in place.
    """
    kind, feature, threshold = arrays["kind"], arrays["feature"], arrays["threshold"]
    categorical_nodes = [] if view.identity else np.flatnonzero(kind == CATEGORY)
    for i in categorical_nodes:
        column, t = view.source[feature[i]]
        feature[i] = column
        if t is not None:
            if arrays["children_ptr"][i + 1] - arrays["children_ptr"][i] != 2:
                raise InternalError(f"binarised feature split at node {i} is not binary")
            kind[i], threshold[i] = THRESHOLD, t
    return Tree._adopt(
        arrays,
        feature_names=enc.feature_names,
        class_names=[_plain(c) for c in classes],
        categories=enc.categories,
    )


def integer_columns(X: Any) -> list[bool]:
    """Which columns are stored as integers, one bool per column (a mask ``categorical=``
    reads by position: a DataFrame's labels may be integers themselves, which it would take
    for positions). Empty when X is not a 2-D table of columns."""
    if hasattr(X, "dtypes") and hasattr(X, "columns"):
        return [np.asarray(X.iloc[:, j]).dtype.kind in "iu" for j in range(X.shape[1])]
    arr = np.asarray(X)
    if arr.ndim == 2:
        return [arr.dtype.kind in "iu"] * arr.shape[1]
    return []


def _thresholds_per_column(source: list[tuple[int, Any]]) -> Counter[int]:
    """How many of the searched features are thresholds of each numeric input column."""
    return Counter(j for j, t in source if t is not None)


def _plain(value: Any) -> Any:
    """numpy scalars become Python scalars so names print and serialise naturally."""
    return value.item() if isinstance(value, np.generic) else value


@dataclass(frozen=True)
class FitData:
    """Validated training data ready for the core."""

    encoded: EncodedInput
    y: np.ndarray
    sample_weight: np.ndarray | None
    view: CategoricalView
    #: Seconds taken to validate and encode the data (binarising wide numeric columns).
    seconds: float = 0.0


def forget_fit(estimator: BaseEstimator) -> None:
    """Drops the fitted attributes (``tree_``, ``classes_``, ...) an earlier fit left, so that a
    fit that fails leaves the estimator unfitted rather than half old, half new (a stale tree
    read with new classes predicts wrong labels). Private attributes stay: scikit-learn's
    meta-estimators set some before calling fit, and none is read without ``tree_``."""
    for name in [n for n in vars(estimator) if n.endswith("_") and not n.startswith("_")]:
        delattr(estimator, name)


class BaseTreeClassifier(ClassifierMixin, BaseEstimator):
    """Fitted-state handling, prediction and reporting shared by optitree's classifiers.

    Subclasses implement ``fit`` with :meth:`_prepare_fit`, a core call and :meth:`_finish_fit`.
    After fitting, every classifier has ``tree_``, ``classes_``, ``n_features_in_``,
    ``feature_names_in_`` (DataFrame input only), ``status_``, ``lower_bound_``,
    ``upper_bound_`` and ``statistics_``.
    """

    #: Whether a second thread (``n_jobs=2``) speeds the search up (Branches runs on one).
    _threads_help = False

    _max_thresholds: int | None = None
    #: Whether ``time_limit`` counts from the start of ``fit`` (preparing the data included).
    _limit_covers_preparation = False

    def _categorical_columns(self, X: Any) -> Any:
        """Columns to treat as categorical beyond the non-numeric ones (None: no others)."""
        return None

    def _prepare_fit(self, X: Any, y: Any, sample_weight: Any = None) -> FitData:
        started = time.perf_counter()
        forget_fit(self)
        encoded = encode_fit(X, categorical=self._categorical_columns(X))
        y_codes, classes = check_labels(y, n_rows=encoded.X.shape[0])
        weights = check_sample_weight(sample_weight, encoded.X.shape[0])
        self.classes_ = classes
        self.n_features_in_ = encoded.X.shape[1]
        if encoded.had_names:
            self.feature_names_in_ = np.asarray(encoded.feature_names, dtype=object)
        elif hasattr(self, "feature_names_in_"):
            del self.feature_names_in_
        view = categorical_view(encoded, max_thresholds=self._max_thresholds, sample_weight=weights)
        return FitData(encoded, y_codes, weights, view, time.perf_counter() - started)

    def _finish_fit(self, result: dict[str, Any], data: FitData, tree: Tree | None = None) -> None:
        """Stores the fitted tree (``tree``, or the core's tree mapped to the input columns),
        status, bounds and statistics; warns when optimality is not proven."""
        if tree is None:
            tree = tree_from_core(result["tree"], data.view, data.encoded, self.classes_)
        self.tree_ = tree
        self.status_ = str(result["status"])
        self.lower_bound_ = float(result["lower_bound"])
        self.upper_bound_ = float(result["upper_bound"])
        self.statistics_ = dict(result["statistics"])
        self._encoding = (data.encoded.feature_names, data.encoded.categories)
        if self.status_ != "optimal":
            warnings.warn(
                f"{type(self).__name__} stopped with status {self.status_!r} before proving "
                f"optimality; {self._unproven_note()}"
                f"{self._limit_note(data) or self._more_note()}",
                NotProvenOptimalWarning,
                stacklevel=3,
            )

    def _limit_note(self, data: FitData) -> str:
        """Why a limit cut the search short when the data's width is the cause (preparing them
        took half the time limit, or the search made almost no expansions): the remedy is
        fewer features, not a larger limit."""
        if self.status_ not in ("time_limit", "memory_limit"):
            return ""
        return self._preparation_note(data) or self._width_note(data)

    def _more_note(self) -> str:
        """What to raise for a proof, when a limit (not Ctrl-C) stopped the search and the
        data's width is not the cause: the limit, and the threads where more can be used."""
        limit = {"time_limit": "time_limit", "memory_limit": "memory_limit"}.get(self.status_)
        if limit is None:
            return ""
        threads = limit == "time_limit" and self._threads_help and getattr(self, "n_jobs", 1) == 1
        return f". A larger {limit}{' or n_jobs=2' if threads else ''} may close the gap"

    def _search_source(self, data: FitData) -> list[tuple[int, Any]]:
        """``(input column, threshold or None)`` of each feature the search splits."""
        return data.view.source

    def _threshold_remedy(self, per_column: Counter[int]) -> str:
        """Fewer thresholds per column, when some column has more than that would leave."""
        if max(per_column.values(), default=0) <= FEW_THRESHOLDS:
            return ""  # already few a column (0/1 floats, or max_thresholds set): no remedy
        return (
            f"max_thresholds={FEW_THRESHOLDS}"
            if "max_thresholds" in self.get_params()
            else f"optitree.preprocessing.ThresholdBinarizer(max_thresholds={FEW_THRESHOLDS}) "
            "beforehand"
        )

    def _preparation_note(self, data: FitData) -> str:
        """Why a time limit left the search little time, when preparing wide numeric data took
        half of it or more: the remedy is fewer thresholds, not more time."""
        limit = getattr(self, "time_limit", None)
        per_column = _thresholds_per_column(self._search_source(data))
        thresholds = sum(per_column.values())
        covered = self._limit_covers_preparation
        if self.status_ != "time_limit" or not limit or not covered or thresholds == 0:
            return ""
        if data.seconds < limit / 2:
            return ""
        remedy = self._threshold_remedy(per_column)
        return (
            f". Preparing the data took {data.seconds:.1f} s of the {limit:g} s limit: "
            f"{len(per_column)} numeric column(s) give {thresholds:,} binary features (one per "
            f"candidate threshold) on {len(data.y):,} rows"
            + (
                f"; fewer thresholds per column (for example {remedy}) leave the search its time"
                if remedy
                else ""
            )
        )

    def _width_note(self, data: FitData) -> str:
        """Why a search over thousands of features stopped after a handful of expansions: each
        one weighs a split on every feature."""
        expansions = self.statistics_.get("expansions")
        if expansions is None:
            return ""
        expansions += self.statistics_.get("fallback_expansions", 0)  # Branches at penalty 0
        source = self._search_source(data)
        features = len(source)
        few = max(10, features // FEATURES_PER_EXPANSION)
        if expansions > few or features < WIDE_FEATURES:
            return ""
        if self.status_ == "memory_limit" and expansions == 0:
            note = (
                f". The memory limit left no room for the first expansion, which holds a split "
                f"on each of the data's {features:,} features"
            )
        else:
            note = (
                f". The search made only {expansions} expansion(s): each weighs a split on "
                f"every one of the data's {features:,} features"
            )
        per_column = _thresholds_per_column(source)
        thresholds = sum(per_column.values())  # Counter.total() needs Python 3.10
        remedy = self._threshold_remedy(per_column)
        if thresholds * 2 < features or not remedy:
            return note
        share = "all" if thresholds == features else f"{thresholds:,}"
        return (
            f"{note}, {share} of them candidate thresholds of {len(per_column)} numeric "
            f"column(s); fewer thresholds per column (for example {remedy}) make an expansion "
            "smaller and faster"
        )

    def _unproven_note(self) -> str:
        """What a stopped search did prove, for its warning."""
        return (
            f"the tree is the best found (bounds [{self.lower_bound_:.6g}, "
            f"{self.upper_bound_:.6g}])"
        )

    def _predict_matrix(self, X: Any) -> np.ndarray:
        check_is_fitted(self, "tree_")
        names, categories = self._encoding
        return encode_predict(
            X,
            names,
            categories,
            check_names=hasattr(self, "feature_names_in_"),
            estimator_name=type(self).__name__,
            warn_names=True,
            warn_columns=self._columns_read(),
        )

    def _columns_read(self) -> set[int]:
        """Positions of the input columns the tree's splits read: an unseen category in any
        other column changes no prediction, so it does not warn."""
        return set(self.tree_.used_features().tolist())

    def _router(self) -> Tree:
        """The tree that routes the rows of ``_predict_matrix``, with ``tree_``'s node numbers:
        ``tree_`` itself here. Only the route is taken from it; the totals are ``tree_``'s."""
        return self.tree_

    def apply(self, X: Any) -> np.ndarray:
        """Index of the node where each row stops.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_rows, n_features)

        Returns
        -------
        ndarray of int64, shape (n_rows,)
        """
        Xm = self._predict_matrix(X)
        return self._router().apply(Xm)

    def decision_path(self, X: Any):
        """Sparse (n_rows, n_nodes) indicator of the nodes each row passes through."""
        Xm = self._predict_matrix(X)
        return self._router().decision_path(Xm)

    def predict_proba(self, X: Any) -> np.ndarray:
        """Class frequencies of the node that predicts each row, columns in ``classes_`` order.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_rows, n_features)

        Returns
        -------
        ndarray of shape (n_rows, n_classes)
        """
        Xm = self._predict_matrix(X)
        # Routed by the router, weighed by tree_ (its totals and class prior as they are now).
        return self.tree_.node_probabilities(self._router().prediction_nodes(Xm))

    def predict_log_proba(self, X: Any) -> np.ndarray:
        """Natural logarithm of :meth:`predict_proba` (``-inf`` where a class has probability
        0), columns in ``classes_`` order.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_rows, n_features)

        Returns
        -------
        ndarray of shape (n_rows, n_classes)
        """
        proba = self.predict_proba(X)
        with np.errstate(divide="ignore"):
            return np.log(proba)

    def predict(self, X: Any) -> np.ndarray:
        """Predicted class of each row (ties go to the first class in ``classes_``).

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_rows, n_features)

        Returns
        -------
        ndarray of shape (n_rows,)
        """
        Xm = self._predict_matrix(X)
        nodes = self._router().prediction_nodes(Xm)
        return self.classes_[self.tree_.node_classes()[nodes]]

    def get_depth(self) -> int:
        """Depth of the fitted tree."""
        check_is_fitted(self, "tree_")
        return self.tree_.get_depth()

    def get_n_leaves(self) -> int:
        """Number of leaves of the fitted tree."""
        check_is_fitted(self, "tree_")
        return self.tree_.get_n_leaves()

    def get_n_splits(self) -> int:
        """Number of splits (internal nodes) of the fitted tree."""
        check_is_fitted(self, "tree_")
        return self.tree_.get_n_splits()

    def _rescored_accuracy(self, data: FitData, weights: np.ndarray | None) -> Fraction:
        """Weighted training accuracy of ``tree_``, by routing the encoded training rows, as an
        exact fraction (of the correctly rounded weight sums), so that an objective built on it
        is rounded once, as the search's bounds are.

        Shares no code with any search: the core only routes rows; the counting is here.
        """
        nodes = self.tree_.prediction_nodes(data.encoded.X)
        # Each node's class once, then per row: gathering rows' value vectors cost more.
        hits = self.tree_.node_classes()[nodes] == data.y
        if weights is None:
            return Fraction(int(np.count_nonzero(hits)), len(hits))
        return Fraction(math.fsum(weights[hits])) / Fraction(math.fsum(weights))

    def training_accuracy(self, X: Any, y: Any, sample_weight: Any = None) -> float:
        """Weighted accuracy of the fitted tree on ``(X, y)``, computed by routing each row.

        This evaluator shares no code with any search; estimators use it to re-score the tree
        they return.
        """
        y_true = np.asarray(y).ravel()
        hits = self.predict(X) == y_true
        w = check_sample_weight(sample_weight, len(y_true))  # a scalar weighs every row alike
        w = np.ones(len(y_true)) if w is None else w
        return float(np.sum(w * hits) / np.sum(w))
