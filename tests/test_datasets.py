"""Tests of optitree.datasets: shapes, dtypes, class counts, copies, errors, exact encodings."""

from __future__ import annotations

import gzip
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import optitree.datasets as ds
from optitree.exceptions import DataError, InvalidParameterError

BRANCHES_DIR = Path(__file__).parent / "data" / "branches-preprocessed"
CP4IM_DIR = Path(ds.__file__).parent / "data" / "cp4im"

# name -> (loader, n_rows, n_features, target name, class counts in sorted label order)
UCI = {
    "monks-1": (lambda **kw: ds.load_monks(1, **kw), 124, 6, "class", [62, 62]),
    "monks-2": (lambda **kw: ds.load_monks(2, **kw), 169, 6, "class", [105, 64]),
    "monks-3": (lambda **kw: ds.load_monks(3, **kw), 122, 6, "class", [62, 60]),
    "monks-1-test": (lambda **kw: ds.load_monks(1, "test", **kw), 432, 6, "class", [216, 216]),
    "tic-tac-toe": (ds.load_tic_tac_toe, 958, 9, "class", [332, 626]),
    "car": (ds.load_car, 1728, 6, "class", [384, 69, 1210, 65]),
    "balance-scale": (ds.load_balance_scale, 625, 4, "class", [49, 288, 288]),
    "zoo": (ds.load_zoo, 101, 16, "type", [41, 20, 5, 13, 4, 8, 10]),
    "lymphography": (ds.load_lymphography, 148, 18, "class", [4, 61, 81, 2]),
    "nursery": (ds.load_nursery, 12960, 8, "class", [4320, 4266, 2, 4044, 328]),
    "mushroom": (ds.load_mushroom, 8124, 22, "class", [4208, 3916]),
    "kr-vs-kp": (ds.load_kr_vs_kp, 3196, 36, "class", [1527, 1669]),
}

# UCI loader -> (Branches ordinal file, are its feature columns reversed?)
ORDINAL_TWIN = {
    "monks-1": ("monk1-o", False),
    "monks-2": ("monk2-o", False),
    "monks-3": ("monk3-o", False),
    "tic-tac-toe": ("tictactoe-o", False),
    "car": ("careval-o", False),
    "nursery": ("nursery-o", False),
    "zoo": ("zoo-o", False),
    "mushroom": ("mushroom-o", True),
    "lymphography": ("lymph-o", True),
    "balance-scale": ("balance-o", True),
}


def read_reference(name: str) -> str:
    with gzip.open(BRANCHES_DIR / f"{name}.txt.gz", "rt", encoding="ascii") as handle:
        return handle.read()


@pytest.mark.parametrize("name", list(UCI))
def test_uci_loader_shape_dtypes_and_classes(name):
    loader, n_rows, n_features, target_name, counts = UCI[name]
    bunch = loader()
    assert set(bunch) >= {"data", "target", "frame", "feature_names", "target_names", "DESCR"}
    assert bunch.data.shape == (n_rows, n_features)
    assert all(isinstance(dtype, pd.CategoricalDtype) for dtype in bunch.data.dtypes)
    assert not bunch.data.isna().any().any()
    assert bunch.feature_names == list(bunch.data.columns)
    assert target_name not in bunch.feature_names
    assert bunch.target.name == target_name
    assert len(bunch.target) == n_rows and not bunch.target.isna().any()
    assert bunch.target_names.tolist() == sorted(bunch.target.unique().tolist())
    assert bunch.target.value_counts().reindex(bunch.target_names).tolist() == counts
    assert list(bunch.frame.columns) == [*bunch.feature_names, target_name]
    # DataFrame.equals also compares dtypes (categories included) and is much faster than
    # pd.testing.assert_frame_equal on category columns.
    assert bunch.frame[bunch.feature_names].equals(bunch.data)
    assert bunch.frame[target_name].equals(bunch.target)
    assert isinstance(bunch.DESCR, str) and f"{n_rows} rows" in bunch.DESCR
    assert "CC BY 4.0" in bunch.DESCR


@pytest.mark.parametrize("name", list(UCI))
def test_uci_return_X_y(name):
    loader = UCI[name][0]
    X, y = loader(return_X_y=True)
    bunch = loader()
    assert isinstance(X, pd.DataFrame) and isinstance(y, pd.Series)
    assert X.equals(bunch.data) and y.equals(bunch.target)


@pytest.mark.parametrize("name", list(ORDINAL_TWIN))
def test_category_codes_follow_sorted_raw_values(name):
    # The Branches "-o" files hold the ordinal codes of the sorted raw values, built
    # independently of the loaders; the category codes must agree with them.
    twin, reversed_features = ORDINAL_TWIN[name]
    data = UCI[name][0]().data
    codes = np.column_stack([data[c].cat.codes.to_numpy() for c in data.columns])
    ordinal = np.loadtxt(BRANCHES_DIR / f"{twin}.txt.gz", dtype=np.int64)[:, :-1]
    if reversed_features:
        ordinal = ordinal[:, ::-1]
    np.testing.assert_array_equal(codes, ordinal)


def test_raw_string_categories_are_sorted():
    for loader in (ds.load_tic_tac_toe, ds.load_car, ds.load_nursery, ds.load_kr_vs_kp):
        for _, column in loader().data.items():
            assert list(column.cat.categories) == sorted(column.cat.categories)


def test_monks_columns_and_splits():
    train, test = ds.load_monks(2), ds.load_monks(2, split="test")
    assert train.feature_names == ["a1", "a2", "a3", "a4", "a5", "a6"]
    assert train.data.dtypes.tolist() == test.data.dtypes.tolist()
    assert train.data["a5"].cat.categories.tolist() == [1, 2, 3, 4]
    assert train.object_names[0].startswith("data_") and len(train.object_names) == 169
    assert ds.load_monks(3, "test").data.shape == (432, 6)
    assert "MONK's problem 2, test split" in test.DESCR


@pytest.mark.parametrize(
    ("kwargs", "fragment"),
    [
        ({"problem": 4}, "problem must be 1, 2 or 3"),
        ({"problem": True}, "problem must be 1, 2 or 3"),
        ({"problem": "1"}, "problem must be 1, 2 or 3"),
        ({"split": "validation"}, "split must be 'train' or 'test'"),
        ({"return_X_y": "yes"}, "return_X_y must be True or False"),
    ],
)
def test_monks_rejects_bad_parameters(kwargs, fragment):
    with pytest.raises(InvalidParameterError, match=fragment):
        ds.load_monks(**kwargs)


def test_tic_tac_toe_cells():
    bunch = ds.load_tic_tac_toe()
    assert bunch.feature_names[0] == "top-left-square"
    assert bunch.feature_names[-1] == "bottom-right-square"
    for _, column in bunch.data.items():
        assert column.cat.categories.tolist() == ["b", "o", "x"]


def test_car_columns():
    bunch = ds.load_car()
    assert bunch.feature_names == ["buying", "maint", "doors", "persons", "lug_boot", "safety"]
    assert bunch.data["buying"].cat.categories.tolist() == ["high", "low", "med", "vhigh"]


def test_zoo_keeps_names_apart():
    bunch = ds.load_zoo()
    assert "animal_name" not in bunch.feature_names
    assert len(bunch.object_names) == 101
    assert bunch.object_names[0] == "aardvark"
    assert list(bunch.object_names).count("frog") == 2
    assert bunch.target_names.tolist() == [1, 2, 3, 4, 5, 6, 7]


def test_lymphography_value_names():
    bunch = ds.load_lymphography()
    assert bunch.data["lymphatics"].cat.categories.tolist() == [
        "normal",
        "arched",
        "deformed",
        "displaced",
    ]
    assert bunch.data["lym_nodes_dimin"].cat.categories.tolist() == [1, 2, 3]
    assert bunch.target_names.tolist() == [
        "fibrosis",
        "malign lymph",
        "metastases",
        "normal find",
    ]


def test_mushroom_keeps_missing_stalk_root():
    bunch = ds.load_mushroom()
    stalk_root = bunch.data["stalk-root"]
    assert stalk_root.cat.categories[0] == "missing"
    assert int((stalk_root == "missing").sum()) == 2480
    assert bunch.data["veil-type"].cat.categories.tolist() == ["partial"]
    assert bunch.data["odor"].cat.categories.tolist()[:2] == ["almond", "creosote"]
    assert "missing" in bunch.DESCR and "2480" in bunch.DESCR
    assert "bruises" in bunch.feature_names


def test_nursery_ignores_trailing_blank_line():
    X, y = ds.load_nursery(return_X_y=True)
    assert X.shape == (12960, 8)
    assert y.value_counts()["recommend"] == 2


def test_results_are_independent_copies():
    first = ds.load_car()
    first.data.iloc[0, 0] = "low"
    first.target.iloc[0] = "good"
    first.frame.iloc[1, 0] = "low"
    first.feature_names.append("extra")
    first.target_names[0] = "changed"
    assert first.frame.iloc[0, 0] == "vhigh"  # frame does not share memory with data
    second = ds.load_car()
    assert second.data.iloc[0, 0] == "vhigh"
    assert second.data.iloc[1, 0] == "vhigh"
    assert second.target.iloc[0] == "unacc"
    assert second.feature_names[-1] == "safety"
    assert second.target_names[0] == "acc"

    zoo = ds.load_zoo()
    zoo.object_names[0] = "changed"
    assert ds.load_zoo().object_names[0] == "aardvark"

    X, _ = ds.load_cp4im("vote", return_X_y=True)
    X.iloc[:, :] = 0
    assert ds.load_cp4im("vote").data.to_numpy().any()


def read_cp4im_raw(name: str) -> np.ndarray:
    with gzip.open(CP4IM_DIR / f"{name}.txt.gz", "rt", encoding="ascii") as handle:
        rows = [line.split() for line in handle if line.strip()]
    return np.array(rows, dtype=np.int64)


@pytest.mark.parametrize("name", ds.cp4im_names())
def test_cp4im_matches_raw_file(name):
    raw = read_cp4im_raw(name)
    bunch = ds.load_cp4im(name)
    assert bunch.data.shape == (raw.shape[0], raw.shape[1] - 1)
    assert bunch.feature_names == [f"f{j}" for j in range(raw.shape[1] - 1)]
    assert (bunch.data.dtypes == np.uint8).all()
    np.testing.assert_array_equal(bunch.data.to_numpy(), raw[:, 1:])
    np.testing.assert_array_equal(bunch.target.to_numpy(), raw[:, 0])
    assert bunch.target.dtype == np.int64
    assert bunch.target_names.tolist() == [0, 1]
    assert bunch.frame.shape == (raw.shape[0], raw.shape[1])
    assert name in bunch.DESCR
    X, y = ds.load_cp4im(name, return_X_y=True)
    assert X.shape == bunch.data.shape and len(y) == raw.shape[0]


def test_cp4im_names():
    names = ds.cp4im_names()
    assert len(names) == 16 and names == sorted(names)
    assert {p.name.removesuffix(".txt.gz") for p in CP4IM_DIR.glob("*.txt.gz")} == set(names)


def test_registry_matches_loaders():
    entries = ds.list_datasets()
    names = [entry.name for entry in entries]
    assert len(names) == len(set(names)) == 11 + 16
    for expected in ["monks-1", "monks-2", "monks-3", "tic-tac-toe", "car", "balance-scale"]:
        assert expected in names
    for expected in ["zoo", "lymphography", "nursery", "mushroom", "kr-vs-kp", "cp4im/anneal"]:
        assert expected in names
    for entry in entries:
        name, description, n_rows, n_features, n_classes = entry
        assert isinstance(entry, ds.DatasetInfo) and description
        bunch = ds.load_dataset(name)
        assert bunch.data.shape == (n_rows, n_features), name
        assert bunch.target.nunique() == n_classes, name
    X, y = ds.load_dataset("mushroom", return_X_y=True)
    assert X.shape == (8124, 22) and len(y) == 8124


@pytest.mark.parametrize(
    ("call", "fragment"),
    [
        (lambda: ds.load_dataset("iris"), "unknown dataset 'iris'"),
        (lambda: ds.load_dataset("tic_tac_toe"), "Did you mean 'tic-tac-toe'"),
        (lambda: ds.load_dataset("anneal"), "cp4im/anneal"),
        (lambda: ds.load_cp4im("annealing"), "unknown CP4IM dataset 'annealing'"),
        (lambda: ds.load_cp4im("cp4im/anneal"), "Valid names: anneal, audiology"),
        (lambda: ds.load_branches_encoding("monk2-l"), "unknown Branches encoding 'monk2-l'"),
    ],
)
def test_unknown_names_raise_helpful_errors(call, fragment):
    with pytest.raises(DataError, match=fragment) as info:
        call()
    assert isinstance(info.value, ValueError)
    assert "Valid names:" in str(info.value)


def test_unknown_name_message_lists_every_dataset():
    with pytest.raises(DataError) as info:
        ds.load_dataset("nope")
    for entry in ds.list_datasets():
        assert entry.name in str(info.value)


@pytest.mark.parametrize(
    "call",
    [
        lambda: ds.load_dataset(3),
        lambda: ds.load_cp4im(None),
        lambda: ds.load_branches_encoding(["monk1"]),
    ],
)
def test_names_must_be_strings(call):
    with pytest.raises(InvalidParameterError, match="name must be a str"):
        call()


def test_branches_names_match_reference_files():
    names = ds.branches_encoding_names()
    assert len(names) == len(set(names)) == 32
    files = {p.name.removesuffix(".txt.gz") for p in BRANCHES_DIR.glob("*.txt.gz")}
    assert files == set(names)


@pytest.mark.parametrize("name", ds.branches_encoding_names())
def test_branches_encoding_is_byte_identical(name):
    matrix = ds.load_branches_encoding(name)
    assert matrix.dtype == np.int64 and matrix.ndim == 2
    assert ds.format_branches_matrix(matrix) == read_reference(name)


def test_branches_encoding_layout():
    ordinal = ds.load_branches_encoding("careval-o")
    assert ordinal.shape == (1728, 7)
    assert ordinal.max(axis=0).tolist() == [3, 3, 3, 2, 2, 2, 3]
    assert ds.load_branches_encoding("mushroom").shape == (8124, 118)
    assert ds.load_branches_encoding("mushroom-f").shape == (8124, 96)
    assert ds.load_branches_encoding("krvskp").shape == (3196, 74)
    # Fresh arrays: editing one result does not change the next.
    ordinal[:] = -1
    assert ds.load_branches_encoding("careval-o").min() == 0


def test_format_branches_matrix():
    assert ds.format_branches_matrix([[1, 0], [0, 12]]) == "1 0\n0 12\n"
    assert ds.format_branches_matrix(np.array([[True, False]])) == "1 0\n"
    assert ds.format_branches_matrix(np.zeros((0, 3), dtype=np.int64)) == ""
    with pytest.raises(DataError, match="two-dimensional"):
        ds.format_branches_matrix([1, 2, 3])
    with pytest.raises(DataError, match="must hold integers"):
        ds.format_branches_matrix(np.array([[0.5, 1.0]]))
