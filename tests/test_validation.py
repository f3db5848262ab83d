"""Tests of optitree._validation: reading, encoding and checking user data."""

from __future__ import annotations

import re
import warnings

import numpy as np
import pandas as pd
import pytest
import scipy.sparse
from sklearn.exceptions import DataConversionWarning

from optitree import BranchesClassifier, _core, _validation
from optitree._validation import (
    DataTypeError,
    EncodedInput,
    check_labels,
    check_sample_weight,
    encode_fit,
    encode_predict,
)
from optitree.exceptions import DataError, InvalidParameterError, UnseenCategoryWarning


@pytest.fixture
def mixed_frame():
    return pd.DataFrame(
        {
            "age": [30, 45, 22, 45],
            "height": [1.5, 1.75, 1.6, 1.8],
            "owner": [True, False, True, True],
            "size": pd.Categorical(["M", "S", "M", "M"], categories=["S", "M", "L"]),
            "color": ["red", "blue", "red", "green"],
        }
    )


# ----------------------------------------------------------------------------
# encode_fit: column kinds
# ----------------------------------------------------------------------------


def test_dataframe_column_kinds(mixed_frame):
    enc = encode_fit(mixed_frame)
    assert isinstance(enc, EncodedInput)
    assert enc.had_names
    assert enc.feature_names == ["age", "height", "owner", "size", "color"]
    assert enc.categories == [None, None, [False, True], ["S", "M", "L"], ["blue", "green", "red"]]
    assert enc.X.dtype == np.float64
    assert enc.X.flags.c_contiguous
    np.testing.assert_array_equal(
        enc.X,
        [
            [30, 1.5, 1, 1, 2],
            [45, 1.75, 0, 0, 0],
            [22, 1.6, 1, 1, 2],
            [45, 1.8, 1, 1, 1],
        ],
    )


def test_category_dtype_keeps_declared_order_and_unused_categories():
    df = pd.DataFrame({"grade": pd.Categorical(["b", "b"], categories=["c", "b", "a"])})
    enc = encode_fit(df)
    assert enc.categories == [["c", "b", "a"]]
    np.testing.assert_array_equal(enc.X, [[1], [1]])


def test_bool_column_always_has_both_categories():
    enc = encode_fit(pd.DataFrame({"flag": [True, True]}))
    assert enc.categories == [[False, True]]
    np.testing.assert_array_equal(enc.X, [[1], [1]])
    enc = encode_fit(np.array([[False], [False]]))
    assert enc.categories == [[False, True]]
    enc = encode_fit(pd.DataFrame({"flag": pd.array([True, False], dtype="boolean")}))
    assert enc.categories == [[False, True]]


def test_arrays_get_positional_names():
    enc = encode_fit(np.arange(6).reshape(3, 2))
    assert enc.feature_names == ["x0", "x1"]
    assert not enc.had_names
    assert enc.categories == [None, None]
    np.testing.assert_array_equal(enc.X, np.arange(6).reshape(3, 2))


def test_numpy_string_array_is_categorical_per_column():
    enc = encode_fit(np.array([["b", "x"], ["a", "x"], ["b", "y"]]))
    assert enc.categories == [["a", "b"], ["x", "y"]]
    np.testing.assert_array_equal(enc.X, [[1, 0], [0, 0], [1, 1]])


def test_nested_lists_keep_numbers_as_numbers():
    # np.asarray would turn 30 into the string "30"; the encoder must not.
    enc = encode_fit([[30, "red"], [45, "blue"]])
    assert enc.categories == [None, ["blue", "red"]]
    np.testing.assert_array_equal(enc.X, [[30, 1], [45, 0]])


def test_object_array_of_numbers_is_numeric():
    X = np.array([[1, 2.5], [3, None]], dtype=object)
    enc = encode_fit(X, allow_nan=True)
    assert enc.categories == [None, None]
    np.testing.assert_array_equal(enc.X, [[1, 2.5], [3, np.nan]])


def test_pandas_object_column_of_numbers_is_numeric_like_a_numpy_one():
    # As labels, 60 distinct floats made Branches fit a 60-leaf lookup table.
    df = pd.DataFrame(
        {
            "x": pd.Series([0.5, 1.25, None], dtype=object),
            "n": pd.Series([1, 2, 3], dtype=object),
            "b": pd.Series([True, False, True], dtype=object),
        }
    )
    enc = encode_fit(df, allow_nan=True)
    assert enc.categories == [None, None, [False, True]]
    np.testing.assert_array_equal(enc.X[:, :2], [[0.5, 1], [1.25, 2], [np.nan, 3]])
    # Listed in categorical=, its numbers are labels; so are integers no float holds exactly
    # (identifiers), as before.
    assert encode_fit(df[["n"]], categorical=["n"]).categories == [[1, 2, 3]]
    ids = pd.DataFrame({"id": pd.Series([2**60 + 1, 2**60 + 3, 5], dtype=object)})
    assert encode_fit(ids).categories == [[5, 2**60 + 1, 2**60 + 3]]
    x = pd.Series(np.linspace(-1, 1, 60), dtype=object)
    model = BranchesClassifier().fit(x.to_frame("x"), (x > 0.1).astype(int))
    assert model.tree_.get_n_leaves() == 2


def test_object_array_of_bools_is_categorical():
    enc = encode_fit(np.array([[True], [True]], dtype=object))
    assert enc.categories == [[False, True]]


def test_mixed_types_sorted_by_str_but_labels_kept():
    df = pd.DataFrame({"code": [10, "b", 2.5, "a", 10]}, dtype=object)
    enc = encode_fit(df)
    assert enc.categories == [[10, 2.5, "a", "b"]]
    assert [type(v) for v in enc.categories[0]] == [int, float, str, str]
    np.testing.assert_array_equal(enc.X[:, 0], [0, 3, 1, 2, 0])


def test_pandas_string_dtype_is_categorical():
    df = pd.DataFrame({"s": pd.array(["y", "x", "y"], dtype="string")})
    enc = encode_fit(df)
    assert enc.categories == [["x", "y"]]


def test_nullable_int_is_numeric():
    enc = encode_fit(pd.DataFrame({"n": pd.array([3, 1], dtype="Int64")}))
    assert enc.categories == [None]
    np.testing.assert_array_equal(enc.X, [[3], [1]])


def test_non_string_column_names_are_converted():
    enc = encode_fit(pd.DataFrame({0: [1, 2], 1.5: [3, 4], "c": [5, 6]}))
    assert enc.feature_names == ["0", "1.5", "c"]


@pytest.mark.parametrize(
    "categorical",
    [["age", "color"], [0, 4], [True, False, False, False, True], np.array([0, 4]), ["age", 4]],
)
def test_categorical_forces_numeric_columns(mixed_frame, categorical):
    enc = encode_fit(mixed_frame, categorical=categorical)
    assert enc.categories[0] == [22, 30, 45]
    assert all(type(v) is int for v in enc.categories[0])
    assert enc.categories[1] is None
    np.testing.assert_array_equal(enc.X[:, 0], [1, 2, 0, 2])


def test_categorical_single_name_and_float_codes():
    enc = encode_fit(np.array([[0.5], [2.0], [0.5]]), categorical="x0")
    assert enc.categories == [[0.5, 2.0]]
    np.testing.assert_array_equal(enc.X, [[0], [1], [0]])


def test_categorical_on_array_makes_mixed_column_usable():
    enc = encode_fit([[1, "a"], ["x", "b"]], categorical=[0])
    assert enc.categories == [[1, "x"], ["a", "b"]]


# ----------------------------------------------------------------------------
# encode_fit: errors
# ----------------------------------------------------------------------------


def test_1d_input_says_to_reshape():
    with pytest.raises(DataError, match=r"1-D array of shape \(3,\).*Reshape your data"):
        encode_fit(np.array([1.0, 2.0, 3.0]))
    with pytest.raises(DataError, match="Reshape your data"):
        encode_fit(pd.Series([1, 2]))


def test_scalar_and_3d_inputs():
    with pytest.raises(DataError, match="got a scalar"):
        encode_fit(3.0)
    with pytest.raises(DataError, match=r"got 3 dimensions \(shape=\(2, 2, 2\)\)"):
        encode_fit(np.zeros((2, 2, 2)))


def test_empty_inputs():
    with pytest.raises(DataError, match=r"0 sample\(s\) \(shape=\(0, 3\)\)"):
        encode_fit(np.zeros((0, 3)))
    with pytest.raises(
        DataError, match=r"0 feature\(s\) \(shape=\(12, 0\)\) while a minimum of 1 is required"
    ):
        encode_fit(np.zeros((12, 0)))
    with pytest.raises(DataError, match="0 feature"):
        encode_fit(pd.DataFrame(index=range(3)))


def test_nan_in_numeric_column_names_column_row_and_value():
    X = np.array([[1.0, 2.0], [3.0, np.nan]])
    with pytest.raises(DataError, match=r"column 'x1' holds a missing value \(nan\) at row 1.*NaN"):
        encode_fit(X)
    enc = encode_fit(X, allow_nan=True)
    assert np.isnan(enc.X[1, 1])


@pytest.mark.parametrize("value", [np.inf, -np.inf])
def test_inf_in_numeric_column_is_always_an_error(value):
    df = pd.DataFrame({"a": [1.0, 2.0], "b": [0.0, value]})
    for allow_nan in (False, True):
        with pytest.raises(DataError, match=rf"column 'b' holds {value!r} at row 1.*finite"):
            encode_fit(df, allow_nan=allow_nan)


def test_missing_nullable_int_is_reported_as_na():
    df = pd.DataFrame({"n": pd.array([1, None], dtype="Int64")})
    with pytest.raises(DataError, match=r"column 'n' holds a missing value \(<NA>\) at row 1"):
        encode_fit(df)


@pytest.mark.parametrize("missing", [None, np.nan, pd.NA])
def test_missing_in_categorical_column(missing):
    df = pd.DataFrame({"x": [1, 2, 3], "color": pd.Series(["red", "blue", missing], dtype=object)})
    with pytest.raises(DataError, match=r"column 'color' holds a missing value .* at row 2"):
        encode_fit(df)
    with pytest.raises(DataError, match="categorical columns must not contain NaN"):
        encode_fit(df, allow_nan=True)


def test_missing_in_category_and_bool_columns():
    df = pd.DataFrame({"c": pd.Categorical(["a", None])})
    with pytest.raises(DataError, match=r"column 'c' holds a missing value \(nan\) at row 1"):
        encode_fit(df)
    df = pd.DataFrame({"b": pd.array([True, None], dtype="boolean")})
    with pytest.raises(DataError, match=r"column 'b' holds a missing value \(<NA>\) at row 1"):
        encode_fit(df)


@pytest.mark.parametrize(
    "column",
    [
        pd.Series([None] * 3, dtype=object),
        pd.array([None] * 3, dtype="string"),
        pd.Series([np.nan] * 3),
    ],
)
def test_a_column_of_nothing_but_missing_values_is_named(column):
    # Every code missing and no label at all: this raised an IndexError.
    df = pd.DataFrame({"a": column, "b": [1.0, 2.0, 3.0]})
    kwargs = {"categorical": ["a"]} if isinstance(column, pd.Series) else {}
    with pytest.raises(DataError, match=r"column 'a' holds a missing value .* at row 0"):
        encode_fit(df, **kwargs)


def test_missing_in_forced_categorical_numeric_column():
    with pytest.raises(DataError, match=r"column 'x0' holds a missing value \(nan\) at row 1"):
        encode_fit(np.array([[1.0], [np.nan]]), categorical=[0])
    with pytest.raises(DataError, match=r"column 'x0' holds inf at row 1; numbers used as"):
        encode_fit(np.array([[1.0], [np.inf]]), categorical=[0])


def test_row_label_of_a_dataframe_index_is_shown():
    df = pd.DataFrame({"v": [1.0, np.nan]}, index=["first", "second"])
    with pytest.raises(DataError, match=r"at row 1 \(index 'second'\)"):
        encode_fit(df)


def test_strings_among_numbers_in_an_array():
    X = np.array([[1.0, 2.0], [3.0, "abc"]], dtype=object)
    with pytest.raises(
        DataError,
        match=r"column 'x1' mixes numbers and other values: row 0 holds the number 2.0 but "
        r"row 1 holds 'abc' \(str\).*categorical=\['x1'\]",
    ):
        encode_fit(X)


def test_unhashable_cell_is_a_type_error():
    X = np.array([[1.0], [{"a": 1}]], dtype=object)
    with pytest.raises(DataTypeError, match=r"column 'x0' holds \{'a': 1\} of type dict at row 1"):
        encode_fit(X)
    with pytest.raises(TypeError, match=r"argument must be .* string.* number"):
        encode_fit(X)
    df = pd.DataFrame({"c": ["a", ["list"]]})
    with pytest.raises(DataError, match=r"column 'c' holds \['list'\] of type list at row 1"):
        encode_fit(df)


def test_duplicate_column_names_after_str():
    df = pd.DataFrame([[1, 2, 3]], columns=["a", 1, "1"])
    with pytest.raises(DataError, match=r"duplicate column name '1' \(columns 1 and 2"):
        encode_fit(df)


def test_complex_data():
    with pytest.raises(
        DataError, match=r"Complex data not supported: column 'x0' holds .*\(1\+2j\) at row 0"
    ):
        encode_fit(np.array([[1 + 2j], [3.0]]))
    with pytest.raises(DataError, match="Complex data not supported: column 'z'"):
        encode_fit(pd.DataFrame({"a": [1, 2], "z": [1j, 2j]}))
    with pytest.raises(DataError, match=r"complex number 2j at row 1"):
        encode_fit(np.array([[None], [2j]], dtype=object))


def test_unsupported_dtype():
    df = pd.DataFrame({"when": pd.to_datetime(["2020-01-01", "2021-01-01"])})
    with pytest.raises(DataError, match=r"column 'when' has dtype datetime64.*Convert the column"):
        encode_fit(df)


def test_sparse_input():
    with pytest.raises(DataError, match=r"sparse matrix.*toarray\(\)"):
        encode_fit(scipy.sparse.csr_matrix(np.eye(3)))


def test_ragged_lists():
    with pytest.raises(DataError, match="every row must have the same number of values"):
        encode_fit([[1, 2], [3]])


def test_integers_too_large_for_float64():
    with pytest.raises(DataError, match=r"column 'x0' holds the integer 9007199254740993 at row 1"):
        encode_fit(np.array([[1], [2**53 + 1]], dtype=np.int64))


def test_invalid_categorical_argument(mixed_frame):
    with pytest.raises(InvalidParameterError, match=r"column 'weight', which X does not have"):
        encode_fit(mixed_frame, categorical=["weight"])
    with pytest.raises(InvalidParameterError, match=r"index 5, but X has 5 columns.*\[0, 4\]"):
        encode_fit(mixed_frame, categorical=[5])
    with pytest.raises(InvalidParameterError, match="mask of length 2, but X has 5 columns"):
        encode_fit(mixed_frame, categorical=[True, False])
    with pytest.raises(InvalidParameterError, match=r"categorical holds 1.5"):
        encode_fit(mixed_frame, categorical=[1.5])
    with pytest.raises(InvalidParameterError, match="categorical must be None"):
        encode_fit(mixed_frame, categorical=True)


# ----------------------------------------------------------------------------
# encode_predict
# ----------------------------------------------------------------------------


def test_predict_matches_columns_by_name(mixed_frame):
    enc = encode_fit(mixed_frame)
    shuffled = mixed_frame[["color", "size", "owner", "height", "age"]]
    np.testing.assert_array_equal(
        encode_predict(shuffled, enc.feature_names, enc.categories), enc.X
    )
    with pytest.raises(DataError, match="Feature names must be in the same order"):
        encode_predict(shuffled, enc.feature_names, enc.categories, allow_reorder=False)


def test_predict_missing_and_extra_columns(mixed_frame):
    enc = encode_fit(mixed_frame)
    with pytest.raises(
        DataError,
        match=re.escape(
            "The feature names should match those that were passed during fit.\n"
            "Feature names seen at fit time, yet now missing:\n- owner\n"
        ),
    ):
        encode_predict(mixed_frame.drop(columns="owner"), enc.feature_names, enc.categories)
    extra = mixed_frame.assign(weight=1.0)
    with pytest.raises(DataError, match="Feature names unseen at fit time:\n- weight\n"):
        encode_predict(extra, enc.feature_names, enc.categories)
    np.testing.assert_array_equal(
        encode_predict(extra, enc.feature_names, enc.categories, check_names=False), enc.X
    )
    with pytest.raises(DataError, match="yet now missing:\n- owner\n"):
        encode_predict(
            extra.drop(columns="owner"), enc.feature_names, enc.categories, check_names=False
        )


def test_predict_array_column_count(mixed_frame):
    enc = encode_fit(np.zeros((3, 4)))
    with pytest.raises(
        DataError,
        match=r"X has 3 features, but MyTree is expecting 4 features as input "
        r"\(expected 4 columns, got 3\)",
    ):
        encode_predict(np.zeros((2, 3)), enc.feature_names, enc.categories, estimator_name="MyTree")


def test_predict_array_after_dataframe_fit_is_positional(mixed_frame):
    enc = encode_fit(mixed_frame)
    rows = mixed_frame.to_numpy(dtype=object)
    np.testing.assert_array_equal(encode_predict(rows, enc.feature_names, enc.categories), enc.X)


def test_predict_dataframe_after_array_fit():
    enc = encode_fit(np.array([[1.0, 2.0], [3.0, 4.0]]))
    df = pd.DataFrame({"a": [5.0], "b": [6.0]})
    with pytest.raises(DataError, match="yet now missing:\n- x0\n- x1\n"):
        encode_predict(df, enc.feature_names, enc.categories)
    # Without name checks a frame that shares no name with the fitted ones is positional.
    np.testing.assert_array_equal(
        encode_predict(df, enc.feature_names, enc.categories, check_names=False), [[5, 6]]
    )


def test_predict_unseen_category_is_minus_one(mixed_frame):
    enc = encode_fit(mixed_frame)
    new = mixed_frame.iloc[:2].copy()
    new["color"] = ["purple", "blue"]
    new["size"] = pd.Categorical(["XL", "S"])
    with pytest.warns(UnseenCategoryWarning) as caught:
        out = encode_predict(new, enc.feature_names, enc.categories)
    # One warning a column, naming it, the count and the first unseen value.
    assert sorted(str(w.message).split(" holds")[0] for w in caught) == [
        "column 'color'",
        "column 'size'",
    ]
    np.testing.assert_array_equal(out[:, 4], [-1, 0])
    np.testing.assert_array_equal(out[:, 3], [-1, 0])


def test_predict_numeric_codes_map_by_value():
    enc = encode_fit(np.array([[3], [7], [10]]), categorical=[0])
    with pytest.warns(UnseenCategoryWarning, match="4.0 at row 2"):
        out = encode_predict(
            np.array([[7.0], [3.0], [4.0], [10.0]]), enc.feature_names, enc.categories
        )
    np.testing.assert_array_equal(out, [[1], [0], [-1], [2]])
    enc = encode_fit(np.array([[True], [False]]))
    out = encode_predict(np.array([[1], [0]]), enc.feature_names, enc.categories)
    np.testing.assert_array_equal(out, [[1], [0]])


def test_predict_nan_in_numeric_column(mixed_frame):
    enc = encode_fit(mixed_frame)
    bad = mixed_frame.assign(height=[1.0, 2.0, np.nan, 1.0])
    with pytest.raises(DataError, match=r"column 'height' holds a missing value \(nan\) at row 2"):
        encode_predict(bad, enc.feature_names, enc.categories)
    out = encode_predict(bad, enc.feature_names, enc.categories, allow_nan=True)
    assert np.isnan(out[2, 1])
    with pytest.raises(DataError, match=r"column 'x0' holds inf at row 0"):
        encode_predict(np.array([[np.inf]]), ["x0"], [None])


def test_predict_string_in_numeric_column(mixed_frame):
    enc = encode_fit(mixed_frame)
    bad = mixed_frame.assign(age=["30", 45, 22, 45])
    with pytest.raises(
        DataError, match=r"column 'age' was numeric at fit time, but row 0 holds '30' \(str\)"
    ):
        encode_predict(bad, enc.feature_names, enc.categories)
    with pytest.raises(
        DataError, match=r"column 'x0' was numeric at fit time, but row 0 holds '1' \(str\)"
    ):
        encode_predict(np.array([["1"], ["b"]]), ["x0"], [None])


def test_predict_missing_in_categorical_column(mixed_frame):
    enc = encode_fit(mixed_frame)
    bad = mixed_frame.assign(color=["red", None, "red", "red"])
    with pytest.raises(DataError, match=r"column 'color' holds a missing value .* at row 1"):
        encode_predict(bad, enc.feature_names, enc.categories)


def test_predict_checks_shape():
    with pytest.raises(DataError, match="Reshape your data"):
        encode_predict(np.array([1.0, 2.0]), ["x0", "x1"], [None, None])
    with pytest.raises(DataError, match=r"0 sample\(s\)"):
        encode_predict(np.zeros((0, 2)), ["x0", "x1"], [None, None])


def _codes_by_lookup(X, categories) -> np.ndarray:
    """The expected codes, one cell at a time."""
    return np.array(
        [
            [labels.index(v) if v in labels else -1 for v, labels in zip(row, categories)]
            for row in X
        ],
        dtype=np.float64,
    )


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int16, np.uint32, np.int64])
@pytest.mark.parametrize("seed", range(8))
def test_predict_integer_codes_equal_a_lookup_per_cell(dtype, seed):
    # Integer data on integer categories take a whole-matrix lookup table; it must give the
    # general path's codes, unseen values included, for arrays and frames alike.
    rng = np.random.default_rng(seed)
    n, m = int(rng.integers(1, 40)), int(rng.integers(1, 6))
    low = 0 if np.dtype(dtype).kind == "u" else -5
    fitted = rng.integers(low, 9, size=(n, m)).astype(dtype)
    enc = encode_fit(fitted, categorical=list(range(m)))
    new = rng.integers(low, 12, size=(n + 3, m)).astype(dtype)
    expected = _codes_by_lookup(new.tolist(), enc.categories)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UnseenCategoryWarning)
        out = encode_predict(new, enc.feature_names, enc.categories)
        frame = encode_predict(pd.DataFrame(new), enc.feature_names, enc.categories)
        # Rows read in place from a column slice, and copied from a column-major matrix.
        wider = np.hstack([new, new])[:, :m]
        sliced = encode_predict(wider, enc.feature_names, enc.categories)
        fortran = encode_predict(np.asfortranarray(new), enc.feature_names, enc.categories)
    np.testing.assert_array_equal(out, expected)
    np.testing.assert_array_equal(frame, expected)
    np.testing.assert_array_equal(sliced, expected)
    np.testing.assert_array_equal(fortran, expected)
    table = _validation._read_table(new)  # the lookup table did answer
    assert _validation._integer_codes(table, table.columns, enc.categories) is not None


def test_predict_integer_codes_keep_declared_label_order_and_name_unseen_values():
    frame = pd.DataFrame(
        {"a": pd.Categorical([3, 1, 2], categories=[3, 1, 2, 7]), "b": [10, 20, 10]}
    )
    enc = encode_fit(frame, categorical=["b"])
    assert enc.categories == [[3, 1, 2, 7], [10, 20]]
    new = np.array([[7, 20], [1, 15], [5, 10], [2, 15]])
    with pytest.warns(UnseenCategoryWarning) as caught:
        out = encode_predict(new, enc.feature_names, enc.categories, check_names=False)
    np.testing.assert_array_equal(out, [[3, 1], [1, -1], [-1, 0], [2, -1]])
    messages = sorted(str(w.message) for w in caught)
    assert len(messages) == 2
    assert "column 'a' holds 1 value(s) not seen at fit time (the first: 5 at row 2" in messages[0]
    assert "column 'b' holds 2 value(s) not seen at fit time (the first: 15 at row 1" in messages[1]


@pytest.mark.parametrize("seed", range(6))
def test_predict_categorical_dtype_codes_equal_those_of_its_labels(seed):
    # A categorical column is coded by matching its categories, not its cells: the codes must
    # be those of the same labels as plain objects, unseen and unused categories included.
    rng = np.random.default_rng(seed)
    labels = ["a", "b", "c", 1, 2.5, "d"]
    fitted = pd.DataFrame({"x": rng.choice(4, size=12)}).map(lambda i: labels[i])
    enc = encode_fit(fitted.astype(object))
    declared = [labels[i] for i in rng.permutation(len(labels))]  # any order, some unused
    cells = [labels[i] for i in rng.choice(len(labels), size=15)]
    frame = pd.DataFrame({"x": pd.Categorical(cells, categories=declared)})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UnseenCategoryWarning)
        out = encode_predict(frame, enc.feature_names, enc.categories)
        plain = encode_predict(frame.astype(object), enc.feature_names, enc.categories)
    np.testing.assert_array_equal(out, plain)
    np.testing.assert_array_equal(out, _codes_by_lookup([[c] for c in cells], enc.categories))


def test_predict_categorical_dtype_names_missing_and_unseen_cells():
    enc = encode_fit(pd.DataFrame({"x": ["a", "b"]}))
    frame = pd.DataFrame({"x": pd.Categorical(["a", None, "b"])})
    with pytest.raises(DataError, match=r"'x'.*row 1"):
        encode_predict(frame, enc.feature_names, enc.categories)
    frame = pd.DataFrame({"x": pd.Categorical(["a", "z", "b", "z"])})
    with pytest.warns(UnseenCategoryWarning, match=r"2 value.*the first: 'z' at row 1"):
        out = encode_predict(frame, enc.feature_names, enc.categories)
    np.testing.assert_array_equal(out, [[0], [-1], [1], [-1]])


def test_predict_integer_codes_at_the_ends_of_int64():
    # Labels at int64's ends take the lookup table when close together; a label beyond int64
    # (from a uint64 fit) leaves the matrix to the general path; neither raises.
    top, bottom = np.iinfo(np.int64).max, np.iinfo(np.int64).min
    enc = encode_fit(np.array([[top], [top - 1]]), categorical=[0])
    new = np.array([[top], [top - 2], [bottom], [top - 1]])
    with pytest.warns(UnseenCategoryWarning, match="2 value"):
        out = encode_predict(new, enc.feature_names, enc.categories)
    np.testing.assert_array_equal(out, [[1], [-1], [-1], [0]])
    table = _validation._read_table(new)
    assert _validation._integer_codes(table, table.columns, enc.categories) is not None
    wide = encode_fit(np.array([[2**63], [1]], dtype=np.uint64), categorical=[0])
    assert wide.categories == [[1, 2**63]]
    small = np.array([[1], [5]])
    table = _validation._read_table(small)
    assert _validation._integer_codes(table, table.columns, wide.categories) is None
    with pytest.warns(UnseenCategoryWarning, match="the first: 5 at row 1"):
        out = encode_predict(small, wide.feature_names, wide.categories)
    np.testing.assert_array_equal(out, [[0], [-1]])


def test_predict_integer_codes_fall_back_where_a_table_does_not_fit():
    # Labels a billion apart, a nullable column, a column of dates, bool labels and uint64
    # cells all take the general path, with the same codes.
    enc = encode_fit(np.array([[0, 1], [10**9, 0]]), categorical=[0, 1])
    with pytest.warns(UnseenCategoryWarning, match="the first: 5 at row 1"):
        out = encode_predict(np.array([[10**9, 1], [5, 0]]), enc.feature_names, enc.categories)
    np.testing.assert_array_equal(out, [[1, 1], [-1, 0]])
    frame = pd.DataFrame({"x0": pd.array([1, 0], dtype="Int64"), "x1": [0, 1]})
    with pytest.warns(UnseenCategoryWarning, match="the first: 1 at row 0"):
        out = encode_predict(frame, enc.feature_names, enc.categories, check_names=False)
    np.testing.assert_array_equal(out, [[-1, 0], [0, 1]])
    stamps = pd.DataFrame({"x0": pd.to_datetime(["2020-01-01", "2021-01-01"]), "x1": [0, 1]})
    with pytest.warns(UnseenCategoryWarning, match="column 'x0'"):
        out = encode_predict(stamps, enc.feature_names, enc.categories, check_names=False)
    np.testing.assert_array_equal(out, [[-1, 0], [-1, 1]])
    flags = encode_fit(np.array([[True], [False]]))
    out = encode_predict(
        np.array([[1], [0]], dtype=np.uint64), flags.feature_names, flags.categories
    )
    np.testing.assert_array_equal(out, [[1], [0]])


def test_predict_numeric_accepts_numeric_dtypes():
    out = encode_predict(
        pd.DataFrame({"a": pd.array([1, 2], dtype="Int64"), "b": np.array([1, 2], np.float32)}),
        ["a", "b"],
        [None, None],
    )
    assert out.dtype == np.float64
    np.testing.assert_array_equal(out, [[1, 1], [2, 2]])


# ----------------------------------------------------------------------------
# check_labels
# ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "y",
    [
        ["yes", "no", "maybe", "no"],
        [10, -3, 7, 10],
        [True, False, False],
        [2.0, 5.0, 2.0],
        np.array(["b", "a"], dtype=object),
        pd.Series(["x", "y", "x"], dtype="string"),
        pd.Series(pd.Categorical(["lo", "hi", "lo"], categories=["lo", "mid", "hi"])),
    ],
)
def test_labels_round_trip(y):
    codes, classes = check_labels(y)
    assert codes.dtype == np.int64
    np.testing.assert_array_equal(classes[codes], np.asarray(y))
    assert list(classes) == sorted(set(np.asarray(y).tolist()))
    assert set(codes.tolist()) == set(range(len(classes)))


def test_labels_non_contiguous_ints():
    codes, classes = check_labels(np.array([10, 3, 42, 3]))
    np.testing.assert_array_equal(classes, [3, 10, 42])
    np.testing.assert_array_equal(codes, [1, 0, 2, 0])


def test_labels_mixed_types_sorted_by_str():
    codes, classes = check_labels([2, "a", 10, "a"])
    assert list(classes) == [10, 2, "a"]
    np.testing.assert_array_equal(codes, [1, 2, 0, 2])


def test_labels_single_class_is_allowed():
    codes, classes = check_labels(["only", "only"])
    np.testing.assert_array_equal(codes, [0, 0])
    assert list(classes) == ["only"]


def test_labels_column_vector_is_flattened_with_a_warning():
    with pytest.warns(DataConversionWarning, match="A column-vector y was passed"):
        codes, _ = check_labels(np.array([["b"], ["a"]]))
    np.testing.assert_array_equal(codes, [1, 0])
    with pytest.warns(DataConversionWarning):
        codes, _ = check_labels(pd.DataFrame({"target": [3, 1]}))
    np.testing.assert_array_equal(codes, [1, 0])


def test_labels_errors():
    with pytest.raises(DataError, match=r"y must be 1-D .* got shape \(2, 2\)"):
        check_labels(np.array([[1, 2], [3, 4]]))
    with pytest.raises(DataError, match="DataFrame with 2 columns"):
        check_labels(pd.DataFrame({"a": [1], "b": [2]}))
    with pytest.raises(DataError, match=r"y holds a missing label \(None\) at row 2"):
        check_labels(["a", "b", None])
    with pytest.raises(DataError, match=r"y holds a missing label \(nan\) at row 1"):
        check_labels([1.0, np.nan])
    with pytest.raises(DataError, match=r"y holds a missing label \(.*\) at row 0"):
        check_labels(pd.Series([None, 1], dtype="Int64"))
    with pytest.raises(DataError, match=r"^X has 5 rows but y has 4\.$"):
        check_labels([1, 2, 3, 4], n_rows=5)
    with pytest.raises(DataError, match=r"Unknown label type: continuous\. y holds 0\.25 at row 1"):
        check_labels([1.0, 0.25])
    with pytest.raises(DataError, match="Unknown label type: continuous"):
        check_labels([1.0, np.inf])
    with pytest.raises(DataError, match="requires y to be passed, but the target y is None"):
        check_labels(None)
    with pytest.raises(DataError, match="y is empty"):
        check_labels([])
    with pytest.raises(DataError, match="Complex data not supported"):
        check_labels(np.array([1j, 2j]))
    with pytest.raises(DataTypeError, match=r"y holds \{\} of type dict at row 1"):
        check_labels(np.array(["a", {}], dtype=object))


# ----------------------------------------------------------------------------
# check_sample_weight
# ----------------------------------------------------------------------------


def test_sample_weight_valid():
    assert check_sample_weight(None, 3) is None
    given = np.array([1, 0, 2], dtype=np.int32)
    weights = check_sample_weight(given, 3)
    assert weights.dtype == np.float64
    np.testing.assert_array_equal(weights, [1, 0, 2])
    weights[0] = 99
    assert given[0] == 1  # the caller's array is untouched
    np.testing.assert_array_equal(check_sample_weight(pd.Series([0.5, 1.5]), 2), [0.5, 1.5])
    np.testing.assert_array_equal(check_sample_weight(2, 3), [2, 2, 2])


def test_sample_weight_errors():
    with pytest.raises(DataError, match=r"^X has 3 rows but sample_weight has 2\.$"):
        check_sample_weight([1, 1], 3)
    with pytest.raises(DataError, match=r"negative weight -0\.5 at index 2"):
        check_sample_weight([1, 1, -0.5, -1], 4)
    with pytest.raises(DataError, match="sample_weight holds nan at index 1"):
        check_sample_weight([1, np.nan], 2)
    with pytest.raises(DataError, match="sample_weight holds inf at index 0"):
        check_sample_weight([np.inf, 1], 2)
    with pytest.raises(DataError, match=r"all 3 weights are zero.*index 0"):
        check_sample_weight([0, 0, 0], 3)
    with pytest.raises(DataError, match=r"weight.*zero"):
        check_sample_weight(0, 3)
    with pytest.raises(DataError, match="sample_weight holds 'heavy' at index 1"):
        check_sample_weight([1, "heavy"], 2)
    with pytest.raises(DataError, match=r"1-D .* got shape \(2, 2\)"):
        check_sample_weight(np.ones((2, 2)), 2)
    with pytest.raises(DataError, match="dtype bool"):
        check_sample_weight(np.array([True, False]), 2)


@pytest.mark.parametrize("dtype", [np.int8, np.int32, np.int64, np.uint8, np.uint64])
def test_integer_matrix_fast_path_equals_column_by_column_encoding(dtype):
    # Integer matrices are factorised by counting in the core; the codes and labels must be
    # exactly those of the general per-column path (sorted distinct values).
    from optitree._validation import _encode_table, _integer_matrix_codes, _read_table

    rng = np.random.default_rng(7)
    for _ in range(100):
        n, m = int(rng.integers(1, 30)), int(rng.integers(1, 6))
        low = -2 if np.dtype(dtype).kind == "i" else 0
        X = (rng.integers(0, 5, (n, m)) * int(rng.integers(1, 4)) + low).astype(dtype)
        if rng.random() < 0.3:
            X = np.asfortranarray(X)
        fast = _integer_matrix_codes(X)
        table = _read_table(X)
        table.array = None  # force the general path
        general = _encode_table(table, [True] * m, False)
        assert np.array_equal(fast[0], general.X)
        assert fast[1] == general.categories


def test_integer_matrix_codes_take_the_narrowest_type_that_holds_them():
    # Bytes up to 256 labels a column (what the searches read, without a cast), two bytes up
    # to 65,536, floats beyond; the same codes either way.
    from optitree._validation import _integer_matrix_codes

    for n_labels, dtype in [(2, np.uint8), (256, np.uint8), (257, np.uint16), (70_000, np.float64)]:
        step = 3 if n_labels < 1000 else 1  # within the counted span (rows or 4,096)
        column = np.arange(n_labels, dtype=np.int64) * step - 7
        X = np.column_stack([column, column[::-1] % 2])
        codes, labels = _integer_matrix_codes(X)
        assert codes.dtype == dtype, n_labels
        np.testing.assert_array_equal(codes[:, 0], np.arange(n_labels))
        np.testing.assert_array_equal(codes[:, 1], X[:, 1] + 0)
        assert labels[0] == column.tolist()
    assert encode_fit(np.array([[0, 1], [1, 0]]), categorical=[0, 1]).X.dtype == np.uint8


def test_trees_route_byte_codes_as_their_floats():
    # A fit re-scores on its byte codes; Tree methods take uint8/uint16 matrices as the numbers
    # they hold, with the same nodes as float64.
    rng = np.random.default_rng(3)
    X = rng.integers(0, 3, size=(200, 4))
    y = (X[:, 0] == 2) ^ (X[:, 1] > 0)
    tree = BranchesClassifier(penalty=0.001, categorical="all").fit(X, y).tree_
    floats = X.astype(np.float64)
    for dtype in (np.uint8, np.uint16):
        codes = X.astype(dtype)
        np.testing.assert_array_equal(tree.apply(codes), tree.apply(floats))
        np.testing.assert_array_equal(tree.predict(codes), tree.predict(floats))
        assert (tree.decision_path(codes) != tree.decision_path(floats)).nnz == 0
    with pytest.raises(TypeError, match="float64, uint8 or uint16"):
        _core.tree_route(tree, X)  # int64: callers convert first


def test_a_fit_on_two_byte_codes_rescores_its_tree():
    # 300 labels in a column: the encoder's codes are uint16, and the fit re-scores on them
    # (a mismatch with the search's objective raises).
    rng = np.random.default_rng(4)
    X = np.column_stack([np.arange(600) % 300, rng.integers(0, 2, size=600)])
    y = (X[:, 0] % 7 < 3) ^ (X[:, 1] == 1)
    assert encode_fit(X, categorical=[0, 1]).X.dtype == np.uint16
    clf = BranchesClassifier(penalty=0.01, max_depth=2, categorical="all").fit(X, y)
    assert clf.status_ == "optimal"
    assert clf.objective_ == pytest.approx(clf.score(X, y) - 0.01 * clf.get_n_splits())


def test_integer_matrix_fast_path_handles_extremes():
    from optitree._validation import _integer_matrix_codes

    assert _integer_matrix_codes(np.array([[0], [10**9]])) is None  # too wide to count
    codes, labels = _integer_matrix_codes(np.array([[-128, 127], [127, -128]], dtype=np.int8))
    assert labels == [[-128, 127], [-128, 127]]
    assert codes.tolist() == [[0.0, 1.0], [1.0, 0.0]]
    assert _integer_matrix_codes(np.array([[2**63 + 1]], dtype=np.uint64)) is None
    out = encode_fit(np.array([[0], [10**9], [0]]), categorical=[0])
    assert out.categories == [[0, 10**9]]
