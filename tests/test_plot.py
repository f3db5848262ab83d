"""Tests of optitree.plot.plot_tree (matplotlib, Agg backend)."""

from __future__ import annotations

import sys

import numpy as np
import pytest

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.colors import to_rgba  # noqa: E402
from matplotlib.text import Annotation, Text  # noqa: E402

from optitree.exceptions import InvalidParameterError  # noqa: E402
from optitree.plot import plot_tree  # noqa: E402
from optitree.tree import CATEGORY, LEAF, OBLIQUE, THRESHOLD, Tree  # noqa: E402

nan = np.nan


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def threshold_tree() -> Tree:
    return Tree(
        kind=np.array([THRESHOLD, LEAF, THRESHOLD, LEAF, LEAF], dtype=np.int8),
        feature=np.array([1, -1, 2, -1, -1]),
        threshold=np.array([2.45, nan, 1.75, nan, nan]),
        children_ptr=np.array([0, 2, 2, 4, 4, 4]),
        children=np.array([1, 2, 3, 4]),
        value=np.array([[50.0, 50, 50], [50, 0, 0], [0, 50, 50], [0, 49, 5], [0, 1, 45]]),
        n_features=3,
        feature_names=["sepal_length", "petal_length", "petal_width"],
        class_names=["setosa", "versicolor", "virginica"],
    )


def category_tree() -> Tree:
    return Tree(
        kind=np.array([CATEGORY, THRESHOLD, LEAF, LEAF, LEAF, LEAF], dtype=np.int8),
        feature=np.array([0, 1, -1, -1, -1, -1]),
        threshold=np.array([nan, 70.0, nan, nan, nan, nan]),
        children_ptr=np.array([0, 3, 5, 5, 5, 5, 5]),
        children=np.array([1, 2, 3, 4, 5]),
        value=np.array([[3.0, 6], [3, 2], [0, 4], [0, 0], [0, 2], [3, 0]]),
        n_features=2,
        feature_names=["outlook", "humidity"],
        class_names=["no", "yes"],
        categories=[["sunny", "overcast", "rainy"], None],
    )


def oblique_tree() -> Tree:
    return Tree(
        kind=np.array([OBLIQUE, LEAF, LEAF], dtype=np.int8),
        feature=np.array([-1, -1, -1]),
        threshold=np.full(3, nan),
        children_ptr=np.array([0, 2, 2, 2]),
        children=np.array([1, 2]),
        value=np.array([[7.0, 9], [6, 1], [1, 8]]),
        oblique_index=np.array([0, -1, -1]),
        oblique_ptr=np.array([0, 3]),
        term_coef=np.array([-3.0, 0.5, 1.25]),
        term_ptr=np.array([0, 0, 1, 3]),
        term_features=np.array([0, 1, 1]),
        n_features=2,
    )


def leaf_tree() -> Tree:
    return Tree(
        kind=np.array([LEAF], dtype=np.int8),
        feature=np.array([-1]),
        threshold=np.array([nan]),
        children_ptr=np.array([0, 0]),
        children=np.array([], dtype=np.int64),
        value=np.array([[3.0, 1.0]]),
        n_features=2,
        class_names=["no", "yes"],
    )


TREES = {
    "threshold": threshold_tree,
    "category": category_tree,
    "oblique": oblique_tree,
    "leaf": leaf_tree,
}


def _boxes_and_labels(artists, n_boxes):
    boxes = artists[:n_boxes]
    n_edges = (len(artists) - n_boxes) // 2
    edges = artists[n_boxes : n_boxes + n_edges]
    labels = artists[n_boxes + n_edges :]
    return boxes, edges, labels


@pytest.mark.parametrize("name", sorted(TREES))
def test_plot_tree_writes_png(tmp_path, name):
    tree = TREES[name]()
    path = tmp_path / "tree.png"
    artists = plot_tree(tree, path=path)
    data = path.read_bytes()
    assert data.startswith(b"\x89PNG\r\n\x1a\n")
    assert len(data) > 1000
    n_nodes = int(tree.n_nodes)
    assert len(artists) == n_nodes + 2 * (n_nodes - 1)
    assert all(isinstance(a, (Annotation, Text)) for a in artists)
    assert plt.get_fignums() == []  # nothing left open


@pytest.mark.parametrize("name", sorted(TREES))
def test_plot_tree_writes_svg(tmp_path, name):
    path = tmp_path / "tree.SVG"  # the extension is case-insensitive
    artists = plot_tree(TREES[name](), path=str(path), filled=False, fontsize=9)
    text = path.read_text()
    assert "<svg" in text and text.rstrip().endswith("</svg>")
    assert artists


def test_plot_tree_box_and_edge_texts():
    artists = plot_tree(threshold_tree())
    boxes, edges, labels = _boxes_and_labels(artists, 5)
    assert [b.get_text() for b in boxes] == [
        "petal_length\nsamples = 150\nvalue = [50, 50, 50]",
        "class = setosa\nsamples = 50\nvalue = [50, 0, 0]",
        "petal_width\nsamples = 100\nvalue = [0, 50, 50]",
        "class = versicolor\nsamples = 54\nvalue = [0, 49, 5]",
        "class = virginica\nsamples = 46\nvalue = [0, 1, 45]",
    ]
    assert all(e.get_text() == "" for e in edges)
    assert [t.get_text() for t in labels] == ["<= 2.45", "> 2.45", "<= 1.75", "> 1.75"]


def test_plot_tree_category_and_oblique_texts():
    boxes, _, labels = _boxes_and_labels(plot_tree(category_tree()), 6)
    assert [t.get_text() for t in labels] == ["= sunny", "= overcast", "= rainy", "<= 70", "> 70"]
    assert "(empty, predicts parent's class)" in "".join(b.get_text() for b in boxes)

    boxes, _, labels = _boxes_and_labels(plot_tree(oblique_tree(), decimals=1), 3)
    assert boxes[0].get_text().startswith("0.5*x0 + 1.25*x1^2 - 3\n")
    assert [t.get_text() for t in labels] == ["<= 0", "> 0"]


def test_plot_tree_layout_leaves_even_parents_centred():
    boxes, _, _ = _boxes_and_labels(plot_tree(threshold_tree()), 5)
    # depth-first order: root, leaf setosa, node, leaf versicolor, leaf virginica
    xs = [b.xy[0] for b in boxes]
    ys = [b.xy[1] for b in boxes]
    leaf_x = [xs[1], xs[3], xs[4]]
    assert np.allclose(np.diff(leaf_x), leaf_x[1] - leaf_x[0])
    assert leaf_x[1] - leaf_x[0] > 0
    assert xs[2] == pytest.approx((xs[3] + xs[4]) / 2)
    assert xs[0] == pytest.approx((xs[1] + xs[2]) / 2)
    assert ys[1] == pytest.approx(ys[2])
    assert ys[3] == pytest.approx(ys[4])
    assert ys[0] > ys[1] > ys[3]
    assert all(0 < v < 1 for v in xs + ys)


def test_plot_tree_into_given_axes():
    fig, ax = plt.subplots(figsize=(5, 4))
    artists = plot_tree(category_tree(), ax=ax, fontsize=7)
    assert all(a.axes is ax for a in artists)
    assert {a.get_fontsize() for a in artists if a.get_text()} == {7}
    assert not ax.axison
    assert plt.fignum_exists(fig.number)  # not closed without a path


def test_plot_tree_into_given_axes_with_path_saves(tmp_path):
    fig, ax = plt.subplots()
    plot_tree(leaf_tree(), ax=ax, path=tmp_path / "leaf.png")
    assert (tmp_path / "leaf.png").stat().st_size > 0
    assert not plt.fignum_exists(fig.number)


def test_plot_tree_filled_colours():
    boxes, _, _ = _boxes_and_labels(plot_tree(threshold_tree(), filled=True), 5)
    faces = [b.get_bbox_patch().get_facecolor() for b in boxes]
    assert faces[0] == to_rgba("white")
    assert len({faces[1], faces[3], faces[4]}) == 3  # one colour per class
    boxes, _, _ = _boxes_and_labels(plot_tree(threshold_tree(), filled=False), 5)
    assert all(b.get_bbox_patch().get_facecolor() == to_rgba("white") for b in boxes)


def test_plot_tree_max_depth():
    artists = plot_tree(threshold_tree(), max_depth=1)
    boxes, _, labels = _boxes_and_labels(artists, 3)
    assert len(artists) == 3 + 2 * 2
    assert boxes[2].get_text() == "(...)\ntruncated branch of depth 1"
    assert [t.get_text() for t in labels] == ["<= 2.45", "> 2.45"]
    artists = plot_tree(threshold_tree(), max_depth=0)
    assert [a.get_text() for a in artists] == ["(...)\ntruncated branch of depth 2"]


def test_plot_tree_name_overrides():
    boxes, _, _ = _boxes_and_labels(
        plot_tree(threshold_tree(), feature_names=["a", "b", "c"], class_names=[7, 8, 9]), 5
    )
    assert boxes[0].get_text().startswith("b\n")
    assert boxes[1].get_text().startswith("class = 7\n")


@pytest.mark.parametrize("name", ["tree.pdf", "tree", "tree.png.txt", "tree.jpeg"])
def test_plot_tree_bad_extension(tmp_path, name):
    with pytest.raises(InvalidParameterError, match=r"\.png or \.svg"):
        plot_tree(threshold_tree(), path=tmp_path / name)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"feature_names": ["a"]}, "feature_names"),
        ({"class_names": ["a"]}, "class_names"),
        ({"max_depth": -1}, "max_depth"),
        ({"decimals": -2}, "decimals"),
        ({"fontsize": 0}, "fontsize"),
    ],
)
def test_plot_tree_bad_parameters(kwargs, match):
    with pytest.raises(InvalidParameterError, match=match):
        plot_tree(threshold_tree(), **kwargs)


def test_plot_tree_without_matplotlib(monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    monkeypatch.setitem(sys.modules, "matplotlib.pyplot", None)
    with pytest.raises(ImportError, match=r"pip install optitree\[plot\]"):
        plot_tree(threshold_tree())


def test_dollar_signs_in_names_and_categories_are_plain_text(tmp_path):
    # Matplotlib read '$0-$10' as mathtext ('0 − 10'), and '$\frac$' raised a ValueError.
    import pandas as pd

    from optitree import BranchesClassifier

    X = pd.DataFrame({"cost_$\\frac$": pd.Categorical(["$0-$10", "$10-$20", "$20+"] * 4)})
    clf = BranchesClassifier(penalty=0.01).fit(X, [0, 1, 1] * 4)
    fig, ax = plt.subplots()
    plot_tree(clf.tree_, ax=ax)
    fig.savefig(tmp_path / "tree.png")
    plt.close(fig)
    assert all(not text.get_parse_math() for text in ax.texts if text.get_text())
    assert "= $0-$10" in [text.get_text() for text in ax.texts]


@pytest.mark.parametrize(
    "params, name",
    [(dict(fontsize="large"), "fontsize"), (dict(ax=1), "ax"), (dict(filled="no"), "filled")],
)
def test_plot_arguments_are_named_when_wrong(params, name):
    tree = Tree(
        kind=np.array([LEAF], dtype=np.int8),
        feature=np.array([-1]),
        threshold=np.array([np.nan]),
        children_ptr=np.array([0, 0]),
        children=np.array([], dtype=np.int64),
        value=np.array([[3.0, 1.0]]),
        n_features=1,
    )
    with pytest.raises(InvalidParameterError, match=name):
        plot_tree(tree, **params)
