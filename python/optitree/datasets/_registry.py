"""The registry of bundled datasets: one name per dataset, for ``load_dataset`` and the CLI."""

from __future__ import annotations

from functools import partial
from typing import Callable, NamedTuple

from ._common import check_name, unknown_name_error
from ._cp4im import load_cp4im
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

__all__ = ["DatasetInfo", "list_datasets", "load_dataset"]


class DatasetInfo(NamedTuple):
    """One bundled dataset, as listed by :func:`list_datasets`.

    Attributes
    ----------
    name : str
        The name that :func:`load_dataset` accepts.
    description : str
        A one-line description.
    n_rows : int
        Number of samples.
    n_features : int
        Number of features (the target excluded).
    n_classes : int
        Number of distinct class labels.

    Examples
    --------
    >>> from optitree.datasets import DatasetInfo
    >>> info = DatasetInfo("toy", "a toy", 4, 2, 2)
    >>> info.n_rows
    4
    >>> name, description, n_rows, n_features, n_classes = info
    """

    name: str
    description: str
    n_rows: int
    n_features: int
    n_classes: int


# name -> (info, loader). Sizes are facts about the shipped files; the tests check them.
_ENTRIES: dict[str, tuple[DatasetInfo, Callable]] = {}


def _add(name: str, description: str, shape: tuple[int, int, int], loader: Callable) -> None:
    _ENTRIES[name] = (DatasetInfo(name, description, *shape), loader)


for _k, _shape, _concept in (
    (1, (124, 6, 2), "(a1 = a2) or (a5 = 1)"),
    (2, (169, 6, 2), "exactly two attributes take their first value"),
    (3, (122, 6, 2), "(a5 = 3 and a4 = 1) or (a5 != 4 and a2 != 3), 5% label noise"),
):
    _add(
        f"monks-{_k}",
        f"MONK's problem {_k}, training split: {_concept}",
        _shape,
        partial(load_monks, _k, "train"),
    )
_add("tic-tac-toe", "Tic-Tac-Toe endgame boards: does x win?", (958, 9, 2), load_tic_tac_toe)
_add("car", "Car evaluation: acceptability from price and comfort", (1728, 6, 4), load_car)
_add(
    "balance-scale", "Balance scale: tips left, right or balanced", (625, 4, 3), load_balance_scale
)
_add("zoo", "Zoo animals: type from 16 attributes", (101, 16, 7), load_zoo)
_add(
    "lymphography",
    "Lymphography: diagnosis from lymph node images",
    (148, 18, 4),
    load_lymphography,
)
_add("nursery", "Nursery school applications: ranking", (12960, 8, 5), load_nursery)
_add("mushroom", "Mushrooms: edible or poisonous", (8124, 22, 2), load_mushroom)
_add("kr-vs-kp", "Chess endgame KRKPA7: can white win?", (3196, 36, 2), load_kr_vs_kp)

for _name, _shape, _what in (
    ("anneal", (812, 93, 2), "steel annealing"),
    ("audiology", (216, 148, 2), "audiology diagnoses"),
    ("australian-credit", (653, 125, 2), "Australian credit approval"),
    ("german-credit", (1000, 112, 2), "German credit risk"),
    ("heart-cleveland", (296, 95, 2), "Cleveland heart disease"),
    ("hepatitis", (137, 68, 2), "hepatitis survival"),
    ("hypothyroid", (3247, 88, 2), "thyroid disease"),
    ("kr-vs-kp", (3196, 73, 2), "chess endgame KRKPA7"),
    ("lymph", (148, 68, 2), "lymphography"),
    ("mushroom", (8124, 119, 2), "mushroom edibility"),
    ("primary-tumor", (336, 31, 2), "primary tumour site"),
    ("soybean", (630, 50, 2), "soybean diseases"),
    ("splice-1", (3190, 287, 2), "DNA splice junctions"),
    ("tic-tac-toe", (958, 27, 2), "Tic-Tac-Toe endgames"),
    ("vote", (435, 48, 2), "1984 US congressional votes"),
    ("zoo-1", (101, 36, 2), "zoo animals"),
):
    _add(
        f"cp4im/{_name}",
        f"CP4IM binarised {_what} (0/1 features)",
        _shape,
        partial(load_cp4im, _name),
    )


def list_datasets() -> list[DatasetInfo]:
    """List every bundled dataset that :func:`load_dataset` can load.

    Returns
    -------
    list of DatasetInfo
        One ``(name, description, n_rows, n_features, n_classes)`` entry per dataset: first the
        categorical UCI datasets, then the CP4IM datasets (named ``"cp4im/<name>"``).

    Examples
    --------
    >>> from optitree.datasets import list_datasets
    >>> entries = list_datasets()
    >>> entries[0].name, entries[0].n_rows, entries[0].n_features, entries[0].n_classes
    ('monks-1', 124, 6, 2)
    >>> "cp4im/anneal" in [entry.name for entry in entries]
    True
    """
    return [info for info, _ in _ENTRIES.values()]


def load_dataset(name: str, *, return_X_y: bool = False):
    """Load a bundled dataset by its registry name.

    Parameters
    ----------
    name : str
        A name from :func:`list_datasets`: ``"monks-1"``, ``"monks-2"``, ``"monks-3"``,
        ``"tic-tac-toe"``, ``"car"``, ``"balance-scale"``, ``"zoo"``, ``"lymphography"``,
        ``"nursery"``, ``"mushroom"``, ``"kr-vs-kp"`` or ``"cp4im/<name>"`` for one of
        :func:`cp4im_names`. The monks names load the training split; use :func:`load_monks`
        for the test split.
    return_X_y : bool, default=False
        Return ``(data, target)`` instead of a Bunch.

    Returns
    -------
    Bunch or tuple
        What the dataset's own loader returns.

    Raises
    ------
    DataError
        If ``name`` is unknown; the message lists the valid names.

    Examples
    --------
    >>> from optitree.datasets import load_dataset
    >>> X, y = load_dataset("car", return_X_y=True)
    >>> X.shape
    (1728, 6)
    >>> load_dataset("cp4im/vote").data.shape
    (435, 48)
    """
    check_name("name", name)
    if name not in _ENTRIES:
        raise unknown_name_error("dataset", name, _ENTRIES)
    _, loader = _ENTRIES[name]
    return loader(return_X_y=return_X_y)
