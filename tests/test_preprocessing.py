"""Tests of optitree.preprocessing: CategoricalEncoder, OneHotEncoder, ThresholdBinarizer."""

from __future__ import annotations

import inspect
import pickle

import numpy as np
import pandas as pd
import pytest
import sklearn.preprocessing
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.base import clone
from sklearn.compose import ColumnTransformer
from sklearn.exceptions import NotFittedError
from sklearn.pipeline import Pipeline, make_pipeline
from sklearn.utils import estimator_checks
from sklearn.utils.estimator_checks import parametrize_with_checks

from optitree.exceptions import DataError, InvalidParameterError
from optitree.preprocessing import (
    CategoricalEncoder,
    OneHotEncoder,
    ThresholdBinarizer,
    format_threshold,
)


@pytest.fixture
def frame():
    return pd.DataFrame(
        {
            "color": ["red", "blue", "red", "green"],
            "size": pd.Categorical(["M", "S", "M", "M"], categories=["S", "M", "L"]),
            "owner": [True, False, True, True],
            "rooms": [3, 1, 3, 2],
        }
    )


def all_transformers():
    return [
        CategoricalEncoder(),
        CategoricalEncoder(handle_unknown="use_code"),
        OneHotEncoder(),
        OneHotEncoder(drop="first", handle_unknown="ignore"),
        OneHotEncoder(drop="last"),
        ThresholdBinarizer(),
        ThresholdBinarizer(max_thresholds=3),
        ThresholdBinarizer(strategy="quantile", max_thresholds=2),
    ]


# ----------------------------------------------------------------------------
# scikit-learn compatibility
# ----------------------------------------------------------------------------


@parametrize_with_checks(all_transformers())
def test_sklearn_estimator_checks(estimator, check):
    check(estimator)


EXTRA_CHECKS = [
    "check_transformer_get_feature_names_out",
    "check_transformer_get_feature_names_out_pandas",
    "check_set_output_transform",
    "check_set_output_transform_pandas",
    "check_global_output_transform_pandas",
    "check_transformer_preserve_dtypes",
]


@pytest.mark.parametrize("name", EXTRA_CHECKS)
@pytest.mark.parametrize("estimator", all_transformers(), ids=repr)
def test_sklearn_output_checks(estimator, name):
    check = getattr(estimator_checks, name, None)
    if check is not None:  # checks come and go between scikit-learn versions
        check(type(estimator).__name__, estimator)


@pytest.mark.parametrize("estimator", all_transformers(), ids=repr)
def test_clone_and_pickle(estimator, frame):
    X = frame[["rooms"]] if isinstance(estimator, ThresholdBinarizer) else frame
    cloned = clone(estimator)
    assert cloned.get_params() == estimator.get_params()
    fitted = cloned.fit(X)
    restored = pickle.loads(pickle.dumps(fitted))
    np.testing.assert_array_equal(restored.transform(X), fitted.transform(X))
    np.testing.assert_array_equal(restored.get_feature_names_out(), fitted.get_feature_names_out())
    assert not hasattr(clone(fitted), "n_features_in_")


@pytest.mark.parametrize("estimator", all_transformers(), ids=repr)
def test_methods_need_fit(estimator):
    for method in ("transform", "inverse_transform"):
        with pytest.raises(NotFittedError):
            getattr(estimator, method)([[0]])
    with pytest.raises(NotFittedError):
        estimator.get_feature_names_out()


def test_parameters_are_validated_in_fit_not_init():
    for estimator, message in [
        (CategoricalEncoder(handle_unknown="ignore"), "handle_unknown must be one of"),
        (CategoricalEncoder(categories="sorted"), "categories must be 'auto' or a list"),
        (OneHotEncoder(drop="if_binary"), "drop must be one of None, 'first', 'last'"),
        (OneHotEncoder(handle_unknown="use_code"), "handle_unknown must be one of 'error'"),
        (ThresholdBinarizer(strategy="uniform"), "strategy must be one of 'midpoints'"),
        (ThresholdBinarizer(strategy="quantile"), "max_thresholds is required"),
        (ThresholdBinarizer(max_thresholds=0), "max_thresholds must be an int >= 1; got 0"),
        (ThresholdBinarizer(max_thresholds=2.5), "max_thresholds must be None or an int"),
        (ThresholdBinarizer(max_thresholds=True), "max_thresholds must be None or an int"),
    ]:
        with pytest.raises(InvalidParameterError, match=message):
            estimator.fit([[1.0], [2.0]])


def test_pipeline_and_column_transformer(frame):
    pre = ColumnTransformer(
        [
            ("cat", OneHotEncoder(drop="first"), ["color", "size", "owner"]),
            ("num", ThresholdBinarizer(), ["rooms"]),
        ]
    )
    pipe = Pipeline([("pre", pre)]).fit(frame)
    out = pipe.transform(frame)
    assert out.shape == (4, 2 + 2 + 1 + 2)
    names = pipe.get_feature_names_out().tolist()
    assert names == [
        "cat__color=green",
        "cat__color=red",
        "cat__size=M",
        "cat__size=L",
        "cat__owner=True",
        "num__rooms <= 1.5",
        "num__rooms <= 2.5",
    ]
    chained = make_pipeline(CategoricalEncoder(), OneHotEncoder()).fit(frame[["color"]])
    np.testing.assert_array_equal(
        chained.transform(frame[["color"]]), [[0, 0, 1], [1, 0, 0], [0, 0, 1], [0, 1, 0]]
    )


def test_set_output_pandas(frame):
    enc = OneHotEncoder().set_output(transform="pandas").fit(frame[["color"]])
    out = enc.transform(frame[["color"]])
    assert isinstance(out, pd.DataFrame)
    assert out.columns.tolist() == ["color=blue", "color=green", "color=red"]


def test_feature_names_in_only_for_dataframes(frame):
    enc = CategoricalEncoder().fit(frame)
    assert enc.n_features_in_ == 4
    assert enc.feature_names_in_.dtype == object
    assert enc.feature_names_in_.tolist() == ["color", "size", "owner", "rooms"]
    enc.fit(frame.to_numpy())
    assert not hasattr(enc, "feature_names_in_")
    assert enc.get_feature_names_out().tolist() == ["x0", "x1", "x2", "x3"]
    assert enc.get_feature_names_out(["a", "b", "c", "d"]).tolist() == ["a", "b", "c", "d"]


def test_get_feature_names_out_input_features_errors(frame):
    enc = CategoricalEncoder().fit(frame)
    with pytest.raises(InvalidParameterError, match="input_features should have length equal"):
        enc.get_feature_names_out(["color"])
    with pytest.raises(InvalidParameterError, match="input_features is not equal to"):
        enc.get_feature_names_out(["a", "b", "c", "d"])


def test_transform_matches_dataframe_columns_by_name(frame):
    for estimator in (CategoricalEncoder(), OneHotEncoder()):
        estimator.fit(frame)
        reordered = frame[["rooms", "owner", "color", "size"]]
        np.testing.assert_array_equal(estimator.transform(reordered), estimator.transform(frame))
        with pytest.raises(DataError, match="yet now missing:\n- owner\n"):
            estimator.transform(frame.drop(columns="owner"))
        with pytest.warns(UserWarning, match="X does not have valid feature names"):
            np.testing.assert_array_equal(
                estimator.transform(frame.to_numpy()), estimator.transform(frame)
            )


def test_transform_checks_number_of_columns(frame):
    enc = CategoricalEncoder().fit(frame.to_numpy())
    with pytest.raises(DataError, match="X has 3 features, but CategoricalEncoder is expecting 4"):
        enc.transform(frame.to_numpy()[:, :3])


# ----------------------------------------------------------------------------
# CategoricalEncoder
# ----------------------------------------------------------------------------


def test_categorical_encoder_on_mixed_frame(frame):
    enc = CategoricalEncoder().fit(frame)
    assert [c.tolist() for c in enc.categories_] == [
        ["blue", "green", "red"],
        ["S", "M", "L"],
        [False, True],
        [1, 2, 3],
    ]
    assert enc.categories_[0].dtype == object
    assert enc.categories_[2].dtype == bool
    assert enc.categories_[3].dtype.kind == "i"
    codes = enc.transform(frame)
    assert codes.dtype == np.int64
    np.testing.assert_array_equal(codes, [[2, 1, 1, 2], [0, 0, 0, 0], [2, 1, 1, 2], [1, 1, 1, 1]])
    back = enc.inverse_transform(codes)
    assert back.dtype == object
    assert back.tolist() == frame.astype(object).to_numpy().tolist()
    assert enc.get_feature_names_out().tolist() == ["color", "size", "owner", "rooms"]


def test_categorical_encoder_unknown_values(frame):
    new = frame.assign(color=["red", "purple", "blue", "red"])
    enc = CategoricalEncoder().fit(frame)
    with pytest.raises(
        DataError,
        match=r"column 'color' holds the category 'purple' at row 1, which was not seen at fit "
        r"time; known categories: \['blue', 'green', 'red'\]",
    ):
        enc.transform(new)
    enc = CategoricalEncoder(handle_unknown="use_code").fit(frame)
    codes = enc.transform(new)
    np.testing.assert_array_equal(codes[:, 0], [2, -1, 0, 2])
    assert enc.inverse_transform(codes)[:, 0].tolist() == ["red", None, "blue", "red"]


def test_categorical_encoder_missing_values_are_errors(frame):
    with pytest.raises(DataError, match=r"column 'color' holds a missing value .* at row 0"):
        CategoricalEncoder().fit(frame.assign(color=[None, "a", "b", "c"]))
    enc = CategoricalEncoder(handle_unknown="use_code").fit(frame)
    with pytest.raises(DataError, match=r"column 'rooms' holds a missing value \(nan\) at row 3"):
        enc.transform(frame.assign(rooms=[1, 2, 3, np.nan]))


def test_categorical_encoder_given_categories():
    X = np.array([["lo", 1], ["hi", 2], ["lo", 2]], dtype=object)
    enc = CategoricalEncoder(categories=[["lo", "mid", "hi"], [2, 1]]).fit(X)
    assert enc.categories_[0].tolist() == ["lo", "mid", "hi"]
    np.testing.assert_array_equal(enc.transform(X), [[0, 1], [2, 0], [0, 0]])
    with pytest.raises(DataError, match=r"column 'x0' holds the category 'hi' at row 1"):
        CategoricalEncoder(categories=[["lo"], [1, 2]]).fit(X)
    enc = CategoricalEncoder(categories=[["lo"], [1, 2]], handle_unknown="use_code").fit(X)
    np.testing.assert_array_equal(enc.transform(X)[:, 0], [0, -1, 0])
    with pytest.raises(InvalidParameterError, match="categories has 1 entries, but X has 2"):
        CategoricalEncoder(categories=[["lo"]]).fit(X)
    with pytest.raises(InvalidParameterError, match="column 'x1' lists 1 twice"):
        CategoricalEncoder(categories=[["lo", "hi"], [1, 1]]).fit(X)
    with pytest.raises(InvalidParameterError, match="column 'x0' is empty"):
        CategoricalEncoder(categories=[[], [1, 2]]).fit(X)
    with pytest.raises(InvalidParameterError, match="must not be missing"):
        CategoricalEncoder(categories=[["lo", None], [1, 2]]).fit(X)


def test_categorical_encoder_inverse_transform_errors(frame):
    enc = CategoricalEncoder().fit(frame)
    with pytest.raises(DataError, match=r"column 'color' holds the code 3 at row 0.*\[-1, 2\]"):
        enc.inverse_transform([[3, 0, 0, 0]])
    with pytest.raises(DataError, match="X has 2 columns, but inverse_transform expects 4"):
        enc.inverse_transform([[0, 0]])
    with pytest.raises(DataError, match=r"holds 0\.5 at row 0, column 1"):
        enc.inverse_transform([[0, 0.5, 0, 0]])


# ----------------------------------------------------------------------------
# OneHotEncoder
# ----------------------------------------------------------------------------


@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    n_rows=st.integers(1, 30),
    n_columns=st.integers(1, 4),
    n_labels=st.integers(1, 5),
    drop=st.sampled_from([None, "first"]),
)
def test_one_hot_matches_scikit_learn_on_strings(seed, n_rows, n_columns, n_labels, drop):
    rng = np.random.default_rng(seed)
    labels = np.array(["b", "a", "c", "zz", "A"][:n_labels], dtype=object)
    X = rng.choice(labels, size=(n_rows, n_columns))
    ours = OneHotEncoder(drop=drop).fit(X)
    theirs = sklearn.preprocessing.OneHotEncoder(drop=drop, sparse_output=False).fit(X)
    np.testing.assert_array_equal(ours.transform(X), theirs.transform(X))
    assert [c.tolist() for c in ours.categories_] == [c.tolist() for c in theirs.categories_]
    names = [name.replace("=", "_", 1) for name in ours.get_feature_names_out()]
    assert names == theirs.get_feature_names_out().tolist()
    assert ours.inverse_transform(ours.transform(X)).tolist() == X.tolist()


def test_one_hot_drop_last_by_hand():
    X = np.array([["b", "x"], ["a", "y"], ["c", "x"]], dtype=object)
    enc = OneHotEncoder(drop="last").fit(X)
    assert enc.drop_idx_.tolist() == [2, 1]
    assert enc.get_feature_names_out().tolist() == ["x0=a", "x0=b", "x1=x"]
    np.testing.assert_array_equal(enc.transform(X), [[0, 1, 1], [1, 0, 0], [0, 0, 1]])
    assert enc.transform(X).dtype == np.uint8
    assert enc.inverse_transform(enc.transform(X)).tolist() == X.tolist()


def test_one_hot_single_category_disappears_under_drop():
    X = np.array([["a", "same"], ["b", "same"]], dtype=object)
    for drop in ("first", "last"):
        enc = OneHotEncoder(drop=drop).fit(X)
        assert enc.get_feature_names_out().tolist() == ["x0=b" if drop == "first" else "x0=a"]
        assert enc.transform(X).shape == (2, 1)
        assert enc.inverse_transform(enc.transform(X)).tolist() == X.tolist()
    assert OneHotEncoder().fit(X).transform(X).shape == (2, 3)


def test_one_hot_keeps_category_and_bool_order(frame):
    enc = OneHotEncoder().fit(frame[["size", "owner"]])
    assert enc.get_feature_names_out().tolist() == [
        "size=S",
        "size=M",
        "size=L",
        "owner=False",
        "owner=True",
    ]


def test_one_hot_unknown_values(frame):
    X = frame[["color"]]
    new = pd.DataFrame({"color": ["purple", "red"]})
    with pytest.raises(DataError, match="column 'color' holds the category 'purple' at row 0"):
        OneHotEncoder().fit(X).transform(new)
    enc = OneHotEncoder(handle_unknown="ignore").fit(X)
    np.testing.assert_array_equal(enc.transform(new), [[0, 0, 0], [0, 0, 1]])
    assert enc.inverse_transform(enc.transform(new)).tolist() == [[None], ["red"]]
    # Under drop, an unknown value looks like the dropped category.
    enc = OneHotEncoder(drop="first", handle_unknown="ignore").fit(X)
    np.testing.assert_array_equal(enc.transform(new), [[0, 0], [0, 1]])
    assert enc.inverse_transform(enc.transform(new)).tolist() == [["blue"], ["red"]]


def test_one_hot_inverse_transform_errors(frame):
    enc = OneHotEncoder().fit(frame[["color", "owner"]])
    with pytest.raises(DataError, match="row 1 has 2 ones among the columns of feature 'color'"):
        enc.inverse_transform([[1, 0, 0, 0, 1], [1, 1, 0, 1, 0]])
    with pytest.raises(DataError, match="row 0 has no 1 among the columns of feature 'color'"):
        enc.inverse_transform([[0, 0, 0, 0, 1]])
    with pytest.raises(
        DataError, match="X holds 2 at row 0 in column 'color=green'; values must be 0 or 1"
    ):
        enc.inverse_transform([[0, 2, 0, 0, 1]])
    with pytest.raises(DataError, match="X has 4 columns, but inverse_transform expects 5"):
        enc.inverse_transform([[0, 0, 0, 1]])


def test_one_hot_numeric_labels():
    enc = OneHotEncoder().fit([[2.5], [1], [2.5]])
    assert enc.categories_[0].tolist() == [1.0, 2.5]
    assert enc.get_feature_names_out().tolist() == ["x0=1.0", "x0=2.5"]
    # Labels of mixed types keep their types (1 stays an int).
    X = np.array([[2.5], [1], [2.5]], dtype=object)
    enc = CategoricalEncoder().fit(X)
    assert [type(v) for v in enc.categories_[0]] == [int, float]
    assert enc.inverse_transform([[0]]).tolist() == [[1]]


# ----------------------------------------------------------------------------
# ThresholdBinarizer
# ----------------------------------------------------------------------------


def test_threshold_binarizer_names_and_values():
    df = pd.DataFrame(
        {
            "petal_length": [1.4, 2.4, 2.5, 2.4, 5.0],
            "age": [30, 31, 30, 40, 30],
            "n": [1, 3, 1, 1, 1],
        }
    )
    b = ThresholdBinarizer().fit(df)
    assert [t.tolist() for t in b.thresholds_] == [[1.9, 2.45, 3.75], [30.5, 35.5], [2.0]]
    assert b.get_feature_names_out().tolist() == [
        "petal_length <= 1.9",
        "petal_length <= 2.45",
        "petal_length <= 3.75",
        "age <= 30.5",
        "age <= 35.5",
        "n <= 2",
    ]
    assert b.threshold_columns_ == [(0, 1.9), (0, 2.45), (0, 3.75), (1, 30.5), (1, 35.5), (2, 2.0)]
    out = b.transform(df)
    assert out.dtype == np.uint8
    expected = np.column_stack(
        [df[df.columns[j]].to_numpy() <= t for j, t in b.threshold_columns_]
    ).astype(np.uint8)
    np.testing.assert_array_equal(out, expected)
    np.testing.assert_array_equal(out[:, 1], [1, 1, 0, 1, 0])


def test_format_threshold():
    assert format_threshold(2.45) == "2.45"
    assert format_threshold(30.5) == "30.5"
    assert format_threshold(2.0) == "2"
    assert format_threshold(-3.0) == "-3"
    assert format_threshold(0.1 + 0.2) == "0.30000000000000004"
    assert format_threshold(1e20) == "1e+20"
    assert format_threshold(np.float32(0.5)) == "0.5"


def test_constant_column_has_no_thresholds():
    b = ThresholdBinarizer().fit([[1.0, 5.0], [2.0, 5.0]])
    assert b.thresholds_[1].size == 0
    assert b.transform([[1.0, 7.0]]).shape == (1, 1)
    assert b.get_feature_names_out().tolist() == ["x0 <= 1.5"]
    np.testing.assert_array_equal(b.inverse_transform([[1]]), [[1.5, np.inf]])


def test_midpoints_of_neighbouring_and_extreme_floats():
    lower = 1.0
    upper = np.nextafter(lower, 2.0)
    b = ThresholdBinarizer().fit([[lower], [upper]])
    np.testing.assert_array_equal(b.transform([[lower], [upper]]), [[1], [0]])
    b = ThresholdBinarizer().fit([[-1e308], [1e308], [1.7e308]])
    assert np.all(np.isfinite(b.thresholds_[0]))
    np.testing.assert_array_equal(
        b.transform([[-1e308], [1e308], [1.7e308]]), [[1, 1], [0, 1], [0, 0]]
    )


def test_midpoints_of_short_decimals_read_as_short_decimals():
    """1.7 + 1.9 rounds down in binary, so the midpoint was 1.7999999999999998 and trees read
    'petal length <= 1.7999999999999998'. Now 1.8: the same sides for every row."""
    b = ThresholdBinarizer().fit([[1.7], [1.9], [3.0], [0.1], [0.2], [-2.2], [-1.1]])
    assert b.thresholds_[0].tolist() == [-1.65, -0.5, 0.15, 0.95, 1.8, 2.45]
    assert b.get_feature_names_out().tolist()[4] == "x0 <= 1.8"


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.floats(allow_nan=False, allow_infinity=False, min_value=-1e300, max_value=1e300)
        | st.integers(-(10**6), 10**6).map(lambda k: k / 1000),
        min_size=2,
        max_size=30,
    )
)
def test_every_midpoint_is_the_exact_one_to_a_few_ulps_and_splits_the_same(values):
    distinct = np.unique(np.array(values, dtype=float))
    got = ThresholdBinarizer().fit(distinct.reshape(-1, 1)).thresholds_[0]
    lower, upper = distinct[:-1], distinct[1:]
    assert np.all((lower <= got) & (got < upper))  # the same rows on each side
    exact = lower / 2 + upper / 2
    assert np.all(np.abs(got - exact) <= 1e-14 * np.maximum(np.abs(exact), 1e-300) + 1e-300)


def test_midpoints_with_max_thresholds_are_evenly_spaced():
    X = np.arange(101, dtype=float).reshape(-1, 1)
    b = ThresholdBinarizer(max_thresholds=4).fit(X)
    assert b.thresholds_[0].tolist() == [12.5, 37.5, 62.5, 87.5]
    b = ThresholdBinarizer(max_thresholds=500).fit(X)
    assert len(b.thresholds_[0]) == 100


@settings(max_examples=60, deadline=None)
@given(
    values=st.lists(st.integers(-20, 20), min_size=1, max_size=60),
    limit=st.integers(1, 8),
    strategy=st.sampled_from(["quantile", "midpoints"]),
)
def test_limited_thresholds_are_few_unique_sorted_midpoints(values, limit, strategy):
    X = np.array(values, dtype=float).reshape(-1, 1)
    all_mids = ThresholdBinarizer().fit(X).thresholds_[0]
    chosen = ThresholdBinarizer(strategy=strategy, max_thresholds=limit).fit(X).thresholds_[0]
    assert len(chosen) <= limit
    assert np.all(np.diff(chosen) > 0)
    assert set(chosen.tolist()) <= set(all_mids.tolist())
    if len(all_mids) <= limit:
        np.testing.assert_array_equal(chosen, all_mids)
    elif strategy == "midpoints":
        assert len(chosen) == limit


def test_quantile_follows_the_rows():
    # Most rows sit at small values: quantile thresholds crowd there, midpoints do not.
    values = [0] * 40 + [1] * 30 + [2] * 20 + list(range(3, 13))
    X = np.array(values, dtype=float).reshape(-1, 1)
    b = ThresholdBinarizer(strategy="quantile", max_thresholds=3).fit(X)
    assert b.thresholds_[0].tolist() == [0.5, 1.5, 2.5]
    b = ThresholdBinarizer(strategy="quantile", max_thresholds=2).fit(np.arange(10.0)[:, None])
    assert b.thresholds_[0].tolist() == [3.5, 6.5]
    b = ThresholdBinarizer(max_thresholds=3).fit(X)
    assert b.thresholds_[0].tolist() == [2.5, 6.5, 10.5]


def test_threshold_binarizer_rejects_non_numeric_and_missing(frame):
    with pytest.raises(
        DataError, match=r"ThresholdBinarizer takes numeric columns only, but column 'color'"
    ):
        ThresholdBinarizer().fit(frame[["rooms", "color"]])
    with pytest.raises(DataError, match="column 'owner' is categorical"):
        ThresholdBinarizer().fit(frame[["owner"]])
    with pytest.raises(DataError, match=r"column 'x0' holds a missing value \(nan\) at row 1"):
        ThresholdBinarizer().fit([[1.0], [np.nan]])
    b = ThresholdBinarizer().fit(frame[["rooms"]])
    with pytest.raises(DataError, match=r"column 'rooms' holds a missing value \(nan\) at row 0"):
        b.transform(pd.DataFrame({"rooms": [np.nan]}))
    with pytest.raises(DataError, match=r"column 'rooms' was numeric at fit time, but row 0"):
        b.transform(pd.DataFrame({"rooms": ["three"]}))


def test_threshold_binarizer_inverse_transform():
    X = np.array([[1.0, 10.0], [2.0, 20.0], [4.0, 20.0]])
    b = ThresholdBinarizer().fit(X)
    bits = b.transform(X)
    upper = b.inverse_transform(bits)
    np.testing.assert_array_equal(upper, [[1.5, 15.0], [3.0, np.inf], [np.inf, np.inf]])
    # Every value lies in the interval ending at its inverse, and re-transforming is stable
    # (transform refuses inf, so the open-ended top interval gets a large finite stand-in).
    assert np.all(X <= upper)
    np.testing.assert_array_equal(b.transform(np.where(np.isinf(upper), 1e9, upper)), bits)
    with pytest.raises(DataError, match=r"row 0 has bits \[1, 0\] for column 'x0'"):
        b.inverse_transform([[1, 0, 1]])
    with pytest.raises(DataError, match=r"X holds 3 at row 0 in column 'x0 <= 1\.5'"):
        b.inverse_transform([[3, 1, 1]])
    with pytest.raises(DataError, match="X has 2 columns, but inverse_transform expects 3"):
        b.inverse_transform([[1, 1]])


@settings(max_examples=40, deadline=None)
@given(st.lists(st.floats(-1e6, 1e6), min_size=1, max_size=40))
def test_threshold_round_trip(values):
    X = np.array(values).reshape(-1, 1)
    b = ThresholdBinarizer().fit(X)
    bits = b.transform(X)
    upper = b.inverse_transform(bits)
    assert np.all(X <= upper)
    np.testing.assert_array_equal(b.transform(np.where(np.isinf(upper), 1e9, upper)), bits)
    # Distinct training values never share a bit pattern.
    assert len({row.tobytes() for row in bits}) == len(np.unique(X))


def test_public_items_have_examples():
    import optitree.preprocessing as module

    for name in module.__all__:
        item = getattr(module, name)
        assert ">>>" in (item.__doc__ or ""), name
        if inspect.isclass(item):
            for method in ("fit", "transform", "inverse_transform", "get_feature_names_out"):
                assert ">>>" in getattr(item, method).__doc__, f"{name}.{method}"
