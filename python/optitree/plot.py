"""Draw a fitted :class:`~optitree.tree.Tree` with matplotlib.

matplotlib is an optional dependency (``pip install optitree[plot]``); it is
imported only when :func:`plot_tree` is called.

Layout: the displayed leaves are spaced evenly from left to right in
depth-first order, every parent is centred over its first and last child, and
each depth gets its own row. Node boxes are annotations drawn above straight
edges, so the edges appear to join the boxes' borders.
"""

from __future__ import annotations

import numbers
import os
from collections.abc import Sequence
from typing import Any

from optitree.exceptions import InvalidParameterError
from optitree.export import (
    _INTERNAL_COLOUR,
    _branch_label,
    _CategoryTexts,
    _check_flags,
    _check_int,
    _check_tree,
    _children,
    _class_colour,
    _class_names,
    _feature_names,
    _node_lines,
    _parents,
    _predicted_classes,
    _subtree_depth,
)
from optitree.tree import LEAF, Tree

__all__ = ["plot_tree"]

_FORMATS = {".png": "png", ".svg": "svg"}
_TRUNCATED_COLOUR = "#eeeeee"


def _import_matplotlib() -> Any:
    try:
        import matplotlib  # noqa: F401
        import matplotlib.pyplot as plt
    except ImportError as exc:
        raise ImportError(
            "plot_tree needs matplotlib, which is not installed; install it with "
            "`pip install optitree[plot]` (or `pip install matplotlib`)"
        ) from exc
    return plt


def _layout(tree: Tree, max_depth: int | None) -> tuple[list[int], dict, dict, list[int]]:
    """Positions of the displayed nodes.

    Returns the displayed nodes in depth-first order, ``x`` (leaf slots: the
    k-th displayed leaf at k, parents at the midpoint of their outer children),
    ``depth`` per node, and the nodes shown as truncated.
    """
    order: list[int] = []
    depth: dict[int, int] = {0: 0}
    truncated: list[int] = []
    shown_children: dict[int, list[int]] = {}
    stack = [0]
    while stack:
        node = stack.pop()
        order.append(node)
        kids = _children(tree, node)
        if kids and max_depth is not None and depth[node] >= max_depth:
            truncated.append(node)
            kids = []
        shown_children[node] = kids
        for child in kids:
            depth[child] = depth[node] + 1
        stack.extend(reversed(kids))
    x: dict[int, float] = {}
    next_slot = 0
    for node in order:  # leaves in depth-first order get consecutive slots
        if not shown_children[node]:
            x[node] = float(next_slot)
            next_slot += 1
    for node in reversed(order):  # children come after parents in ``order``
        kids = shown_children[node]
        if kids:
            x[node] = (x[kids[0]] + x[kids[-1]]) / 2.0
    return order, x, depth, truncated


def plot_tree(
    tree: Tree,
    *,
    ax: Any = None,
    feature_names: Sequence[Any] | None = None,
    class_names: Sequence[Any] | None = None,
    filled: bool = True,
    fontsize: float | None = None,
    max_depth: int | None = None,
    decimals: int = 2,
    path: str | os.PathLike[str] | None = None,
) -> list[Any]:
    """Draw a tree with matplotlib.

    Internal nodes show what they test (a feature name, or the expression of an
    oblique test as produced by :func:`optitree.export.format_oblique`), leaves
    their class; every box also shows the number of training samples and the
    class counts. Edges are labelled with the outcome of the test (``= sunny``,
    ``<= 2.45`` / ``> 2.45``, ``<= 0`` / ``> 0``). A question tree's boxes show
    the probability ``p`` of reaching them instead of counts; ``feature_names``
    then name its queries and ``class_names`` its targets.

    Parameters
    ----------
    tree : Tree
        The fitted tree, for example ``estimator.tree_``.
    ax : matplotlib.axes.Axes, optional
        Axes to draw into (its limits are set to the unit square and its axis
        hidden). Default: a new figure sized to the tree.
    feature_names : list of str, optional
        Names of the features; override the tree's names.
    class_names : list, optional
        Names of the classes in code order; override the tree's names.
    filled : bool, default=True
        Fill leaves with one colour per predicted class.
    fontsize : float, optional
        Font size of the text; default: chosen so the boxes fit.
    max_depth : int, optional
        Show only the splits of nodes at depth < ``max_depth``; deeper subtrees
        are drawn as a single ``(...)`` box.
    decimals : int, default=2
        Decimals of numbers (thresholds keep the digits they need to be exact,
        coefficients four significant digits, as in ``export_text``).
    path : str or path-like, optional
        If given, save the figure there (PNG or SVG, chosen by the extension
        ``.png`` / ``.svg``) and close it.

    Returns
    -------
    list of matplotlib.text.Annotation and matplotlib.text.Text
        The node boxes (one annotation per displayed node, in depth-first
        order), then the edges (annotations without text), then the edge labels.

    Raises
    ------
    ImportError
        If matplotlib is not installed.
    InvalidParameterError
        If ``path`` does not end in ``.png`` or ``.svg``, a name list has the
        wrong length, or a parameter is out of range.

    See Also
    --------
    optitree.export.export_text, optitree.export.export_dot

    Examples
    --------
    >>> import os, tempfile
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import numpy as np
    >>> from optitree.tree import Tree, LEAF, THRESHOLD
    >>> tree = Tree(
    ...     kind=np.array([THRESHOLD, LEAF, LEAF], dtype=np.int8),
    ...     feature=np.array([0, -1, -1]),
    ...     threshold=np.array([2.45, np.nan, np.nan]),
    ...     children_ptr=np.array([0, 2, 2, 2]),
    ...     children=np.array([1, 2]),
    ...     value=np.array([[5.0, 4.0], [5.0, 0.0], [0.0, 4.0]]),
    ...     feature_names=["petal_length"],
    ...     class_names=["setosa", "other"],
    ... )
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     artists = plot_tree(tree, path=os.path.join(tmp, "tree.png"))
    >>> len(artists)  # 3 boxes, 2 edges, 2 edge labels
    7
    """
    from optitree.query._model import QuestionTree

    question_tree = isinstance(tree, QuestionTree)
    leaf_text = None
    if question_tree:
        from optitree.export import _renamed_question_tree
        from optitree.query._export import _leaf_texts

        # The names given rename its queries and targets, as in the text and DOT exports.
        tree = _renamed_question_tree(tree, feature_names, class_names)
        feature_names = class_names = None
        # A leaf names what it identifies (several objects when they cannot be told apart),
        # as the text and DOT exports do, not the general tree's majority class.
        leaf_text = _leaf_texts(tree)
        tree = tree.to_tree()
    _check_tree(tree)
    _check_flags(filled=filled)
    _check_int("decimals", decimals, 0)
    _check_int("max_depth", max_depth, 0, allow_none=True)
    if fontsize is not None and (
        isinstance(fontsize, bool) or not isinstance(fontsize, numbers.Real) or not fontsize > 0
    ):
        raise InvalidParameterError(f"fontsize must be a positive number or None, got {fontsize!r}")
    if ax is not None and not hasattr(ax, "figure"):
        raise InvalidParameterError(f"ax must be a matplotlib Axes or None, got {ax!r}")
    image_format = None
    if path is not None:
        path = os.fspath(path)
        extension = os.path.splitext(path)[1].lower()
        if extension not in _FORMATS:
            raise InvalidParameterError(
                f"path must end in .png or .svg (the image format is chosen by the "
                f"extension), got {path!r}"
            )
        image_format = _FORMATS[extension]
    names = _feature_names(tree, feature_names)
    classes = _class_names(tree, class_names)
    category_texts = _CategoryTexts(tree)

    plt = _import_matplotlib()
    from matplotlib.figure import Figure

    predicted, empty = _predicted_classes(tree)
    parents = _parents(tree)
    order, x, depth, truncated = _layout(tree, max_depth)
    truncated_set = set(truncated)

    texts: dict[int, str] = {}
    for node in order:
        if node in truncated_set:
            texts[node] = f"(...)\ntruncated branch of depth {_subtree_depth(tree, node)}"
        else:
            lines = _node_lines(
                tree,
                node,
                names,
                classes,
                predicted,
                empty,
                parents,
                # A question tree's totals are prior masses: one probability per box.
                show_weights=not question_tree,
                decimals=decimals,
                total_name="p" if question_tree else "samples",
            )
            if leaf_text is not None and int(tree.kind[node]) == LEAF:
                # What the leaf identifies, and its probability (the last line): never
                # "empty", since a leaf of objects without prior mass still identifies them.
                lines = [f"class = {leaf_text(node)}", lines[-1]]
            texts[node] = "\n".join(lines)

    n_slots = max(1, int(max(x.values())) + 1)
    n_levels = max(depth[node] for node in order) + 1
    widest = max(len(line) for text in texts.values() for line in text.split("\n"))
    tallest = max(text.count("\n") + 1 for text in texts.values())

    if ax is None:
        size = (min(30.0, max(6.0, 1.5 * n_slots)), min(20.0, max(4.0, 1.6 * n_levels)))
        fig = Figure(figsize=size) if path is not None else plt.figure(figsize=size)
        ax = fig.add_subplot(1, 1, 1)
    fig = ax.figure

    if fontsize is None:
        width_in, height_in = fig.get_size_inches()
        box = ax.get_position()
        slot_pt = 72.0 * width_in * box.width / n_slots
        level_pt = 72.0 * height_in * box.height / n_levels
        # A character is about 0.6 em wide and a line about 1.25 em tall; keep margins.
        fontsize = min(slot_pt / (0.62 * widest + 1.5), level_pt / (1.25 * tallest + 2.5))
        fontsize = max(4.0, min(12.0, fontsize))

    ax.set_xlim(0.0, 1.0)
    ax.set_ylim(0.0, 1.0)
    ax.set_axis_off()

    def position(node: int) -> tuple[float, float]:
        return ((x[node] + 0.5) / n_slots, 1.0 - (depth[node] + 0.5) / n_levels)

    boxes = []
    for node in order:
        leaf = int(tree.kind[node]) == LEAF
        if node in truncated_set:
            face = _TRUNCATED_COLOUR if filled else "white"
        elif filled and leaf:
            face = _class_colour(predicted[node])
        else:
            face = _INTERNAL_COLOUR
        bbox = {
            "boxstyle": "round,pad=0.4",
            "facecolor": face,
            "edgecolor": "black",
            "linestyle": "--" if (leaf and empty[node]) or node in truncated_set else "-",
        }
        boxes.append(
            ax.annotate(
                texts[node],
                xy=position(node),
                xycoords="data",
                ha="center",
                va="center",
                fontsize=fontsize,
                bbox=bbox,
                zorder=3,
                parse_math=False,  # names and labels are text: '$0-$10' is not mathtext
            )
        )

    edges = []
    labels = []
    for node in order:
        if node in truncated_set:
            continue
        for j, child in enumerate(_children(tree, node)):
            start, end = position(node), position(child)
            edges.append(
                ax.annotate(
                    "",
                    xy=end,
                    xytext=start,
                    xycoords="data",
                    textcoords="data",
                    arrowprops={
                        "arrowstyle": "-",
                        "color": "0.3",
                        "shrinkA": 0,
                        "shrinkB": 0,
                    },
                    zorder=1,
                )
            )
            middle = ((start[0] + end[0]) / 2.0, (start[1] + end[1]) / 2.0)
            labels.append(
                ax.text(
                    middle[0],
                    middle[1],
                    _branch_label(tree, node, j, decimals, category_texts),
                    ha="center",
                    va="center",
                    fontsize=fontsize,
                    bbox={"boxstyle": "square,pad=0.1", "facecolor": "white", "edgecolor": "none"},
                    zorder=2,
                    parse_math=False,
                )
            )

    artists = boxes + edges + labels
    if path is not None:
        fig.savefig(path, format=image_format, bbox_inches="tight")
        plt.close(fig)
    return artists
