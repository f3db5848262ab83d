"""Validation of a query-learning problem: the 0/1 matrix, the prior and the group labels.

Every error names the offending column, object or value (spec §3.9 policies): answers must be
0/1 (booleans, integers or floats equal to 0 or 1), priors finite and non-negative with a
positive total (normalised with a warning when they do not sum to 1), one group label per object.
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np

from optitree.exceptions import DataError

__all__ = ["check_groups", "check_matrix", "check_prior", "identical_row_sets"]


def _object(i: int, names: list[str] | None) -> str:
    """How an error names object ``i``: by its name, or by its row when it has none."""
    if names is None or names[i] == str(i):
        return f"object {i}"
    return f"object {names[i]!r}"


def _duplicate_names(index: Any) -> DataError:
    from optitree._validation import first_repeat

    names = [str(name) for name in index]
    repeat = first_repeat(names)
    if repeat is None:  # pragma: no cover - names unique once converted to str
        return DataError("the object names must be unique")
    i, j = repeat
    return DataError(
        f"the object names must be unique, but {names[j]!r} names rows {i} and {j} of the "
        "query matrix"
    )


def check_matrix(B: Any) -> tuple[np.ndarray, list[str], list[str]]:
    """The query matrix as C-contiguous uint8, with object (row) and query (column) names."""
    if hasattr(B, "columns") and hasattr(B, "index") and not B.index.is_unique:
        raise _duplicate_names(B.index)
    if hasattr(B, "columns") and hasattr(B, "index"):
        query_names = [str(c) for c in B.columns]
        object_names = [str(i) for i in B.index]
        columns = [B.iloc[:, j].to_numpy() for j in range(B.shape[1])]
        values = np.column_stack(columns) if columns else np.zeros((len(B), 0))
    else:
        if hasattr(B, "tocsr") or hasattr(B, "todense"):  # scipy.sparse
            raise DataError(
                "the query matrix is sparse; give a dense array (B.toarray()) or a DataFrame"
            )
        try:
            values = np.asarray(B)
        except ValueError as exc:  # ragged nested lists
            raise DataError(f"the query matrix must be a rectangular 2-D array: {exc}") from exc
        if values.ndim != 2:
            raise DataError(
                f"the query matrix must be 2-D (objects × queries), got shape {values.shape}"
            )
        object_names = [str(i) for i in range(values.shape[0])]
        query_names = [f"x{j}" for j in range(values.shape[1])]
    if values.shape[0] == 0:
        raise DataError("the query matrix has no objects (rows)")
    if values.dtype == bool:
        return np.ascontiguousarray(values, dtype=np.uint8), object_names, query_names
    if values.dtype.kind in "iuf" and np.isin(values, (0, 1)).all():
        return np.ascontiguousarray(values, dtype=np.uint8), object_names, query_names
    out = np.empty(values.shape, dtype=np.uint8)
    for j in range(values.shape[1]):
        out[:, j] = _binary_column(values[:, j], query_names[j], object_names)
    return np.ascontiguousarray(out), object_names, query_names


def _binary_column(col: np.ndarray, name: str, objects: list[str]) -> np.ndarray:
    if col.dtype == bool:
        return col.astype(np.uint8)
    if col.dtype.kind in "iuf":
        bad = ~((col == 0) | (col == 1))
    else:
        bad = np.array([not (_is_number(v) and v in (0, 1)) for v in col], dtype=bool)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise DataError(
            f"query column {name!r} must hold answers 0/1 (or booleans); {_object(i, objects)} "
            f"has {_plain(col[i])!r}"
        )
    return col.astype(np.float64).astype(np.uint8)


def _plain(v: Any) -> Any:
    return v.item() if isinstance(v, np.generic) else v


def _is_number(v: Any) -> bool:
    return isinstance(v, (bool, int, float, np.bool_, np.integer, np.floating))


def check_prior(
    prior: Any,
    n_objects: int,
    *,
    warn: bool = True,
    allow_zero: bool = False,
    index: Any = None,
    names: list[str] | None = None,
) -> tuple[np.ndarray, bool]:
    """The prior normalised to sum 1, and whether it had to be normalised.

    Zero priors are refused unless ``allow_zero`` (evaluating a tree under another prior): an
    object that cannot occur should be dropped, and the greedy scores are undefined on a node
    without mass (spec §3.9). Errors name the object by ``names`` when given.
    """
    if prior is None:
        return np.full(n_objects, 1.0 / n_objects), False
    prior = _aligned(prior, index, "prior")
    try:
        p = np.asarray(prior, dtype=np.float64).ravel()
    except (TypeError, ValueError) as exc:
        raise _not_numbers(prior, names) from exc
    if len(p) != n_objects:
        raise DataError(f"prior has {len(p)} entries but there are {n_objects} objects")
    bad = ~np.isfinite(p) | (p < 0) | ((p == 0) & (not allow_zero))
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        allowed = ">= 0" if allow_zero else "> 0 (drop objects that cannot occur)"
        raise DataError(
            f"the prior of {_object(i, names)} is {float(p[i])!r}; priors must be finite and "
            f"{allowed}"
        )
    top = float(p.max())
    if top <= 0:
        raise DataError("the prior sums to 0; at least one object needs a positive prior")
    scaled = p / top  # dividing by the largest first: a sum of huge weights cannot overflow
    total = float(scaled.sum())
    original = top * total  # may be inf for huge weights; only shown in the warning
    rescaled = not abs(original - 1.0) <= 1e-9
    if rescaled and warn:
        # Past the largest float, the sum is written as the product it is.
        shown = f"{original:.6g}" if math.isfinite(original) else f"{total:.6g} × {top:.6g}"
        warnings.warn(
            f"the prior sums to {shown}, not 1; it was normalised",
            UserWarning,
            stacklevel=3,
        )
    return scaled / total, rescaled


def _not_numbers(prior: Any, names: list[str] | None) -> DataError:
    """Names the first prior that does not read as a number."""
    values = list(np.asarray(prior, dtype=object).ravel())
    for i, value in enumerate(values):
        try:
            float(value)
        except (TypeError, ValueError):
            who = _object(i, names) if names is not None and len(values) == len(names) else i
            return DataError(f"the prior must be numbers, but that of {who} is {_plain(value)!r}")
    return DataError("the prior must be numbers")  # pragma: no cover


def _aligned(values: Any, index: Any, name: str) -> Any:
    """A pandas Series is matched to the matrix's rows by index, never silently by position."""
    if index is None or not hasattr(values, "index") or not hasattr(values, "reindex"):
        return values
    if values.index.equals(index):
        return values
    if len(values.index) == len(index) and set(values.index) == set(index):
        return values.reindex(index)
    raise DataError(
        f"{name} is a pandas Series whose index does not match the query matrix's rows; pass it "
        "with the same index (or as a plain array in row order)"
    )


def check_groups(groups: Any, n_objects: int, index: Any = None) -> tuple[np.ndarray, np.ndarray]:
    """Group codes 0..m-1 and the sorted group labels."""
    from optitree._validation import check_labels

    groups = _aligned(groups, index, "groups")
    n = len(groups) if hasattr(groups, "__len__") else None
    if n is not None and n != n_objects:
        raise DataError(f"groups has {n} labels but there are {n_objects} objects")
    return check_labels(groups, n_objects)


def identical_row_sets(answers: np.ndarray, target: np.ndarray) -> list[np.ndarray]:
    """Sets of objects with identical rows that a tree could not tell apart although their
    targets differ (each set lists object indices)."""
    # Rows as opaque byte strings: hashing them is much faster than a row-wise unique.
    first_seen: dict[bytes, int] = {}
    inverse = np.array(
        [first_seen.setdefault(row.tobytes(), len(first_seen)) for row in answers], dtype=np.int64
    )
    out = []
    for cls in np.flatnonzero(np.bincount(inverse) > 1):
        members = np.flatnonzero(inverse == cls)
        if len(np.unique(target[members])) > 1:
            out.append(members)
    return out
