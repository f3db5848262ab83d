"""Shared plumbing of the dataset loaders: reading the shipped files, caching, building bunches.

Every shipped file lives gzip-compressed in ``data/`` next to this module. Parsed tables are
cached per process; the public loaders always hand out fresh copies so that a caller who
edits a returned frame cannot change what the next caller sees.
"""

from __future__ import annotations

import difflib
import gzip
from collections.abc import Iterable, Mapping, Sequence
from functools import cache
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.utils import Bunch

from ..exceptions import DataError, InvalidParameterError

DATA_DIR = Path(__file__).resolve().parent / "data"

UCI_SOURCE = (
    "Source: UCI Machine Learning Repository (Dua, D. and Graff, C., University of California,\n"
    "Irvine, School of Information and Computer Sciences), licensed CC BY 4.0."
)


def open_text(relpath: str):
    """Open the shipped file ``data/<relpath>.gz`` for reading text."""
    path = DATA_DIR / (relpath + ".gz")
    if not path.is_file():
        # Only reachable if the installation is damaged: every caller names a shipped file.
        raise DataError(f"the bundled data file {path} is missing; reinstall optitree")
    return gzip.open(path, "rt", encoding="ascii")


def read_text(relpath: str) -> str:
    """Return the text of the shipped file ``data/<relpath>.gz``."""
    with open_text(relpath) as handle:
        return handle.read()


@cache
def read_table(relpath: str, sep: str | None) -> np.ndarray:
    """Parse a shipped delimited text file into a read-only 2-D object array of strings.

    ``sep=None`` splits on runs of whitespace. Blank lines (several UCI files end with
    one or two) are skipped; every other line must have the same number of fields.
    """
    rows = []
    for line in read_text(relpath).splitlines():
        if not line.strip():
            continue
        rows.append(line.split() if sep is None else line.split(sep))
    widths = {len(r) for r in rows}
    if len(widths) != 1:
        raise DataError(
            f"the bundled file {relpath!r} is malformed: rows have {sorted(widths)} fields"
        )
    table = np.empty((len(rows), widths.pop()), dtype=object)
    table[:] = rows
    table.flags.writeable = False
    return table


def categorical_column(
    raw: np.ndarray,
    *,
    domain: Sequence | None = None,
    labels: Mapping | None = None,
) -> pd.Categorical:
    """Build a categorical column whose categories follow the sorted raw values.

    Parameters
    ----------
    raw : ndarray
        The raw values of one column (strings or ints).
    domain : sequence, optional
        The full list of raw values to declare as categories, in order. Defaults to the
        sorted distinct values of ``raw``.
    labels : mapping, optional
        Readable names for raw values; the category order stays that of the raw values.
    """
    cats = sorted(set(raw.tolist())) if domain is None else list(domain)
    position = {value: i for i, value in enumerate(cats)}
    codes = np.fromiter((position[v] for v in raw.tolist()), dtype=np.int64, count=len(raw))
    names = [labels[c] for c in cats] if labels is not None else cats
    return pd.Categorical.from_codes(codes, categories=names)


def class_counts_text(target: pd.Series) -> str:
    """Return ``"a: 3, b: 5"`` listing the count of every class in sorted class order."""
    counts = target.value_counts().sort_index()
    return ", ".join(f"{label}: {count}" for label, count in counts.items())


def make_bunch(
    data: pd.DataFrame,
    target: pd.Series,
    descr: str,
    *,
    return_X_y: bool,
    extra: Mapping | None = None,
):
    """Copy the cached pieces and package them the way every loader returns them."""
    check_flag("return_X_y", return_X_y)
    data = data.copy(deep=True)
    target = target.copy(deep=True)
    if return_X_y:
        return data, target
    frame = pd.concat([data, target], axis=1)
    fields = {
        "data": data,
        "target": target,
        "frame": frame,
        "feature_names": [str(c) for c in data.columns],
        "target_names": np.array(sorted(target.unique().tolist())),
        "DESCR": descr,
    }
    for key, value in (extra or {}).items():
        fields[key] = value.copy() if hasattr(value, "copy") else value
    return Bunch(**fields)


def check_flag(name: str, value) -> None:
    """Reject anything but a real bool for a boolean switch."""
    if not isinstance(value, (bool, np.bool_)):
        raise InvalidParameterError(f"{name} must be True or False, got {value!r}")


def unknown_name_error(kind: str, name, valid: Iterable[str]) -> DataError:
    """Build the error for a dataset name that does not exist, listing the valid ones."""
    valid = list(valid)
    message = f"unknown {kind} {name!r}."
    if isinstance(name, str):
        close = difflib.get_close_matches(name, valid, n=1)
        if close:
            message += f" Did you mean {close[0]!r}?"
    return DataError(message + " Valid names: " + ", ".join(valid))


def check_name(kind: str, name) -> None:
    """Reject a dataset name that is not a string."""
    if not isinstance(name, str):
        raise InvalidParameterError(f"{kind} must be a str, got {type(name).__name__} {name!r}")
