"""Validation of a query-learning problem: the 0/1 matrix, the prior and the group labels.

Every error names the offending column, object or value (spec §3.9 policies): answers must be
0/1 (booleans, integers or floats equal to 0 or 1), priors finite and non-negative with a
positive total (normalised with a warning when they do not sum to 1), one group label per object.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from optitree.exceptions import DataError

__all__ = ["check_groups", "check_matrix", "check_prior", "identical_row_sets"]


def check_matrix(B: Any) -> tuple[np.ndarray, list[str], list[str]]:
    """The query matrix as C-contiguous uint8, with object (row) and query (column) names."""
    if hasattr(B, "columns") and hasattr(B, "index"):
        query_names = [str(c) for c in B.columns]
        object_names = [str(i) for i in B.index]
        columns = [B.iloc[:, j].to_numpy() for j in range(B.shape[1])]
        values = np.column_stack(columns) if columns else np.zeros((len(B), 0))
    else:
        values = np.asarray(B)
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
        out[:, j] = _binary_column(values[:, j], query_names[j])
    return np.ascontiguousarray(out), object_names, query_names


def _binary_column(col: np.ndarray, name: str) -> np.ndarray:
    if col.dtype == bool:
        return col.astype(np.uint8)
    if col.dtype.kind in "iuf":
        bad = ~((col == 0) | (col == 1))
    else:
        bad = np.array([not (_is_number(v) and v in (0, 1)) for v in col], dtype=bool)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise DataError(
            f"query column {name!r} must hold answers 0/1 (or booleans); row {i} is "
            f"{_plain(col[i])!r}"
        )
    return col.astype(np.float64).astype(np.uint8)


def _plain(v: Any) -> Any:
    return v.item() if isinstance(v, np.generic) else v


def _is_number(v: Any) -> bool:
    return isinstance(v, (bool, int, float, np.bool_, np.integer, np.floating))


def check_prior(prior: Any, n_objects: int, *, warn: bool = True) -> tuple[np.ndarray, bool]:
    """The prior normalised to sum 1, and whether it had to be normalised."""
    if prior is None:
        return np.full(n_objects, 1.0 / n_objects), False
    try:
        p = np.asarray(prior, dtype=np.float64).ravel()
    except (TypeError, ValueError) as exc:
        raise DataError(f"prior must be numbers: {exc}") from exc
    if len(p) != n_objects:
        raise DataError(f"prior has {len(p)} entries but there are {n_objects} objects")
    bad = ~np.isfinite(p) | (p < 0)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise DataError(f"prior of object {i} is {p[i]!r}; priors must be finite and >= 0")
    total = float(p.sum())
    if total <= 0:
        raise DataError("the prior sums to 0; at least one object needs a positive prior")
    rescaled = abs(total - 1.0) > 1e-9
    if rescaled and warn:
        warnings.warn(
            f"the prior sums to {total:.6g}, not 1; it was normalised", UserWarning, stacklevel=3
        )
    return p / total, rescaled


def check_groups(groups: Any, n_objects: int) -> tuple[np.ndarray, np.ndarray]:
    """Group codes 0..m-1 and the sorted group labels."""
    from optitree._validation import check_labels

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
