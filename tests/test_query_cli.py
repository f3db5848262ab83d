"""The query-tree command line, datasets, plots and limits (the estimator itself is covered by
test_query.py)."""

from __future__ import annotations

import json
import math
import warnings

import numpy as np
import pytest

import optitree
from optitree import NotProvenOptimalWarning, QueryTree
from optitree.cli import main
from optitree.datasets import load_zoo_queries, make_threshold_active_learning, zipf_prior
from optitree.query import QuestionTree


@pytest.fixture
def objects_csv(tmp_path):
    path = tmp_path / "objects.csv"
    path.write_text(
        "name,weight,kind,fever,cough,rash\n"
        "flu,5,viral,1,1,0\n"
        "cold,8,viral,0,1,0\n"
        "measles,1,viral,1,0,1\n"
        "allergy,6,other,0,0,1\n"
        "healthy,10,other,0,0,0\n",
        encoding="utf-8",
    )
    return path


@pytest.fixture
def plain_csv(tmp_path):
    path = tmp_path / "plain.csv"
    path.write_text(
        "name,weight,fever,cough,rash\n"
        "flu,5,1,1,0\ncold,8,0,1,0\nmeasles,1,1,0,1\nallergy,6,0,0,1\nhealthy,10,0,0,0\n",
        encoding="utf-8",
    )
    return path


def test_cli_prints_tree_and_costs(objects_csv, capsys):
    assert (
        main(
            ["query", str(objects_csv), "--prior", "weight", "--group", "kind", "--cost-base", "2"]
        )
        == 0
    )
    out = capsys.readouterr()
    assert "5 objects, 3 queries; identify the group" in out.out
    assert "criterion lambda-ggbs at cost base λ = 2 (greedy)" in out.out
    assert "Q1." in out.out and "?" in out.out
    assert "normalised" in out.err  # the weights do not sum to 1


def test_cli_object_identification_json_output(plain_csv, tmp_path, capsys):
    target = tmp_path / "tree.json"
    code = main(
        [
            "query",
            str(plain_csv),
            "--prior",
            "weight",
            "--format",
            "json",
            "-o",
            str(target),
            "--cost-base",
            "inf",
        ]
    )
    assert code == 0
    assert f"wrote {target}" in capsys.readouterr().out
    tree = optitree.from_json(target.read_text(encoding="utf-8"))
    assert isinstance(tree, QuestionTree)
    assert sorted(tree.object_names) == ["allergy", "cold", "flu", "healthy", "measles"]
    doc = json.loads(target.read_text(encoding="utf-8"))
    assert doc["metadata"]["cost_base"] is None and doc["metadata"]["status"] == "greedy"


def test_cli_interactive_session(plain_csv, monkeypatch, capsys):
    qt = QueryTree().fit(
        np.array([[1, 1, 0], [0, 1, 0], [1, 0, 1], [0, 0, 1], [0, 0, 0]]),
        prior=np.array([5, 8, 1, 6, 10]) / 30,
    )
    row = np.array([1, 0, 1])  # measles
    questions = []

    def answer(prompt: str) -> str:
        questions.append(prompt)
        name = prompt.split(". ", 1)[1].rstrip("? ")
        return "y" if row[["fever", "cough", "rash"].index(name)] else "n"

    monkeypatch.setattr("builtins.input", answer)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert main(["query", str(plain_csv), "--prior", "weight", "-i"]) == 0
    out = capsys.readouterr().out
    assert "=> measles" in out
    assert len(questions) == qt.tree_.object_depths()[2]


def test_cli_interactive_quit_and_early_end_say_where_they_stopped(
    plain_csv, tmp_path, monkeypatch, capsys
):
    replies = iter(["q"])
    monkeypatch.setattr("builtins.input", lambda prompt: next(replies))
    args = ["query", str(plain_csv), "--prior", "weight", "-i"]
    assert main(args) == 0  # quitting is the user's choice
    out = capsys.readouterr().out
    assert "stopped after 0 questions; 5 candidates left:" in out and "healthy  0.333" in out

    def ends(prompt: str) -> str:
        raise EOFError

    monkeypatch.setattr("builtins.input", ends)
    assert main([*args, "-o", str(tmp_path / "tree.txt")]) == 1
    captured = capsys.readouterr()
    assert "the answers ended before the object was identified" in captured.err
    assert "--output and --format apply to the printed tree" in captured.err
    assert "5 candidates left" in captured.out


def test_cli_output_format_follows_the_extension(plain_csv, tmp_path, capsys):
    base = ["query", str(plain_csv), "--prior", "weight"]
    assert main([*base, "-o", str(tmp_path / "q.json")]) == 0
    assert json.loads((tmp_path / "q.json").read_text())["format"] == "optitree.question_tree"
    assert main([*base, "-o", str(tmp_path / "q.gv")]) == 0
    assert (tmp_path / "q.gv").read_text().startswith("digraph")
    assert main([*base, "-o", str(tmp_path / "q.txt"), "--format", "json"]) == 0
    assert (tmp_path / "q.txt").read_text().startswith("{")
    capsys.readouterr()


def test_cli_unidentifiable_objects_point_at_the_option(tmp_path, capsys):
    path = tmp_path / "dup.csv"
    path.write_text("name,a,b\nx,1,0\ny,1,0\nz,0,1\n", encoding="utf-8")
    assert main(["query", str(path), "--name", "name"]) == 1
    err = capsys.readouterr().err
    assert "use --on-unidentifiable leaf (stop at an ambiguous leaf) or merge" in err
    assert "on_unidentifiable=" not in err
    assert main(["query", str(path), "--name", "name", "--on-unidentifiable", "merge"]) == 0


def test_cli_errors_are_one_line(objects_csv, tmp_path, capsys):
    assert main(["query", str(objects_csv), "--prior", "nope"]) == 2
    assert "--prior 'nope' is not a column" in capsys.readouterr().err
    assert main(["query", str(objects_csv), "--cost-base", "0.5"]) == 2
    capsys.readouterr()
    bad = tmp_path / "bad.csv"
    bad.write_text("name,a\nx,1\ny,2\n", encoding="utf-8")
    assert main(["query", str(bad)]) == 1
    err = capsys.readouterr().err
    assert "query column 'a'" in err and err.count("\n") == 1


def test_zoo_queries_and_group_tree():
    B, kind = load_zoo_queries()
    assert B.shape == (101, 21) and B.index.is_unique and set(np.unique(B.to_numpy())) == {0, 1}
    qt = QueryTree().fit(B, groups=kind)
    assert qt.criterion_ == "ggbs" and qt.expected_queries_ >= qt.lower_bound_
    # Every animal is identified as its class by following its own answers.
    assert list(qt.identify(B)) == list(kind)


def test_active_learning_generator_and_zipf():
    B, prior = make_threshold_active_learning(beta=2.0)
    assert B.shape == (100, 676) and len({r.tobytes() for r in B}) == 100
    assert prior.sum() == pytest.approx(1.0) and prior.max() == pytest.approx(prior[12])
    p = zipf_prior(5, 1.0, rng=3)
    assert sorted(p.round(6)) == sorted(zipf_prior(5, 1.0).round(6))


def test_plot_and_general_tree_conversion():
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    B, kind = load_zoo_queries()
    qt = QueryTree(cost_base=2).fit(B, groups=kind)
    general = qt.tree_.to_tree()
    assert general.get_n_leaves() == qt.tree_.n_leaves
    # The general tree routes every animal to the leaf of its class.
    predicted = general.predict(B.to_numpy())
    assert list(predicted) == list(kind)
    import matplotlib.pyplot as plt

    try:
        artists = optitree.plot_tree(qt.tree_)
    finally:
        plt.close("all")  # other tests check that plot_tree leaves no figure open
    assert artists


def test_optimal_time_limit_falls_back_to_greedy():
    rng = np.random.default_rng(5)
    B = (rng.random((20, 400)) < 0.5).astype(np.uint8)
    with pytest.warns(NotProvenOptimalWarning, match="not reached"):
        qt = QueryTree(criterion="optimal", cost_base=2, time_limit=1e-6).fit(B)
    assert qt.status_ == "time_limit"
    assert qt.tree_.n_leaves == 20  # a complete greedy tree, not a stub
    assert qt.cost_ >= qt.lower_bound_


def test_worst_case_bound_and_status_names():
    B = np.eye(8, dtype=np.uint8)
    qt = QueryTree(cost_base=math.inf).fit(B)
    assert qt.criterion_ == "worst-case" and qt.lower_bound_ == 3.0
    assert qt.status_ in optitree._core.status_names()


def test_cli_predict_refuses_a_question_tree_by_name(plain_csv, tmp_path, capsys):
    model = tmp_path / "questions.json"
    build = ["query", str(plain_csv), "--name", "name", "--prior", "weight", "--format", "json"]
    assert main([*build, "--output", str(model)]) == 0
    capsys.readouterr()
    assert main(["predict", str(model), str(plain_csv)]) != 0
    err = capsys.readouterr().err
    assert "holds a question tree" in err and "optitree fit --save" in err
    assert "Traceback" not in err


def test_cli_notes_a_seed_without_random_tie_breaks(plain_csv, capsys):
    assert (
        main(["query", str(plain_csv), "--name", "name", "--prior", "weight", "--seed", "3"]) == 0
    )
    assert "--seed applies only with --tie-break random: ignored" in capsys.readouterr().err
    args = ["--tie-break", "random", "--seed", "3"]
    assert main(["query", str(plain_csv), "--name", "name", "--prior", "weight", *args]) == 0
    assert "--seed" not in capsys.readouterr().err


@pytest.mark.parametrize(
    "roles, message",
    [
        (["--name", "name", "--group", "name"], "'name' is given to both --name and --group"),
        (["--prior", "weight", "--group", "weight"], "'weight' is given to both --prior and"),
    ],
)
def test_cli_refuses_one_column_in_two_roles(plain_csv, capsys, roles, message):
    assert main(["query", str(plain_csv), *roles]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_cli_a_negative_infinite_cost_base_gets_the_range_message(plain_csv, capsys):
    # argparse took '-inf' for an option and said only 'expected one argument'.
    assert main(["query", str(plain_csv), "--cost-base", "-inf"]) == 2
    assert "expected a number >= 1 or 'inf', got '-inf'" in capsys.readouterr().err
