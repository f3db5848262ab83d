"""`optitree fit --algorithm proper`: the command line drives ProperTreeClassifier."""

import json

import numpy as np
import pandas as pd
import pytest

from optitree.cli import main


@pytest.fixture
def oblique_csv(tmp_path):
    rng = np.random.default_rng(5)
    X = rng.normal(size=(40, 2))
    y = np.where(X[:, 0] + 2 * X[:, 1] > 0.3, "in", "out")
    path = tmp_path / "points.csv"
    pd.DataFrame({"u": X[:, 0], "v": X[:, 1], "label": y}).to_csv(path, index=False)
    return path


def test_fits_a_hyperplane_tree_and_prints_its_certificate(oblique_csv, capsys):
    code = main(
        [
            "fit",
            str(oblique_csv),
            "--algorithm",
            "proper",
            "--rule",
            "hyperplane",
            "--n-splits",
            "1",
            "--n-jobs",
            "2",
        ]
    )
    out = capsys.readouterr().out
    assert code == 0
    assert "status:            optimal" in out
    assert "objective:         0" in out
    # The oblique test reads in the column names.
    assert "*u" in out and "*v" in out


def test_saved_model_predicts_like_the_fit(oblique_csv, tmp_path, capsys):
    model = tmp_path / "model.json"
    args = [
        "fit",
        str(oblique_csv),
        "--algorithm",
        "proper",
        "--rule",
        "hyperplane",
        "--n-splits",
        "2",
        "--exactly",
        "yes",
        "--save",
        str(model),
        "--quiet",
    ]
    assert main(args) == 0
    saved = json.loads(model.read_text())
    assert saved["tree"]["kind"][0] == 3  # oblique root
    capsys.readouterr()
    assert main(["predict", str(model), str(oblique_csv)]) == 0
    predicted = capsys.readouterr().out.split()
    truth = pd.read_csv(oblique_csv)["label"].tolist()
    assert sum(p == t for p, t in zip(predicted[-40:], truth)) == 40


@pytest.mark.parametrize(
    ("option", "value", "message"),
    [
        ("--rule", "circle", "expected one of"),
        ("--exactly", "maybe", "expected yes or no"),
        ("--n-jobs", "0", "-1"),
    ],
)
def test_bad_options_name_the_problem(oblique_csv, option, value, message, capsys):
    assert main(["fit", str(oblique_csv), "--algorithm", "proper", option, value]) != 0
    assert message in capsys.readouterr().err


def test_penalty_does_not_apply_to_proper(oblique_csv, capsys):
    code = main(["fit", str(oblique_csv), "--algorithm", "proper", "--penalty", "0.1"])
    assert code != 0
    assert "--penalty does not apply to --algorithm proper" in capsys.readouterr().err


def test_verbose_prints_progress_with_an_eta(capsys):
    import warnings

    from optitree import NotProvenOptimalWarning, ProperTreeClassifier

    rng = np.random.default_rng(1)
    X = rng.normal(size=(60, 2))
    y = (X[:, 0] * X[:, 1] > 0).astype(int)
    clf = ProperTreeClassifier(
        n_splits=2, rule="hyperplane", exactly=True, verbose=1, n_jobs=2, time_limit=1.5
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NotProvenOptimalWarning)
        clf.fit(X, y)
    err = capsys.readouterr().err
    assert "[proper]" in err and "ETA" in err


def test_categorical_columns_are_refused_with_the_way_out(capsys):
    """Before any work, naming the columns and what to do from the command line."""
    assert main(["fit", "--dataset", "monks-1", "--algorithm", "proper"]) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    assert "6 column(s) are categorical ('a1', 'a2'" in captured.err
    assert "use --algorithm branches, maptree or stump" in captured.err


def test_memory_limit_applies_to_proper(tmp_path, capsys):
    rng = np.random.default_rng(7)
    X = rng.normal(size=(300, 3))
    path = tmp_path / "cloud.csv"
    frame = pd.DataFrame(X, columns=["a", "b", "c"]).assign(label=(X[:, 0] > 0).astype(int))
    frame.to_csv(path, index=False)
    args = ["fit", str(path), "--algorithm", "proper", "--rule", "hyperplane", "--n-splits", "4"]
    code = main([*args, "--time-limit", "60", "--memory-limit", "10M"])
    out = capsys.readouterr().out
    assert code == 0
    assert "status:            memory_limit" in out
