"""Validation and encoding of user data (private).

This module is the single door through which data enter optitree. It turns
what the user passes (numpy arrays, nested lists, pandas DataFrames) into one
matrix (float64, or the codes of integer categorical data in one or two bytes)
plus a per-column encoding schema, and it checks labels and sample weights.
Estimators and the transformers in :mod:`optitree.preprocessing` call it; the
compiled core counts integer codes for it.

Column kinds
------------
Every input column becomes either *numeric* (its values are kept) or
*categorical* (its values are replaced by codes ``0 .. C-1`` that index a list
of category labels):

========================================  ===========  =================================
input column                              kind         categories (code ``j`` <-> label)
========================================  ===========  =================================
pandas ``category`` dtype                 categorical  the declared categories, in their
                                                       order, unused ones included
bool (numpy, pandas ``bool``/``boolean``)  categorical  ``[False, True]``
pandas object dtype, all numbers          numeric
pandas object dtype (other) or string     categorical  sorted distinct values
numpy str/bytes array                     categorical  sorted distinct values
numpy object array, all numbers           numeric
numpy object array, all bools             categorical  ``[False, True]``
numpy object array, no numbers            categorical  sorted distinct values
int, uint or float dtype                  numeric
listed in ``categorical=``                categorical  sorted distinct values
========================================  ===========  =================================

Values of different types that Python cannot order (say ``1`` and ``"a"``) are
sorted by their ``str`` (then by type name); the labels themselves are kept as
they are. Nothing is silently cast or dropped: missing values, infinities,
complex numbers, unhashable cells and columns that mix numbers with other
values are errors whose message names the column, the first offending row and
its value, and says what is allowed.

Error messages for a few situations follow scikit-learn's wording (``Reshape
your data``, ``0 feature(s) (shape=...)``, ``X has 3 features, but ...``, ``The
feature names should match ...``, ``Unknown label type: continuous``) so that
optitree's estimators pass scikit-learn's estimator checks.
"""

from __future__ import annotations

import numbers
import os
import sys
import warnings
from collections.abc import Collection
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import scipy.sparse
from sklearn.exceptions import DataConversionWarning

from optitree import _core
from optitree.exceptions import DataError, InvalidParameterError, UnseenCategoryWarning

__all__ = [
    "EncodedInput",
    "check_labels",
    "check_sample_weight",
    "encode_fit",
    "encode_predict",
]

# Integers at or beyond 2**53 in magnitude may not survive the trip to float64.
_MAX_EXACT_INT = 2**53
# How many names or labels an error message lists before it writes "...".
_MAX_LISTED = 10


class DataTypeError(DataError, TypeError):
    """A cell holds a value of a type optitree cannot use (a dict, a list, ...).

    It is a :class:`~optitree.exceptions.DataError` and also a ``TypeError``,
    which is what Python (and scikit-learn's checks) expect for a value of the
    wrong type.

    Examples
    --------
    >>> from optitree._validation import DataTypeError
    >>> issubclass(DataTypeError, TypeError)
    True
    """


@dataclass(frozen=True)
class EncodedInput:
    """The result of :func:`encode_fit`: encoded data and the schema to encode new data.

    Attributes
    ----------
    X : ndarray of shape (n_rows, n_features), C-contiguous
        Numeric columns hold their values; categorical columns hold the codes
        ``0 .. C-1`` of their labels. float64; but an integer numpy array
        whose columns are all categorical and counted in the core (each
        column's values within max(4,096, n_rows) of one another) may give its
        codes in uint8 (at most 256 labels a column) or uint16 (at most
        65,536), the bytes the searches read.
    feature_names : list of str
        DataFrame column names converted with ``str``; ``"x0", "x1", ...`` for
        arrays and lists.
    categories : list
        One entry per column: the list of category labels of a categorical
        column (code ``j`` stands for ``categories[j]``), or ``None`` for a
        numeric column.
    had_names : bool
        True if the input was a DataFrame with at least one string column
        name (the estimator then sets ``feature_names_in_``). A DataFrame
        whose names are all numbers (``pd.DataFrame(array)``) has none, as in
        scikit-learn: its columns are matched by position.

    Examples
    --------
    >>> from optitree._validation import encode_fit
    >>> enc = encode_fit([[1.5, "b"], [0.5, "a"]])
    >>> enc.feature_names, enc.categories, enc.had_names
    (['x0', 'x1'], [None, ['a', 'b']], False)
    """

    X: np.ndarray
    feature_names: list[str]
    categories: list
    had_names: bool


# ----------------------------------------------------------------------------
# Reading the input into named columns
# ----------------------------------------------------------------------------


@dataclass
class _Table:
    """User data split into columns, before any column is interpreted."""

    names: list[str]
    columns: list  # 1-D numpy arrays or pandas Series, one per column
    had_names: bool
    n_rows: int
    index: pd.Index | None  # row labels of a DataFrame unless they are 0, 1, 2, ...
    array: np.ndarray | None = None  # the whole 2-D array, when X was not a DataFrame


def _show(value: Any) -> str:
    """A short repr of a cell value for an error message."""
    if isinstance(value, np.generic):
        value = value.item()
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _listing(items) -> str:
    """A bracketed list of reprs, shortened after ``_MAX_LISTED`` items."""
    items = list(items)
    shown = ", ".join(_show(v) for v in items[:_MAX_LISTED])
    more = f", ... ({len(items)} in all)" if len(items) > _MAX_LISTED else ""
    return f"[{shown}{more}]"


def _row(table: _Table, i: int) -> str:
    """'row 3', plus the DataFrame index label when the index is not 0, 1, 2, ..."""
    if table.index is None:
        return f"row {int(i)}"
    return f"row {int(i)} (index {_show(table.index[int(i)])})"


def _cell(column, i: int):
    return column.iloc[i] if isinstance(column, pd.Series) else column[i]


def _asarray(data) -> np.ndarray:
    """``np.asarray`` that does not turn numbers into strings.

    ``np.asarray([[1, "a"]])`` gives a str array in which the number 1 became
    the string ``"1"``; for nested lists mixing numbers and strings an object
    array keeps every value as it was.
    """
    try:
        arr = np.asarray(data)
    except ValueError as exc:  # ragged nested lists
        reason = str(exc).rstrip(".")
        raise DataError(
            f"could not read the data as a rectangular array ({reason}); every row must "
            "have the same number of values."
        ) from exc
    if isinstance(arr, np.matrix):
        arr = np.asarray(arr)
    if arr.dtype.kind in "US" and not isinstance(data, np.ndarray):
        as_objects = np.asarray(data, dtype=object)
        if as_objects.shape == arr.shape:
            flat = as_objects.ravel()
            if pd.api.types.infer_dtype(flat, skipna=False) not in ("string", "bytes"):
                return as_objects
    return arr


def _check_shape(shape: tuple, what: str) -> None:
    if len(shape) == 0:
        raise DataError(f"{what} must be 2-D (rows x columns), got a scalar.")
    if len(shape) == 1:
        raise DataError(
            f"{what} must be 2-D (rows x columns), got a 1-D array of shape {shape}. "
            f"Reshape your data either using {what}.reshape(-1, 1) if it has a single "
            f"feature or {what}.reshape(1, -1) if it is a single sample."
        )
    if len(shape) > 2:
        raise DataError(
            f"{what} must be 2-D (rows x columns), got {len(shape)} dimensions (shape={shape})."
        )
    n_rows, n_cols = shape
    if n_rows == 0:
        raise DataError(f"{what} has 0 sample(s) (shape={shape}) while a minimum of 1 is required.")
    if n_cols == 0:
        raise DataError(
            f"{what} has 0 feature(s) (shape={shape}) while a minimum of 1 is required."
        )


def first_repeat(names: list[str]) -> tuple[int, int] | None:
    """Positions ``(i, j)``, ``i < j``, of the first name that occurs a second time."""
    first_seen: dict[str, int] = {}
    for j, name in enumerate(names):
        if name in first_seen:
            return first_seen[name], j
        first_seen[name] = j
    return None


def _column_names(columns: pd.Index) -> list[str]:
    names = [name if isinstance(name, str) else str(name) for name in columns]
    repeat = first_repeat(names)
    if repeat is not None:
        i, j = repeat
        raise DataError(
            f"duplicate column name {names[j]!r} (columns {i} and {j}, after converting names "
            "to str); column names must be unique."
        )
    return names


def _read_table(X, what: str = "X") -> _Table:
    """Split ``X`` into columns with names, checking its shape (nothing else)."""
    if X is None:
        raise DataError(f"{what} is None; expected a 2-D array, nested list or DataFrame.")
    if scipy.sparse.issparse(X):
        raise DataError(
            f"{what} is a sparse matrix, which optitree does not accept; convert it with "
            f"{what}.toarray() (dense data are required)."
        )
    if isinstance(X, pd.DataFrame):
        _check_shape(X.shape, what)
        names = _column_names(X.columns)
        columns = [column for _, column in X.items()]  # by position, 4x faster than iloc
        plain = X.index.equals(pd.RangeIndex(X.shape[0]))
        # As in scikit-learn, only string column names are feature names: a frame whose
        # columns are 0, 1, 2, ... (pd.DataFrame(array)) is matched by position. Its names
        # are still kept, as strings, for the exported tree.
        named = any(isinstance(name, str) for name in X.columns)
        return _Table(names, columns, named, X.shape[0], None if plain else X.index)
    if isinstance(X, pd.Series):
        _check_shape((len(X),), what)
    arr = _asarray(X)
    _check_shape(arr.shape, what)
    names = [f"x{j}" for j in range(arr.shape[1])]
    columns = [arr[:, j] for j in range(arr.shape[1])]
    return _Table(names, columns, False, arr.shape[0], None, arr)


# ----------------------------------------------------------------------------
# Column interpretation
# ----------------------------------------------------------------------------


def _is_number(value) -> bool:
    """A real number that is not a bool (bools are categories, not quantities)."""
    return isinstance(value, numbers.Real) and not isinstance(value, (bool, np.bool_))


def _unhashable_error(name: str, table: _Table, i: int, value) -> DataTypeError:
    return DataTypeError(
        f"column {name!r} holds {_show(value)} of type {type(value).__name__} at "
        f"{_row(table, i)}, but a data argument must be a string, a bool or a number."
    )


def _raise_unusable_value(name: str, table: _Table, column, missing: np.ndarray) -> None:
    """Find the first unhashable cell of an object column and raise about it."""
    for i in range(table.n_rows):
        value = _cell(column, i)
        if missing[i]:
            continue
        try:
            hash(value)
        except TypeError:
            raise _unhashable_error(name, table, i, value) from None
    raise DataTypeError(f"column {name!r} holds values that cannot be used as labels.")


def _float_from_objects(column: np.ndarray) -> np.ndarray:
    """float64 values of an object array of numbers; missing cells become NaN."""
    missing = np.asarray(pd.isna(column))
    values = np.full(len(column), np.nan)
    values[~missing] = column[~missing].astype(np.float64)
    return values


def _missing_error(name: str, table: _Table, column, i: int, kind: str) -> DataError:
    return DataError(
        f"column {name!r} holds a missing value ({_show(_cell(column, i))}) at "
        f"{_row(table, i)}; {kind} columns must not contain NaN, None or pd.NA. Impute "
        "or drop those rows first."
    )


def _sort_labels(labels: list) -> list[int]:
    """Positions of ``labels`` in sorted order; by (str, type name) if unorderable."""
    positions = range(len(labels))
    try:
        return sorted(positions, key=labels.__getitem__)
    except TypeError:
        return sorted(positions, key=lambda k: (str(labels[k]), type(labels[k]).__name__))


def _plain(value):
    """numpy scalars as Python scalars, so labels compare and print naturally."""
    return value.item() if isinstance(value, np.generic) else value


def _object_array(items: list) -> np.ndarray:
    """A 1-D object array holding ``items`` as they are (tuples stay whole)."""
    arr = np.empty(len(items), dtype=object)
    for k, item in enumerate(items):
        arr[k] = item
    return arr


def _factorize_sorted(values) -> tuple[np.ndarray, list]:
    """Codes (int64; -1 for a missing value) and the sorted distinct labels of ``values``.

    Raises ``TypeError`` on an unhashable value.
    """
    if isinstance(values, np.ndarray) and values.size:
        # Integer arrays cannot hold missing values; small codes are counted, not sorted.
        counted = _integer_matrix_codes(values.reshape(-1, 1))
        if counted is not None:
            return counted[0][:, 0].astype(np.int64), counted[1][0]
    if isinstance(values, np.ndarray) and values.dtype.kind in "iub":
        # Integer and bool arrays cannot hold missing values, and numpy sorts them naturally.
        uniques, codes = np.unique(values, return_inverse=True)
        return codes.astype(np.int64).ravel(), uniques.tolist()
    codes, uniques = pd.factorize(values, use_na_sentinel=True)
    labels = [_plain(v) for v in list(uniques)]
    order = _sort_labels(labels)
    rank = np.empty(len(labels), dtype=np.int64)
    rank[order] = np.arange(len(labels))
    codes = np.asarray(codes, dtype=np.int64)
    if not labels:
        return codes, []  # every value missing: the caller names the first
    return np.where(codes < 0, -1, rank[codes]), [labels[k] for k in order]


def _categorical_codes(name: str, table: _Table, column, values) -> tuple[np.ndarray, list]:
    """Codes (float64) and labels of a categorical column whose labels come from the data.

    ``values`` is a 1-D array (any dtype) or Series with the column's cells.
    The labels are sorted; an all-bool column gets ``[False, True]``.
    """
    try:
        codes, labels = _factorize_sorted(values)
    except TypeError:
        _raise_unusable_value(name, table, column, np.asarray(pd.isna(values)))
    if (codes < 0).any():
        raise _missing_error(name, table, column, int(np.argmax(codes < 0)), "categorical")
    for k, label in enumerate(labels):
        if isinstance(label, float) and not np.isfinite(label):
            i = int(np.argmax(codes == k))
            raise DataError(
                f"column {name!r} holds {_show(label)} at {_row(table, i)}; numbers used as "
                "category labels must be finite (no inf)."
            )
    if labels and all(isinstance(v, bool) for v in labels):
        # [False], [True] or [False, True]: recode as the declared bool categories.
        codes = np.array([int(v) for v in labels], dtype=np.int64)[codes]
        labels = [False, True]
    return codes.astype(np.float64), labels


def _numeric_values(
    name: str, table: _Table, column, values: np.ndarray, *, allow_nan: bool, integers: bool
) -> np.ndarray:
    """Check a float64 copy of a numeric column: finite (NaN only if allowed), exact ints."""
    bad = ~np.isfinite(values)
    if allow_nan:
        bad &= ~np.isnan(values)
    if bad.any():
        i = int(np.argmax(bad))
        value = values[i]
        if np.isnan(value):
            raise _missing_error(name, table, column, i, "numeric")
        raise DataError(
            f"column {name!r} holds {_show(value)} at {_row(table, i)}; numeric columns "
            "must be finite (no inf, -inf or NaN)."
        )
    if integers:
        too_big = np.abs(values) >= _MAX_EXACT_INT
        if too_big.any():
            i = int(np.argmax(too_big))
            raise DataError(
                f"column {name!r} holds the integer {_show(_cell(column, i))} at "
                f"{_row(table, i)}, which float64 cannot represent exactly; integers must "
                "have a magnitude below 2**53."
            )
    return values


#: What ``pandas.api.types.infer_dtype`` calls an object column of real numbers only.
_NUMBER_KINDS = ("integer", "floating", "mixed-integer-float", "decimal")


def _exact_as_floats(objects: np.ndarray) -> bool:
    """Whether every integer of an object column is a float exactly (below 2**53): identifiers
    such as 2**60 + 1 stay category labels, as they were, rather than fail as numbers."""
    return all(
        abs(v) < 2**53 for v in objects if isinstance(v, numbers.Integral) and not pd.isna(v)
    )


def _object_kind(name: str, table: _Table, column: np.ndarray) -> str:
    """'numeric' or 'categorical' for a numpy object column; raises on mixtures.

    A column with nothing but missing values counts as numeric, so that the NaN rules
    (an error unless ``allow_nan``) apply to it.
    """
    inferred = pd.api.types.infer_dtype(column, skipna=True)
    if inferred in (*_NUMBER_KINDS, "empty"):
        return "numeric"
    if inferred == "complex":
        raise _complex_error(name, table, column)
    if inferred not in ("mixed", "mixed-integer"):
        return "categorical"
    missing = np.asarray(pd.isna(column))
    first_number = first_other = None
    for i, value in enumerate(column):
        if missing[i]:
            continue
        if isinstance(value, (complex, np.complexfloating)):
            raise _complex_error(name, table, column)  # pandas < 3 calls [None, 2j] "mixed"
        if _is_number(value):
            if first_number is None:
                first_number = i
            continue
        try:
            hash(value)
        except TypeError:
            raise _unhashable_error(name, table, i, value) from None
        if first_other is None:
            first_other = i
    if first_number is not None and first_other is not None:
        raise DataError(
            f"column {name!r} mixes numbers and other values: {_row(table, first_number)} "
            f"holds the number {_show(column[first_number])} but {_row(table, first_other)} "
            f"holds {_show(column[first_other])} ({type(_plain(column[first_other])).__name__}). "
            "A numeric column must hold numbers only; to use every value as a category "
            f"label, list the column in categorical= (e.g. categorical=[{name!r}])."
        )
    return "categorical"


def _complex_error(name: str, table: _Table, column) -> DataError:
    first = next((i for i in range(table.n_rows) if isinstance(_cell(column, i), complex)), 0)
    return DataError(
        f"Complex data not supported: column {name!r} holds the complex number "
        f"{_show(_cell(column, first))} at {_row(table, first)}; allowed are real numbers, "
        "bools, strings and other category labels."
    )


def _unsupported_dtype_error(name: str, dtype) -> DataError:
    return DataError(
        f"column {name!r} has dtype {dtype}, which optitree cannot use; allowed are numbers "
        "(int, uint, float), bool, category, and object or string columns of labels. "
        "Convert the column first (e.g. a date to a number of days)."
    )


def _fit_column(
    name: str, table: _Table, column, *, categorical: bool, allow_nan: bool
) -> tuple[np.ndarray, list | None]:
    """Encode one column at fit time: (float64 values or codes, categories or None)."""
    if isinstance(column, pd.Series):
        dtype = column.dtype
        if isinstance(dtype, pd.CategoricalDtype):
            codes = np.asarray(column.cat.codes, dtype=np.int64)
            if (codes < 0).any():
                raise _missing_error(name, table, column, int(np.argmax(codes < 0)), "categorical")
            return codes.astype(np.float64), [_plain(v) for v in dtype.categories.tolist()]
        if pd.api.types.is_bool_dtype(dtype):
            missing = np.asarray(column.isna())
            if missing.any():
                raise _missing_error(name, table, column, int(np.argmax(missing)), "bool")
            return column.to_numpy(dtype=bool).astype(np.float64), [False, True]
        if pd.api.types.is_complex_dtype(dtype):
            raise _complex_error(name, table, column)
        if pd.api.types.is_numeric_dtype(dtype):
            if categorical:
                return _categorical_codes(name, table, column, column.to_numpy(dtype=object))
            values = column.to_numpy(dtype=np.float64, na_value=np.nan)
            integers = pd.api.types.is_integer_dtype(dtype)
            return (
                _numeric_values(
                    name, table, column, values, allow_nan=allow_nan, integers=integers
                ),
                None,
            )
        if pd.api.types.is_object_dtype(dtype) and not categorical:
            # Numbers held as objects (a column built row by row, or concatenated with text
            # that was later dropped) are numbers, as in a numpy object array: as labels they
            # would make a lookup table with one child per distinct float.
            inferred = pd.api.types.infer_dtype(column, skipna=True)
            objects = column.to_numpy(dtype=object)
            if inferred in _NUMBER_KINDS and _exact_as_floats(objects):
                values = _float_from_objects(objects)
                integers = inferred == "integer"
                return (
                    _numeric_values(
                        name, table, column, values, allow_nan=allow_nan, integers=integers
                    ),
                    None,
                )
        if pd.api.types.is_object_dtype(dtype) or pd.api.types.is_string_dtype(dtype):
            return _categorical_codes(name, table, column, column)
        raise _unsupported_dtype_error(name, dtype)

    kind = column.dtype.kind
    if kind == "b":
        return column.astype(np.float64), [False, True]
    if kind in "iuf":
        if categorical:
            return _categorical_codes(name, table, column, column)
        return (
            _numeric_values(
                name,
                table,
                column,
                column.astype(np.float64),
                allow_nan=allow_nan,
                integers=kind in "iu",
            ),
            None,
        )
    if kind == "c":
        raise _complex_error(name, table, column)
    if kind in "US":
        return _categorical_codes(name, table, column, column)
    if kind == "O":
        if categorical or _object_kind(name, table, column) == "categorical":
            return _categorical_codes(name, table, column, column)
        values = _float_from_objects(column)
        integers = pd.api.types.infer_dtype(column, skipna=True) == "integer"
        return (
            _numeric_values(name, table, column, values, allow_nan=allow_nan, integers=integers),
            None,
        )
    raise _unsupported_dtype_error(name, column.dtype)


def _resolve_categorical(categorical, names: list[str]) -> list[bool]:
    """Turn the ``categorical=`` argument into one bool per column."""
    n = len(names)
    if categorical is None:
        return [False] * n
    if isinstance(categorical, (str, numbers.Integral)) and not isinstance(
        categorical, (bool, np.bool_)
    ):
        items = [categorical]
    elif isinstance(categorical, (bool, np.bool_, dict, set)) or not np.iterable(categorical):
        raise InvalidParameterError(
            "categorical must be None, a list of column names or indices, or a boolean "
            f"mask with one entry per column; got {_show(categorical)}."
        )
    else:
        items = list(categorical)
    if items and all(isinstance(v, (bool, np.bool_)) for v in items):
        if len(items) != n:
            raise InvalidParameterError(
                f"categorical is a boolean mask of length {len(items)}, but X has {n} "
                "columns; the mask needs one entry per column."
            )
        return [bool(v) for v in items]
    position = {name: j for j, name in enumerate(names)}
    mask = [False] * n
    for item in items:
        if isinstance(item, str):
            if item not in position:
                raise InvalidParameterError(
                    f"categorical names the column {item!r}, which X does not have; X's "
                    f"columns are {_listing(names)}."
                )
            mask[position[item]] = True
        elif isinstance(item, numbers.Integral) and not isinstance(item, (bool, np.bool_)):
            if not 0 <= item < n:
                raise InvalidParameterError(
                    f"categorical holds the column index {int(item)}, but X has {n} columns; "
                    f"indices must be in [0, {n - 1}]."
                )
            mask[int(item)] = True
        else:
            raise InvalidParameterError(
                f"categorical holds {_show(item)}; its entries must be column names (str) or "
                "column indices (int), or all bools (a mask)."
            )
    return mask


def encode_fit(X, *, categorical=None, allow_nan: bool = False) -> EncodedInput:
    """Validate training data and encode it as one matrix (see :class:`EncodedInput`).

    Parameters
    ----------
    X : array-like of shape (n_rows, n_features) or pandas.DataFrame
        The data. Nested lists are read without turning numbers into strings.
        See the module docstring for how each column's kind is decided.
    categorical : list of str or int, or boolean mask, default=None
        Columns (by name, or index counted from 0) to treat as categorical
        even though they hold numbers; their categories are their sorted
        distinct values. Columns that are categorical anyway are unaffected.
    allow_nan : bool, default=False
        Keep NaN (and None/pd.NA, as NaN) in numeric columns instead of
        raising. Infinities are always rejected, and so are missing values in
        categorical columns.

    Returns
    -------
    EncodedInput
        The encoded matrix with the names and categories needed to encode new
        data with :func:`encode_predict`.

    Raises
    ------
    DataError
        If X is not 2-D, has no rows or no columns, is sparse, has duplicate
        column names (after ``str``), complex values, NaN or inf in a numeric
        column, a missing value in a categorical column, or a numpy object
        column mixing numbers with other values. Unhashable cells raise
        :class:`DataTypeError` (also a ``TypeError``).
    InvalidParameterError
        If ``categorical`` names an unknown column or is malformed.

    Examples
    --------
    >>> import pandas as pd
    >>> from optitree._validation import encode_fit
    >>> df = pd.DataFrame({"age": [30, 45, 22], "color": ["red", "blue", "red"],
    ...                    "owner": [True, False, True]})
    >>> enc = encode_fit(df)
    >>> enc.X
    array([[30.,  1.,  1.],
           [45.,  0.,  0.],
           [22.,  1.,  1.]])
    >>> enc.feature_names, enc.categories
    (['age', 'color', 'owner'], [None, ['blue', 'red'], [False, True]])
    >>> encode_fit([[3], [1], [3]], categorical=[0]).categories
    [[1, 3]]
    """
    table = _read_table(X)
    return _encode_table(table, _resolve_categorical(categorical, table.names), allow_nan)


def _encode_table(table: _Table, forced: list[bool], allow_nan: bool) -> EncodedInput:
    """:func:`encode_fit` on data already read; ``forced[j]`` makes column j categorical."""
    if table.array is not None and all(forced):
        fast = _integer_matrix_codes(table.array)
        if fast is not None:
            return EncodedInput(fast[0], table.names, fast[1], table.had_names)
    out = np.empty((table.n_rows, len(table.names)), dtype=np.float64)
    categories: list = []
    for j, (name, column) in enumerate(zip(table.names, table.columns)):
        values, labels = _fit_column(
            name, table, column, categorical=forced[j], allow_nan=allow_nan
        )
        out[:, j] = values
        categories.append(labels)
    return EncodedInput(out, table.names, categories, table.had_names)


def _integer_matrix_codes(array: np.ndarray) -> tuple[np.ndarray, list] | None:
    """Codes (uint8, uint16 or float64: the narrowest that holds them) and sorted labels of
    every column of an integer matrix, all at once.

    The same result as encoding column by column, counting in the core instead of sorting:
    one pass over the matrix, which matters on the many-row, few-category data of categorical
    trees. None when the array is not integer or a column's range is too wide to count.
    """
    if array.dtype.kind not in "iu":
        return None
    if array.dtype.kind == "u" and array.size and int(array.max()) > np.iinfo(np.int64).max:
        return None
    return _core.factorize_int_columns(_int64_rows(array), max(4096, array.shape[0]))


def _int64_rows(array: np.ndarray) -> np.ndarray:
    """``array`` as the core reads integer matrices: rows of adjacent int64 cells, read in place
    (a C-ordered matrix, or a column slice of one such as ``data[:, :-1]``); numpy copies any
    other layout faster than the core would."""
    adjacent = array.dtype == np.int64 and array.strides[1] == 8 and array.flags.aligned
    return array if adjacent else np.ascontiguousarray(array, dtype=np.int64)


# ----------------------------------------------------------------------------
# Encoding new data with a fitted schema
# ----------------------------------------------------------------------------


def _names_mismatch(unseen: list[str], missing: list[str], extra: str = "") -> DataError:
    def bullet(names):
        lines = [f"- {name}\n" for name in names[:_MAX_LISTED]]
        if len(names) > _MAX_LISTED:
            lines.append(f"- ... ({len(names)} in all)\n")
        return "".join(lines)

    message = "The feature names should match those that were passed during fit.\n"
    if unseen:
        message += "Feature names unseen at fit time:\n" + bullet(unseen)
    if missing:
        message += "Feature names seen at fit time, yet now missing:\n" + bullet(missing)
    return DataError(message + extra)


def _caller_stacklevel() -> int:
    """The ``stacklevel`` that points a warning at the first frame outside optitree."""
    package = os.path.dirname(os.path.abspath(__file__))
    frame, level = sys._getframe(1), 1
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(package):
        frame, level = frame.f_back, level + 1
    return level


def _warn_names_presence(table: _Table, fitted_with_names: bool, estimator_name: str) -> None:
    """scikit-learn's warnings when names were seen at fit time but not now, or the reverse."""
    if fitted_with_names and not table.had_names:
        message = (
            f"X does not have valid feature names, but {estimator_name} was fitted with "
            "feature names; its columns are taken in the fitted order."
        )
    elif table.had_names and not fitted_with_names:
        message = f"X has feature names, but {estimator_name} was fitted without feature names."
    else:
        return
    warnings.warn(message, UserWarning, stacklevel=_caller_stacklevel())


def _align(
    table: _Table,
    feature_names: list[str],
    *,
    check_names: bool,
    allow_reorder: bool,
    estimator_name: str,
    warn_names: bool = False,
) -> list:
    """The columns of ``table`` in the order of ``feature_names``."""
    if warn_names:
        _warn_names_presence(table, check_names, estimator_name)
    expected = len(feature_names)
    if table.had_names:
        position = {name: j for j, name in enumerate(table.names)}
        fitted = set(feature_names)
        missing = [name for name in feature_names if name not in position]
        unseen = [name for name in table.names if name not in fitted]
        if not missing and not (check_names and unseen):
            order = [position[name] for name in feature_names]
            if check_names and not allow_reorder and order != sorted(order):
                raise _names_mismatch(
                    [], [], "Feature names must be in the same order as they were in fit.\n"
                )
            return [table.columns[k] for k in order]
        if not check_names and len(missing) == expected and len(table.names) == expected:
            # No name in common (e.g. the model was fitted on an array): match by position.
            return table.columns
        raise _names_mismatch(
            unseen if check_names else [],
            missing,
            "Columns are matched by name, in any order; every column seen at fit time is "
            + ("required and no other column is allowed." if check_names else "required."),
        )
    if len(table.columns) != expected:
        raise DataError(
            f"X has {len(table.columns)} features, but {estimator_name} is expecting "
            f"{expected} features as input (expected {expected} columns, got "
            f"{len(table.columns)})."
        )
    return table.columns


def _predict_numeric(name: str, table: _Table, column, *, allow_nan: bool) -> np.ndarray:
    """float64 values of a column that was numeric at fit time."""
    if isinstance(column, pd.Series):
        dtype = column.dtype
        if pd.api.types.is_complex_dtype(dtype):
            raise _complex_error(name, table, column)
        if pd.api.types.is_numeric_dtype(dtype) or pd.api.types.is_bool_dtype(dtype):
            values = column.to_numpy(dtype=np.float64, na_value=np.nan)
            return _numeric_values(name, table, column, values, allow_nan=allow_nan, integers=False)
        if not (
            isinstance(dtype, pd.CategoricalDtype)
            or pd.api.types.is_object_dtype(dtype)
            or pd.api.types.is_string_dtype(dtype)
        ):
            raise _unsupported_dtype_error(name, dtype)
        column = column.to_numpy(dtype=object)
    if column.dtype.kind in "biuf":
        values = column.astype(np.float64)
        return _numeric_values(name, table, column, values, allow_nan=allow_nan, integers=False)
    if column.dtype.kind == "c":
        raise _complex_error(name, table, column)
    if column.dtype.kind not in "USO":
        raise _unsupported_dtype_error(name, column.dtype)
    missing = np.asarray(pd.isna(column))
    for i, value in enumerate(column):
        if not missing[i] and not isinstance(value, (numbers.Real, np.bool_)):
            raise DataError(
                f"column {name!r} was numeric at fit time, but {_row(table, i)} holds "
                f"{_show(value)} ({type(_plain(value)).__name__}); allowed are numbers (strings "
                "are not parsed)."
            )
    values = _float_from_objects(column)
    return _numeric_values(name, table, column, values, allow_nan=allow_nan, integers=False)


def _predict_categorical(
    name: str, table: _Table, column, categories: list, *, unknown: str
) -> np.ndarray:
    """Codes (float64) of a column that was categorical at fit time; -1 for unseen labels."""
    known = pd.Index(categories, dtype=object, tupleize_cols=False)
    if isinstance(column, pd.Series) and isinstance(column.dtype, pd.CategoricalDtype):
        # Match the column's categories, not its cells (22 such columns of 8,124 rows: 20 ->
        # 6 ms a predict); a cell's code then picks its category's match.
        cells = column.cat.codes.to_numpy()
        if (cells < 0).any():
            raise _missing_error(name, table, column, int(np.argmax(cells < 0)), "categorical")
        values = column.array  # a cell's label, when a message names it
        codes = known.get_indexer(column.cat.categories.astype(object))[cells]
    else:
        if isinstance(column, pd.Series):
            values = column.to_numpy(dtype=object)
        elif column.dtype.kind == "c":
            raise _complex_error(name, table, column)
        else:
            values = column.astype(object)
        try:
            codes = known.get_indexer(values)
        except TypeError:
            codes = None  # an unhashable cell, named below unless a missing one comes first
        # A missing cell matches no label: only the unmatched ones are looked at (checking
        # every cell took a third of a predict on string columns).
        unmatched = np.arange(len(values)) if codes is None else np.flatnonzero(codes < 0)
        missing = np.asarray(pd.isna(values[unmatched]), dtype=bool)
        if missing.any():
            first = int(unmatched[np.argmax(missing)])
            raise _missing_error(name, table, column, first, "categorical")
        if codes is None:  # every cell was looked at, and none is missing
            _raise_unusable_value(name, table, column, missing)
    unseen = codes < 0
    if unseen.any():
        for i in np.flatnonzero(unseen):
            value = values[i]
            if isinstance(value, (float, np.floating)) and not np.isfinite(value):
                raise DataError(
                    f"column {name!r} holds {_show(value)} at {_row(table, i)}; numbers used "
                    "as category labels must be finite (no inf)."
                )
        i = int(np.argmax(unseen))
        if unknown == "error":
            raise DataError(
                f"column {name!r} holds the category {_show(values[i])} at {_row(table, i)}, "
                f"which was not seen at fit time; known categories: {_listing(categories)}."
            )
        count = int(unseen.sum())
        if unknown == "warn":
            warnings.warn(
                f"column {name!r} holds {count} value(s) not seen at fit time (the first: "
                f"{_show(values[i])} at {_row(table, i)}; known categories: "
                f"{_listing(categories)}); where the tree splits on this column such a row "
                "stops, and is predicted as the nearest node above with training rows",
                UnseenCategoryWarning,
                stacklevel=_caller_stacklevel(),
            )
    return codes.astype(np.float64)


def _encode_new(
    X,
    feature_names: list[str],
    categories: list,
    *,
    check_names: bool = True,
    allow_nan: bool = False,
    allow_reorder: bool = True,
    estimator_name: str = "optitree",
    unknown: str = "code",
    warn_names: bool = False,
    warn_columns: Collection[int] | None = None,
) -> np.ndarray:
    """:func:`encode_predict` with a choice for unseen categories ('code' -> -1; 'warn' -> -1
    with an :class:`UnseenCategoryWarning`, only for ``warn_columns`` if given; or 'error')."""
    if len(feature_names) != len(categories):
        raise InvalidParameterError(
            f"feature_names has {len(feature_names)} entries but categories has "
            f"{len(categories)}; they describe the same columns."
        )
    table = _read_table(X)
    columns = _align(
        table,
        list(feature_names),
        check_names=check_names,
        allow_reorder=allow_reorder,
        estimator_name=estimator_name,
        warn_names=warn_names,
    )

    def encoded(j: int) -> np.ndarray:
        name, column, labels = feature_names[j], columns[j], categories[j]
        if labels is None:
            return _predict_numeric(name, table, column, allow_nan=allow_nan)
        quiet = unknown == "warn" and warn_columns is not None and j not in warn_columns
        action = "code" if quiet else unknown
        return _predict_categorical(name, table, column, labels, unknown=action)

    out = _integer_codes(table, columns, categories)
    if out is not None:
        # Columns holding values unseen at fit time go the general way, which names them.
        for j in np.flatnonzero((out < 0).any(axis=0)):
            out[:, j] = encoded(int(j))
        return out
    out = np.empty((table.n_rows, len(feature_names)), dtype=np.float64)
    for j in range(len(feature_names)):
        out[:, j] = encoded(j)
    return out


def _is_int64(label) -> bool:
    """An integer label (not a bool) within int64's range: one an int64 cell may equal. Plain
    ints first: the general test (through ``numbers.Real``) took 1 ms of a 117-column predict."""
    if type(label) is not int and not (
        isinstance(label, (int, np.integer)) and not isinstance(label, (bool, np.bool_))
    ):
        return False
    return -(1 << 63) <= label < 1 << 63


def _integer_codes(table: _Table, columns: list, categories: list) -> np.ndarray | None:
    """The codes of data whose columns all hold integers and were all categorical with integer
    labels (category codes, the common case), through one lookup table over the whole matrix,
    -1 for a value not seen at fit time; None for any other data.

    The general path turns every cell into a Python object and matches it column by column:
    78 ms on 8,124 rows × 117 columns, against 1.2 ms here (7.0 ms through numpy's clip, offset
    and gather). Bool labels are left to it, since ``True == 1`` there.
    """
    if not columns or not all(labels and all(map(_is_int64, labels)) for labels in categories):
        return None

    # Integer cells only (no nullable extension types; uint64 cells beyond int64 would compare
    # inexactly with int64 labels), checked before a frame's columns are stacked.
    def integers(dtype) -> bool:
        return isinstance(dtype, np.dtype) and dtype.kind in "iu" and dtype != np.uint64

    if table.array is not None:
        cells = table.array  # arrays are matched by position: the columns are its columns
    elif all(integers(c.dtype) for c in columns):
        cells = np.column_stack([c.to_numpy() for c in columns])
    else:
        return None
    if not integers(cells.dtype):
        return None
    labels = [list(map(int, labels)) for labels in categories]
    return _core.codes_under_labels(_int64_rows(cells), labels, 1 << 20)


def encode_predict(
    X,
    feature_names: list[str],
    categories: list,
    *,
    check_names: bool = True,
    allow_nan: bool = False,
    allow_reorder: bool = True,
    estimator_name: str = "optitree",
    warn_names: bool = False,
    warn_columns: Collection[int] | None = None,
) -> np.ndarray:
    """Encode new data with the schema found by :func:`encode_fit`.

    **Unseen categories.** A categorical value that was not among the
    categories at fit time is encoded as ``-1.0`` instead of raising. A tree
    that meets ``-1`` at a categorical split cannot send the row to any child:
    the row stops at that node and is predicted with the class distribution
    of the node where it stopped (the training rows that reached that node).
    An :class:`~optitree.exceptions.UnseenCategoryWarning` names each column
    that holds such values, with their count and the first one (only the
    columns in ``warn_columns`` when it is given: a model warns about the
    columns its tree reads, not about those no prediction depends on).

    Parameters
    ----------
    X : array-like of shape (n_rows, n_features) or pandas.DataFrame
        New data.
    feature_names : list of str
        ``EncodedInput.feature_names`` from fit.
    categories : list
        ``EncodedInput.categories`` from fit (a list of labels or ``None`` per
        column).
    check_names : bool, default=True
        How a DataFrame's columns are matched. They are always matched **by
        name**, in any order, and reordered to the fitted order. With
        ``check_names=True`` a column missing from X and a column X has but
        fit did not see are errors. With ``check_names=False`` extra columns
        are ignored, and a DataFrame sharing no column name with the fitted
        names (say, a model fitted on an array) is matched by position.
        Arrays and lists are always matched by position and must have the
        fitted number of columns.
    allow_nan : bool, default=False
        Accept NaN in numeric columns (returned as NaN).
    allow_reorder : bool, default=True
        If False, a DataFrame whose columns are in another order than at fit
        time is an error (scikit-learn's convention) rather than reordered.
    estimator_name : str, default="optitree"
        Name used in the message about a wrong number of columns.
    warn_names : bool, default=False
        Warn, as scikit-learn's estimators do, when X is a DataFrame with
        string column names and fit saw none (``check_names=False``), or when
        fit saw names (``check_names=True``) and X has none.
    warn_columns : collection of int, optional
        Positions (in ``feature_names``) of the columns whose unseen categories
        warn; ``None`` (default): every column.

    Returns
    -------
    ndarray of shape (n_rows, n_features), dtype float64
        Numeric values and category codes (``-1.0`` for unseen categories),
        columns in the fitted order. Categorical values are matched by value,
        so the number ``7.0`` finds the category ``7``.

    Raises
    ------
    DataError
        Wrong dimensions or number of columns, missing or (with
        ``check_names``) unexpected DataFrame columns, NaN or inf or a
        non-number in a numeric column, a missing value in a categorical
        column.

    Examples
    --------
    >>> import pandas as pd
    >>> from optitree._validation import encode_fit, encode_predict
    >>> enc = encode_fit(pd.DataFrame({"age": [30, 45], "color": ["red", "blue"]}))
    >>> new = pd.DataFrame({"color": ["blue", "green"], "age": [50, 20]})
    >>> import warnings
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     encode_predict(new, enc.feature_names, enc.categories)
    array([[50.,  0.],
           [20., -1.]])
    >>> caught[0].category.__name__
    'UnseenCategoryWarning'
    """
    return _encode_new(
        X,
        feature_names,
        categories,
        check_names=check_names,
        allow_nan=allow_nan,
        allow_reorder=allow_reorder,
        estimator_name=estimator_name,
        unknown="warn",
        warn_names=warn_names,
        warn_columns=warn_columns,
    )


# ----------------------------------------------------------------------------
# Labels and sample weights
# ----------------------------------------------------------------------------


def check_labels(y, n_rows: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Validate class labels and encode them as ``0 .. K-1``.

    Parameters
    ----------
    y : array-like of shape (n_rows,) or (n_rows, 1), or pandas.Series
        Any hashable labels: strings, integers (not necessarily contiguous),
        bools, integral floats, or a mixture in an object array. A column
        vector is flattened with a ``DataConversionWarning``, as in
        scikit-learn. A single class is allowed.
    n_rows : int, optional
        Number of rows of X, to check that y has one label per row.

    Returns
    -------
    codes : ndarray of shape (n_rows,), dtype int64
        ``classes[codes]`` gives back the labels.
    classes : ndarray of shape (n_classes,)
        The sorted distinct labels (unorderable mixtures are sorted by
        ``str``), as ``np.unique(y, return_inverse=True)`` would give.

    Raises
    ------
    DataError
        If y has more than one column, is empty, has a missing label,
        complex values or non-integral floats ("Unknown label type:
        continuous"), or its length differs from ``n_rows``.

    Examples
    --------
    >>> from optitree._validation import check_labels
    >>> codes, classes = check_labels(["yes", "no", "yes"])
    >>> codes, classes
    (array([1, 0, 1]), array(['no', 'yes'], dtype='<U3'))
    >>> check_labels([10, 3, 10], n_rows=3)[1]
    array([ 3, 10])
    """
    if y is None:
        raise DataError(
            "This estimator requires y to be passed, but the target y is None; give one "
            "label per row."
        )
    if isinstance(y, pd.DataFrame):
        if y.shape[1] != 1:
            raise DataError(
                f"y must be 1-D (one label per row), got a DataFrame with {y.shape[1]} "
                "columns; multi-output targets are not supported."
            )
        _warn_column_vector()
        y = y.iloc[:, 0]
    arr = y.to_numpy() if isinstance(y, pd.Series) else _asarray(y)
    if arr.ndim == 2 and arr.shape[1] == 1:
        _warn_column_vector()
        arr = arr[:, 0]
    if arr.ndim != 1:
        raise DataError(
            f"y must be 1-D (one label per row), got shape {arr.shape}; multi-output "
            "targets are not supported."
        )
    if n_rows is not None and len(arr) != n_rows:
        raise DataError(f"X has {n_rows} rows but y has {len(arr)}.")
    if len(arr) == 0:
        raise DataError("y is empty; at least one labelled row is required.")
    kind = arr.dtype.kind
    if kind == "c":
        raise DataError("Complex data not supported: y holds complex numbers.")
    if kind in "fOMm":
        missing = np.asarray(pd.isna(arr))
        if missing.any():
            i = int(np.argmax(missing))
            raise DataError(
                f"y holds a missing label ({_show(arr[i])}) at row {i}; labels must not be "
                "NaN, None or pd.NA."
            )
    if kind == "f":
        continuous = ~np.isfinite(arr) | (arr != np.floor(arr))
        if continuous.any():
            i = int(np.argmax(continuous))
            raise DataError(
                f"Unknown label type: continuous. y holds {_show(arr[i])} at row {i}; class "
                "labels must be discrete (strings, ints, bools or integral floats)."
            )
    if kind in "iu":
        codes, labels = _factorize_sorted(arr)  # counts small codes instead of sorting
        return codes, np.asarray(labels, dtype=arr.dtype)
    if kind != "O":
        classes, codes = np.unique(arr, return_inverse=True)
        return codes.reshape(-1).astype(np.int64), classes
    try:
        codes, labels = _factorize_sorted(arr)
    except TypeError:
        for i, value in enumerate(arr):
            try:
                hash(value)
            except TypeError:
                raise DataTypeError(
                    f"y holds {_show(value)} of type {type(value).__name__} at row {i}; "
                    "labels must be hashable (strings, numbers, bools, ...)."
                ) from None
        raise
    return codes, _object_array(labels)


def _warn_column_vector() -> None:
    warnings.warn(
        "A column-vector y was passed when a 1d array was expected. Please change the "
        "shape of y to (n_samples,), for example using ravel().",
        DataConversionWarning,
        stacklevel=3,
    )


def check_sample_weight(sample_weight, n_rows: int) -> np.ndarray | None:
    """Validate sample weights.

    Parameters
    ----------
    sample_weight : array-like of shape (n_rows,), scalar or None
        Non-negative finite weights, not all zero. A scalar means the same
        weight for every row. ``None`` (no weights) is returned unchanged.
    n_rows : int
        Number of rows of X.

    Returns
    -------
    ndarray of shape (n_rows,), dtype float64, or None
        A new array (the caller's array is never modified or kept).

    Raises
    ------
    DataError
        On a length mismatch, a non-numeric, NaN, infinite or negative
        weight (the message gives its index), or if every weight is zero.

    Examples
    --------
    >>> from optitree._validation import check_sample_weight
    >>> check_sample_weight([1, 2, 0.5], n_rows=3)
    array([1. , 2. , 0.5])
    >>> check_sample_weight(None, n_rows=3) is None
    True
    """
    if sample_weight is None:
        return None
    if _is_number(sample_weight):
        weights = np.full(n_rows, float(sample_weight))
    else:
        arr = _asarray(sample_weight)
        if arr.ndim != 1:
            raise DataError(
                f"sample_weight must be 1-D with one weight per row, got shape {arr.shape}."
            )
        if len(arr) != n_rows:
            raise DataError(f"X has {n_rows} rows but sample_weight has {len(arr)}.")
        if arr.dtype.kind in "iuf":
            weights = arr.astype(np.float64)
        elif arr.dtype.kind == "O":
            for i, value in enumerate(arr):
                if not _is_number(value):
                    raise DataError(
                        f"sample_weight holds {_show(value)} at index {i}; weights must be numbers."
                    )
            weights = arr.astype(np.float64)
        else:
            raise DataError(
                f"sample_weight holds {_show(arr[0])} at index 0 (dtype {arr.dtype}); weights "
                "must be numbers (int or float)."
            )
    bad = ~np.isfinite(weights)
    if bad.any():
        i = int(np.argmax(bad))
        raise DataError(
            f"sample_weight holds {_show(weights[i])} at index {i}; weights must be finite "
            "(no NaN or inf) and >= 0."
        )
    negative = weights < 0
    if negative.any():
        i = int(np.argmax(negative))
        raise DataError(
            f"sample_weight holds the negative weight {_show(weights[i])} at index {i}; "
            "weights must be >= 0."
        )
    if not (weights > 0).any():
        raise DataError(
            f"sample_weight has no positive weight: all {n_rows} weights are zero (the first "
            "at index 0); at least one weight must be > 0."
        )
    return np.ascontiguousarray(weights)
