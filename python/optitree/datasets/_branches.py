"""The exact integer matrices of the Branches paper (Chaouki, Read & Bifet), rebuilt from raw data.

The paper's experiments read 32 preprocessed files: integer matrices with the class label in
the last column. :func:`load_branches_encoding` rebuilds each of them from the shipped raw UCI
files with plain numpy, following the authors' preprocessing step by step.
"""

from __future__ import annotations

import numpy as np

from ..exceptions import DataError
from ._common import check_name, read_table, unknown_name_error

__all__ = ["branches_encoding_names", "format_branches_matrix", "load_branches_encoding"]

# source -> (raw file, separator, integer values?, column order putting the label last)
_SOURCES = {
    "monk1": ("monks-1.train", None, True, "monks"),
    "monk2": ("monks-2.train", None, True, "monks"),
    "monk3": ("monks-3.train", None, True, "monks"),
    "tictactoe": ("tic-tac-toe.data", ",", False, "keep"),
    "careval": ("car.data", ",", False, "keep"),
    "nursery": ("nursery.data", ",", False, "keep"),
    "mushroom": ("agaricus-lepiota.data", ",", False, "reverse"),
    "krvskp": ("kr-vs-kp.data", ",", False, "keep"),
    "zoo": ("zoo.data", ",", False, "drop-first"),
    "lymph": ("lymphography.data", ",", False, "reverse"),
    "balance": ("balance-scale.data", ",", False, "reverse"),
}

_NAMES = (
    "monk1-o",
    "monk1-l",
    "monk1-f",
    "monk1",
    "monk2-o",
    "monk2-f",
    "monk2",
    "monk3-o",
    "monk3-f",
    "monk3",
    "tictactoe-o",
    "tictactoe-f",
    "tictactoe",
    "careval-o",
    "careval-f",
    "careval",
    "nursery-o",
    "nursery-f",
    "nursery",
    "mushroom-o",
    "mushroom-f",
    "mushroom",
    "krvskp",
    "zoo-o",
    "zoo-f",
    "zoo",
    "lymph-o",
    "lymph-f",
    "lymph",
    "balance-o",
    "balance-f",
    "balance",
)


def branches_encoding_names() -> list[str]:
    """List the names accepted by :func:`load_branches_encoding`.

    Returns
    -------
    list of str
        The 32 file names (without ``.txt``) of the Branches paper's preprocessed data.

    Examples
    --------
    >>> from optitree.datasets import branches_encoding_names
    >>> names = branches_encoding_names()
    >>> len(names)
    32
    >>> names[:4]
    ['monk1-o', 'monk1-l', 'monk1-f', 'monk1']
    """
    return list(_NAMES)


def _label_last(source: str) -> np.ndarray:
    """The raw table of ``source`` with its columns reordered so that the label is last."""
    relpath, sep, as_int, order = _SOURCES[source]
    table = read_table(relpath, sep)
    n_cols = table.shape[1]
    if order == "monks":  # class a1..a6 id  ->  a1..a6 class
        columns = [*range(1, n_cols - 1), 0]
    elif order == "reverse":
        columns = list(range(n_cols - 1, -1, -1))
    elif order == "drop-first":
        columns = list(range(1, n_cols))
    else:
        columns = list(range(n_cols))
    table = table[:, columns]
    return table.astype(np.int64) if as_int else table


def _encode(table: np.ndarray, variant: str) -> np.ndarray:
    """Encode a label-last table; ``variant`` is "o", "full", "first" or "last"."""
    codes, sizes = [], []
    for j in range(table.shape[1]):
        categories, inverse = np.unique(table[:, j], return_inverse=True)
        codes.append(inverse.reshape(-1).astype(np.int64))
        sizes.append(len(categories))
    *feature_codes, label = codes
    if variant == "o":
        blocks = [c[:, None] for c in feature_codes]
    else:
        keep = {"full": slice(None), "first": slice(1, None), "last": slice(None, -1)}[variant]
        blocks = [
            (c[:, None] == np.arange(size)[None, :])[:, keep].astype(np.int64)
            for c, size in zip(feature_codes, sizes[:-1])
        ]
    return np.hstack([*blocks, label[:, None]])


def load_branches_encoding(name: str) -> np.ndarray:
    """Rebuild one of the 32 preprocessed matrices used in the Branches paper's experiments.

    The result equals, value for value, the authors' file ``<name>.txt`` (see Notes). Suffix
    ``-o`` means ordinal codes (for multiway splits), no suffix a full one-hot encoding, ``-f``
    one-hot without each feature's first category and ``-l`` (monk1 only) without its last.

    Parameters
    ----------
    name : str
        One of :func:`branches_encoding_names`, e.g. ``"monk1-o"`` or ``"careval-f"``.

    Returns
    -------
    ndarray of shape (n_samples, n_columns), dtype int64
        The encoded features followed by the class code 0..K-1 in the last column.

    Raises
    ------
    DataError
        If ``name`` is not one of the 32 names; the message lists them.

    Notes
    -----
    The matrices are built in three steps, as the authors did:

    1. read the raw UCI file (the monks as integers, every other file as strings);
    2. move the label to the last column: the monks drop their trailing identifier and rotate
       the class from the first column to the last; mushroom, lymph and balance reverse the
       order of all their columns (so their features appear in reverse order); zoo drops the
       animal name;
    3. encode every column on its own, with its categories in sorted order (strings
       alphabetically, integers numerically): ``-o`` turns every column, label included, into
       codes 0..C-1; the one-hot variants write one 0/1 column per category of each feature
       (dropping the first or last category for ``-f``/``-l``; a feature with a single
       category then disappears) followed by the label's code 0..K-1.

    Examples
    --------
    >>> from optitree.datasets import load_branches_encoding
    >>> M = load_branches_encoding("monk1-o")
    >>> M.shape
    (124, 7)
    >>> M[0].tolist()
    [0, 0, 0, 0, 2, 0, 1]
    >>> load_branches_encoding("monk1").shape
    (124, 18)
    """
    check_name("name", name)
    if name not in _NAMES:
        raise unknown_name_error("Branches encoding", name, _NAMES)
    source, _, suffix = name.partition("-")
    variant = {"o": "o", "": "full", "f": "first", "l": "last"}[suffix]
    return _encode(_label_last(source), variant)


def format_branches_matrix(matrix) -> str:
    """Write an integer matrix the way the Branches paper's data files are written.

    Each row becomes one line of space-separated integers ending in ``"\\n"``; there is no
    header. ``format_branches_matrix(load_branches_encoding(name))`` reproduces the paper's
    file ``<name>.txt`` byte for byte.

    Parameters
    ----------
    matrix : array-like of int, shape (n_rows, n_columns)
        The matrix to write, e.g. from :func:`load_branches_encoding`.

    Returns
    -------
    str
        The file contents.

    Raises
    ------
    DataError
        If ``matrix`` is not two-dimensional or does not hold integers.

    Examples
    --------
    >>> import numpy as np
    >>> from optitree.datasets import format_branches_matrix
    >>> format_branches_matrix(np.array([[1, 0, 2], [0, 1, 0]]))
    '1 0 2\\n0 1 0\\n'
    """
    array = np.asarray(matrix)
    if array.ndim != 2:
        raise DataError(f"matrix must be two-dimensional, got {array.ndim} dimension(s)")
    if not (np.issubdtype(array.dtype, np.integer) or array.dtype == np.bool_):
        raise DataError(f"matrix must hold integers, got dtype {array.dtype}")
    return "".join(" ".join(map(str, row)) + "\n" for row in array.astype(np.int64).tolist())
