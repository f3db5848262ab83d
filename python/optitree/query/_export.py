"""Text, DOT and JSON forms of a :class:`QuestionTree`.

The text form is a numbered questionnaire: each question says where every answer leads (another
question, or what has been identified), so it can be printed and followed by hand.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from typing import Any

import numpy as np

from optitree.exceptions import DataError, SchemaVersionError
from optitree.query._model import QuestionTree, _label_text

__all__ = ["FORMAT", "question_tree_from_document", "questionnaire", "to_document", "to_dot"]

FORMAT = "optitree.question_tree"
SCHEMA_VERSION = 1


def _preorder(tree: QuestionTree) -> list[int]:
    order, stack = [], [0]
    while stack:
        a = stack.pop()
        order.append(a)
        if not tree.is_leaf(a):
            stack.extend([int(tree.children[a, 1]), int(tree.children[a, 0])])
    return order


def _distinct_query_names(tree: QuestionTree) -> list[str]:
    """The queries' names as printed, quoted as other labels are when blank or alike."""
    from optitree.export import _distinct_texts

    return _distinct_texts(tree.query_names)


def _leaf_texts(tree: QuestionTree) -> Callable[[int], str]:
    """What each leaf identifies, as printed: its target's name, or the names of its targets
    joined by "or"; names that would print alike (``1`` and ``"1"``) are quoted, as the other
    exports quote labels."""
    from optitree.export import _distinct_texts

    names = _distinct_texts([_label_text(t) for t in tree.target_names])

    def text(node: int) -> str:
        targets = np.unique(tree.target[tree.objects_at(node)])
        return " or ".join(names[int(t)] for t in targets)

    return text


def questionnaire(tree: QuestionTree, *, decimals: int = 3, show_mass: bool = True) -> str:
    """The tree as numbered questions, each with where its answers lead.

    >>> from optitree.query import QuestionTree
    >>> t = QuestionTree(query=[0, -1, -1], children=[[1, 2], [-1, -1], [-1, -1]],
    ...                  leaf_of_object=[1, 2], prior=[0.75, 0.25], target=[0, 1],
    ...                  object_names=["cat", "dog"], query_names=["barks"],
    ...                  target_names=["cat", "dog"])
    >>> print(questionnaire(t))
    Q1. barks?
        no  -> cat  (p = 0.75, 1 question)
        yes -> dog  (p = 0.25, 1 question)
    <BLANKLINE>
    """
    inner = [a for a in _preorder(tree) if not tree.is_leaf(a)]
    number = {a: k + 1 for k, a in enumerate(inner)}
    leaf_text = _leaf_texts(tree)
    queries = _distinct_query_names(tree)
    mass = tree.mass
    width = len(f"Q{len(inner)}.")

    def outcome(node: int) -> str:
        if not tree.is_leaf(node):
            return f"Q{number[node]}"
        text = leaf_text(node)
        d = int(tree.depth[node])
        extra = f"{d} question" + ("" if d == 1 else "s")
        if show_mass:
            extra = f"p = {_fmt(mass[node], decimals)}, " + extra
        return f"{text}  ({extra})"

    if not inner:
        return f"(no question needed) -> {outcome(0)}\n"
    lines = []
    for a in inner:
        head = f"Q{number[a]}.".ljust(width)
        lines.append(f"{head} {queries[int(tree.query[a])]}?")
        pad = " " * (width + 1)
        lines.append(f"{pad}no  -> {outcome(int(tree.children[a, 0]))}")
        lines.append(f"{pad}yes -> {outcome(int(tree.children[a, 1]))}")
    return "\n".join(lines) + "\n"


def _fmt(x: float, decimals: int) -> str:
    text = f"{x:.{decimals}f}".rstrip("0").rstrip(".")
    return text if text not in ("", "-0") else "0"


def _dot_escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"')


def to_dot(
    tree: QuestionTree,
    *,
    decimals: int = 3,
    show_mass: bool = True,
    rounded: bool = True,
    fill: Callable[[int], str] | None = None,
) -> str:
    """Graphviz DOT: question boxes, answer ellipses, edges labelled no / yes. ``fill`` gives
    the colour of a target's answers (an answer naming several targets stays white).
    """
    mass = tree.mass
    leaf_text = _leaf_texts(tree)
    queries = _distinct_query_names(tree)
    box = "shape=box, style=rounded" if rounded else "shape=box"
    lines = ["digraph QuestionTree {", '    node [fontname="helvetica"];']
    for a in _preorder(tree):
        if tree.is_leaf(a):
            # Escaped before the line break joins them: an escaped '\\n' is drawn as is.
            text = _dot_escape(leaf_text(a))
            if show_mass:
                text += f"\\np = {_fmt(mass[a], decimals)}"
            style = ""
            if fill is not None:
                targets = np.unique(tree.target[tree.objects_at(a)])
                if len(targets) == 1:
                    style = f', style=filled, fillcolor="{fill(int(targets[0]))}"'
            lines.append(f'    {a} [shape=ellipse{style}, label="{text}"];')
        else:
            q = queries[int(tree.query[a])]
            lines.append(f'    {a} [{box}, label="{_dot_escape(q)}?"];')
    for a in _preorder(tree):
        if not tree.is_leaf(a):
            lines.append(f'    {a} -> {int(tree.children[a, 0])} [label="no"];')
            lines.append(f'    {a} -> {int(tree.children[a, 1])} [label="yes"];')
    lines.append("}")
    return "\n".join(lines) + "\n"


def _encode_name(value: Any) -> Any:
    if isinstance(value, tuple):
        return {"any_of": [_encode_name(v) for v in value]}
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        raise DataError(f"a target label {value!r} cannot be written to JSON")
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    raise DataError(f"a target label of type {type(value).__name__} cannot be written to JSON")


def _decode_name(value: Any) -> Any:
    if isinstance(value, dict) and set(value) == {"any_of"}:
        return tuple(_decode_name(v) for v in value["any_of"])
    return value


def to_document(tree: QuestionTree) -> dict[str, Any]:
    """The tree as a JSON-ready dict (exact: floats keep their shortest repr)."""
    return {
        "format": FORMAT,
        "schema_version": SCHEMA_VERSION,
        "tree": {
            "query": tree.query.tolist(),
            "children": tree.children.tolist(),
            "leaf_of_object": tree.leaf_of_object.tolist(),
            "prior": tree.prior.tolist(),
            "target": tree.target.tolist(),
            "object_names": tree.object_names,
            "query_names": tree.query_names,
            "target_names": [_encode_name(t) for t in tree.target_names],
        },
    }


def question_tree_from_document(document: dict[str, Any]) -> QuestionTree:
    """Rebuilds a tree from :func:`to_document`'s output (already parsed JSON)."""
    version = document.get("schema_version")
    if isinstance(version, bool) or not isinstance(version, int) or version < 1:
        raise SchemaVersionError(f"schema_version must be a positive integer, got {version!r}")
    if version > SCHEMA_VERSION:
        raise SchemaVersionError(
            f"this question tree was saved with schema version {version}, but this optitree "
            f"reads versions up to {SCHEMA_VERSION}; upgrade optitree to load it"
        )
    body = document.get("tree")
    if not isinstance(body, dict):
        raise DataError("the document's 'tree' entry must be an object")
    try:
        return QuestionTree(
            query=body["query"],
            children=body["children"],
            leaf_of_object=body["leaf_of_object"],
            prior=body["prior"],
            target=body["target"],
            object_names=body["object_names"],
            query_names=body["query_names"],
            target_names=[_decode_name(t) for t in body["target_names"]],
        )
    except KeyError as exc:
        raise DataError(f"the question tree document lacks {exc}") from exc
    except (TypeError, ValueError) as exc:
        raise DataError(f"the question tree document is malformed: {exc}") from exc


def dumps(tree: QuestionTree, metadata: dict[str, Any] | None, indent: int | None) -> str:
    """The JSON text of :func:`to_document` plus metadata."""
    doc = to_document(tree)
    doc["metadata"] = dict(metadata or {})
    return json.dumps(doc, indent=indent, allow_nan=False)
