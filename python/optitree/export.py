"""Text, Graphviz and JSON views of a fitted :class:`~optitree.tree.Tree`.

Every function here takes a :class:`~optitree.tree.Tree` (``estimator.tree_``)
plus optional display names; none of them touches the compiled core.

* :func:`export_text` -- an indented, human-readable listing of the rules.
* :func:`export_dot` -- a Graphviz DOT document (rendering needs the ``dot``
  program, producing the text does not).
* :func:`to_json` / :func:`from_json` and :func:`save_json` / :func:`load_json`
  -- a versioned, exact, strict-JSON serialisation of the tree and its labels.
* :func:`format_number`, :func:`format_oblique` and :func:`format_condition` --
  the building blocks the exporters and :func:`optitree.plot.plot_tree` share.

Names given as arguments override the names stored on the tree. Without any,
feature ``i`` is shown as ``x{i}`` and class ``k`` as ``k``.

An empty leaf (no training row reached it) predicts the majority class of its
nearest non-empty ancestor; the exporters show that class and say so.
"""

from __future__ import annotations

import errno
import json
import math
import numbers
import os
import re
import unicodedata
import uuid
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from optitree.exceptions import DataError, InvalidParameterError, SchemaVersionError
from optitree.tree import (
    CATEGORY,
    LEAF,
    OBLIQUE,
    SCHEMA_VERSION,
    THRESHOLD,
    Tree,
    check_ordered_names,
)

__all__ = [
    "export_dot",
    "export_text",
    "format_condition",
    "format_number",
    "format_oblique",
    "from_json",
    "load_json",
    "save_json",
    "to_json",
]

#: The ``"format"`` tag of every document written by :func:`to_json`.
JSON_FORMAT = "optitree.tree"

_EMPTY_NOTE = "empty, predicts parent's class"
_EMPTY_ROOT_NOTE = "empty"

# Light fill colours for classes 0, 1, 2, ... (black text stays readable on all).
_CLASS_COLOURS = (
    "#9ecae9",
    "#fdbf86",
    "#a6dba0",
    "#f4a6a6",
    "#cdb5e3",
    "#d9c2a7",
    "#f6b8dc",
    "#cfcfcf",
    "#e0e08a",
    "#9ee0e6",
)
_INTERNAL_COLOUR = "#ffffff"


# ---------------------------------------------------------------------------
# Argument checking and name resolution
# ---------------------------------------------------------------------------


def _check_int(name: str, value: Any, minimum: int, allow_none: bool = False) -> None:
    if value is None and allow_none:
        return
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < minimum:
        allowed = f"an integer >= {minimum}" + (" or None" if allow_none else "")
        raise InvalidParameterError(f"{name} must be {allowed}, got {value!r}")


def _check_flags(**flags: Any) -> None:
    """Refuses a non-bool switch: ``show_weights="no"`` would read as True."""
    for name, value in flags.items():
        if not isinstance(value, (bool, np.bool_)):
            raise InvalidParameterError(f"{name} must be True or False, got {value!r}")


def _is_question_tree(tree: Any) -> bool:
    # Imported lazily: the query package is optional weight for users of the other solvers.
    from optitree.query._model import QuestionTree

    return isinstance(tree, QuestionTree)


def _renamed_question_tree(tree: Any, feature_names: Any, class_names: Any) -> Any:
    """A question tree's queries play the features' part, and its targets the classes'."""
    state = tree._state()
    for name, given, field, unit in (
        ("feature_names", feature_names, "query_names", "query"),
        ("class_names", class_names, "target_names", "target"),
    ):
        if given is None:
            continue
        check_ordered_names(name, given, f"a list of {unit} names in {unit} order")
        expected = len(state[field])
        if len(given) != expected:
            raise InvalidParameterError(
                f"{name} must have one entry per {unit} of the question tree ({expected}), "
                f"got {len(given)}"
            )
        state[field] = [str(n) for n in given] if field == "query_names" else list(given)
    return type(tree)(**state)


def _check_tree(tree: Any) -> None:
    if not isinstance(tree, Tree):
        raise InvalidParameterError(
            f"tree must be an optitree.tree.Tree (for example estimator.tree_), "
            f"got {type(tree).__name__}"
        )


def _tree_of(model: Any, metadata: Mapping[str, Any] | None) -> tuple[Any, Any]:
    """The tree to write and its metadata, for a tree or a fitted estimator. MAPTree splits
    0/1 features derived from the columns (``age > 50.5``); its file says how they were
    derived (``binary_features``), so that ``optitree predict`` reads the raw columns."""
    estimator = hasattr(model, "get_params") and type(model).__module__.startswith("optitree.")
    if not estimator:
        return model, metadata  # a tree, or something to refuse by name
    tree = getattr(model, "tree_", None)
    if tree is None:
        raise InvalidParameterError(
            f"this {type(model).__name__} is not fitted yet: call fit before saving it"
        )
    if not isinstance(metadata, (Mapping, type(None))):
        return tree, metadata  # refused as it is
    merged = dict(metadata or {})
    merged.setdefault("estimator", type(model).__name__)
    sources = getattr(model, "_binary_sources", None)
    if sources is not None:
        merged.setdefault("binary_features", json_safe(sources()))
    return tree, merged


def json_safe(value: Any) -> Any:
    """A JSON-serialisable copy of a value (numpy scalars as Python numbers, non-finite
    floats and objects JSON has no type for, such as dates, as text)."""
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    if isinstance(value, dict):
        return {str(k): json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_safe(v) for v in value]
    if hasattr(value, "item"):  # numpy scalar
        return json_safe(value.item())
    return repr(value)


def _n_features(tree: Tree) -> int:
    n = getattr(tree, "n_features", None)
    if n is not None:
        return int(n)
    # Fall back to what the tree itself uses.
    used = [int(f) for f in np.asarray(tree.feature) if f >= 0]
    used += [int(f) for f in np.asarray(tree.term_features)]
    return max(used) + 1 if used else 0


class _DefaultNames(Sequence[str]):
    """``x0``, ``x1``, ... made when read: a tree may declare far more features than its
    splits use (a hand-edited ``n_features`` of 10**9 must not build a billion names).
    """

    def __init__(self, n: int) -> None:
        self._n = n

    def __len__(self) -> int:
        return self._n

    def __getitem__(self, index):  # type: ignore[override]
        if isinstance(index, slice):
            return [f"x{i}" for i in range(*index.indices(self._n))]
        if not -self._n <= index < self._n:
            raise IndexError(f"feature {index} out of range")
        return f"x{index % self._n}"


def _feature_names(tree: Tree, feature_names: Sequence[Any] | None) -> Sequence[str]:
    n = _n_features(tree)
    if feature_names is None:
        feature_names = tree.feature_names
        if feature_names is None:
            return _DefaultNames(n)
        source = "the tree's feature_names"
    else:
        source = "feature_names"
    check_ordered_names("feature_names", feature_names, "a list of strings in feature order")
    if len(feature_names) != n:
        raise InvalidParameterError(
            f"{source} must have one entry per feature of the tree ({n}), got {len(feature_names)}"
        )
    return _distinct_texts([str(name) for name in feature_names])


def _class_names(tree: Tree, class_names: Sequence[Any] | None) -> list[str]:
    n = int(tree.n_classes)
    if class_names is None:
        class_names = tree.class_names
        if class_names is None:
            return [str(k) for k in range(n)]
        source = "the tree's class_names"
    else:
        source = "class_names"
    check_ordered_names("class_names", class_names, "a list of labels in class order")
    if len(class_names) != n:
        raise InvalidParameterError(
            f"{source} must have one entry per class of the tree ({n}), got {len(class_names)}"
        )
    return _distinct_texts(class_names)


def _distinct_texts(labels: Sequence[Any]) -> list[str]:
    """Labels as printed: ``str``, but with ``repr`` for a label that is blank, padded or
    holds a control character or a line separator (``" "``, a line break), and for every
    label when two would print alike (``1`` and ``"1"``), so that each reads as what it is
    and a line stays one line. Other characters print as they are (``"petal length"``, a
    zero-width joiner in a word).
    """
    texts = [str(label) for label in labels]
    alike = len(set(texts)) < len(texts)
    # numpy scalars as the Python values they hold: 'ham ', not np.str_('ham ').
    plain = [v.item() if isinstance(v, np.generic) else v for v in labels]
    return [repr(label) if alike or _odd_text(text) else text for label, text in zip(plain, texts)]


def _odd_text(text: str) -> bool:
    """Blank, padded, or holding a character that breaks or hides a line."""
    if text == "" or text != text.strip():
        return True
    return any(unicodedata.category(c) in ("Cc", "Zl", "Zp") for c in text)


class _CategoryTexts:
    """A tree's category labels as printed, made per feature when first needed (within one
    export: ``tree.categories`` is a public list and may change between exports).
    """

    def __init__(self, tree: Tree) -> None:
        self._categories = tree.categories
        self._texts: dict[int, list[str] | None] = {}

    def __call__(self, feature: int, code: int) -> str:
        if feature not in self._texts:
            labels = None
            if self._categories is not None and 0 <= feature < len(self._categories):
                labels = self._categories[feature]
            self._texts[feature] = None if labels is None else _distinct_texts(labels)
        texts = self._texts[feature]
        if texts is not None and 0 <= code < len(texts):
            return texts[code]
        return str(code)


# ---------------------------------------------------------------------------
# Tree walking helpers (shared with optitree.plot)
# ---------------------------------------------------------------------------


def _children(tree: Tree, node: int) -> list[int]:
    ptr = tree.children_ptr
    return [int(c) for c in tree.children[ptr[node] : ptr[node + 1]]]


def _parents(tree: Tree) -> list[int]:
    parent = [-1] * int(tree.n_nodes)
    for node in range(int(tree.n_nodes)):
        for child in _children(tree, node):
            parent[child] = node
    return parent


def _predicted_classes(tree: Tree) -> tuple[list[int], list[bool]]:
    """Class shown for every node, and whether the node is empty.

    A non-empty node shows the majority of its counts, plus the tree's
    ``class_prior`` if any (ties go to the lowest class code); an empty node
    shows the class of its nearest non-empty ancestor, and an empty root shows
    what ``predict`` gives it (class 0, or the largest class prior).
    """
    value = np.asarray(tree.value, dtype=np.float64)
    n_nodes = int(tree.n_nodes)
    empty = [not bool(np.any(value[i] > 0)) for i in range(n_nodes)]
    predicted = [0] * n_nodes
    classes = tree.node_classes()
    # Parents before children: walk from the root.
    stack = [(0, int(classes[0]))]
    while stack:
        node, inherited = stack.pop()
        own = inherited if empty[node] else int(classes[node])
        predicted[node] = own
        stack.extend((child, own) for child in _children(tree, node))
    return predicted, empty


def _subtree_depth(tree: Tree, node: int) -> int:
    """Number of split levels below ``node`` (0 for a leaf)."""
    best = 0
    stack = [(node, 0)]
    while stack:
        current, depth = stack.pop()
        best = max(best, depth)
        stack.extend((child, depth + 1) for child in _children(tree, current))
    return best


def _split_subject(tree: Tree, node: int, names: list[str], decimals: int) -> str:
    """What an internal node tests: a feature name or an oblique expression."""
    kind = int(tree.kind[node])
    if kind == OBLIQUE:
        return format_oblique(tree, node, names, decimals=decimals)
    return names[int(tree.feature[node])]


def _branch_label(
    tree: Tree,
    node: int,
    child_index: int,
    decimals: int,
    category_texts: _CategoryTexts | None = None,
) -> str:
    """The outcome of the node's test that leads to its ``child_index``-th child."""
    kind = int(tree.kind[node])
    if kind == CATEGORY:
        texts = _CategoryTexts(tree) if category_texts is None else category_texts
        return "= " + texts(int(tree.feature[node]), child_index)
    if kind == THRESHOLD:
        bound = _exact_number(float(tree.threshold[node]), decimals)
    elif kind == OBLIQUE:
        bound = "0"
    else:
        raise DataError(f"node {node} is a leaf and has no branches")
    return ("<= " if child_index == 0 else "> ") + bound


def _exact_number(value: float, decimals: int) -> str:
    """A threshold with ``decimals`` decimals when that is its exact value, else with as many
    as it takes to read back exactly: ``x <= 1`` for 1.0015 would route 1.001 wrongly."""
    text = format_number(value, decimals)
    if not math.isfinite(value):
        return text
    if value != 0 and not 1e-4 <= abs(value) < 1e16:
        return repr(float(value))  # 1e-300 and 2.5e+20, not hundreds of digits
    if float(text) == value:
        return text
    return np.format_float_positional(value, unique=True, trim="-")


def _coefficient(magnitude: float, decimals: int) -> str:
    """An oblique coefficient with at least four significant digits (0.004 is not 0), and all
    it has when rounding would change it: a printed rule must route rows as ``predict`` does
    (the proper-tree estimator stores coefficients as short decimals that keep the training
    rows' sides, so these stay short)."""
    if magnitude > 0 and math.isfinite(magnitude):
        decimals = max(decimals, 3 - math.floor(math.log10(magnitude)))
    return _exact_number(magnitude, decimals)


def _weights(values: np.ndarray, decimals: int) -> str:
    return "[" + ", ".join(format_number(float(v), decimals) for v in values) + "]"


def _class_colour(code: int) -> str:
    return _CLASS_COLOURS[code % len(_CLASS_COLOURS)]


# ---------------------------------------------------------------------------
# Public formatting helpers
# ---------------------------------------------------------------------------


def format_number(value: float, decimals: int = 2) -> str:
    """Format a number with at most ``decimals`` decimals and no trailing zeros.

    Parameters
    ----------
    value : float
        The number to format.
    decimals : int, default=2
        Maximum number of digits after the decimal point.

    Returns
    -------
    str
        The rounded number; ``-0`` is shown as ``0``; infinities as ``inf`` /
        ``-inf`` and NaN as ``nan``.

    Examples
    --------
    >>> from optitree.export import format_number
    >>> format_number(2.4500001)
    '2.45'
    >>> format_number(3.0)
    '3'
    >>> format_number(-0.001)
    '0'
    >>> format_number(1 / 3, decimals=4)
    '0.3333'
    """
    _check_int("decimals", decimals, 0)
    value = float(value)
    if math.isnan(value):
        return "nan"
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    text = f"{value:.{int(decimals)}f}"
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    if text == "-0":
        text = "0"
    return text


def _format_monomial(features: Sequence[int], names: list[str]) -> str:
    """``[0, 0, 1]`` -> ``x0^2*x1`` (features in order of first appearance)."""
    powers: dict[int, int] = {}
    for f in features:
        powers[f] = powers.get(f, 0) + 1
    parts = []
    for f, power in powers.items():
        name = _operand(names[f])
        parts.append(name if power == 1 else f"{name}^{power}")
    return "*".join(parts)


def _operand(name: str) -> str:
    """A feature name as a factor of an expression: bracketed unless it is a plain identifier
    or number, so that ``c*d`` squared reads ``(c*d)^2``, not ``c*d^2``."""
    return name if _PLAIN_NAME.fullmatch(name) else f"({name})"


#: Names that read unambiguously inside an expression (``x0``, ``petal_length``, ``age.1``).
_PLAIN_NAME = re.compile(r"[^\W\d]\w*(?:\.\w+)*")


def format_oblique(
    tree: Tree,
    node: int,
    feature_names: Sequence[Any] | None = None,
    *,
    decimals: int = 2,
) -> str:
    """Render the left-hand side of an oblique node's test ``expression <= 0``.

    Terms appear in their stored order, except that constant (intercept) terms
    come last. A repeated feature is shown as a power (``x1^2``), products are
    joined with ``*``, a coefficient of exactly 1 is omitted and signs are
    merged (``+ -2`` is shown as ``- 2``).

    Parameters
    ----------
    tree : Tree
        The fitted tree.
    node : int
        Index of an ``OBLIQUE`` node.
    feature_names : list of str, optional
        Names of the features; defaults to the tree's names, else ``x0``, ``x1``, ...
    decimals : int, default=2
        Decimals of the coefficients; a coefficient keeps at least four
        significant digits, and all of them when fewer would change its value.

    Returns
    -------
    str
        The expression, for example ``0.5*x0 + 1.25*x1^2 - 3``.

    Raises
    ------
    InvalidParameterError
        If ``node`` is not an oblique node of ``tree`` or the names have the wrong length.

    Examples
    --------
    >>> import numpy as np
    >>> from optitree.tree import Tree, LEAF, OBLIQUE
    >>> tree = Tree(
    ...     kind=np.array([OBLIQUE, LEAF, LEAF], dtype=np.int8),
    ...     feature=np.array([-1, -1, -1]),
    ...     threshold=np.full(3, np.nan),
    ...     children_ptr=np.array([0, 2, 2, 2]),
    ...     children=np.array([1, 2]),
    ...     value=np.array([[4.0, 4.0], [4.0, 0.0], [0.0, 4.0]]),
    ...     oblique_index=np.array([0, -1, -1]),
    ...     oblique_ptr=np.array([0, 3]),
    ...     term_coef=np.array([-3.0, 0.5, 1.25]),
    ...     term_ptr=np.array([0, 0, 1, 3]),
    ...     term_features=np.array([0, 1, 1]),
    ...     n_features=2,
    ... )
    >>> format_oblique(tree, 0)
    '0.5*x0 + 1.25*x1^2 - 3'
    >>> format_oblique(tree, 0, ["age", "income"])
    '0.5*age + 1.25*income^2 - 3'
    """
    _check_tree(tree)
    _check_int("decimals", decimals, 0)
    _check_int("node", node, 0)
    if node >= int(tree.n_nodes) or int(tree.kind[node]) != OBLIQUE:
        raise InvalidParameterError(f"node {node} is not an oblique node of this tree")
    names = _feature_names(tree, feature_names)
    test = int(tree.oblique_index[node])
    start, stop = int(tree.oblique_ptr[test]), int(tree.oblique_ptr[test + 1])
    terms: list[tuple[float, str]] = []
    constants: list[tuple[float, str]] = []
    for t in range(start, stop):
        coef = float(tree.term_coef[t])
        features = [int(f) for f in tree.term_features[tree.term_ptr[t] : tree.term_ptr[t + 1]]]
        if features:
            terms.append((coef, _format_monomial(features, names)))
        else:
            constants.append((coef, ""))
    pieces: list[str] = []
    for coef, monomial in terms + constants:
        if coef == 0.0:
            continue
        magnitude = abs(coef)
        if monomial and magnitude == 1.0:
            body = monomial
        elif monomial:
            body = f"{_coefficient(magnitude, decimals)}*{monomial}"
        else:
            body = _coefficient(magnitude, decimals)
        if not pieces:
            pieces.append(("-" if coef < 0 else "") + body)
        else:
            pieces.append(("- " if coef < 0 else "+ ") + body)
    return " ".join(pieces) if pieces else "0"


def format_condition(
    tree: Tree,
    node: int,
    child_index: int,
    feature_names: Sequence[Any] | None = None,
    *,
    decimals: int = 2,
) -> str:
    """The condition under which ``node`` sends a sample to its ``child_index``-th child.

    Parameters
    ----------
    tree : Tree
        The fitted tree.
    node : int
        Index of an internal node.
    child_index : int
        Position of the child among the node's children (0 = first).
    feature_names : list of str, optional
        Names of the features; defaults to the tree's names, else ``x0``, ``x1``, ...
    decimals : int, default=2
        Decimals of thresholds and coefficients. A threshold or coefficient
        that these do not show exactly is shown with the digits it needs (so
        the printed rule routes rows as ``predict`` does); a coefficient
        keeps at least four significant digits.

    Returns
    -------
    str
        ``"petal_length <= 2.45"``, ``"petal_length > 2.45"``,
        ``"outlook = sunny"`` or ``"0.5*x0 - 1 <= 0"``.

    Raises
    ------
    InvalidParameterError
        If ``node`` is a leaf or ``child_index`` is out of range.

    Examples
    --------
    >>> import numpy as np
    >>> from optitree.tree import Tree, LEAF, THRESHOLD
    >>> tree = Tree(
    ...     kind=np.array([THRESHOLD, LEAF, LEAF], dtype=np.int8),
    ...     feature=np.array([0, -1, -1]),
    ...     threshold=np.array([2.45, np.nan, np.nan]),
    ...     children_ptr=np.array([0, 2, 2, 2]),
    ...     children=np.array([1, 2]),
    ...     value=np.array([[5.0, 5.0], [5.0, 0.0], [0.0, 5.0]]),
    ...     feature_names=["petal_length"],
    ... )
    >>> format_condition(tree, 0, 1)
    'petal_length > 2.45'
    """
    _check_tree(tree)
    _check_int("decimals", decimals, 0)
    _check_int("node", node, 0)
    if node >= int(tree.n_nodes):
        raise InvalidParameterError(f"node must be < {int(tree.n_nodes)}, got {node}")
    n_children = len(_children(tree, node))
    if n_children == 0:
        raise InvalidParameterError(f"node {node} is a leaf; it has no conditions")
    _check_int("child_index", child_index, 0)
    if child_index >= n_children:
        raise InvalidParameterError(
            f"child_index must be < {n_children} for node {node}, got {child_index}"
        )
    names = _feature_names(tree, feature_names)
    subject = _split_subject(tree, node, names, decimals)
    return f"{subject} {_branch_label(tree, node, child_index, decimals)}"


# ---------------------------------------------------------------------------
# Text export
# ---------------------------------------------------------------------------


def export_text(
    tree: Tree,
    *,
    feature_names: Sequence[Any] | None = None,
    class_names: Sequence[Any] | None = None,
    show_weights: bool | None = None,
    decimals: int = 2,
    max_depth: int | None = None,
    spacing: int = 3,
) -> str:
    """Describe a tree as indented text rules, one line per branch.

    Every branch of an internal node gets a line with its condition
    (``feature <= t`` / ``feature >  t`` for thresholds, ``feature = category``
    for categorical splits, ``expression <= 0`` / ``expression >  0`` for
    oblique tests); every leaf a line with its class. An empty leaf shows the
    class it predicts, that of its nearest non-empty ancestor, and says so.

    A question tree (:class:`~optitree.query.QuestionTree`) is written as a
    numbered questionnaire instead; ``feature_names`` rename its queries and
    ``class_names`` its targets.

    Parameters
    ----------
    tree : Tree
        The fitted tree, for example ``estimator.tree_``.
    feature_names : list of str, optional
        Names of the features (one per feature); override the tree's names.
        Default: the tree's names, else ``x0``, ``x1``, ...
    class_names : list, optional
        Names of the classes in code order; override the tree's names.
        Default: the tree's names, else the class codes.
    show_weights : bool, optional
        Also show the (weighted) class counts of every leaf (default: no). A
        question tree shows the probability of each answer unless ``False``.
    decimals : int, default=2
        Decimals of thresholds, coefficients and weights; trailing zeros are
        dropped. A threshold or coefficient that these do not show exactly is
        shown with the digits it needs (so the printed rule routes rows as
        ``predict`` does); a coefficient keeps at least four significant
        digits.
    max_depth : int, optional
        Show only the splits of nodes at depth < ``max_depth`` (the root has
        depth 0); deeper subtrees are replaced by a line
        ``truncated branch of depth d`` where ``d`` counts their split levels.
    spacing : int, default=3
        Width of one indentation level.

    Returns
    -------
    str
        The text, one line per branch or leaf, each ending with a newline.

    Raises
    ------
    InvalidParameterError
        If a name list has the wrong length or a parameter is out of range.

    See Also
    --------
    export_dot : The same tree as a Graphviz document.
    optitree.plot.plot_tree : The same tree drawn with matplotlib.

    Examples
    --------
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
    >>> print(export_text(tree, show_weights=True), end="")
    |--- petal_length <= 2.45
    |   |--- weights: [5, 0] class: setosa
    |--- petal_length >  2.45
    |   |--- weights: [0, 4] class: other
    """
    if _is_question_tree(tree):
        from optitree.query._export import questionnaire

        _check_int("decimals", decimals, 0)
        if show_weights is not None:
            _check_flags(show_weights=show_weights)
        if max_depth is not None:
            raise InvalidParameterError("max_depth is not supported for question trees")
        if spacing != 3:
            raise InvalidParameterError(
                "spacing is not used for question trees: the questionnaire numbers its "
                "questions instead of indenting them"
            )
        tree = _renamed_question_tree(tree, feature_names, class_names)
        show_mass = True if show_weights is None else bool(show_weights)
        return questionnaire(tree, decimals=decimals, show_mass=show_mass)
    _check_tree(tree)
    show_weights = False if show_weights is None else show_weights
    _check_flags(show_weights=show_weights)
    _check_int("decimals", decimals, 0)
    _check_int("max_depth", max_depth, 0, allow_none=True)
    _check_int("spacing", spacing, 1)
    names = _feature_names(tree, feature_names)
    classes = _class_names(tree, class_names)
    category_texts = _CategoryTexts(tree)
    predicted, empty = _predicted_classes(tree)
    value = np.asarray(tree.value, dtype=np.float64)
    parents = _parents(tree)

    def prefix(level: int) -> str:
        # level >= 1: "|   " repeated, with the last bar followed by dashes.
        return ("|" + " " * spacing) * (level - 1) + "|" + "-" * spacing + " "

    lines: list[str] = []

    def leaf_line(node: int, level: int) -> str:
        text = f"class: {classes[predicted[node]]}"
        if empty[node]:
            note = _EMPTY_NOTE if parents[node] >= 0 else _EMPTY_ROOT_NOTE
            text += f" ({note})"
        if show_weights:
            text = f"weights: {_weights(value[node], decimals)} {text}"
        return prefix(level) + text

    # Iterative depth-first walk. Stack entries are either a finished line
    # (str) or a node to expand with the indentation level of its own lines.
    stack: list[str | tuple[int, int]] = [(0, 1)]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            lines.append(item)
            continue
        node, level = item
        kids = _children(tree, node)
        if not kids:
            lines.append(leaf_line(node, level))
            continue
        if max_depth is not None and level - 1 >= max_depth:
            depth = _subtree_depth(tree, node)
            lines.append(prefix(level) + f"truncated branch of depth {depth}")
            continue
        subject = _split_subject(tree, node, names, decimals)
        for j in range(len(kids) - 1, -1, -1):
            label = _branch_label(tree, node, j, decimals, category_texts)
            if label.startswith("> "):
                label = ">  " + label[2:]  # align with "<= "
            stack.append((kids[j], level + 1))
            stack.append(prefix(level) + f"{subject} {label}")
    return "".join(line + "\n" for line in lines)


# ---------------------------------------------------------------------------
# Graphviz export
# ---------------------------------------------------------------------------


def _dot_escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"')


def _node_lines(
    tree: Tree,
    node: int,
    names: list[str],
    classes: list[str],
    predicted: list[int],
    empty: list[bool],
    parents: list[int],
    *,
    show_weights: bool,
    decimals: int,
    total_name: str = "samples",
) -> list[str]:
    """The lines of text describing one node (shared by DOT and matplotlib); ``total_name``
    names the node's total (a question tree's is a probability, not a count of samples).
    """
    value = np.asarray(tree.value[node], dtype=np.float64)
    lines = []
    if int(tree.kind[node]) == LEAF:
        lines.append(f"class = {classes[predicted[node]]}")
        if empty[node]:
            lines.append(f"({_EMPTY_NOTE if parents[node] >= 0 else _EMPTY_ROOT_NOTE})")
    else:
        lines.append(_split_subject(tree, node, names, decimals))
    lines.append(f"{total_name} = {format_number(float(value.sum()), decimals)}")
    if show_weights:
        lines.append(f"value = {_weights(value, decimals)}")
    return lines


def export_dot(
    tree: Tree,
    *,
    feature_names: Sequence[Any] | None = None,
    class_names: Sequence[Any] | None = None,
    filled: bool = False,
    rounded: bool = True,
    show_weights: bool = True,
    decimals: int = 2,
) -> str:
    """Describe a tree as a Graphviz DOT document.

    Each tree node becomes one box: internal nodes show what they test (a
    feature name or an oblique expression), leaves show their class; every box
    shows the number of training samples and, with ``show_weights``, the class
    counts. Edges carry the outcome of the test: ``= category``, ``<= t`` /
    ``> t`` or, for oblique tests, ``<= 0`` / ``> 0``. Rendering the document
    needs Graphviz (``dot -Tpng tree.dot -o tree.png``); producing it does not.

    A question tree draws its questions as boxes and its answers as ellipses
    with their probability (``show_weights``); ``feature_names`` rename its
    queries, ``class_names`` its targets, and ``filled`` colours answers by
    target.

    Parameters
    ----------
    tree : Tree
        The fitted tree, for example ``estimator.tree_``.
    feature_names : list of str, optional
        Names of the features; override the tree's names.
    class_names : list, optional
        Names of the classes in code order; override the tree's names.
    filled : bool, default=False
        Fill leaves with one colour per predicted class (internal nodes white).
    rounded : bool, default=True
        Draw boxes with rounded corners.
    show_weights : bool, default=True
        Show the (weighted) class counts of every node.
    decimals : int, default=2
        Maximum number of decimals of numbers; trailing zeros are dropped.

    Returns
    -------
    str
        The DOT document.

    Raises
    ------
    InvalidParameterError
        If a name list has the wrong length or ``decimals`` is negative.

    Examples
    --------
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
    >>> print(export_dot(tree, show_weights=False), end="")
    digraph Tree {
    node [shape=box, style="rounded", fontname="helvetica"] ;
    edge [fontname="helvetica"] ;
    0 [label="petal_length\\nsamples = 9"] ;
    1 [label="class = setosa\\nsamples = 5"] ;
    2 [label="class = other\\nsamples = 4"] ;
    0 -> 1 [label="<= 2.45"] ;
    0 -> 2 [label="> 2.45"] ;
    }
    """
    if _is_question_tree(tree):
        from optitree.query._export import to_dot

        _check_int("decimals", decimals, 0)
        _check_flags(filled=filled, rounded=rounded, show_weights=show_weights)
        tree = _renamed_question_tree(tree, feature_names, class_names)
        return to_dot(
            tree,
            decimals=decimals,
            show_mass=show_weights,
            rounded=rounded,
            fill=_class_colour if filled else None,
        )
    _check_tree(tree)
    _check_flags(filled=filled, rounded=rounded, show_weights=show_weights)
    _check_int("decimals", decimals, 0)
    names = _feature_names(tree, feature_names)
    classes = _class_names(tree, class_names)
    category_texts = _CategoryTexts(tree)
    predicted, empty = _predicted_classes(tree)
    parents = _parents(tree)

    styles = [s for s, on in (("rounded", rounded), ("filled", filled)) if on]
    node_attrs = ["shape=box"]
    if styles:
        node_attrs.append(f'style="{",".join(styles)}"')
    node_attrs.append('fontname="helvetica"')
    out = [
        "digraph Tree {",
        f"node [{', '.join(node_attrs)}] ;",
        'edge [fontname="helvetica"] ;',
    ]
    for node in range(int(tree.n_nodes)):
        pieces = _node_lines(
            tree,
            node,
            names,
            classes,
            predicted,
            empty,
            parents,
            show_weights=show_weights,
            decimals=decimals,
        )
        label = "\\n".join(_dot_escape(p) for p in pieces)
        attrs = f'label="{label}"'
        if filled:
            leaf = int(tree.kind[node]) == LEAF
            colour = _class_colour(predicted[node]) if leaf else _INTERNAL_COLOUR
            attrs += f', fillcolor="{colour}"'
            if leaf and empty[node]:
                attrs += ', style="rounded,filled,dashed"' if rounded else ', style="filled,dashed"'
        out.append(f"{node} [{attrs}] ;")
    for node in range(int(tree.n_nodes)):
        for j, child in enumerate(_children(tree, node)):
            label = _dot_escape(_branch_label(tree, node, j, decimals, category_texts))
            out.append(f'{node} -> {child} [label="{label}"] ;')
    out.append("}")
    return "".join(line + "\n" for line in out)


# ---------------------------------------------------------------------------
# JSON serialisation
# ---------------------------------------------------------------------------

_ARRAY_KEYS_INT = (
    "kind",
    "feature",
    "children_ptr",
    "children",
    "oblique_index",
    "oblique_ptr",
    "term_ptr",
    "term_features",
)


def _encode_float(x: float) -> float | str | None:
    """Finite floats as numbers; NaN as null; infinities as "inf" / "-inf"."""
    x = float(x)
    if math.isnan(x):
        return None
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return x


def _decode_float(x: Any, where: str) -> float:
    if x is None:
        return math.nan
    if x == "inf":
        return math.inf
    if x == "-inf":
        return -math.inf
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        raise DataError(f"{where} must be a number, null, 'inf' or '-inf', got {x!r}")
    try:
        return float(x)
    except OverflowError:  # an integer such as 10**400
        raise DataError(f"{where} is too large for a float; write 'inf' for infinity") from None


def _encode_label(label: Any, where: str) -> Any:
    """A class or category label as JSON that decodes back to the same type."""
    if label is None or isinstance(label, str):
        return None if label is None else str(label)
    if isinstance(label, (bool, np.bool_)):
        return bool(label)
    if isinstance(label, numbers.Integral):
        return int(label)
    if isinstance(label, numbers.Real):
        x = float(label)
        if math.isfinite(x):
            return x
        return {"float": "nan" if math.isnan(x) else ("inf" if x > 0 else "-inf")}
    raise DataError(
        f"{where} is {label!r} of type {type(label).__name__}; only str, int, float, "
        f"bool and None labels can be saved to JSON"
    )


def _decode_label(value: Any, where: str) -> Any:
    if isinstance(value, dict):
        if set(value) == {"float"} and value["float"] in ("nan", "inf", "-inf"):
            return float(value["float"])
        raise DataError(f"{where} is not a valid label: {value!r}")
    if value is None or isinstance(value, (str, bool, int, float)):
        return value
    raise DataError(f"{where} is not a valid label: {value!r}")


def _tree_to_dict(tree: Tree) -> dict[str, Any]:
    doc: dict[str, Any] = {"n_features": _n_features(tree)}
    for key in ("kind", "feature", "children_ptr", "children", "oblique_index"):
        doc[key] = [int(v) for v in np.asarray(getattr(tree, key)).ravel()]
    doc["threshold"] = [_encode_float(v) for v in np.asarray(tree.threshold).ravel()]
    doc["value"] = [[_encode_float(v) for v in row] for row in np.asarray(tree.value)]
    for key in ("oblique_ptr", "term_ptr", "term_features"):
        doc[key] = [int(v) for v in np.asarray(getattr(tree, key)).ravel()]
    doc["term_coef"] = [_encode_float(v) for v in np.asarray(tree.term_coef).ravel()]
    doc["feature_names"] = (
        None if tree.feature_names is None else [str(name) for name in tree.feature_names]
    )
    doc["class_names"] = (
        None
        if tree.class_names is None
        else [_encode_label(c, f"class_names[{k}]") for k, c in enumerate(tree.class_names)]
    )
    if tree.categories is None:
        doc["categories"] = None
    else:
        doc["categories"] = [
            None
            if labels is None
            else [_encode_label(c, f"categories[{f}][{j}]") for j, c in enumerate(labels)]
            for f, labels in enumerate(tree.categories)
        ]
    if tree.class_prior is not None:  # written only when set: older readers load the rest
        doc["class_prior"] = [_encode_float(v) for v in tree.class_prior]
    return doc


def to_json(
    tree: Any,
    *,
    metadata: Mapping[str, Any] | None = None,
    indent: int | None = None,
) -> str:
    """Serialise a tree (and optional metadata) to a versioned JSON document.

    The document is strict JSON (no NaN literals)::

        {"format": "optitree.tree", "schema_version": 1,
         "tree": {...node arrays, oblique tables, names...},
         "metadata": {...}}

    Floats are written with Python's shortest round-tripping representation,
    so :func:`from_json` restores the tree exactly; class and category labels
    keep their type (``str``, ``int``, ``float``, ``bool`` or ``None``).

    Parameters
    ----------
    tree : Tree or fitted estimator
        The tree to save, for example ``estimator.tree_``, or the fitted estimator itself
        (its ``tree_`` is saved; a ``MAPTreeClassifier`` also records how its 0/1 features
        come from the columns, under ``metadata["binary_features"]``, so that
        ``optitree predict`` can read the raw columns).
    metadata : dict, optional
        Extra JSON-serialisable information stored alongside the tree (the
        estimator's parameters, its status, a description...).
    indent : int, optional
        Pretty-print with this indentation; default: one compact line.

    Returns
    -------
    str
        The JSON document.

    Raises
    ------
    InvalidParameterError
        If ``metadata`` is not a JSON-serialisable mapping with string keys.
    DataError
        If a class or category label has a type JSON cannot keep.

    See Also
    --------
    from_json, save_json, load_json

    Examples
    --------
    >>> import numpy as np
    >>> from optitree.tree import Tree, LEAF
    >>> tree = Tree(
    ...     kind=np.array([LEAF], dtype=np.int8),
    ...     feature=np.array([-1]),
    ...     threshold=np.array([np.nan]),
    ...     children_ptr=np.array([0, 0]),
    ...     children=np.array([], dtype=np.int64),
    ...     value=np.array([[3.0, 1.0]]),
    ...     n_features=1,
    ...     class_names=[0, 1],
    ... )
    >>> text = to_json(tree, metadata={"status": "optimal"})
    >>> text[:50]
    '{"format": "optitree.tree", "schema_version": 1, "'
    >>> from_json(text) == tree
    True
    """
    tree, metadata = _tree_of(tree, metadata)
    if _is_question_tree(tree):
        from optitree.query._export import dumps

        if metadata is not None and not isinstance(metadata, Mapping):
            raise InvalidParameterError("metadata must be a dict of JSON-serialisable values")
        try:
            return dumps(tree, metadata, indent)
        except (TypeError, ValueError) as exc:
            raise InvalidParameterError(
                f"metadata must hold only JSON-serialisable values: {exc}"
            ) from exc
    _check_tree(tree)
    if indent is not None:
        _check_int("indent", indent, 0)
    if metadata is None:
        metadata = {}
    if not isinstance(metadata, Mapping):
        raise InvalidParameterError(
            f"metadata must be a dict of JSON-serialisable values, got {type(metadata).__name__}"
        )
    document = {
        "format": JSON_FORMAT,
        "schema_version": tree.schema_version(),
        "tree": _tree_to_dict(tree),
        "metadata": dict(metadata),
    }
    try:
        return json.dumps(document, indent=indent, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise InvalidParameterError(
            f"metadata must hold only JSON-serialisable values (dict with str keys, list, "
            f"str, int, finite float, bool, None): {exc}"
        ) from exc


def _int_array(doc: Mapping[str, Any], key: str) -> np.ndarray:
    raw = doc.get(key)
    if not isinstance(raw, list) or not all(
        isinstance(v, int) and not isinstance(v, bool) for v in raw
    ):
        raise DataError(f"tree.{key} must be a list of integers")
    bounds = np.iinfo(np.int64)
    for i, v in enumerate(raw):
        if not bounds.min <= v <= bounds.max:
            raise DataError(f"tree.{key}[{i}] is {v}, beyond the 64-bit integers a tree holds")
    return np.array(raw, dtype=np.int64)


def _float_array(doc: Mapping[str, Any], key: str) -> np.ndarray:
    raw = doc.get(key)
    if not isinstance(raw, list):
        raise DataError(f"tree.{key} must be a list of numbers")
    return np.array(
        [_decode_float(v, f"tree.{key}[{i}]") for i, v in enumerate(raw)], dtype=np.float64
    )


def _check_structure(arrays: dict[str, np.ndarray], n_features: int, n_classes: int) -> None:
    """Raise DataError unless the arrays describe one valid tree."""
    kind = arrays["kind"]
    n_nodes = len(kind)
    if n_nodes == 0:
        raise DataError("tree has no nodes; a tree has at least its root")
    for key in ("feature", "threshold", "oblique_index"):
        if len(arrays[key]) != n_nodes:
            raise DataError(f"tree.{key} has {len(arrays[key])} entries, expected {n_nodes}")
    value = arrays["value"]
    if value.shape != (n_nodes, n_classes):
        raise DataError(f"tree.value has shape {value.shape}, expected ({n_nodes}, {n_classes})")
    if not np.all(np.isfinite(value)) or np.any(value < 0):
        raise DataError("tree.value must hold finite, non-negative counts")
    ptr, children = arrays["children_ptr"], arrays["children"]
    if len(ptr) != n_nodes + 1 or ptr[0] != 0 or ptr[-1] != len(children):
        raise DataError(
            f"tree.children_ptr must have {n_nodes + 1} entries from 0 to "
            f"{len(children)} (the number of children)"
        )
    if np.any(np.diff(ptr) < 0):
        raise DataError("tree.children_ptr must be non-decreasing")
    if len(children) != n_nodes - 1 or np.any(children < 1) or np.any(children >= n_nodes):
        raise DataError("tree.children must list every node except the root exactly once")
    if len(np.unique(children)) != len(children):
        raise DataError("tree.children must list every node except the root exactly once")
    oblique_ptr, term_ptr = arrays["oblique_ptr"], arrays["term_ptr"]
    n_terms = len(arrays["term_coef"])
    if len(oblique_ptr) == 0 or oblique_ptr[0] != 0 or oblique_ptr[-1] != n_terms:
        raise DataError(f"tree.oblique_ptr must run from 0 to {n_terms} (the number of terms)")
    if np.any(np.diff(oblique_ptr) < 0):
        raise DataError("tree.oblique_ptr must be non-decreasing")
    n_oblique = len(oblique_ptr) - 1
    features = arrays["term_features"]
    if len(term_ptr) != n_terms + 1 or term_ptr[0] != 0 or term_ptr[-1] != len(features):
        raise DataError(f"tree.term_ptr must have {n_terms + 1} entries from 0 to {len(features)}")
    if np.any(np.diff(term_ptr) < 0):
        raise DataError("tree.term_ptr must be non-decreasing")
    if np.any(features < 0) or np.any(features >= n_features):
        raise DataError(f"tree.term_features must be feature indices below {n_features}")
    n_children = np.diff(ptr)
    for i in range(n_nodes):
        k, f, c = int(kind[i]), int(arrays["feature"][i]), int(n_children[i])
        if k == LEAF:
            ok = c == 0
        elif k == CATEGORY:
            ok = c >= 1 and 0 <= f < n_features
        elif k == THRESHOLD:
            ok = c == 2 and 0 <= f < n_features and not math.isnan(arrays["threshold"][i])
        elif k == OBLIQUE:
            ok = c == 2 and 0 <= int(arrays["oblique_index"][i]) < n_oblique
        else:
            raise DataError(f"tree.kind[{i}] = {k} is not a node kind (0 to 3)")
        if not ok:
            raise DataError(
                f"node {i} of kind {k} has an invalid feature, threshold, oblique test "
                f"or number of children ({c})"
            )
    # Every node must hang below the root (no detached cycles).
    seen, stack = 1, [0]
    while stack:
        node = stack.pop()
        kids = children[ptr[node] : ptr[node + 1]]
        seen += len(kids)
        if seen > n_nodes:
            break
        stack.extend(int(v) for v in kids)
    if seen != n_nodes:
        raise DataError("tree.children does not form a single tree rooted at node 0")


def _names_list(doc: Mapping[str, Any], key: str, length: int) -> list[Any] | None:
    raw = doc.get(key)
    if raw is None:
        return None
    if not isinstance(raw, list) or len(raw) != length:
        raise DataError(f"tree.{key} must be null or a list of {length} entries")
    return raw


def _dict_to_tree(doc: Any) -> Tree:
    if not isinstance(doc, dict):
        raise DataError("the document's 'tree' entry must be an object")
    n_features = doc.get("n_features")
    if isinstance(n_features, bool) or not isinstance(n_features, int) or n_features < 0:
        raise DataError(f"tree.n_features must be a non-negative integer, got {n_features!r}")
    arrays = {key: _int_array(doc, key) for key in _ARRAY_KEYS_INT}
    arrays["threshold"] = _float_array(doc, "threshold")
    arrays["term_coef"] = _float_array(doc, "term_coef")
    rows = doc.get("value")
    if not isinstance(rows, list) or not rows or not all(isinstance(r, list) for r in rows):
        raise DataError("tree.value must be a non-empty list of lists of numbers")
    n_classes = len(rows[0])
    if n_classes == 0 or any(len(r) != n_classes for r in rows):
        raise DataError("tree.value rows must all have the same, non-zero length")
    arrays["value"] = np.array(
        [[_decode_float(v, f"tree.value[{i}]") for v in r] for i, r in enumerate(rows)],
        dtype=np.float64,
    ).reshape(len(rows), n_classes)
    _check_structure(arrays, n_features, n_classes)

    feature_names = _names_list(doc, "feature_names", n_features)
    if feature_names is not None and not all(isinstance(n, str) for n in feature_names):
        raise DataError("tree.feature_names must hold strings")
    class_names = _names_list(doc, "class_names", n_classes)
    if class_names is not None:
        class_names = [
            _decode_label(c, f"tree.class_names[{k}]") for k, c in enumerate(class_names)
        ]
    categories = _names_list(doc, "categories", n_features)
    if categories is not None:
        decoded: list[list[Any] | None] = []
        for f, labels in enumerate(categories):
            if labels is None:
                decoded.append(None)
            elif isinstance(labels, list):
                decoded.append(
                    [_decode_label(c, f"tree.categories[{f}][{j}]") for j, c in enumerate(labels)]
                )
            else:
                raise DataError(f"tree.categories[{f}] must be null or a list of labels")
        categories = decoded
    class_prior = doc.get("class_prior")
    if class_prior is not None:
        if not isinstance(class_prior, list):
            raise DataError("tree.class_prior must be null or a list of numbers")
        class_prior = [
            _decode_float(v, f"tree.class_prior[{k}]") for k, v in enumerate(class_prior)
        ]
    try:
        return Tree(
            arrays["kind"].astype(np.int8),
            arrays["feature"],
            arrays["threshold"],
            arrays["children_ptr"],
            arrays["children"],
            arrays["value"],
            oblique_index=arrays["oblique_index"],
            oblique_ptr=arrays["oblique_ptr"],
            term_coef=arrays["term_coef"],
            term_ptr=arrays["term_ptr"],
            term_features=arrays["term_features"],
            n_features=n_features,
            feature_names=feature_names,
            class_names=class_names,
            categories=categories,
            class_prior=class_prior,
        )
    except DataError:
        raise
    except (ValueError, TypeError, IndexError) as exc:
        raise DataError(f"the stored tree is invalid: {exc}") from exc


def _load_document(text: str | bytes | bytearray) -> tuple[Tree, dict[str, Any]]:
    if isinstance(text, (bytes, bytearray)):
        try:
            text = bytes(text).decode("utf-8")
        except UnicodeDecodeError as exc:
            raise SchemaVersionError(
                f"not an optitree model: the data is not UTF-8 text ({exc})"
            ) from exc
    if not isinstance(text, str):
        raise SchemaVersionError(
            f"not an optitree model: expected JSON text, got {type(text).__name__}"
        )
    try:
        document = json.loads(text)
    except ValueError as exc:
        raise SchemaVersionError(f"not an optitree model: the text is not JSON ({exc})") from exc
    except RecursionError:
        raise SchemaVersionError(
            "not an optitree model: the JSON nests deeper than Python's parser goes"
        ) from None
    if isinstance(document, dict) and document.get("format") == "optitree.question_tree":
        from optitree.query._export import question_tree_from_document

        metadata = document.get("metadata") or {}
        if not isinstance(metadata, dict):
            raise DataError("the document's 'metadata' entry must be an object")
        return question_tree_from_document(document), metadata  # type: ignore[return-value]
    if not isinstance(document, dict) or document.get("format") != JSON_FORMAT:
        raise SchemaVersionError(
            f'not an optitree model: the JSON document has no "format": "{JSON_FORMAT}" tag'
        )
    version = document.get("schema_version")
    if isinstance(version, bool) or not isinstance(version, int) or version < 1:
        raise SchemaVersionError(
            f"not an optitree model: schema_version must be a positive integer, got {version!r}"
        )
    if version > SCHEMA_VERSION:
        raise SchemaVersionError(
            f"this model was saved with tree schema version {version}, but this optitree "
            f"reads schema versions up to {SCHEMA_VERSION}; upgrade optitree "
            f"(pip install -U optitree) to load it"
        )
    tree = _dict_to_tree(document.get("tree"))
    metadata = document.get("metadata", {})
    if metadata is None:
        metadata = {}
    if not isinstance(metadata, dict):
        raise DataError("the document's 'metadata' entry must be an object")
    return tree, metadata


def from_json(text: str | bytes) -> Tree:
    """Rebuild a tree from a document written by :func:`to_json`.

    Parameters
    ----------
    text : str or bytes
        The JSON document.

    Returns
    -------
    Tree
        A tree equal to the one that was saved. Use :func:`load_json` to get
        the metadata too.

    Raises
    ------
    SchemaVersionError
        If the text is not JSON or not an optitree tree document ("not an
        optitree model"), or was written by a newer optitree with a schema
        version this one cannot read.
    DataError
        If the document is an optitree document but its tree is malformed.

    Examples
    --------
    >>> import numpy as np
    >>> from optitree.tree import Tree, LEAF
    >>> tree = Tree(
    ...     kind=np.array([LEAF], dtype=np.int8),
    ...     feature=np.array([-1]),
    ...     threshold=np.array([np.nan]),
    ...     children_ptr=np.array([0, 0]),
    ...     children=np.array([], dtype=np.int64),
    ...     value=np.array([[3.0, 1.0]]),
    ...     n_features=1,
    ... )
    >>> from_json(to_json(tree)) == tree
    True
    >>> from_json("[1, 2]")
    Traceback (most recent call last):
    ...
    optitree.exceptions.SchemaVersionError: not an optitree model: ...
    """
    return _load_document(text)[0]


def save_json(
    tree: Any,
    path: str | os.PathLike[str],
    metadata: Mapping[str, Any] | None = None,
    *,
    indent: int | None = None,
) -> None:
    """Write a tree (and optional metadata) to a JSON file, atomically.

    The document is first written to a temporary file in the same directory and
    then moved over ``path`` in one step, so ``path`` never holds a half-written
    model: if anything fails, an existing file is left untouched.

    Parameters
    ----------
    tree : Tree or fitted estimator
        The tree to save, or a fitted estimator (see :func:`to_json`).
    path : str or path-like
        Destination file; conventionally ending in ``.json``.
    metadata : dict, optional
        Extra JSON-serialisable information, returned again by :func:`load_json`.
    indent : int, optional
        Pretty-print with this indentation.

    Raises
    ------
    InvalidParameterError
        If ``metadata`` is not JSON-serialisable (nothing is written).
    OSError
        If the directory is not writable.

    Examples
    --------
    >>> import os, tempfile
    >>> import numpy as np
    >>> from optitree.tree import Tree, LEAF
    >>> tree = Tree(
    ...     kind=np.array([LEAF], dtype=np.int8),
    ...     feature=np.array([-1]),
    ...     threshold=np.array([np.nan]),
    ...     children_ptr=np.array([0, 0]),
    ...     children=np.array([], dtype=np.int64),
    ...     value=np.array([[3.0, 1.0]]),
    ...     n_features=1,
    ... )
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = os.path.join(tmp, "model.json")
    ...     save_json(tree, path, metadata={"status": "optimal"})
    ...     loaded, metadata = load_json(path)
    >>> loaded == tree, metadata
    (True, {'status': 'optimal'})
    """
    text = to_json(tree, metadata=metadata, indent=indent)  # fails before touching disk
    path = os.fspath(path)
    if os.path.isdir(path) or path.endswith(("/", os.sep)):
        raise IsADirectoryError(
            errno.EISDIR, "save_json needs a file name, not a directory", os.fspath(path)
        )
    directory = os.path.dirname(os.path.abspath(path))
    base = os.path.basename(path)
    for _ in range(100):
        tmp = os.path.join(directory, f".{base}.{uuid.uuid4().hex[:12]}.tmp")
        try:
            # 0o666 filtered by the umask: the same mode an ordinary open() would give.
            fd = os.open(
                tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o666
            )
        except FileExistsError:
            continue
        break
    else:  # pragma: no cover - 100 uuid collisions
        raise OSError(f"could not create a temporary file next to {path}")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(text.encode("utf-8"))
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def load_json(path: str | os.PathLike[str]) -> tuple[Tree, dict[str, Any]]:
    """Read a tree and its metadata from a file written by :func:`save_json`.

    Parameters
    ----------
    path : str or path-like
        The JSON file.

    Returns
    -------
    tree : Tree
        The saved tree.
    metadata : dict
        The saved metadata (empty if none was given).

    Raises
    ------
    SchemaVersionError
        If the file is not an optitree model or was written by a newer optitree.
    DataError
        If the stored tree is malformed.

    Examples
    --------
    >>> import os, tempfile
    >>> import numpy as np
    >>> from optitree.tree import Tree, LEAF
    >>> tree = Tree(
    ...     kind=np.array([LEAF], dtype=np.int8),
    ...     feature=np.array([-1]),
    ...     threshold=np.array([np.nan]),
    ...     children_ptr=np.array([0, 0]),
    ...     children=np.array([], dtype=np.int64),
    ...     value=np.array([[1.0, 2.0]]),
    ...     n_features=3,
    ... )
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = os.path.join(tmp, "model.json")
    ...     save_json(tree, path)
    ...     loaded, metadata = load_json(path)
    >>> loaded.n_features, metadata
    (3, {})
    """
    with open(os.fspath(path), "rb") as handle:
        data = handle.read()
    return _load_document(data)
