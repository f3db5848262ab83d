"""Loaders for the categorical UCI datasets shipped with optitree.

Each loader parses the raw UCI file (gzip-compressed in ``data/``) into a frame of pandas
``category`` columns. The categories of a column are its raw values in sorted order (strings
alphabetically, integers numerically), optionally renamed to the readable value names that the
dataset's ``.names`` file gives; the order never changes with renaming, so ``.cat.codes`` of a
column equals an ordinal encoding of the raw file.
"""

from __future__ import annotations

import textwrap
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache

import numpy as np
import pandas as pd

from ..exceptions import InvalidParameterError
from ._common import (
    UCI_SOURCE,
    categorical_column,
    class_counts_text,
    make_bunch,
    read_table,
    read_text,
)

__all__ = [
    "load_balance_scale",
    "load_car",
    "load_kr_vs_kp",
    "load_lymphography",
    "load_monks",
    "load_mushroom",
    "load_nursery",
    "load_tic_tac_toe",
    "load_zoo",
]


@dataclass(frozen=True)
class _UciSpec:
    """How to read one raw UCI file: its columns, which one is the label, value names."""

    title: str
    names_file: str
    sep: str | None
    columns: tuple[str, ...]  # every raw column, in file order
    target: str
    ident: str | None = None  # identifier column, returned as ``object_names``
    int_features: bool = False
    int_target: bool = False
    labels: Mapping[str, Mapping] = field(default_factory=dict)
    domains: Mapping[str, tuple] = field(default_factory=dict)
    notes: tuple[str, ...] = ()

    @property
    def features(self) -> list[str]:
        return [c for c in self.columns if c not in (self.target, self.ident)]


_NO_YES = {1: "no", 2: "yes"}

_MUSHROOM_VALUES = {
    "cap-shape": "b=bell c=conical x=convex f=flat k=knobbed s=sunken",
    "cap-surface": "f=fibrous g=grooves y=scaly s=smooth",
    "cap-color": "n=brown b=buff c=cinnamon g=gray r=green p=pink u=purple e=red w=white y=yellow",
    "bruises": "t=bruises f=no",
    "odor": "a=almond l=anise c=creosote y=fishy f=foul m=musty n=none p=pungent s=spicy",
    "gill-attachment": "a=attached d=descending f=free n=notched",
    "gill-spacing": "c=close w=crowded d=distant",
    "gill-size": "b=broad n=narrow",
    "gill-color": (
        "k=black n=brown b=buff h=chocolate g=gray r=green o=orange p=pink u=purple e=red "
        "w=white y=yellow"
    ),
    "stalk-shape": "e=enlarging t=tapering",
    "stalk-root": "b=bulbous c=club u=cup e=equal z=rhizomorphs r=rooted ?=missing",
    "stalk-surface-above-ring": "f=fibrous y=scaly k=silky s=smooth",
    "stalk-surface-below-ring": "f=fibrous y=scaly k=silky s=smooth",
    "stalk-color-above-ring": (
        "n=brown b=buff c=cinnamon g=gray o=orange p=pink e=red w=white y=yellow"
    ),
    "stalk-color-below-ring": (
        "n=brown b=buff c=cinnamon g=gray o=orange p=pink e=red w=white y=yellow"
    ),
    "veil-type": "p=partial u=universal",
    "veil-color": "n=brown o=orange w=white y=yellow",
    "ring-number": "n=none o=one t=two",
    "ring-type": "c=cobwebby e=evanescent f=flaring l=large n=none p=pendant s=sheathing z=zone",
    "spore-print-color": (
        "k=black n=brown b=buff h=chocolate r=green o=orange u=purple w=white y=yellow"
    ),
    "population": "a=abundant c=clustered n=numerous s=scattered v=several y=solitary",
    "habitat": "g=grasses l=leaves m=meadows p=paths u=urban w=waste d=woods",
    "class": "e=edible p=poisonous",
}


def _code_table(text: str) -> dict:
    """Turn ``"b=bell c=conical"`` into ``{"b": "bell", "c": "conical"}``."""
    return dict(item.split("=", 1) for item in text.split())


_SORTED_NOTE = (
    "Every feature is a pandas 'category' column. Its categories are the distinct raw values of "
    "the file in sorted order (strings alphabetically, integers numerically){renamed}, so the "
    "category codes are the ordinal codes of the raw values and carry no semantic order."
)

_MONKS_DOMAINS = {
    "a1": (1, 2, 3),
    "a2": (1, 2, 3),
    "a3": (1, 2),
    "a4": (1, 2, 3),
    "a5": (1, 2, 3, 4),
    "a6": (1, 2),
}

_SPECS: dict[str, _UciSpec] = {
    "monks": _UciSpec(
        title="MONK's problems",
        names_file="monks.names",
        sep=None,
        columns=("class", "a1", "a2", "a3", "a4", "a5", "a6", "id"),
        target="class",
        ident="id",
        int_features=True,
        int_target=True,
        domains=_MONKS_DOMAINS,
        notes=(
            "The categories of a1..a6 are the full attribute domains of monks.names, so the "
            "train and test splits of a problem have identical column dtypes.",
            "The instance identifier of the raw file (e.g. 'data_5') is not a feature; it is "
            "returned as ``object_names``.",
        ),
    ),
    "tic-tac-toe": _UciSpec(
        title="Tic-Tac-Toe endgame",
        names_file="tic-tac-toe.names",
        sep=",",
        columns=(
            "top-left-square",
            "top-middle-square",
            "top-right-square",
            "middle-left-square",
            "middle-middle-square",
            "middle-right-square",
            "bottom-left-square",
            "bottom-middle-square",
            "bottom-right-square",
            "class",
        ),
        target="class",
        notes=(
            "Cell values: 'x' (taken by x), 'o' (taken by o), 'b' (blank). The class is "
            "'positive' when x has three in a row.",
        ),
    ),
    "car": _UciSpec(
        title="Car evaluation",
        names_file="car.names",
        sep=",",
        columns=("buying", "maint", "doors", "persons", "lug_boot", "safety", "class"),
        target="class",
        notes=(
            "Values are the strings of the raw file ('vhigh', '5more', ...); sorted "
            "alphabetically, e.g. buying has categories high, low, med, vhigh.",
        ),
    ),
    "balance-scale": _UciSpec(
        title="Balance scale weight and distance",
        names_file="balance-scale.names",
        sep=",",
        columns=("class", "left-weight", "left-distance", "right-weight", "right-distance"),
        target="class",
        int_features=True,
        notes=(
            "The four features are integers 1..5; the class is 'L' (tips left), 'B' "
            "(balanced) or 'R' (tips right). The raw file has the class in its first column.",
        ),
    ),
    "zoo": _UciSpec(
        title="Zoo",
        names_file="zoo.names",
        sep=",",
        columns=(
            "animal_name",
            "hair",
            "feathers",
            "eggs",
            "milk",
            "airborne",
            "aquatic",
            "predator",
            "toothed",
            "backbone",
            "breathes",
            "venomous",
            "fins",
            "legs",
            "tail",
            "domestic",
            "catsize",
            "type",
        ),
        target="type",
        ident="animal_name",
        int_features=True,
        int_target=True,
        notes=(
            "The animal name is not a feature; it is returned as ``object_names`` (not unique: "
            "'frog' appears twice). The 15 boolean features are 0/1, legs takes the values "
            "0, 2, 4, 5, 6, 8, and the class 'type' is an integer 1..7.",
        ),
    ),
    "lymphography": _UciSpec(
        title="Lymphography",
        names_file="lymphography.names",
        sep=",",
        columns=(
            "class",
            "lymphatics",
            "block_of_affere",
            "bl_of_lymph_c",
            "bl_of_lymph_s",
            "by_pass",
            "extravasates",
            "regeneration_of",
            "early_uptake_in",
            "lym_nodes_dimin",
            "lym_nodes_enlar",
            "changes_in_lym",
            "defect_in_node",
            "changes_in_node",
            "changes_in_stru",
            "special_forms",
            "dislocation_of",
            "exclusion_of_no",
            "no_of_nodes_in",
        ),
        target="class",
        int_features=True,
        int_target=True,
        labels={
            "class": {1: "normal find", 2: "metastases", 3: "malign lymph", 4: "fibrosis"},
            "lymphatics": {1: "normal", 2: "arched", 3: "deformed", 4: "displaced"},
            "block_of_affere": _NO_YES,
            "bl_of_lymph_c": _NO_YES,
            "bl_of_lymph_s": _NO_YES,
            "by_pass": _NO_YES,
            "extravasates": _NO_YES,
            "regeneration_of": _NO_YES,
            "early_uptake_in": _NO_YES,
            "changes_in_lym": {1: "bean", 2: "oval", 3: "round"},
            "defect_in_node": {1: "no", 2: "lacunar", 3: "lac. marginal", 4: "lac. central"},
            "changes_in_node": {1: "no", 2: "lacunar", 3: "lac. margin", 4: "lac. central"},
            "changes_in_stru": {
                1: "no",
                2: "grainy",
                3: "drop-like",
                4: "coarse",
                5: "diluted",
                6: "reticular",
                7: "stripped",
                8: "faint",
            },
            "special_forms": {1: "no", 2: "chalices", 3: "vesicles"},
            "dislocation_of": _NO_YES,
            "exclusion_of_no": _NO_YES,
            "no_of_nodes_in": {
                1: "0-9",
                2: "10-19",
                3: "20-29",
                4: "30-39",
                5: "40-49",
                6: "50-59",
                7: "60-69",
                8: ">=70",
            },
        },
        notes=(
            "The raw file codes every value as its 1-based position in the value list of "
            "lymphography.names; those codes are replaced by the value names (the class too), "
            "keeping the code order. lym_nodes_dimin and lym_nodes_enlar keep their integer "
            "codes. Column names are the abbreviated attribute names of the .names file.",
        ),
    ),
    "nursery": _UciSpec(
        title="Nursery",
        names_file="nursery.names",
        sep=",",
        columns=(
            "parents",
            "has_nurs",
            "form",
            "children",
            "housing",
            "finance",
            "social",
            "health",
            "class",
        ),
        target="class",
        notes=(
            "The class 'recommend' has only 2 rows. The blank line at the end of the raw file "
            "is ignored.",
        ),
    ),
    "mushroom": _UciSpec(
        title="Mushroom (Agaricus and Lepiota)",
        names_file="agaricus-lepiota.names",
        sep=",",
        columns=("class", *(c for c in _MUSHROOM_VALUES if c != "class")),
        target="class",
        labels={name: _code_table(text) for name, text in _MUSHROOM_VALUES.items()},
        notes=(
            "The single-letter codes of the raw file are replaced by the value names of "
            "agaricus-lepiota.names (the class too: 'edible', 'poisonous'); categories stay in "
            "the sorted order of the letter codes.",
            "stalk-root is unknown for 2480 rows (written '?' in the raw file). These rows are "
            "kept, and '?' is an ordinary category named 'missing' (the first category, since "
            "'?' sorts before the letters).",
            "Only observed values become categories: veil-type has a single category "
            "('partial') and gill-attachment two ('attached', 'free').",
        ),
    ),
    "kr-vs-kp": _UciSpec(
        title="Chess endgame: king and rook versus king and pawn on a7 (kr-vs-kp)",
        names_file="kr-vs-kp.names",
        sep=",",
        columns=(
            *"bkblk bknwy bkon8 bkona bkspr bkxbq bkxcr bkxwp blxwp bxqsq cntxt dsopp".split(),
            *"dwipd hdchk katri mulch qxmsq r2ar8 reskd reskr rimmx rkxwp rxmsq simpl".split(),
            *"skach skewr skrxp spcop stlmt thrsk wkcti wkna8 wknck wkovl wkpos wtoeg".split(),
            "class",
        ),
        target="class",
        notes=(
            "Values keep the single-letter codes of the raw file (the .names file does not "
            "explain them). The class is 'won' (white can win) or 'nowin'. The blank lines at "
            "the end of the raw file are ignored.",
        ),
    ),
}


def _convert(values: np.ndarray, as_int: bool) -> np.ndarray:
    return values.astype(np.int64) if as_int else values


@cache
def _parsed(key: str, data_file: str):
    """Parse one raw file into (data, target, object_names, descr); cached, never handed out."""
    spec = _SPECS[key]
    table = read_table(data_file, spec.sep)
    col = {name: table[:, j] for j, name in enumerate(spec.columns)}
    data = pd.DataFrame(
        {
            name: categorical_column(
                _convert(col[name], spec.int_features),
                domain=spec.domains.get(name),
                labels=spec.labels.get(name),
            )
            for name in spec.features
        }
    )
    raw_target = _convert(col[spec.target], spec.int_target).tolist()
    if spec.target in spec.labels:
        raw_target = [spec.labels[spec.target][v] for v in raw_target]
    target = pd.Series(raw_target, name=spec.target)
    object_names = None if spec.ident is None else np.array(col[spec.ident].tolist(), dtype=object)
    descr = _describe(spec, data_file, data, target)
    return data, target, object_names, descr


def _describe(spec: _UciSpec, data_file: str, data: pd.DataFrame, target: pd.Series) -> str:
    title = spec.title
    if spec.names_file == "monks.names":
        problem, split = data_file.split(".")
        title = f"MONK's problem {problem[-1]}, {split} split"
    renamed = ", renamed to readable value names where noted" if spec.labels else ""
    notes = [_SORTED_NOTE.format(renamed=renamed), *spec.notes]
    lines = [
        title,
        "=" * len(title),
        "",
        f"{data.shape[0]} rows, {data.shape[1]} categorical features, "
        f"{target.nunique()} classes (target column {spec.target!r}).",
        f"Class counts: {class_counts_text(target)}.",
        f"Raw file: {data_file} (shipped gzip-compressed).",
        "",
        "Notes",
        "-----",
        *(
            textwrap.fill(note, width=79, initial_indent="- ", subsequent_indent="  ")
            for note in notes
        ),
        "",
        UCI_SOURCE,
        "",
        f"Original description ({spec.names_file})",
        "-" * (len(spec.names_file) + 23),
        read_text(spec.names_file).rstrip(),
        "",
    ]
    return "\n".join(lines)


def _load(key: str, data_file: str, return_X_y: bool):
    data, target, object_names, descr = _parsed(key, data_file)
    extra = None if object_names is None else {"object_names": object_names}
    return make_bunch(data, target, descr, return_X_y=return_X_y, extra=extra)


def load_monks(problem: int = 1, split: str = "train", *, return_X_y: bool = False):
    """Load one of the three MONK's problems (6 categorical features, 2 classes).

    Parameters
    ----------
    problem : {1, 2, 3}, default=1
        Which MONK's problem. Problem 3 has 5% class noise in its training split.
    split : {"train", "test"}, default="train"
        The training split (124, 169 or 122 rows) or the test split (all 432 points).
    return_X_y : bool, default=False
        Return ``(data, target)`` instead of a Bunch.

    Returns
    -------
    Bunch or tuple
        A :class:`sklearn.utils.Bunch` with ``data``, ``target``, ``frame``, ``feature_names``,
        ``target_names`` and ``DESCR`` (described in :mod:`optitree.datasets`), plus
        ``object_names`` (the instance identifiers of the raw file); or ``(data, target)`` when
        ``return_X_y=True``.

    Examples
    --------
    >>> from optitree.datasets import load_monks
    >>> bunch = load_monks(1)
    >>> bunch.data.shape
    (124, 6)
    >>> bunch.target.value_counts().sort_index().tolist()
    [62, 62]
    >>> X, y = load_monks(3, split="test", return_X_y=True)
    >>> X.shape
    (432, 6)
    """
    if isinstance(problem, bool) or problem not in (1, 2, 3):
        raise InvalidParameterError(f"problem must be 1, 2 or 3, got {problem!r}")
    if split not in ("train", "test"):
        raise InvalidParameterError(f"split must be 'train' or 'test', got {split!r}")
    return _load("monks", f"monks-{int(problem)}.{split}", return_X_y)


def load_tic_tac_toe(*, return_X_y: bool = False):
    """Load the Tic-Tac-Toe endgame data: 958 boards, 9 cells (x/o/b), 2 classes.

    Parameters
    ----------
    return_X_y : bool, default=False
        Return ``(data, target)`` instead of a Bunch.

    Returns
    -------
    Bunch or tuple
        A :class:`sklearn.utils.Bunch` with ``data``, ``target``, ``frame``, ``feature_names``,
        ``target_names`` and ``DESCR`` (described in :mod:`optitree.datasets`); or
        ``(data, target)`` when ``return_X_y=True``.

    Examples
    --------
    >>> from optitree.datasets import load_tic_tac_toe
    >>> bunch = load_tic_tac_toe()
    >>> bunch.data.shape
    (958, 9)
    >>> bunch.data["middle-middle-square"].cat.categories.tolist()
    ['b', 'o', 'x']
    >>> bunch.target_names.tolist()
    ['negative', 'positive']
    """
    return _load("tic-tac-toe", "tic-tac-toe.data", return_X_y)


def load_car(*, return_X_y: bool = False):
    """Load the Car evaluation data: 1728 rows, 6 categorical features, 4 classes.

    Parameters
    ----------
    return_X_y : bool, default=False
        Return ``(data, target)`` instead of a Bunch.

    Returns
    -------
    Bunch or tuple
        A :class:`sklearn.utils.Bunch` with ``data``, ``target``, ``frame``, ``feature_names``,
        ``target_names`` and ``DESCR`` (described in :mod:`optitree.datasets`); or
        ``(data, target)`` when ``return_X_y=True``.

    Examples
    --------
    >>> from optitree.datasets import load_car
    >>> bunch = load_car()
    >>> bunch.feature_names
    ['buying', 'maint', 'doors', 'persons', 'lug_boot', 'safety']
    >>> bunch.target_names.tolist()
    ['acc', 'good', 'unacc', 'vgood']
    """
    return _load("car", "car.data", return_X_y)


def load_balance_scale(*, return_X_y: bool = False):
    """Load the Balance scale data: 625 rows, 4 features with values 1..5, 3 classes.

    Parameters
    ----------
    return_X_y : bool, default=False
        Return ``(data, target)`` instead of a Bunch.

    Returns
    -------
    Bunch or tuple
        A :class:`sklearn.utils.Bunch` with ``data``, ``target``, ``frame``, ``feature_names``,
        ``target_names`` and ``DESCR`` (described in :mod:`optitree.datasets`); or
        ``(data, target)`` when ``return_X_y=True``.

    Examples
    --------
    >>> from optitree.datasets import load_balance_scale
    >>> X, y = load_balance_scale(return_X_y=True)
    >>> X.shape
    (625, 4)
    >>> y.value_counts().sort_index().tolist()
    [49, 288, 288]
    """
    return _load("balance-scale", "balance-scale.data", return_X_y)


def load_zoo(*, return_X_y: bool = False):
    """Load the Zoo data: 101 animals, 16 features, 7 classes (``type`` 1..7).

    The animal name is not a feature; it is kept in ``object_names``.

    Parameters
    ----------
    return_X_y : bool, default=False
        Return ``(data, target)`` instead of a Bunch.

    Returns
    -------
    Bunch or tuple
        A :class:`sklearn.utils.Bunch` with ``data``, ``target``, ``frame``, ``feature_names``,
        ``target_names`` and ``DESCR`` (described in :mod:`optitree.datasets`), plus
        ``object_names`` (the animal names); or ``(data, target)`` when ``return_X_y=True``.

    Examples
    --------
    >>> from optitree.datasets import load_zoo
    >>> bunch = load_zoo()
    >>> bunch.data.shape
    (101, 16)
    >>> bunch.object_names[0]
    'aardvark'
    >>> bunch.data["legs"].cat.categories.tolist()
    [0, 2, 4, 5, 6, 8]
    """
    return _load("zoo", "zoo.data", return_X_y)


def load_lymphography(*, return_X_y: bool = False):
    """Load the Lymphography data: 148 patients, 18 categorical features, 4 classes.

    Value codes are replaced by the value names of the ``.names`` file.

    Parameters
    ----------
    return_X_y : bool, default=False
        Return ``(data, target)`` instead of a Bunch.

    Returns
    -------
    Bunch or tuple
        A :class:`sklearn.utils.Bunch` with ``data``, ``target``, ``frame``, ``feature_names``,
        ``target_names`` and ``DESCR`` (described in :mod:`optitree.datasets`); or
        ``(data, target)`` when ``return_X_y=True``.

    Examples
    --------
    >>> from optitree.datasets import load_lymphography
    >>> bunch = load_lymphography()
    >>> bunch.data.shape
    (148, 18)
    >>> bunch.data["lymphatics"].cat.categories.tolist()
    ['normal', 'arched', 'deformed', 'displaced']
    >>> int(bunch.target.value_counts()["metastases"])
    81
    """
    return _load("lymphography", "lymphography.data", return_X_y)


def load_nursery(*, return_X_y: bool = False):
    """Load the Nursery data: 12960 applications, 8 categorical features, 5 classes.

    Parameters
    ----------
    return_X_y : bool, default=False
        Return ``(data, target)`` instead of a Bunch.

    Returns
    -------
    Bunch or tuple
        A :class:`sklearn.utils.Bunch` with ``data``, ``target``, ``frame``, ``feature_names``,
        ``target_names`` and ``DESCR`` (described in :mod:`optitree.datasets`); or
        ``(data, target)`` when ``return_X_y=True``.

    Examples
    --------
    >>> from optitree.datasets import load_nursery
    >>> X, y = load_nursery(return_X_y=True)
    >>> X.shape
    (12960, 8)
    >>> y.nunique()
    5
    """
    return _load("nursery", "nursery.data", return_X_y)


def load_mushroom(*, return_X_y: bool = False):
    """Load the Mushroom data: 8124 mushrooms, 22 categorical features, 2 classes.

    Value letters are replaced by the value names of the ``.names`` file. The 2480 unknown
    ``stalk-root`` values ('?') are kept as their own category, ``"missing"``; no row is
    dropped.

    Parameters
    ----------
    return_X_y : bool, default=False
        Return ``(data, target)`` instead of a Bunch.

    Returns
    -------
    Bunch or tuple
        A :class:`sklearn.utils.Bunch` with ``data``, ``target``, ``frame``, ``feature_names``,
        ``target_names`` and ``DESCR`` (described in :mod:`optitree.datasets`); or
        ``(data, target)`` when ``return_X_y=True``.

    Examples
    --------
    >>> from optitree.datasets import load_mushroom
    >>> bunch = load_mushroom()
    >>> bunch.data.shape
    (8124, 22)
    >>> int((bunch.data["stalk-root"] == "missing").sum())
    2480
    >>> bunch.target_names.tolist()
    ['edible', 'poisonous']
    """
    return _load("mushroom", "agaricus-lepiota.data", return_X_y)


def load_kr_vs_kp(*, return_X_y: bool = False):
    """Load the chess endgame King+Rook versus King+Pawn on a7: 3196 rows, 36 features, 2 classes.

    Parameters
    ----------
    return_X_y : bool, default=False
        Return ``(data, target)`` instead of a Bunch.

    Returns
    -------
    Bunch or tuple
        A :class:`sklearn.utils.Bunch` with ``data``, ``target``, ``frame``, ``feature_names``,
        ``target_names`` and ``DESCR`` (described in :mod:`optitree.datasets`); or
        ``(data, target)`` when ``return_X_y=True``.

    Examples
    --------
    >>> from optitree.datasets import load_kr_vs_kp
    >>> X, y = load_kr_vs_kp(return_X_y=True)
    >>> X.shape
    (3196, 36)
    >>> y.value_counts().sort_index().tolist()
    [1527, 1669]
    """
    return _load("kr-vs-kp", "kr-vs-kp.data", return_X_y)
