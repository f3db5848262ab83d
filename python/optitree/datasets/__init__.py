"""Benchmark datasets shipped with optitree.

The raw files travel with the package (gzip-compressed, in ``datasets/data/``; their sources
and licences are listed in ``datasets/data/README.md``), so no loader touches the network.

**Categorical UCI datasets.** :func:`load_monks`, :func:`load_tic_tac_toe`, :func:`load_car`,
:func:`load_balance_scale`, :func:`load_zoo`, :func:`load_lymphography`, :func:`load_nursery`,
:func:`load_mushroom` and :func:`load_kr_vs_kp` each return a :class:`sklearn.utils.Bunch` with

- ``data``: a DataFrame of pandas ``category`` columns named after the attributes of the
  dataset's ``.names`` file;
- ``target``: a Series of class labels (strings or integers, as in the raw file, or the class
  names of the ``.names`` file where it gives them);
- ``frame``: ``data`` with the target as its last column;
- ``feature_names``: the column names of ``data``;
- ``target_names``: the distinct class labels, sorted (the order of an estimator's
  ``classes_``);
- ``DESCR``: a summary of the data and of the choices made here, followed by the original
  ``.names`` file;

or ``(data, target)`` with ``return_X_y=True``.

The categories of every column are its distinct raw values in **sorted order** (strings
alphabetically, integers numerically). Where the ``.names`` file spells out coded values
(mushroom, lymphography), the categories carry those names but keep the order of the raw codes,
so the category codes always equal an ordinal encoding of the raw file.

**CP4IM datasets.** :func:`load_cp4im` loads the 16 binarised datasets of the CP4IM collection
(see :func:`cp4im_names`) as uint8 0/1 columns ``f0``, ``f1``, ... and an integer target.

**Registry.** :func:`list_datasets` describes everything :func:`load_dataset` can load by name.

**Branches paper encodings.** :func:`load_branches_encoding` rebuilds the 32 integer matrices of
the Branches paper's experiments exactly; :func:`format_branches_matrix` writes them in the
paper's text format.

Every loader parses its file once per process and hands out fresh copies, so editing a result
never affects later calls.

Examples
--------
>>> from optitree.datasets import load_dataset
>>> bunch = load_dataset("monks-2")
>>> bunch.data.shape, bunch.target_names.tolist()
((169, 6), [0, 1])
"""

from ._branches import branches_encoding_names, format_branches_matrix, load_branches_encoding
from ._cp4im import cp4im_names, load_cp4im
from ._query import load_zoo_queries, make_threshold_active_learning, zipf_prior
from ._registry import DatasetInfo, list_datasets, load_dataset
from ._uci import (
    load_balance_scale,
    load_car,
    load_kr_vs_kp,
    load_lymphography,
    load_monks,
    load_mushroom,
    load_nursery,
    load_tic_tac_toe,
    load_zoo,
)

__all__ = [
    "DatasetInfo",
    "branches_encoding_names",
    "cp4im_names",
    "format_branches_matrix",
    "list_datasets",
    "load_balance_scale",
    "load_branches_encoding",
    "load_car",
    "load_cp4im",
    "load_dataset",
    "load_kr_vs_kp",
    "load_lymphography",
    "load_monks",
    "load_mushroom",
    "load_nursery",
    "load_tic_tac_toe",
    "load_zoo",
    "load_zoo_queries",
    "make_threshold_active_learning",
    "zipf_prior",
]
