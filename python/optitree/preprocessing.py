"""Transformers that prepare data for optimal decision trees.

Optimal-tree searches work on discrete features: categorical columns with a
few values, or binary columns. The transformers here produce those encodings
and remember enough to map a tree's splits back to the original features:

- :class:`CategoricalEncoder`: one integer code ``0 .. C-1`` per category;
- :class:`OneHotEncoder`: one 0/1 column per category, optionally dropping
  the first or last category of each feature;
- :class:`ThresholdBinarizer`: one 0/1 column ``x <= t`` per candidate
  threshold ``t`` of a numeric feature.

All three are scikit-learn transformers: they clone, pickle, work in a
``Pipeline`` or ``ColumnTransformer``, support ``set_output`` and report
``get_feature_names_out``. They read data through the same validation layer
as optitree's estimators, so column kinds, category order and error messages
are the same everywhere: pandas ``category`` columns keep their declared
categories, bools get ``[False, True]``, and other labels are sorted.
DataFrame columns are matched by name at transform time, in any order.
"""

from __future__ import annotations

import numbers

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils.validation import check_is_fitted

from optitree._validation import (
    _cell,
    _check_shape,
    _encode_new,
    _encode_table,
    _object_array,
    _plain,
    _read_table,
    _show,
)
from optitree.exceptions import DataError, InvalidParameterError

__all__ = ["CategoricalEncoder", "OneHotEncoder", "ThresholdBinarizer", "format_threshold"]


def _check_choice(name: str, value, allowed: tuple) -> None:
    if not any(
        value is choice or (isinstance(value, str) and value == choice) for choice in allowed
    ):
        shown = ", ".join(repr(choice) for choice in allowed)
        raise InvalidParameterError(f"{name} must be one of {shown}; got {_show(value)}.")


def _labels_array(labels: list) -> np.ndarray:
    """Category labels as an array: int, float or bool dtype if all labels share that type.

    Anything else (strings, mixtures such as ``[1, 2.5]``) gives an object array, so that
    no label changes type.
    """
    types = {type(label) for label in labels}
    if len(types) == 1 and types <= {bool, int, float}:
        arr = np.asarray(labels)
        if arr.dtype.kind in "biuf":
            return arr
    return _object_array(labels)


def _read_codes(X, n_columns: int, what: str) -> np.ndarray:
    """A 2-D array of integers (given as int, or as integral floats) with n_columns columns."""
    arr = np.asarray(X)
    if arr.ndim != 2:
        _check_shape(arr.shape, "X")  # raises the message for the wrong dimension
    if arr.shape[1] != n_columns:
        raise DataError(
            f"X has {arr.shape[1]} columns, but {what} expects {n_columns} columns "
            "(the width of transform's output)."
        )
    if arr.dtype.kind == "O":
        try:
            arr = arr.astype(np.float64)
        except (TypeError, ValueError):
            raise DataError(f"{what} expects numbers, got values of dtype object.") from None
    if arr.dtype.kind not in "biuf":
        raise DataError(f"{what} expects numbers, got dtype {arr.dtype}.")
    if arr.dtype.kind == "f":
        bad = ~np.isfinite(arr) | (arr != np.round(arr))
        if bad.any():
            i, j = np.argwhere(bad)[0]
            raise DataError(
                f"X holds {_show(arr[i, j])} at row {i}, column {j}; {what} expects integers."
            )
    return arr.astype(np.int64)


def _read_bits(X, names_out: np.ndarray) -> np.ndarray:
    """A 2-D array of 0/1 values, one column per output column name."""
    bits = _read_codes(X, len(names_out), "inverse_transform")
    bad = (bits != 0) & (bits != 1)
    if bad.any():
        i, c = np.argwhere(bad)[0]
        raise DataError(
            f"X holds {bits[i, c]} at row {i} in column {names_out[c]!r}; values must be 0 or 1."
        )
    return bits


class _Transformer(TransformerMixin, BaseEstimator):
    """Shared machinery: remembering the input columns and naming the output ones."""

    def _remember_input(self, table) -> None:
        self.n_features_in_ = len(table.names)
        if table.had_names:
            self.feature_names_in_ = np.asarray(table.names, dtype=object)
        elif hasattr(self, "feature_names_in_"):
            del self.feature_names_in_

    def _input_names(self, input_features=None) -> list[str]:
        """Names of the input columns: fitted DataFrame names, x0, x1, ... or input_features."""
        check_is_fitted(self, "n_features_in_")
        n = self.n_features_in_
        if input_features is None:
            if hasattr(self, "feature_names_in_"):
                return list(self.feature_names_in_)
            return [f"x{j}" for j in range(n)]
        names = list(input_features)
        if not all(isinstance(name, str) for name in names):
            raise InvalidParameterError(f"input_features must be strings; got {_show(names)[:60]}.")
        if len(names) != n:
            raise InvalidParameterError(
                f"input_features should have length equal to number of features ({n}), "
                f"got {len(names)}."
            )
        if hasattr(self, "feature_names_in_") and names != list(self.feature_names_in_):
            raise InvalidParameterError(
                f"input_features is not equal to feature_names_in_: got {names}, fitted "
                f"with {list(self.feature_names_in_)}."
            )
        return names

    def _encode(self, X, categories: list, unknown: str) -> np.ndarray:
        """Encode X with the fitted names and the given per-column categories."""
        check_is_fitted(self, "n_features_in_")
        return _encode_new(
            X,
            self._input_names(),
            categories,
            check_names=hasattr(self, "feature_names_in_"),
            estimator_name=type(self).__name__,
            unknown=unknown,
            warn_names=True,
        )

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.transformer_tags.preserves_dtype = []
        return tags


class _CategoryTransformer(_Transformer):
    """Encoders whose every column is categorical; fit finds ``categories_``."""

    def _fit_categories(self, X) -> list[list]:
        table = _read_table(X)
        encoded = _encode_table(table, [True] * len(table.names), allow_nan=False)
        self._remember_input(table)
        self.categories_ = [_labels_array(labels) for labels in encoded.categories]
        return encoded.categories

    def _category_lists(self) -> list[list]:
        return [categories.tolist() for categories in self.categories_]

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.categorical = True
        tags.input_tags.string = True
        return tags


class CategoricalEncoder(_CategoryTransformer):
    """Encode every column as integer category codes ``0 .. C-1``.

    Categories are found per column as everywhere in optitree: a pandas
    ``category`` column keeps its declared categories in their order (unused
    ones included), a bool column gets ``[False, True]``, and any other column
    (strings, numbers, mixtures) gets its sorted distinct values; values that
    Python cannot order, such as ``1`` and ``"a"``, are sorted by ``str``.

    Parameters
    ----------
    categories : "auto" or list of array-like, default="auto"
        ``"auto"`` finds the categories in the training data. A list gives,
        for each column, the categories in the order that defines their codes;
        training values outside that list are then handled like unseen ones.
    handle_unknown : {"error", "use_code"}, default="error"
        What ``transform`` does with a value that is not a known category:
        raise a :class:`~optitree.exceptions.DataError` naming the column, row
        and value, or encode it as ``-1``.

    Attributes
    ----------
    categories_ : list of ndarray
        The categories of each column; code ``k`` of column ``j`` stands for
        ``categories_[j][k]``. Numeric and bool labels give numeric and bool
        arrays, anything else an object array.
    n_features_in_ : int
        Number of columns seen in fit.
    feature_names_in_ : ndarray of str, shape (n_features_in_,)
        Column names seen in fit; only when fit was given a DataFrame.

    See Also
    --------
    OneHotEncoder : one binary column per category.

    Examples
    --------
    >>> import pandas as pd
    >>> from optitree.preprocessing import CategoricalEncoder
    >>> df = pd.DataFrame({"color": ["red", "blue", "red"], "size": ["S", "L", "M"]})
    >>> enc = CategoricalEncoder().fit(df)
    >>> enc.categories_
    [array(['blue', 'red'], dtype=object), array(['L', 'M', 'S'], dtype=object)]
    >>> enc.transform(df)
    array([[1, 2],
           [0, 0],
           [1, 1]])
    >>> enc.inverse_transform([[0, 2]])
    array([['blue', 'S']], dtype=object)
    """

    def __init__(self, categories="auto", handle_unknown="error"):
        self.categories = categories
        self.handle_unknown = handle_unknown

    def fit(self, X, y=None):
        """Find the categories of every column.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features) or pandas.DataFrame
            Training data; missing values are not allowed.
        y : None
            Ignored.

        Returns
        -------
        self : CategoricalEncoder
            The fitted encoder.

        Examples
        --------
        >>> from optitree.preprocessing import CategoricalEncoder
        >>> CategoricalEncoder().fit([["b"], ["a"]]).categories_
        [array(['a', 'b'], dtype=object)]
        """
        _check_choice("handle_unknown", self.handle_unknown, ("error", "use_code"))
        if isinstance(self.categories, str) and self.categories == "auto":
            self._fit_categories(X)
            return self
        if isinstance(self.categories, str) or not np.iterable(self.categories):
            raise InvalidParameterError(
                "categories must be 'auto' or a list with one array-like of categories per "
                f"column; got {_show(self.categories)}."
            )
        table = _read_table(X)
        given = list(self.categories)
        if len(given) != len(table.names):
            raise InvalidParameterError(
                f"categories has {len(given)} entries, but X has {len(table.names)} columns; "
                "give one list of categories per column."
            )
        lists = [self._checked_categories(name, c) for name, c in zip(table.names, given)]
        self._remember_input(table)
        self.categories_ = [_labels_array(labels) for labels in lists]
        # Validate the training data against the given categories.
        self._encode(X, lists, unknown=self._unknown())
        return self

    @staticmethod
    def _checked_categories(name: str, categories) -> list:
        if isinstance(categories, str) or not np.iterable(categories):
            raise InvalidParameterError(
                f"categories for column {name!r} must be a list of labels; got {_show(categories)}."
            )
        labels = [_plain(v) for v in categories]
        if not labels:
            raise InvalidParameterError(f"categories for column {name!r} is empty.")
        seen: set = set()
        for label in labels:
            try:
                duplicate = label in seen
            except TypeError:
                raise InvalidParameterError(
                    f"categories for column {name!r} holds the unhashable {_show(label)}."
                ) from None
            if duplicate:
                raise InvalidParameterError(
                    f"categories for column {name!r} lists {_show(label)} twice; categories "
                    "must be unique."
                )
            if label is None or (isinstance(label, float) and not np.isfinite(label)):
                raise InvalidParameterError(
                    f"categories for column {name!r} holds {_show(label)}; categories must "
                    "not be missing or infinite."
                )
            seen.add(label)
        return labels

    def _unknown(self) -> str:
        return "error" if self.handle_unknown == "error" else "code"

    def transform(self, X):
        """Replace every value by the code of its category.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features_in_) or pandas.DataFrame
            Data to encode; DataFrame columns are matched by name.

        Returns
        -------
        ndarray of shape (n_samples, n_features_in_), dtype int64
            Codes; ``-1`` for an unknown value when ``handle_unknown="use_code"``.

        Examples
        --------
        >>> from optitree.preprocessing import CategoricalEncoder
        >>> enc = CategoricalEncoder(handle_unknown="use_code").fit([["a"], ["b"]])
        >>> enc.transform([["b"], ["c"]])
        array([[ 1],
               [-1]])
        """
        check_is_fitted(self, "categories_")
        codes = self._encode(X, self._category_lists(), unknown=self._unknown())
        return codes.astype(np.int64)

    def inverse_transform(self, X):
        """Turn codes back into category labels.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features_in_)
            Codes as produced by :meth:`transform`; ``-1`` becomes ``None``.

        Returns
        -------
        ndarray of shape (n_samples, n_features_in_), dtype object
            The labels.

        Examples
        --------
        >>> from optitree.preprocessing import CategoricalEncoder
        >>> enc = CategoricalEncoder().fit([[10], [20]])
        >>> enc.inverse_transform([[1], [-1]])
        array([[20],
               [None]], dtype=object)
        """
        check_is_fitted(self, "categories_")
        codes = _read_codes(X, self.n_features_in_, "inverse_transform")
        names = self._input_names()
        out = np.empty(codes.shape, dtype=object)
        for j, categories in enumerate(self.categories_):
            column = codes[:, j]
            bad = (column < -1) | (column >= len(categories))
            if bad.any():
                i = int(np.argmax(bad))
                raise DataError(
                    f"column {names[j]!r} holds the code {column[i]} at row {i}; codes must be "
                    f"in [-1, {len(categories) - 1}]."
                )
            # Index -1 picks the appended None.
            labels = np.empty(len(categories) + 1, dtype=object)
            labels[: len(categories)] = categories
            out[:, j] = labels[column]
        return out

    def get_feature_names_out(self, input_features=None):
        """Names of the output columns: the input column names.

        Parameters
        ----------
        input_features : array-like of str, optional
            Input names to use; must match ``feature_names_in_`` if that exists.

        Returns
        -------
        ndarray of str objects
            One name per output column.

        Examples
        --------
        >>> import pandas as pd
        >>> from optitree.preprocessing import CategoricalEncoder
        >>> enc = CategoricalEncoder().fit(pd.DataFrame({"color": ["red"]}))
        >>> enc.get_feature_names_out()
        array(['color'], dtype=object)
        """
        return np.asarray(self._input_names(input_features), dtype=object)


class OneHotEncoder(_CategoryTransformer):
    """Encode every column as one 0/1 column per category.

    Categories are found and ordered as in :class:`CategoricalEncoder` (sorted
    labels; declared order for pandas ``category`` columns; ``[False, True]``
    for bools). On string data this reproduces scikit-learn's
    ``OneHotEncoder(drop=None)`` and ``OneHotEncoder(drop="first")`` column for
    column (the "plain" and "-f" encodings of the Branches paper), and
    ``drop="last"`` gives its "-l" encoding.

    Parameters
    ----------
    drop : {None, "first", "last"}, default=None
        Leave out the column of each feature's first or last category; rows
        of that category are then all zeros in the feature's columns. A
        feature with a single category yields no column at all when dropping.
    handle_unknown : {"error", "ignore"}, default="error"
        What ``transform`` does with a value that is not a known category:
        raise a :class:`~optitree.exceptions.DataError`, or write zeros in all
        of that feature's columns. With ``drop`` set, such a row looks like
        the dropped category.

    Attributes
    ----------
    categories_ : list of ndarray
        The categories of each column, in output order.
    drop_idx_ : ndarray of int or None
        For each feature, the position in ``categories_[j]`` of the category
        without a column; None when ``drop=None``.
    n_features_in_ : int
        Number of columns seen in fit.
    feature_names_in_ : ndarray of str, shape (n_features_in_,)
        Column names seen in fit; only when fit was given a DataFrame.

    See Also
    --------
    CategoricalEncoder : one integer code per category.

    Examples
    --------
    >>> import pandas as pd
    >>> from optitree.preprocessing import OneHotEncoder
    >>> df = pd.DataFrame({"color": ["red", "blue", "green"], "big": [True, False, True]})
    >>> enc = OneHotEncoder(drop="first").fit(df)
    >>> enc.get_feature_names_out()
    array(['color=green', 'color=red', 'big=True'], dtype=object)
    >>> enc.transform(df)
    array([[0, 1, 1],
           [0, 0, 0],
           [1, 0, 1]], dtype=uint8)
    >>> enc.inverse_transform([[0, 0, 1]])
    array([['blue', True]], dtype=object)
    """

    def __init__(self, drop=None, handle_unknown="error"):
        self.drop = drop
        self.handle_unknown = handle_unknown

    def fit(self, X, y=None):
        """Find the categories of every column and which one to drop.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features) or pandas.DataFrame
            Training data; missing values are not allowed.
        y : None
            Ignored.

        Returns
        -------
        self : OneHotEncoder
            The fitted encoder.

        Examples
        --------
        >>> from optitree.preprocessing import OneHotEncoder
        >>> OneHotEncoder(drop="last").fit([["b"], ["a"], ["c"]]).drop_idx_
        array([2])
        """
        _check_choice("drop", self.drop, (None, "first", "last"))
        _check_choice("handle_unknown", self.handle_unknown, ("error", "ignore"))
        lists = self._fit_categories(X)
        if self.drop is None:
            self.drop_idx_ = None
        elif self.drop == "first":
            self.drop_idx_ = np.zeros(len(lists), dtype=np.int64)
        else:
            self.drop_idx_ = np.array([len(labels) - 1 for labels in lists], dtype=np.int64)
        return self

    def _kept(self) -> list[np.ndarray]:
        """For each feature, the positions of the categories that get a column."""
        kept = []
        for j, categories in enumerate(self.categories_):
            positions = np.arange(len(categories))
            if self.drop_idx_ is not None:
                positions = positions[positions != self.drop_idx_[j]]
            kept.append(positions)
        return kept

    def transform(self, X):
        """One-hot encode X.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features_in_) or pandas.DataFrame
            Data to encode; DataFrame columns are matched by name.

        Returns
        -------
        ndarray of shape (n_samples, n_output_columns), dtype uint8
            Columns grouped by feature, in the order of ``categories_``.

        Examples
        --------
        >>> from optitree.preprocessing import OneHotEncoder
        >>> enc = OneHotEncoder(handle_unknown="ignore").fit([["a"], ["b"]])
        >>> enc.transform([["b"], ["z"]])
        array([[0, 1],
               [0, 0]], dtype=uint8)
        """
        check_is_fitted(self, "categories_")
        unknown = "error" if self.handle_unknown == "error" else "code"
        codes = self._encode(X, self._category_lists(), unknown=unknown).astype(np.int64)
        kept = self._kept()
        out = np.zeros((codes.shape[0], sum(len(k) for k in kept)), dtype=np.uint8)
        offset = 0
        for j, positions in enumerate(kept):
            # Output column of each code; the extra last slot serves code -1 (unknown).
            target = np.full(len(self.categories_[j]) + 1, -1, dtype=np.int64)
            target[positions] = offset + np.arange(len(positions))
            columns = target[codes[:, j]]
            rows = np.flatnonzero(columns >= 0)
            out[rows, columns[rows]] = 1
            offset += len(positions)
        return out

    def inverse_transform(self, X):
        """Turn one-hot rows back into category labels.

        An all-zero block stands for the dropped category when ``drop`` is
        set; without ``drop`` it is an unknown value, returned as ``None``
        under ``handle_unknown="ignore"`` and an error otherwise.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_output_columns)
            0/1 values as produced by :meth:`transform`.

        Returns
        -------
        ndarray of shape (n_samples, n_features_in_), dtype object
            The labels.

        Examples
        --------
        >>> from optitree.preprocessing import OneHotEncoder
        >>> enc = OneHotEncoder(drop="first").fit([["a"], ["b"], ["c"]])
        >>> enc.inverse_transform([[0, 1], [0, 0]])
        array([['c'],
               ['a']], dtype=object)
        """
        bits = _read_bits(X, self.get_feature_names_out())
        kept = self._kept()
        names = self._input_names()
        out = np.empty((bits.shape[0], len(kept)), dtype=object)
        offset = 0
        for j, positions in enumerate(kept):
            block = bits[:, offset : offset + len(positions)]
            count = block.sum(axis=1)
            if (count > 1).any():
                i = int(np.argmax(count > 1))
                raise DataError(
                    f"row {i} has {count[i]} ones among the columns of feature {names[j]!r}; "
                    "a one-hot row has at most one."
                )
            labels = np.empty(len(positions) + 1, dtype=object)
            labels[: len(positions)] = self.categories_[j][positions]
            if self.drop_idx_ is not None:
                labels[-1] = self.categories_[j][self.drop_idx_[j]]
            elif self.handle_unknown == "error" and (count == 0).any():
                i = int(np.argmax(count == 0))
                raise DataError(
                    f"row {i} has no 1 among the columns of feature {names[j]!r}; with "
                    "drop=None and handle_unknown='error' every row has exactly one."
                )
            # Rows without a 1 pick the last slot: the dropped category, or None.
            choice = np.full(bits.shape[0], len(positions))
            if len(positions):
                choice[count == 1] = np.argmax(block[count == 1], axis=1)
            out[:, j] = labels[choice]
            offset += len(positions)
        return out

    def get_feature_names_out(self, input_features=None):
        """Names of the output columns, ``feature=category``.

        Parameters
        ----------
        input_features : array-like of str, optional
            Input names to use; must match ``feature_names_in_`` if that exists.

        Returns
        -------
        ndarray of str objects
            One name per output column.

        Examples
        --------
        >>> from optitree.preprocessing import OneHotEncoder
        >>> OneHotEncoder().fit([["a", 1], ["b", 2]]).get_feature_names_out()
        array(['x0=a', 'x0=b', 'x1=1', 'x1=2'], dtype=object)
        """
        names = self._input_names(input_features)
        out = [
            f"{names[j]}={self.categories_[j][k]}"
            for j, positions in enumerate(self._kept())
            for k in positions
        ]
        return np.asarray(out, dtype=object)


def _midpoints(values: np.ndarray) -> np.ndarray:
    """Midpoints between consecutive sorted distinct values, each in [lower, upper)."""
    lower, upper = values[:-1], values[1:]
    with np.errstate(over="ignore"):
        mid = (lower + upper) / 2
    overflow = ~np.isfinite(mid)
    mid[overflow] = lower[overflow] / 2 + upper[overflow] / 2
    # For neighbouring floats the midpoint may round up to `upper`; "x <= t" would then
    # put `upper` on the wrong side.
    mid = np.where(mid >= upper, lower, mid)
    return _shortest_nearby(mid, lower, upper)


def _shortest_nearby(mid: np.ndarray, lower: np.ndarray, upper: np.ndarray) -> np.ndarray:
    """Each midpoint replaced by the float of the shortest decimal within 4e-15 of it
    (relative; some 20 to 40 ulps) that still lies in [lower, upper): 1.7 and 1.9 give 1.8, not
    1.7999999999999998 (their sum rounds down), so that a tree reads ``x <= 1.8``. Rows fall on
    the same sides."""
    out = mid.copy()
    magnitude = np.abs(mid)
    todo = np.flatnonzero((magnitude > 1e-250) & (magnitude < 1e250))
    exponent = np.floor(np.log10(magnitude[todo]))
    for digits in range(1, 16):
        if len(todo) == 0:
            break
        decimals = digits - 1 - exponent
        m = mid[todo]
        with np.errstate(over="ignore", invalid="ignore"):
            # Both branches divide or multiply a whole number by an exact power of ten, so the
            # result is the float nearest the decimal.
            up = 10.0 ** np.abs(decimals)
            shorter = np.where(decimals >= 0, np.round(m * up) / up, np.round(m / up) * up)
        fits = (
            np.isfinite(shorter)
            & (shorter >= lower[todo])
            & (shorter < upper[todo])
            & (np.abs(shorter - m) <= 4e-15 * np.abs(m))
        )
        out[todo[fits]] = shorter[fits]
        keep = ~fits
        todo, exponent = todo[keep], exponent[keep]
    return out


def format_threshold(value: float) -> str:
    """The shortest text that reads back as ``value``, without a trailing ``.0``.

    Parameters
    ----------
    value : float
        A threshold.

    Returns
    -------
    str
        ``repr(float(value))`` with a trailing ``.0`` removed.

    Examples
    --------
    >>> from optitree.preprocessing import format_threshold
    >>> format_threshold(2.45), format_threshold(2.0), format_threshold(1e20)
    ('2.45', '2', '1e+20')
    """
    text = repr(float(value))
    return text[:-2] if text.endswith(".0") else text


class ThresholdBinarizer(_Transformer):
    """Binarise numeric columns into threshold tests ``x <= t``.

    For each numeric column, fit chooses candidate thresholds among the
    midpoints between consecutive distinct training values, and transform
    writes one 0/1 column per threshold: 1 if ``x <= t``, else 0. A tree on
    these columns is a tree of threshold splits on the original features;
    ``threshold_columns_`` maps each output column back to its feature and
    threshold. A midpoint is written as the shortest decimal within a few
    ulps of it that leaves every training value on its side: between 1.7 and
    1.9 it is 1.8, not 1.7999999999999998 (the float sum of the two).

    Parameters
    ----------
    strategy : {"midpoints", "quantile"}, default="midpoints"
        ``"midpoints"``: every midpoint between consecutive distinct values
        (with ``max_thresholds`` set and more midpoints than that, at most
        ``max_thresholds`` of them, evenly spaced in the sorted list of
        midpoints). ``"quantile"``: at most ``max_thresholds`` thresholds at
        evenly spaced quantiles of the training rows: for levels ``q = i /
        (max_thresholds + 1)``, ``i = 1 .. max_thresholds``, the midpoint just
        above the smallest value ``v`` with at least a fraction ``q`` of the
        rows ``<= v``. A column with no more midpoints than
        ``max_thresholds`` keeps them all. Both are deterministic and give
        sorted, distinct thresholds.
    max_thresholds : int >= 1 or None, default=None
        Upper bound on the thresholds per column; required for ``"quantile"``.

    Attributes
    ----------
    thresholds_ : list of ndarray of float64
        The sorted thresholds of each column (empty for a constant column).
    threshold_columns_ : list of tuple (int, float)
        For each output column, ``(input column index, threshold)``.
    n_features_in_ : int
        Number of columns seen in fit.
    feature_names_in_ : ndarray of str, shape (n_features_in_,)
        Column names seen in fit; only when fit was given a DataFrame.

    Examples
    --------
    >>> import pandas as pd
    >>> from optitree.preprocessing import ThresholdBinarizer
    >>> df = pd.DataFrame({"petal_length": [1.4, 2.4, 2.5, 4.0]})
    >>> binarizer = ThresholdBinarizer().fit(df)
    >>> binarizer.get_feature_names_out().tolist()
    ['petal_length <= 1.9', 'petal_length <= 2.45', 'petal_length <= 3.25']
    >>> binarizer.transform(df)
    array([[1, 1, 1],
           [0, 1, 1],
           [0, 0, 1],
           [0, 0, 0]], dtype=uint8)
    >>> binarizer.threshold_columns_[1]
    (0, 2.45)
    """

    def __init__(self, strategy="midpoints", max_thresholds=None):
        self.strategy = strategy
        self.max_thresholds = max_thresholds

    def _check_params(self) -> None:
        _check_choice("strategy", self.strategy, ("midpoints", "quantile"))
        limit = self.max_thresholds
        if limit is None:
            if self.strategy == "quantile":
                raise InvalidParameterError(
                    "max_thresholds is required with strategy='quantile' (an int >= 1); got None."
                )
            return
        if not isinstance(limit, numbers.Integral) or isinstance(limit, (bool, np.bool_)):
            raise InvalidParameterError(
                f"max_thresholds must be None or an int >= 1; got {_show(limit)}."
            )
        if limit < 1:
            raise InvalidParameterError(f"max_thresholds must be an int >= 1; got {int(limit)}.")

    def fit(self, X, y=None):
        """Choose the thresholds of every column.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features) or pandas.DataFrame
            Numeric training data without NaN or infinities.
        y : None
            Ignored.

        Returns
        -------
        self : ThresholdBinarizer
            The fitted binarizer.

        Examples
        --------
        >>> from optitree.preprocessing import ThresholdBinarizer
        >>> X = [[v] for v in range(10)]
        >>> ThresholdBinarizer(strategy="quantile", max_thresholds=2).fit(X).thresholds_
        [array([3.5, 6.5])]
        """
        self._check_params()
        table = _read_table(X)
        encoded = _encode_table(table, [False] * len(table.names), allow_nan=False)
        for j, labels in enumerate(encoded.categories):
            if labels is not None:
                name = table.names[j]
                raise DataError(
                    f"ThresholdBinarizer takes numeric columns only, but column {name!r} is "
                    f"categorical (row 0 holds {_show(_cell(table.columns[j], 0))}); encode it "
                    "with CategoricalEncoder or OneHotEncoder instead (e.g. in a "
                    "ColumnTransformer)."
                )
        self._remember_input(table)
        self.thresholds_ = [self._column_thresholds(column) for column in encoded.X.T]
        self.threshold_columns_ = [
            (j, float(t)) for j, thresholds in enumerate(self.thresholds_) for t in thresholds
        ]
        return self

    def _column_thresholds(self, column: np.ndarray) -> np.ndarray:
        values, counts = np.unique(column, return_counts=True)
        mids = _midpoints(values)
        limit = self.max_thresholds
        if limit is None or len(mids) <= limit:
            return mids
        if self.strategy == "midpoints":
            # The centres of `limit` equal groups of consecutive midpoints.
            picks = (np.arange(limit) * 2 + 1) * len(mids) // (2 * limit)
            return mids[picks]
        # Smallest value v whose cumulative count reaches q * n, for q = i / (limit + 1);
        # in integers: cumulative * (limit + 1) >= i * n. The threshold is the midpoint above v.
        cumulative = np.cumsum(counts) * (limit + 1)
        levels = np.arange(1, limit + 1) * len(column)
        positions = np.unique(np.searchsorted(cumulative, levels, side="left"))
        return mids[positions[positions < len(mids)]]

    def transform(self, X):
        """Write the 0/1 column ``x_j <= t`` for every threshold ``t`` of every column ``j``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features_in_) or pandas.DataFrame
            Numeric data without NaN or infinities; DataFrame columns are
            matched by name.

        Returns
        -------
        ndarray of shape (n_samples, len(threshold_columns_)), dtype uint8
            Columns grouped by input column, thresholds increasing.

        Examples
        --------
        >>> from optitree.preprocessing import ThresholdBinarizer
        >>> ThresholdBinarizer().fit([[1], [2], [4]]).transform([[0], [3], [9]])
        array([[1, 1],
               [0, 1],
               [0, 0]], dtype=uint8)
        """
        check_is_fitted(self, "thresholds_")
        values = self._encode(X, [None] * self.n_features_in_, unknown="error")
        blocks = [
            values[:, j, None] <= thresholds[None, :]
            for j, thresholds in enumerate(self.thresholds_)
        ]
        return np.concatenate(blocks, axis=1).astype(np.uint8)

    def inverse_transform(self, X):
        """Map binary rows back to the upper end of each row's interval.

        For each row and input column, the result is the smallest threshold
        whose bit is 1 (the row's value lies in the interval just below it),
        or ``+inf`` when every bit is 0 (the value lies above the largest
        threshold, or the column has no thresholds). Every finite result
        transforms back to the same bits (``transform`` rejects ``inf``; any
        value above the largest threshold stands for the top interval).

        Parameters
        ----------
        X : array-like of shape (n_samples, len(threshold_columns_))
            0/1 values as produced by :meth:`transform`; within a column's
            block the bits must not decrease (``x <= t`` holds for every
            larger ``t`` once it holds).

        Returns
        -------
        ndarray of shape (n_samples, n_features_in_), dtype float64
            Upper interval ends.

        Examples
        --------
        >>> from optitree.preprocessing import ThresholdBinarizer
        >>> b = ThresholdBinarizer().fit([[1], [2], [4]])
        >>> b.inverse_transform([[1, 1], [0, 1], [0, 0]])
        array([[1.5],
               [3. ],
               [inf]])
        """
        bits = _read_bits(X, self.get_feature_names_out())
        names = self._input_names()
        out = np.full((bits.shape[0], self.n_features_in_), np.inf)
        offset = 0
        for j, thresholds in enumerate(self.thresholds_):
            block = bits[:, offset : offset + len(thresholds)]
            offset += len(thresholds)
            if len(thresholds) == 0:
                continue
            decreasing = (np.diff(block, axis=1) < 0).any(axis=1)
            if decreasing.any():
                i = int(np.argmax(decreasing))
                raise DataError(
                    f"row {i} has bits {block[i].tolist()} for column {names[j]!r}; they must "
                    "not decrease with the threshold (x <= t implies x <= every larger t)."
                )
            has_one = block.any(axis=1)
            first = np.argmax(block, axis=1)
            out[has_one, j] = thresholds[first[has_one]]
        return out

    def get_feature_names_out(self, input_features=None):
        """Names of the output columns, such as ``petal_length <= 2.45``.

        Parameters
        ----------
        input_features : array-like of str, optional
            Input names to use; must match ``feature_names_in_`` if that exists.

        Returns
        -------
        ndarray of str objects
            One name per output column; thresholds are written with
            :func:`format_threshold`.

        Examples
        --------
        >>> from optitree.preprocessing import ThresholdBinarizer
        >>> b = ThresholdBinarizer().fit([[30, 1], [31, 3]])
        >>> b.get_feature_names_out(["age", "n"])
        array(['age <= 30.5', 'n <= 2'], dtype=object)
        """
        check_is_fitted(self, "thresholds_")
        names = self._input_names(input_features)
        return np.asarray(
            [f"{names[j]} <= {format_threshold(t)}" for j, t in self.threshold_columns_],
            dtype=object,
        )
