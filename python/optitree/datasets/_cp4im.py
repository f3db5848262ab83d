"""Loader for the 16 binarised CP4IM benchmark datasets (as distributed with DL8.5).

Each raw file holds one sample per line as space-separated 0/1 integers: the class label
first, then the binary features.
"""

from __future__ import annotations

import textwrap
from functools import cache

import numpy as np
import pandas as pd

from ._common import (
    check_name,
    class_counts_text,
    make_bunch,
    open_text,
    unknown_name_error,
)

__all__ = ["cp4im_names", "load_cp4im"]

_CP4IM_NAMES = (
    "anneal",
    "audiology",
    "australian-credit",
    "german-credit",
    "heart-cleveland",
    "hepatitis",
    "hypothyroid",
    "kr-vs-kp",
    "lymph",
    "mushroom",
    "primary-tumor",
    "soybean",
    "splice-1",
    "tic-tac-toe",
    "vote",
    "zoo-1",
)

_CP4IM_SOURCE = (
    "Source: the CP4IM benchmark collection of Guns, T., Nijssen, S. and De Raedt, L. (2011),\n"
    '"Itemset mining: a constraint programming perspective", Artificial Intelligence 175,\n'
    "as distributed with DL8.5. The underlying data come from the UCI Machine Learning\n"
    "Repository (Dua, D. and Graff, C.)."
)

_CP4IM_NOTES = (
    "The raw file has one sample per line: the class label (0/1) first, then the binary features.",
    "The features are 0/1 indicators (uint8 columns f0, f1, ...) produced by the collection's "
    "authors when they binarised the original attributes; their meaning is not recorded in the "
    "file.",
    "Some of these datasets contain identical feature vectors with different labels, so 100% "
    "training accuracy is not always reachable.",
)


def cp4im_names() -> list[str]:
    """List the names accepted by :func:`load_cp4im`.

    Returns
    -------
    list of str
        The 16 CP4IM dataset names, sorted.

    Examples
    --------
    >>> from optitree.datasets import cp4im_names
    >>> len(cp4im_names())
    16
    >>> cp4im_names()[:3]
    ['anneal', 'audiology', 'australian-credit']
    """
    return list(_CP4IM_NAMES)


@cache
def _parsed(name: str):
    relpath = f"cp4im/{name}.txt"
    with open_text(relpath) as handle:
        matrix = np.loadtxt(handle, dtype=np.int64, ndmin=2)
    features = matrix[:, 1:].astype(np.uint8)
    data = pd.DataFrame(features, columns=[f"f{j}" for j in range(features.shape[1])])
    target = pd.Series(matrix[:, 0], name="class")
    title = f"CP4IM {name}"
    descr = "\n".join(
        [
            title,
            "=" * len(title),
            "",
            f"{data.shape[0]} rows, {data.shape[1]} binary features, {target.nunique()} classes.",
            f"Class counts: {class_counts_text(target)}.",
            f"Raw file: {relpath} (shipped gzip-compressed).",
            "",
            "Notes",
            "-----",
            *(
                textwrap.fill(note, width=79, initial_indent="- ", subsequent_indent="  ")
                for note in _CP4IM_NOTES
            ),
            "",
            _CP4IM_SOURCE,
            "",
        ]
    )
    return data, target, descr


def load_cp4im(name: str, *, return_X_y: bool = False):
    """Load one of the 16 binarised CP4IM benchmark datasets.

    Parameters
    ----------
    name : str
        One of :func:`cp4im_names`, e.g. ``"anneal"`` or ``"zoo-1"``.
    return_X_y : bool, default=False
        Return ``(data, target)`` instead of a Bunch.

    Returns
    -------
    Bunch or tuple
        A :class:`sklearn.utils.Bunch` with ``data`` (DataFrame of uint8 0/1 columns named
        ``f0`` .. ``f{m-1}``), ``target`` (int64 Series named ``class``), ``frame``,
        ``feature_names``, ``target_names`` and ``DESCR``; or ``(data, target)`` when
        ``return_X_y=True``.

    Raises
    ------
    DataError
        If ``name`` is not a CP4IM dataset; the message lists the valid names.

    Examples
    --------
    >>> from optitree.datasets import load_cp4im
    >>> bunch = load_cp4im("anneal")
    >>> bunch.data.shape
    (812, 93)
    >>> bunch.data.dtypes.unique().tolist()
    [dtype('uint8')]
    >>> bunch.target_names.tolist()
    [0, 1]
    """
    check_name("name", name)
    if name not in _CP4IM_NAMES:
        raise unknown_name_error("CP4IM dataset", name, _CP4IM_NAMES)
    data, target, descr = _parsed(name)
    return make_bunch(data, target, descr, return_X_y=return_X_y)
