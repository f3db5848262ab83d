"""Tests of the ``optitree`` command line (optitree.cli), run in-process through ``main``."""

from __future__ import annotations

import io
import json
import re
import subprocess
import sys
import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

import optitree
from optitree import StumpClassifier, cli
from optitree.cli import Algorithm, AlgorithmOption, main, nonnegative_int
from optitree.datasets import load_dataset
from optitree.exceptions import NotProvenOptimalWarning
from optitree.export import load_json, save_json

# Rows of a small table: two text columns, one numeric column, a text label that is not the
# last column. The label is "yes" exactly when weight > 2.2, so the best stump is a threshold
# split on weight; no single categorical column is as good.
ROWS = [
    ("red", 1.5, "S", "no", "a"),
    ("blue", 2.5, "M", "yes", "b"),
    ("red", 3.0, "L", "yes", "c"),
    ("green", 0.5, "S", "no", "d"),
    ("blue", 4.0, "L", "yes", "e"),
    ("red", 2.0, "M", "no", "f"),
    ("green", 5.0, "L", "yes", "g"),
    ("blue", 1.0, "S", "no", "h"),
    ("green", 2.2, "M", "no", "i"),
    ("red", 3.5, "S", "yes", "j"),
]
COLUMNS = ["color", "weight", "size", "label", "note"]


@pytest.fixture
def table_csv(tmp_path):
    path = tmp_path / "table.csv"
    pd.DataFrame(ROWS, columns=COLUMNS).to_csv(path, index=False)
    return path


def run(capsys, *argv):
    """Runs the CLI; returns (exit code, stdout, stderr)."""
    code = main([str(a) for a in argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def assert_error(code, err, expected_code, *fragments):
    assert code == expected_code
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("optitree: error: ")
    for fragment in fragments:
        assert fragment in lines[0], (fragment, lines[0])


def result_lines(out):
    """The ``name: value`` result lines of ``optitree fit`` as a dict."""
    pattern = re.compile(
        r"^(objective|cost \(-log posterior\)|status|lower bound|upper bound|splits|leaves|depth|"
        r"training accuracy|time \(s\)):\s+(\S+)$"
    )
    return dict(m.groups() for line in out.splitlines() if (m := pattern.match(line)))


# ---------------------------------------------------------------------------
# Help, version, datasets
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("command", [[], ["datasets"], ["fit"], ["predict"], ["show"]])
def test_help(capsys, command):
    code, out, err = run(capsys, *command, "--help")
    assert code == 0
    assert out.startswith(f"usage: optitree {' '.join(command)}".rstrip())
    assert err == ""


def test_fit_help_lists_algorithms_and_options(capsys):
    _, out, _ = run(capsys, "fit", "--help")
    assert "--time-limit S" in out
    assert "stump" in out
    assert "--target COL" in out


def test_version(capsys):
    code, out, _ = run(capsys, "--version")
    assert code == 0
    assert out.strip() == f"optitree {optitree.__version__}"


def test_missing_command(capsys):
    code, _, err = run(capsys)
    assert_error(code, err, 2, "missing command", "fit")


def test_datasets(capsys):
    code, out, _ = run(capsys, "datasets")
    assert code == 0
    lines = out.splitlines()
    assert lines[0].split() == ["name", "rows", "features", "classes", "description"]
    rows = {line.split()[0]: line.split()[1:4] for line in lines[1:]}
    assert rows["monks-1"] == ["124", "6", "2"]
    assert rows["mushroom"] == ["8124", "22", "2"]
    # aligned: every column starts at the same offset on every line
    column = lines[0].index("description")
    for line in lines:
        assert line[column - 2 : column] == "  " and line[column] != " ", line
    rows_end = lines[0].index("rows") + len("rows")
    assert all(line[rows_end - 1].isdigit() for line in lines[1:])


# ---------------------------------------------------------------------------
# fit
# ---------------------------------------------------------------------------


def test_fit_dataset(capsys):
    # The default algorithm is Branches: the optimal sparse tree (paper: monk1-o, λ = 0.01).
    code, out, err = run(capsys, "fit", "--dataset", "monks-1")
    assert code == 0, err
    assert "rows: 124" in out
    assert "features: 6 (6 categorical, 0 numeric)" in out
    assert re.search(r"^  a5\s+categorical, 4 values$", out, re.M)
    assert re.search(r"^classes: 2", out, re.M)
    assert "|--- a5 = 1" in out  # the tree
    results = result_lines(out)
    assert results["status"] == "optimal"
    assert results["objective"] == "0.9"
    assert results["lower bound"] == results["upper bound"] == "0.9"
    assert (results["splits"], results["leaves"], results["depth"]) == ("10", "27", "3")
    assert results["training accuracy"] == "1"
    assert float(results["time (s)"]) >= 0
    assert "note:" not in out
    # summary, then tree, then results
    assert out.index("rows:") < out.index("|---") < out.index("objective:")


def test_fit_dataset_stump(capsys):
    code, out, err = run(capsys, "fit", "--dataset", "monks-1", "--algorithm", "stump")
    assert code == 0, err
    results = result_lines(out)
    assert results["status"] == "optimal"
    assert results["objective"] == results["training accuracy"] == "0.733871"
    assert (results["splits"], results["leaves"], results["depth"]) == ("1", "4", "1")


def test_fit_branches_options(capsys):
    code, out, err = run(
        capsys,
        "fit",
        "--dataset",
        "monks-1",
        "--penalty",
        "0.001",
        "--max-depth",
        "2",
        "--min-samples-leaf",
        "2",
        "--memory-limit",
        "1G",
        "--quiet",
    )
    assert code == 0, err
    results = result_lines(out)
    assert results["status"] == "optimal"
    assert int(results["depth"]) <= 2
    code, _, err = run(capsys, "fit", "--dataset", "monks-1", "--memory-limit", "lots")
    assert_error(code, err, 2, "--memory-limit", "'lots'")
    code, out, err = run(capsys, "fit", "--dataset", "monks-1", "--penalty", "1.5")
    assert out == ""  # refused before the data summary
    assert_error(code, err, 2, "--penalty", "a number in [0, 1]", "'1.5'")
    code, _, err = run(capsys, "fit", "--dataset", "monks-1", "--penalty", "0")
    assert_error(code, err, 2, "penalty=0", "max_depth")


def test_fit_branches_fewest_splits_option(capsys):
    common = ("fit", "--dataset", "monks-1", "--penalty", "0", "--max-depth", "3", "--quiet")
    results = {}
    for answer in ("yes", "no"):
        code, out, err = run(capsys, *common, "--fewest-splits", answer)
        assert code == 0, err
        results[answer] = result_lines(out)
        assert results[answer]["status"] == "optimal"
    yes, no = results["yes"], results["no"]
    assert yes["training accuracy"] == no["training accuracy"]
    assert int(yes["splits"]) <= int(no["splits"])
    code, _, err = run(capsys, *common, "--fewest-splits", "maybe")
    assert_error(code, err, 2, "--fewest-splits", "'maybe'")
    code, _, err = run(
        capsys, "fit", "--dataset", "monks-1", "--algorithm", "maptree", "--fewest-splits", "no"
    )
    assert_error(code, err, 2, "--fewest-splits", "maptree")


def test_fit_maptree_options(capsys):
    common = ("fit", "--dataset", "monks-1", "--algorithm", "maptree", "--quiet")
    results = []
    for n_jobs in ("1", "2"):
        code, out, err = run(capsys, *common, "--max-expansions", "20", "--n-jobs", n_jobs)
        assert code == 0, err
        results.append(result_lines(out))
    assert results[0]["status"] == "node_limit"
    # Two threads search exactly as one does.
    assert {k: v for k, v in results[0].items() if k != "time (s)"} == {
        k: v for k, v in results[1].items() if k != "time (s)"
    }
    code, _, err = run(capsys, *common, "--n-jobs", "0")
    assert_error(code, err, 2, "--n-jobs", "'0'")


@pytest.mark.parametrize("fmt, marker", [("dot", "digraph Tree {"), ("json", '"format"')])
def test_fit_formats(capsys, fmt, marker):
    """DOT and JSON alone on standard output (the summary on standard error): pipeable."""
    code, out, err = run(capsys, "fit", "--dataset", "monks-1", "--format", fmt)
    assert code == 0
    assert out.startswith(marker if fmt == "dot" else "{") and marker in out
    if fmt == "json":
        assert json.loads(out)["format"]
    assert result_lines(err)["status"] == "optimal"


def test_summary_says_which_number_columns_split_by_value(capsys, tmp_path):
    path = tmp_path / "ints.csv"
    path.write_text("x,z,label\n1,0.5,a\n2,1.5,b\n3,2.5,a\n4,3.5,b\n", encoding="utf-8")
    code, out, _ = run(capsys, "fit", path)  # branches: whole numbers are categories
    assert code == 0
    assert "x  categorical, 4 values (numbers, one branch per value)" in out
    assert "z  numeric, 4 distinct" in out
    code, out, _ = run(capsys, "fit", path, "--algorithm", "stump")
    assert code == 0 and "x  numeric, 4 distinct, 1 .. 4" in out


def test_maptree_reports_its_trees_cost_beside_its_bounds(capsys):
    code, out, _ = run(capsys, "fit", "--dataset", "monks-1", "--algorithm", "maptree", "-q")
    results = result_lines(out)
    assert code == 0 and results["status"] == "optimal"
    assert results["cost (-log posterior)"] == results["lower bound"] == results["upper bound"]


def test_fit_quiet(capsys):
    code, out, _ = run(capsys, "fit", "--dataset", "monks-1", "--quiet")
    assert code == 0
    assert "rows:" not in out and "|---" not in out
    assert result_lines(out)["status"] == "optimal"


@pytest.mark.parametrize("fmt", ["json", "dot"])
def test_fit_quiet_still_writes_dot_or_json(capsys, fmt):
    # The tree is the output asked for: --quiet silences only the summary around it.
    code, out, err = run(capsys, "fit", "--dataset", "monks-1", "--format", fmt, "--quiet")
    assert code == 0
    if fmt == "json":
        assert json.loads(out)["metadata"]["status"] == "optimal"
    else:
        assert out.startswith("digraph")
    assert "rows:" not in err and result_lines(err)["status"] == "optimal"


def test_fit_csv_with_target(capsys, table_csv):
    code, out, err = run(capsys, "fit", table_csv, "--target", "label")
    assert code == 0, err
    assert "rows: 10" in out
    assert "features: 4 (3 categorical, 1 numeric)" in out
    assert re.search(r"^  weight\s+numeric, 10 distinct, 0.5 .. 5$", out, re.M)
    assert re.search(r"^  color\s+categorical, 3 values$", out, re.M)
    assert re.search(r"^classes: 2 \(label column 'label'\)$", out, re.M)
    assert re.search(r"^  no\s+5$", out, re.M) and re.search(r"^  yes\s+5$", out, re.M)
    assert "|--- weight <= 2.35" in out
    results = result_lines(out)
    # One threshold split classifies every row: 1 - 0.01 with the default Branches penalty.
    assert results["objective"] == "0.99" and results["status"] == "optimal"


def test_fit_csv_default_target_is_last_column(capsys, tmp_path):
    path = tmp_path / "t.csv"
    pd.DataFrame(ROWS, columns=COLUMNS)[["color", "size", "weight", "label"]].to_csv(
        path, index=False
    )
    code, out, _ = run(capsys, "fit", path)
    assert code == 0
    assert "label column 'label'" in out


def test_fit_categorical_option(capsys, tmp_path):
    path = tmp_path / "codes.csv"
    pd.DataFrame({"a": [1, 2, 3, 1, 2, 3], "y": [0, 1, 1, 0, 1, 1]}).to_csv(path, index=False)
    code, out, _ = run(capsys, "fit", path, "--categorical", "a")
    assert code == 0
    assert re.search(r"^  a\s+categorical, 3 values$", out, re.M)
    assert "|--- a = 1" in out


def test_fit_save_metadata(capsys, table_csv, tmp_path):
    model = tmp_path / "model.json"
    code, out, _ = run(
        capsys, "fit", table_csv, "--target", "label", "--algorithm", "stump", "--save", model
    )
    assert code == 0
    assert f"saved model to {model}" in out
    tree, metadata = load_json(model)
    assert tree.feature_names == ["color", "weight", "size", "note"]
    assert metadata["algorithm"] == "stump"
    assert metadata["parameters"] == {"time_limit": None}
    assert metadata["status"] == "optimal"
    assert metadata["objective"] == metadata["lower_bound"] == metadata["upper_bound"] == 1.0
    assert metadata["target"] == "label"
    assert metadata["optitree_version"] == optitree.__version__
    assert metadata["source"]["csv"].endswith("table.csv")


def test_fit_passes_time_limit(capsys, tmp_path):
    model = tmp_path / "model.json"
    code, _, _ = run(capsys, "fit", "--dataset", "monks-1", "--time-limit", "30", "--save", model)
    assert code == 0
    parameters = load_json(model)[1]["parameters"]
    assert parameters["time_limit"] == 30.0
    assert parameters["penalty"] == 0.01  # the Branches default


@pytest.mark.parametrize(("value", "expected"), [("0", 0.0), ("inf", "inf")])  # JSON has no inf
def test_a_time_limit_of_zero_or_inf_is_taken_as_the_library_takes_it(
    capsys, tmp_path, value, expected
):
    model = tmp_path / "model.json"
    code, _, err = run(
        capsys, "fit", "--dataset", "monks-1", "--time-limit", value, "--save", model
    )
    assert code == 0, err
    assert load_json(model)[1]["parameters"]["time_limit"] == expected
    code, _, err = run(capsys, "fit", "--dataset", "monks-1", "--time-limit", "-1")
    assert code == 2 and "a number of seconds >= 0" in err


def test_maptree_takes_one_rho_for_every_class(capsys):
    # A single --rho value reached a len() and crashed with a TypeError.
    code, out, err = run(
        capsys, "fit", "--dataset", "monks-1", "--algorithm", "maptree", "--rho", "2.5"
    )
    assert code == 0, err
    assert "status:" in out


# ---------------------------------------------------------------------------
# The algorithm registry: a solver that stops early, an option that does not apply
# ---------------------------------------------------------------------------


class _StoppedEarly(StumpClassifier):
    """A stump that pretends its search ran out of time."""

    def __init__(self, time_limit=None, effort=None):
        self.time_limit = time_limit
        self.effort = effort

    def fit(self, X, y, sample_weight=None):
        super().fit(X, y, sample_weight)
        self.status_ = "time_limit"
        self.upper_bound_ = 1.0
        warnings.warn(
            "search stopped with status 'time_limit'", NotProvenOptimalWarning, stacklevel=2
        )
        return self


def _interrupting(**params):
    class Interrupted(StumpClassifier):
        def fit(self, X, y, sample_weight=None):
            raise KeyboardInterrupt

    return Interrupted(**params)


@pytest.fixture
def fake_algorithms(monkeypatch):
    effort = AlgorithmOption("--effort", "effort", nonnegative_int, "how hard to try", "N")
    monkeypatch.setitem(
        cli.ALGORITHMS,
        "stopped",
        Algorithm("stops early", _StoppedEarly, (cli._TIME_LIMIT, effort)),
    )
    monkeypatch.setitem(cli.ALGORITHMS, "interrupting", Algorithm("Ctrl-C", _interrupting))


def test_not_optimal_status_is_a_note(capsys, fake_algorithms):
    code, out, err = run(capsys, "fit", "--dataset", "monks-1", "--algorithm", "stopped")
    assert code == 0, err
    assert result_lines(out)["status"] == "time_limit"
    assert "note: search stopped with status 'time_limit'" in out


def test_a_search_stopped_by_ctrl_c_saves_its_tree_and_exits_130(capsys, tmp_path, monkeypatch):
    class Interrupted(_StoppedEarly):
        def fit(self, X, y, sample_weight=None):
            super().fit(X, y, sample_weight)
            self.status_ = "interrupted"
            return self

    monkeypatch.setitem(cli.ALGORITHMS, "ctrl-c", Algorithm("Ctrl-C", Interrupted))
    model = tmp_path / "model.json"
    code, out, err = run(
        capsys, "fit", "--dataset", "monks-1", "--algorithm", "ctrl-c", "--save", model
    )
    assert code == 130, err
    assert result_lines(out)["status"] == "interrupted" and model.exists()


def test_registry_option_applies_only_to_its_algorithms(capsys, fake_algorithms):
    _, out, _ = run(capsys, "fit", "--help")
    assert "--effort N" in out and "[stopped]" in out
    code, _, err = run(capsys, "fit", "--dataset", "monks-1", "--effort", "3")
    assert_error(code, err, 2, "--effort", "--algorithm branches", "stopped")
    code, _, err = run(
        capsys, "fit", "--dataset", "monks-1", "--algorithm", "stopped", "--effort", "-1"
    )
    assert_error(code, err, 2, "--effort")


def test_options_that_would_be_ignored_are_refused(capsys):
    for flag, value in (("--sep", ";"), ("--target", "class"), ("--categorical", "a1")):
        code, _, err = run(capsys, "fit", "--dataset", "monks-1", flag, value)
        assert_error(code, err, 2, f"{flag} applies to a CSV file, not to --dataset")
    code, _, err = run(
        capsys, "fit", "--dataset", "balance-scale", "--algorithm", "proper", "--degree", "3"
    )
    assert_error(
        code, err, 2, "--degree applies to --rule polynomial or mixed", "axis (the default)"
    )
    argv = ("fit", "--dataset", "balance-scale", "--algorithm", "proper", "--rule", "hyperplane")
    code, _, err = run(capsys, *argv, "--degree", "3")
    assert_error(code, err, 2, "not to --rule hyperplane")


def test_a_wrong_number_of_rho_values_lists_the_classes(capsys):
    code, out, err = run(
        capsys, "fit", "--dataset", "balance-scale", "--algorithm", "maptree", "--rho", "1,2"
    )
    assert out == ""
    assert_error(
        code, err, 2, "--rho has 2 values but the labels ('class') have 3 classes: B, L, R"
    )


def test_interrupt_outside_a_solver_exits_130(capsys, fake_algorithms):
    code, _, err = run(capsys, "fit", "--dataset", "monks-1", "--algorithm", "interrupting")
    assert code == 130
    assert "Traceback" not in err


# ---------------------------------------------------------------------------
# show and predict
# ---------------------------------------------------------------------------


@pytest.fixture
def saved(capsys, table_csv, tmp_path):
    """(model path, CSV path, estimator fitted by hand on the same data)."""
    model = tmp_path / "model.json"
    code, _, _ = run(capsys, "fit", table_csv, "--target", "label", "--save", model)
    assert code == 0
    frame = pd.read_csv(table_csv, keep_default_na=False, na_values=[""])
    estimator = StumpClassifier().fit(frame.drop(columns="label"), frame["label"])
    return model, table_csv, estimator


def test_show_text_dot_json(capsys, saved):
    model, _, estimator = saved
    code, out, _ = run(capsys, "show", model)
    assert code == 0
    assert out == optitree.export_text(estimator.tree_)
    code, out, _ = run(capsys, "show", model, "--format", "dot")
    assert code == 0 and out.startswith("digraph Tree {")
    code, out, _ = run(capsys, "show", model, "--format", "json")
    assert code == 0
    document = json.loads(out)
    assert document["format"] == "optitree.tree"
    assert document["metadata"]["target"] == "label"


def test_show_to_files(capsys, saved, tmp_path):
    pytest.importorskip("matplotlib")
    model = saved[0]
    png = tmp_path / "tree.png"
    code, _, err = run(capsys, "show", model, "--format", "png", "--output", png)
    assert code == 0, err
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    svg = tmp_path / "tree.svg"
    code, _, _ = run(capsys, "show", model, "-o", svg)  # format from the extension
    assert code == 0 and b"<svg" in svg.read_bytes()
    dot = tmp_path / "tree.dot"
    code, _, _ = run(capsys, "show", model, "-o", dot)
    assert code == 0 and dot.read_text().startswith("digraph")
    leftovers = [p.name for p in tmp_path.iterdir() if p.name.endswith((".tmp", ".tmp.png"))]
    assert leftovers == []


def test_show_image_needs_output(capsys, saved):
    code, _, err = run(capsys, "show", saved[0], "--format", "svg")
    assert_error(code, err, 2, "--output")


def test_show_refuses_image_files_it_would_fill_with_text(capsys, saved, tmp_path):
    pdf = tmp_path / "tree.pdf"
    code, _, err = run(capsys, "show", saved[0], "-o", pdf)
    assert_error(code, err, 2, "trees are drawn as .png or .svg")
    assert not pdf.exists()
    code, _, err = run(capsys, "show", saved[0], "--format", "text", "-o", tmp_path / "t.png")
    assert_error(code, err, 2, "--format text writes text", "is an image")


def test_predict(capsys, saved, tmp_path):
    model, data, estimator = saved
    code, out, err = run(capsys, "predict", model, data)
    assert code == 0, err
    got = pd.read_csv(io.StringIO(out))
    assert list(got.columns) == ["prediction"]
    frame = pd.read_csv(data, keep_default_na=False, na_values=[""])
    expected = estimator.predict(frame.drop(columns="label"))
    assert got["prediction"].tolist() == expected.tolist()


def test_predict_proba_to_file(capsys, saved, tmp_path):
    model, data, estimator = saved
    output = tmp_path / "out.csv"
    code, out, _ = run(capsys, "predict", model, data, "--proba", "--output", output)
    assert code == 0 and out == ""
    got = pd.read_csv(output)
    assert list(got.columns) == ["prediction", "proba_no", "proba_yes"]
    frame = pd.read_csv(data, keep_default_na=False, na_values=[""]).drop(columns="label")
    np.testing.assert_allclose(got[["proba_no", "proba_yes"]], estimator.predict_proba(frame))
    assert got["prediction"].tolist() == estimator.predict(frame).tolist()


def test_predict_without_target_with_extra_column_and_unseen_category(capsys, tmp_path):
    model = tmp_path / "monks.json"
    assert main(["fit", "--dataset", "monks-1", "--save", str(model), "-q"]) == 0
    frame = load_dataset("monks-1").data.astype(int)
    frame.loc[0, "a5"] = 9  # never seen in training: predicted from the root's counts
    frame.insert(0, "id", range(len(frame)))
    path = tmp_path / "new.csv"
    frame.to_csv(path, index=False)
    capsys.readouterr()
    code, out, err = run(capsys, "predict", model, path)
    assert code == 0
    assert "note: ignoring column(s) the model does not use: id" in err
    assert (
        "note: column 'a5' holds 1 value(s) not seen at fit time (the first: 9, row 1 after" in err
    )
    predictions = pd.read_csv(io.StringIO(out))["prediction"]
    assert len(predictions) == len(frame)
    tree, _ = load_json(model)
    with pytest.warns(optitree.UnseenCategoryWarning):
        assert predictions.tolist() == tree.predict(frame.drop(columns="id")).tolist()


def test_a_saved_maptree_predicts_raw_columns(capsys, tmp_path):
    """MAPTree splits derived 0/1 features (a category, a threshold): the saved model says how
    to derive them, so `predict` reads the same columns as `fit`, and agrees with the library,
    unseen categories included."""
    rng = np.random.default_rng(0)
    x = rng.normal(size=60)
    c = rng.choice(["u", "v", "w"], 60)
    frame = pd.DataFrame({"x": x, "c": c, "label": np.where((x > 0.3) | (c == "w"), "p", "n")})
    data = tmp_path / "train.csv"
    frame.to_csv(data, index=False)
    model = tmp_path / "map.json"
    code, _, err = run(capsys, "fit", data, "--algorithm", "maptree", "--save", model, "-q")
    assert code == 0, err
    new = frame.drop(columns="label")
    new.loc[0, "c"] = "z"  # never seen in training
    path = tmp_path / "new.csv"
    new.to_csv(path, index=False)
    code, out, err = run(capsys, "predict", model, path, "--proba")
    assert code == 0, err
    got = pd.read_csv(io.StringIO(out))
    assert (
        "note: column 'c' holds 1 value(s) not seen at fit time (the first: 'z', row 1 after" in err
    )
    clf = optitree.MAPTreeClassifier().fit(frame.drop(columns="label"), frame["label"])
    assert clf.tree_.get_n_splits() >= 2
    with pytest.warns(optitree.UnseenCategoryWarning, match="column 'c'"):
        assert got["prediction"].tolist() == clf.predict(new).tolist()
    assert list(got.columns) == ["prediction", "proba_n", "proba_p"]
    new["x"] = new["x"].astype(object)
    new.loc[1, "x"] = "abc"
    new.to_csv(path, index=False)
    code, _, err = run(capsys, "predict", model, path)
    assert_error(code, err, 1, "column 'x' needs numbers", "row 2 after the header", "'abc'")


def test_models_saved_from_python_predict_raw_columns_the_tree_splits(capsys, tmp_path):
    """A MAPTree saved as the estimator says how its 0/1 features come from the columns (its
    `tree_` alone cannot, and the error says so); only the columns a tree splits are needed."""
    rng = np.random.default_rng(1)
    frame = pd.DataFrame(
        {
            "age": rng.integers(20, 80, 150).astype(float),
            "color": rng.choice(["r", "g", "b"], 150),
            "noise": rng.normal(size=150),
        }
    )
    y = ((frame["age"] > 50) & (frame["color"] != "g")).astype(int)
    raw = tmp_path / "raw.csv"
    frame.drop(columns="noise").to_csv(raw, index=False)
    for estimator in (optitree.MAPTreeClassifier(), optitree.BranchesClassifier()):
        fitted = estimator.fit(frame, y)
        names = fitted.tree_.feature_names
        assert not any(names[j].startswith("noise") for j in fitted.tree_.used_features())
        model = tmp_path / "model.json"
        save_json(fitted, model)
        code, out, err = run(capsys, "predict", model, raw)
        assert code == 0, err
        got = pd.read_csv(io.StringIO(out))["prediction"].tolist()
        assert got == fitted.predict(frame).tolist()
    save_json(fitted.tree_, model)  # the Branches tree alone: nothing derived, still fine
    assert run(capsys, "predict", model, raw)[0] == 0
    maptree = optitree.MAPTreeClassifier().fit(frame, y)
    save_json(maptree.tree_, model)
    code, _, err = run(capsys, "predict", model, raw)
    assert_error(code, err, 1, "lacks column(s) the model splits", "save_json(model, path)")
    with pytest.raises(optitree.InvalidParameterError, match="not fitted yet"):
        save_json(optitree.MAPTreeClassifier(), model)
    # Not an optitree estimator: refused as not a tree, not as "not fitted".
    pipeline = make_pipeline(StandardScaler(), StumpClassifier()).fit(frame[["age"]], y)
    with pytest.raises(optitree.InvalidParameterError, match="got Pipeline"):
        save_json(pipeline, model)
    # A MAPTree that is a leaf splits no column, so none is needed.
    noise = np.random.default_rng(0)
    leaf = optitree.MAPTreeClassifier().fit(
        pd.DataFrame({"x0": noise.normal(size=40)}), noise.integers(0, 2, 40)
    )
    assert leaf.tree_.get_n_splits() == 0
    save_json(leaf, model)
    code, out, err = run(capsys, "predict", model, raw)
    assert code == 0 and out.splitlines()[1:] == [str(leaf.classes_[0])] * len(frame), err


def test_predict_names_empty_cells_and_short_rows_by_file_row(capsys, tmp_path):
    """An empty cell in a column the tree splits is refused with its row in the file (the
    library counts from 0, and MAPTree's derived features read it as an unseen category);
    one in a column the tree never reads is no obstacle; a training row cut short is named as
    such."""
    train = tmp_path / "train.csv"
    train.write_text("a,b,label\n1,x,0\n2,y,1\n3,x,0\n4,y,1\n5,x,1\n6,y,1\n")
    empty_a = tmp_path / "empty_a.csv"
    empty_a.write_text("a,b\n1,x\n,y\n3,x\n")
    for algorithm in ("branches", "maptree"):
        model = tmp_path / f"{algorithm}.json"
        code, _, err = run(capsys, "fit", train, "--algorithm", algorithm, "--save", model, "-q")
        assert code == 0, err
        code, _, err = run(capsys, "predict", model, empty_a)
        assert code == 1
        assert "row 2 after the header has an empty cell in 'a', a column the model splits" in err
    model = tmp_path / "branches.json"
    assert load_json(model)[0].feature_names[load_json(model)[0].used_features()[0]] == "a"
    empty_b = tmp_path / "empty_b.csv"
    empty_b.write_text("a,b\n1,\n2,x\n")
    code, out, err = run(capsys, "predict", model, empty_b)
    assert code == 0, err
    assert out.splitlines()[0] == "prediction" and len(out.splitlines()) == 3
    # A line of spaces is skipped, as pandas does, and does not count as a row.
    short = tmp_path / "short.csv"
    short.write_text("a,b\n1,x\n  \n2\n3,x\n")
    code, _, err = run(capsys, "fit", short, "-q")
    assert_error(code, err, 1, "row 2 after the header has 1 cell(s) but the header names 2")
    # New rows may leave out cells the tree never reads (here 'b', or a trailing label).
    code, out, err = run(capsys, "predict", model, short)
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0] == "prediction" and len(lines) == 4  # three rows, the spaces skipped


def test_one_odd_cell_does_not_make_a_whole_column_unseen(capsys, tmp_path):
    """One cell that is not a number made pandas read the whole column as text: the model's
    categories 0-3 then matched no cell ("2" is not 2) and every row was predicted as unseen,
    silently. The cells that spell a category count as it, the odd one is unseen (and said
    so), and a column split by value names its odd cell."""
    rng = np.random.default_rng(3)
    count, x = rng.integers(0, 4, 120), rng.normal(size=120)
    flag = rng.random(120) < 0.5
    label = np.where((count >= 2) ^ (x > 1.0), "hi", "lo")
    train = pd.DataFrame({"count": count, "x": x, "flag": flag, "label": label})
    data, model = tmp_path / "train.csv", tmp_path / "m.json"
    train.to_csv(data, index=False)
    for algorithm in ("branches", "maptree"):
        code, _, err = run(capsys, "fit", data, "--algorithm", algorithm, "--save", model, "-q")
        assert code == 0, err
        new = train.drop(columns="label").head(12)
        clean = tmp_path / "clean.csv"
        new.to_csv(clean, index=False)
        _, expected, _ = run(capsys, "predict", model, clean)
        odd = new.astype(object)
        odd.loc[3, "count"] = "?"
        odd.loc[4, "count"] = f"{new.loc[4, 'count']}.0"  # the same number, written otherwise
        odd["flag"] = ["TRUE" if f else "false" for f in new["flag"]]  # spelled differently
        odd.loc[6, "flag"] = "maybe"
        path = tmp_path / "odd.csv"
        odd.to_csv(path, index=False)
        code, out, err = run(capsys, "predict", model, path)
        assert code == 0, err
        got = pd.read_csv(io.StringIO(out))["prediction"].tolist()
        want = pd.read_csv(io.StringIO(expected))["prediction"].tolist()
        assert [g for i, g in enumerate(got) if i not in (3, 6)] == [
            w for i, w in enumerate(want) if i not in (3, 6)
        ]
        assert "column 'count' holds 1 value(s) not seen at fit time (the first: '?', row 4" in err
        odd.loc[3, "count"] = new.loc[3, "count"]
        odd.loc[5, "x"] = "n/a"
        odd.to_csv(path, index=False)
        code, _, err = run(capsys, "predict", model, path)
        assert code == 1 and "Traceback" not in err
        error = err.strip().splitlines()[-1]  # after a note on columns the model does not use
        assert "column 'x' needs numbers" in error and "row 6 after the header holds 'n/a'" in error


# ---------------------------------------------------------------------------
# Errors: one line, the right exit code, never a traceback
# ---------------------------------------------------------------------------


def test_error_output_paths_name_the_users_path(capsys, saved, tmp_path):
    """A directory, or a file in a missing directory, is refused before any work, by the path
    given (not the temporary file written first)."""
    model, data, _ = saved
    code, _, err = run(capsys, "predict", model, data, "-o", tmp_path)
    assert_error(code, err, 1, f"cannot write {str(tmp_path)!r}: it is a directory")
    code, _, err = run(capsys, "show", model, "-o", tmp_path)
    assert_error(code, err, 1, "it is a directory")
    code, _, err = run(capsys, "fit", "--dataset", "monks-1", "--save", tmp_path, "-q")
    assert_error(code, err, 1, "it is a directory")
    missing = tmp_path / "nodir" / "out.csv"
    code, _, err = run(capsys, "predict", model, data, "-o", missing)
    assert_error(code, err, 1, f"cannot write {str(missing)!r}: no directory")
    assert ".tmp" not in err


def test_error_empty_cells_name_their_row_and_column(capsys, tmp_path):
    path = tmp_path / "holes.csv"
    path.write_text("x,y,label\n1,,a\n2,3,b\n,1,\n", encoding="utf-8")
    code, out, err = run(capsys, "fit", path)
    assert out == ""
    assert_error(code, err, 1, "row 1 after the header has an empty cell in 'y'")
    path.write_text("x,y,label\n1,2,a\n2,3,b\n,1,\n", encoding="utf-8")
    code, _, err = run(capsys, "fit", path)
    assert_error(code, err, 1, "row 3 after the header", "'x', 'label (the labels)'")


def test_error_duplicate_or_blank_headers_are_named(capsys, tmp_path):
    path = tmp_path / "twice.csv"
    path.write_text("a,b,a,label\n1,2,3,x\n2,3,4,y\n", encoding="utf-8")
    code, out, err = run(capsys, "fit", path)
    assert out == ""
    assert_error(code, err, 1, "columns 1 and 3 are both named 'a'")
    pd.DataFrame(ROWS, columns=COLUMNS).to_csv(path)  # with pandas' unnamed index column
    code, _, err = run(capsys, "fit", path, "--target", "label")
    assert_error(code, err, 1, "column 1 has no name in the header row", "to_csv")


def test_spaces_around_cells_and_headers_are_dropped(capsys, tmp_path):
    path = tmp_path / "spaced.csv"
    rows = [f"{c}, {w} ,{'yes ' if w > 2 else ' no'}" for c, w, *_ in ROWS]
    path.write_text(" color , weight, label\n" + "\n".join(rows) + "\n", encoding="utf-8")
    code, out, err = run(capsys, "fit", path, "--target", "label")
    assert code == 0, err
    assert re.search(r"^classes: 2 \(label column 'label'\)$", out, re.M)
    assert re.search(r"^  color\s+categorical, 3 values$", out, re.M)
    assert "|--- weight <= " in out


def test_a_separator_of_several_characters_is_literal(capsys, tmp_path):
    path = tmp_path / "double.csv"
    frame = pd.DataFrame(ROWS, columns=COLUMNS)[["color", "weight", "label"]]
    path.write_text(frame.to_csv(index=False).replace(",", "||"), encoding="utf-8")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # pandas warns when it picks its engine itself
        code, out, err = run(capsys, "fit", path, "--sep", "||", "--target", "label")
    assert code == 0, err
    assert "rows: 10" in out and "features: 2 (1 categorical, 1 numeric)" in out


def test_error_fractional_labels_point_at_target(capsys, tmp_path):
    path = tmp_path / "first.csv"
    path.write_text("label,x\na,1.5\nb,2.5\na,3.5\n", encoding="utf-8")
    code, out, err = run(capsys, "fit", path)
    assert out == ""
    assert_error(code, err, 1, "'x' (the last column) holds numbers such as 1.5", "--target")
    code, _, err = run(capsys, "fit", path, "--target", "x")
    assert_error(code, err, 1, "the label column 'x' holds numbers such as 1.5, not classes")
    assert "--target" not in err


def test_error_missing_csv(capsys, tmp_path):
    code, _, err = run(capsys, "fit", tmp_path / "nope.csv")
    assert_error(code, err, 1, "nope.csv", "no such file")


def test_error_missing_target_column(capsys, table_csv):
    code, _, err = run(capsys, "fit", table_csv, "--target", "outcome")
    assert_error(code, err, 1, "'outcome'", "color, weight, size, label, note")


def test_error_garbage_model(capsys, tmp_path, table_csv):
    model = tmp_path / "garbage.json"
    model.write_text("this is not json")
    code, _, err = run(capsys, "show", model)
    assert_error(code, err, 1, "garbage.json", "not an optitree model")
    code, _, err = run(capsys, "predict", model, table_csv)
    assert_error(code, err, 1, "not an optitree model")


def test_error_newer_schema_version(capsys, saved, tmp_path):
    document = json.loads(saved[0].read_text())
    document["schema_version"] = 99  # beyond what this optitree reads
    newer = tmp_path / "newer.json"
    newer.write_text(json.dumps(document))
    code, _, err = run(capsys, "show", newer)
    assert_error(code, err, 1, "newer.json", "schema version", "upgrade optitree")


def test_error_missing_model(capsys, tmp_path, table_csv):
    code, _, err = run(capsys, "predict", tmp_path / "none.json", table_csv)
    assert_error(code, err, 1, "none.json")


def test_error_unknown_dataset(capsys):
    code, _, err = run(capsys, "fit", "--dataset", "monk-1")
    assert_error(code, err, 2, "unknown dataset 'monk-1'", "did you mean 'monks-1'")


def test_error_unknown_algorithm(capsys):
    code, _, err = run(capsys, "fit", "--dataset", "monks-1", "--algorithm", "magic")
    assert_error(code, err, 2, "--algorithm", "'magic'", "stump")


@pytest.mark.parametrize("value", ["-1", "-0.5", "soon", "nan"])
def test_error_bad_time_limit(capsys, value):
    code, _, err = run(capsys, "fit", "--dataset", "monks-1", "--time-limit", value)
    assert_error(code, err, 2, "--time-limit", value)


@pytest.mark.parametrize(
    "argv, fragment",
    [
        (["fit"], "no data"),
        (["fit", "x.csv", "--dataset", "monks-1"], "not both"),
        (["fit", "--dataset", "monks-1", "--target", "class"], "--target"),
        (["fit", "--dataset", "monks-1", "--bogus"], "--bogus"),
    ],
)
def test_usage_errors(capsys, argv, fragment):
    code, _, err = run(capsys, *argv)
    assert_error(code, err, 2, fragment)


def test_error_save_to_missing_directory(capsys, tmp_path):
    target = tmp_path / "no" / "such" / "model.json"
    code, out, err = run(capsys, "fit", "--dataset", "monks-1", "--save", target)
    assert_error(code, err, 1, "model.json", "no directory")
    assert out == ""  # found before fitting


def test_error_bad_data(capsys, tmp_path):
    path = tmp_path / "holes.csv"
    path.write_text("a,b,y\n1,,x\n2,3,y\n")
    code, _, err = run(capsys, "fit", path)
    assert_error(code, err, 1, "'b'")


def test_error_predict_missing_feature_column(capsys, saved, tmp_path):
    path = tmp_path / "partial.csv"
    pd.DataFrame({"color": ["red"], "size": ["S"]}).to_csv(path, index=False)
    code, _, err = run(capsys, "predict", saved[0], path)
    # The stump splits 'weight'; the 'note' column it never reads is not asked for.
    assert_error(code, err, 1, "lacks column(s) the model splits: weight; its columns")


# ---------------------------------------------------------------------------
# python -m optitree
# ---------------------------------------------------------------------------


def test_python_dash_m_help():
    done = subprocess.run(
        [sys.executable, "-m", "optitree", "--help"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("usage: optitree")
    for command in ("datasets", "fit", "predict", "show"):
        assert command in done.stdout


def test_cells_read_as_text_are_matched_by_value():
    """How a column pandas read as text (one odd cell) is read as the model's type."""
    from optitree.cli import CLIError, _typed_like

    cells = pd.Series(["2", " 2.0", "+2", "?", "0.10", "TRUE", "false", "1"], dtype=object)
    typed = _typed_like(cells, [0, 1, 2, 3], "count", "f.csv").tolist()
    # The model's own labels, found by value (as pandas matches a clean column's numbers).
    assert typed == [2, 2, 2, "?", 0.1, 1, 0, 1]
    assert all(type(v) is int for k, v in enumerate(typed) if k not in (3, 4))
    flags = _typed_like(cells, [False, True], "flag", "f.csv").tolist()
    assert flags[5:] == [True, False, True] and all(type(v) is bool for v in flags[5:])
    # Text categories stay text, whatever they look like.
    assert _typed_like(cells, ["2", "?"], "c", "f.csv") is cells
    # A column split by value: booleans count as 1/0, the first other text is named.
    numbers = _typed_like(pd.Series(["1.5", "True", None], dtype=object), None, "x", "f.csv")
    assert numbers.tolist()[:2] == [1.5, 1.0]
    with pytest.raises(CLIError, match=r"column 'x' needs numbers.*row 3 after the header.*'n/a'"):
        _typed_like(pd.Series(["1", "True", "n/a"], dtype=object), None, "x", "f.csv")
