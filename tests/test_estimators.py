"""Estimator machinery shared by every classifier, exercised through StumpClassifier."""

import pickle
import random
import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone
from sklearn.utils.estimator_checks import parametrize_with_checks

import optitree
from optitree import NotProvenOptimalWarning, StumpClassifier, export_text
from optitree.datasets import load_monks
from optitree.exceptions import DataError, InvalidParameterError, UnseenCategoryWarning
from oracles import best_stump_accuracy, random_categorical


@parametrize_with_checks([StumpClassifier()])
def test_scikit_learn_conventions(estimator, check):
    check(estimator)


def test_agrees_with_brute_force_on_random_instances():
    rng = random.Random(2026)
    for _ in range(300):
        n = rng.randrange(1, 25)
        X, y = random_categorical(rng, n, rng.randrange(1, 4), rng.randrange(1, 4), 3)
        w = [rng.choice([0.5, 1.0, 2.0]) for _ in range(n)]
        df = pd.DataFrame(X, columns=[f"c{j}" for j in range(len(X[0]))]).astype("category")
        clf = StumpClassifier().fit(df, y, sample_weight=w)
        expected = best_stump_accuracy(X, y, w)
        assert clf.status_ == "optimal"
        assert clf.lower_bound_ == pytest.approx(expected, abs=1e-12)
        # The returned tree, re-scored by routing the rows, reproduces the reported optimum.
        assert clf.objective_ == pytest.approx(expected, abs=1e-12)


def test_a_scalar_sample_weight_weighs_every_row_alike():
    X, y = [[0], [0], [1], [1]], [0, 1, 1, 1]
    clf = StumpClassifier().fit(X, y, sample_weight=2.0)
    assert clf.objective_ == clf.lower_bound_ == clf.upper_bound_ == 0.75
    assert clf.training_accuracy(X, y, sample_weight=2.0) == 0.75


def test_string_labels_dataframes_and_names():
    X, y = load_monks(1, return_X_y=True)
    labels = np.where(y == 1, "yes", "no")
    clf = StumpClassifier().fit(X, labels)
    assert clf.classes_.tolist() == ["no", "yes"]
    assert clf.feature_names_in_.tolist() == list(X.columns)
    assert set(clf.predict(X)) <= {"no", "yes"}
    text = export_text(clf.tree_)
    assert text.startswith("|--- a5 = ")
    assert clf.predict_proba(X).shape == (len(X), 2)


@pytest.mark.parametrize(
    "estimator",
    [
        StumpClassifier(),
        optitree.BranchesClassifier(),
        optitree.MAPTreeClassifier(),
        optitree.ProperTreeClassifier(n_splits=1),
    ],
    ids=lambda e: type(e).__name__,
)
def test_predict_log_proba_is_the_log_of_predict_proba(estimator):
    X = np.array([[0.0], [0.0], [1.0], [1.0], [2.0]])
    y = [0, 0, 1, 1, 1]
    clf = estimator.fit(X, y)
    proba = clf.predict_proba(X)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # log 0 is -inf, without a RuntimeWarning
        logs = clf.predict_log_proba(X)
    np.testing.assert_array_equal(
        logs, np.log(proba, where=proba > 0, out=np.full_like(proba, -np.inf))
    )
    # Pure leaves give probability 0, and log 0 is -inf (MAPTree's posterior means never 0).
    assert (proba == 0).any() != isinstance(estimator, optitree.MAPTreeClassifier)
    assert (logs[proba == 0] == -np.inf).all()


def test_non_contiguous_integer_labels():
    X = np.array([[0.0], [1.0], [2.0], [3.0]])
    y = np.array([10, 10, 30, 30])
    clf = StumpClassifier().fit(X, y)
    assert clf.classes_.tolist() == [10, 30]
    assert clf.predict(X).tolist() == [10, 10, 30, 30]
    assert clf.tree_.threshold[0] == 1.5


def test_single_class_gives_a_leaf():
    clf = StumpClassifier().fit([[0.0], [1.0]], ["a", "a"])
    assert clf.get_n_leaves() == 1 and clf.predict([[5.0]]).tolist() == ["a"]


def test_clone_and_pickle_keep_behaviour():
    X, y = load_monks(2, return_X_y=True)
    clf = StumpClassifier(time_limit=5).fit(X, y)
    restored = pickle.loads(pickle.dumps(clf))
    assert restored.tree_ == clf.tree_
    np.testing.assert_array_equal(restored.predict(X), clf.predict(X))
    assert clone(clf).get_params() == {"time_limit": 5}


def test_exhausted_time_limit_warns_and_still_returns_a_tree():
    X, y = load_monks(1, return_X_y=True)
    with pytest.warns(NotProvenOptimalWarning, match="time_limit"):
        clf = StumpClassifier(time_limit=1e-9).fit(X, y)
    assert clf.status_ == "time_limit"
    assert clf.lower_bound_ <= clf.upper_bound_
    assert clf.predict(X).shape == (len(X),)


def test_unseen_category_predicts_with_the_root_distribution():
    X = pd.DataFrame({"colour": ["red", "red", "blue", "blue", "blue"]})
    clf = StumpClassifier().fit(X, [1, 1, 0, 0, 1])
    new = pd.DataFrame({"colour": ["green"]})
    with pytest.warns(UnseenCategoryWarning, match=r"column 'colour' holds 1 value.*'green'"):
        np.testing.assert_allclose(clf.predict_proba(new), [[2 / 5, 3 / 5]])


@pytest.mark.parametrize(
    ("X", "y", "message"),
    [
        (np.empty((0, 2)), [], "0 sample"),
        ([[0.0], [1.0]], [0, 1, 1], "2 rows but y has 3"),
        ([[0.0], [np.nan]], [0, 1], "NaN"),
        ([[0.0], [np.inf]], [0, 1], "inf"),
        (pd.DataFrame({"age": [1.0, np.nan]}), [0, 1], "age"),
    ],
)
def test_bad_input_is_named(X, y, message):
    with pytest.raises(DataError, match=message):
        StumpClassifier().fit(X, y)


def test_bad_parameters_are_named():
    with pytest.raises(InvalidParameterError, match="time_limit must be"):
        StumpClassifier(time_limit=-1).fit([[0.0]], [0])


def test_predicting_with_the_wrong_columns_is_an_error():
    clf = StumpClassifier().fit(pd.DataFrame({"a": [0.0, 1.0], "b": [1.0, 0.0]}), [0, 1])
    with pytest.raises(DataError, match="b"):
        clf.predict(pd.DataFrame({"a": [0.0]}))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        clf.predict(pd.DataFrame({"b": [0.0], "a": [1.0]}))  # reordered columns are fine


def test_names_seen_at_fit_but_not_at_predict_warn_as_in_scikit_learn():
    frame = pd.DataFrame({"a": [0.0, 1.0, 0.0, 1.0], "b": [1.0, 1.0, 0.0, 0.0]})
    named = StumpClassifier().fit(frame, [0, 1, 0, 1])
    with pytest.warns(UserWarning, match="does not have valid feature names, but StumpClass"):
        assert named.predict(frame.to_numpy()).tolist() == [0, 1, 0, 1]
    unnamed = StumpClassifier().fit(frame.to_numpy(), [0, 1, 0, 1])
    with pytest.warns(UserWarning, match="X has feature names, but StumpClassifier was fitted"):
        assert unnamed.predict(frame.rename(columns={"a": "u", "b": "v"})).tolist() == [0, 1, 0, 1]


def test_numbered_columns_are_not_feature_names():
    # pd.DataFrame(array) has columns 0, 1, ...: scikit-learn sets no feature_names_in_ and
    # matches such columns by position, so arrays predict without a warning.
    X = np.array([[0.0, 1.0], [1.0, 1.0], [0.0, 0.0], [1.0, 0.0]])
    clf = StumpClassifier().fit(pd.DataFrame(X, columns=[10, 20]), [0, 1, 0, 1])
    assert not hasattr(clf, "feature_names_in_")
    assert "10" in export_text(clf.tree_)  # the tree still reads its columns' names
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert clf.predict(X).tolist() == [0, 1, 0, 1]
        assert clf.predict(pd.DataFrame(X)).tolist() == [0, 1, 0, 1]


def test_a_failed_refit_leaves_the_estimator_unfitted():
    # A stale tree read with the new fit's classes predicted wrong labels without a word.
    from sklearn.exceptions import NotFittedError

    from optitree import InfeasibleError, MAPTreeClassifier, ProperTreeClassifier, QueryTree

    rng = np.random.default_rng(5)
    X = rng.normal(size=(40, 3))
    y = (X[:, 0] > 0).astype(int)
    proper = ProperTreeClassifier(n_splits=2).fit(X, y)
    proper.set_params(n_splits=3, exactly=True, max_depth=1)
    with pytest.raises(InfeasibleError):
        proper.fit(X[:4], ["a", "b", "c", "a"])
    maptree = MAPTreeClassifier().fit(X > 0, y)
    maptree.set_params(rho=(1.0, 2.0))
    with pytest.raises(InvalidParameterError, match="rho"):
        maptree.fit(X > 0, np.arange(40) % 3)
    for estimator in (proper, maptree):
        assert not hasattr(estimator, "tree_") and not hasattr(estimator, "status_")
        with pytest.raises(NotFittedError):
            estimator.predict(X[:3])
    query = QueryTree().fit(np.eye(4))
    query.set_params(criterion="optimal")
    with pytest.raises(InvalidParameterError):
        query.fit(np.eye(25))
    assert not hasattr(query, "tree_") and not hasattr(query, "cost_")


@pytest.mark.parametrize("name", ["BranchesClassifier", "MAPTreeClassifier", "StumpClassifier"])
def test_a_time_limit_of_zero_returns_the_first_tree(name):
    import optitree

    X, y = load_monks(1, return_X_y=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NotProvenOptimalWarning)
        clf = getattr(optitree, name)(time_limit=0).fit(X, y)
    assert clf.status_ in ("time_limit", "optimal")
    assert clf.lower_bound_ <= clf.upper_bound_
    assert clf.predict(X).shape == (len(y),)


@pytest.mark.parametrize(
    "name", ["BranchesClassifier", "MAPTreeClassifier", "ProperTreeClassifier"]
)
def test_a_memory_limit_beyond_any_machine_is_no_limit(name):
    # 2**70 bytes once reached the core as an OverflowError.
    import optitree

    X = np.random.default_rng(0).normal(size=(30, 2))
    y = (X[:, 0] > 0).astype(int)
    assert getattr(optitree, name)(memory_limit=2**70).fit(X, y).status_ == "optimal"


def test_proper_trees_take_memory_limit_last_and_old_pickles_read_it_as_unset():
    from optitree import ProperTreeClassifier

    # Positional parameters keep their places (memory_limit came after them all).
    clf = ProperTreeClassifier(2, "axis", 2, False, "misclassification", None, 1, None, 2)
    assert clf.n_jobs == 2 and clf.memory_limit is None
    old = ProperTreeClassifier()
    del old.__dict__["memory_limit"]  # as an estimator pickled before the parameter
    assert pickle.loads(pickle.dumps(old)).get_params()["memory_limit"] is None


@pytest.mark.parametrize(
    "name", ["BranchesClassifier", "MAPTreeClassifier", "ProperTreeClassifier"]
)
def test_verbose_takes_true_and_false_as_scikit_learn_does(name, capsys):
    import optitree

    X = np.random.default_rng(0).normal(size=(30, 2))
    y = (X[:, 0] > 0).astype(int)
    for flag in (True, False):
        assert getattr(optitree, name)(verbose=flag).fit(X, y).status_ == "optimal"
    with pytest.raises(InvalidParameterError, match="verbose must be an integer >= 0"):
        getattr(optitree, name)(verbose=-1).fit(X, y)


def test_unseen_categories_warn_at_the_callers_line_and_never_on_training_data():
    X = pd.DataFrame({"colour": ["red", "red", "blue", "blue", "blue"], "n": [1.0, 2, 3, 4, 5]})
    y = [1, 1, 0, 0, 1]
    with warnings.catch_warnings():
        warnings.simplefilter("error", UnseenCategoryWarning)
        clf = StumpClassifier().fit(X, y)  # fit scores its training rows
        clf.score(X, y)
    with pytest.warns(UnseenCategoryWarning) as caught:
        clf.predict(X.assign(colour=["red", "green", "blue", "blue", "teal"]))
    assert len(caught) == 1 and caught[0].filename == __file__
    assert "holds 2 value(s)" in str(caught[0].message) and "'green' at row 1" in str(
        caught[0].message
    )


@pytest.mark.parametrize("name", ["BranchesClassifier", "MAPTreeClassifier"])
def test_unseen_categories_warn_only_for_columns_the_tree_reads(name):
    """A value never seen at fit time in a column the tree does not split changes no
    prediction: warning about it would send the user hunting for a problem that is not there."""
    X = pd.DataFrame({"shape": list("aabb") * 5, "noise": list("xyzw") * 5})
    y = [0, 0, 1, 1] * 5
    clf = getattr(optitree, name)().fit(X, y)
    assert "shape" in export_text(clf.tree_) and "noise" not in export_text(clf.tree_)
    with warnings.catch_warnings():
        warnings.simplefilter("error", UnseenCategoryWarning)
        assert clf.predict(X.assign(noise="new")).tolist() == y
        if name == "BranchesClassifier":  # its tree reads the input columns themselves
            assert clf.tree_.predict(X.assign(noise="new")).tolist() == y
    with pytest.warns(UnseenCategoryWarning, match="column 'shape'"):
        clf.predict(X.assign(shape="new"))


@pytest.mark.parametrize(
    "estimator, bad",
    [
        (StumpClassifier(), {"time_limit": -1}),
        (optitree.BranchesClassifier(), {"penalty": 2}),
        (optitree.MAPTreeClassifier(), {"alpha": 2}),
        (optitree.ProperTreeClassifier(n_splits=1), {"n_splits": 0}),
    ],
    ids=lambda p: type(p).__name__ if not isinstance(p, dict) else "",
)
def test_a_fit_refused_for_its_parameters_leaves_no_stale_tree(estimator, bad):
    X, y = [[0.0], [1.0], [2.0], [3.0]], [0, 0, 1, 1]
    estimator.fit(X, y)
    estimator.set_params(**bad)
    with pytest.raises(InvalidParameterError):
        estimator.fit(X, y)
    assert not hasattr(estimator, "tree_") and not hasattr(estimator, "status_")
