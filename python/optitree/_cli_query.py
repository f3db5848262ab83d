"""``optitree query``: build a question tree from a CSV of objects × yes/no queries, print it
with its costs, or ask its questions in the terminal (``--interactive``)."""

from __future__ import annotations

import argparse
import math
import os
import sys
import warnings
from typing import Any

__all__ = ["add_query_parser", "cmd_query"]


def _cost_base(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number >= 1 or 'inf', got {text!r}") from None
    if not value >= 1.0:
        raise argparse.ArgumentTypeError(f"expected a number >= 1 or 'inf', got {text!r}")
    return value


def add_query_parser(commands: Any) -> None:
    """Registers the ``query`` subcommand."""
    from optitree.query import CRITERIA

    query = commands.add_parser(
        "query",
        help="build a question tree that identifies an object (or its group)",
        description=(
            "Build the tree of yes/no questions that identifies an object, or only its group, "
            "with few questions (expected number at --cost-base 1, worst case at inf, "
            "exponentially weighted in between). The CSV has one row per object and one 0/1 "
            "column per question, plus optional name, prior and group columns."
        ),
    )
    source = query.add_mutually_exclusive_group(required=True)
    source.add_argument(
        "objects", nargs="?", metavar="OBJECTS.csv", help="the objects × queries table"
    )
    source.add_argument(
        "--zoo", action="store_true", help="use the bundled zoo animals (groups: their class)"
    )
    query.add_argument("--name", metavar="COL", help="column naming the objects")
    query.add_argument("--prior", metavar="COL", help="column of prior weights (default uniform)")
    query.add_argument("--group", metavar="COL", help="column of group labels: identify the group")
    query.add_argument(
        "--cost-base", type=_cost_base, default=1.0, metavar="λ", help="λ >= 1 or inf"
    )
    query.add_argument("--criterion", choices=CRITERIA, default="auto")
    query.add_argument("--tie-break", choices=("first", "random"), default="first")
    query.add_argument("--seed", type=int, default=None, help="seed for --tie-break random")
    query.add_argument("--max-depth", type=int, default=None, metavar="N")
    query.add_argument(
        "--on-unidentifiable",
        choices=("error", "leaf", "merge"),
        default="error",
        help="objects with identical answers: report them (error), stop at an ambiguous leaf, "
        "or identify them as one group",
    )
    query.add_argument(
        "--format",
        choices=("text", "dot", "json"),
        help="how to print the tree (default: from the --output extension, .dot/.gv or "
        ".json, else text)",
    )
    query.add_argument("--output", "-o", metavar="PATH", help="write the tree to this file")
    query.add_argument("--sep", default=",", help="CSV field separator (default ',')")
    query.add_argument(
        "--interactive", "-i", action="store_true", help="ask the questions in the terminal"
    )


def _problem(args: argparse.Namespace) -> tuple[Any, Any, Any]:
    from pandas.api.types import is_bool_dtype, is_numeric_dtype

    from optitree.cli import UsageError, _read_csv

    if args.zoo:
        from optitree.datasets import load_zoo_queries

        B, groups = load_zoo_queries()
        return B, None, groups
    frame = _read_csv(args.objects, args.sep)
    frame.columns = [str(c) for c in frame.columns]
    for option in ("name", "prior", "group"):
        col = getattr(args, option)
        if col is not None and col not in frame.columns:
            raise UsageError(
                f"--{option} {col!r} is not a column of {args.objects!r} "
                f"(columns: {', '.join(frame.columns[:8])}{', ...' if frame.shape[1] > 8 else ''})"
            )
    roles: dict[str, str] = {}
    for option in ("name", "prior", "group"):
        col = getattr(args, option)
        if col is not None and col in roles:
            raise UsageError(f"column {col!r} is given to both --{roles[col]} and --{option}")
        if col is not None:
            roles[col] = option
    name = args.name
    first = frame.iloc[:, 0]
    reserved = {args.prior, args.group}
    if (
        name is None
        and frame.columns[0] not in reserved
        and not (is_numeric_dtype(first) or is_bool_dtype(first))
    ):
        name = frame.columns[0]  # a leading text column names the objects
    if name is not None:
        frame = frame.set_index(name)
    prior = frame.pop(args.prior) if args.prior else None
    groups = frame.pop(args.group) if args.group else None
    return frame, prior, groups


def _fit(args: argparse.Namespace, B: Any, prior: Any, groups: Any) -> Any:
    from optitree import QueryTree
    from optitree.exceptions import DataError

    estimator = QueryTree(
        criterion=args.criterion,
        cost_base=args.cost_base,
        tie_break=args.tie_break,
        random_state=args.seed,
        max_depth=args.max_depth,
        on_unidentifiable=args.on_unidentifiable,
    )
    try:
        return estimator.fit(B, prior=prior, groups=groups)
    except DataError as exc:
        # The library's advice, in the command line's words.
        text = str(exc).replace(
            "pass on_unidentifiable='leaf' (stop at an ambiguous leaf) or 'merge'",
            "use --on-unidentifiable leaf (stop at an ambiguous leaf) or merge",
        )
        if text == str(exc):
            raise
        raise DataError(text) from exc


def cmd_query(args: argparse.Namespace) -> int:
    """Runs ``optitree query``."""
    from optitree import export_dot, export_text, to_json
    from optitree.cli import _emit, _note

    B, prior, groups = _problem(args)
    if args.seed is not None and args.tie_break != "random":
        _note("--seed applies only with --tie-break random: ignored")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        qt = _fit(args, B, prior, groups)
    for w in caught:
        _note(str(w.message))
    if args.interactive:
        if args.output is not None or args.format is not None:
            _note("--output and --format apply to the printed tree, not to --interactive")
        return _interactive(qt)
    lam = qt.cost_base
    target = "groups" if groups is not None else "objects"
    summary = [
        f"{qt.n_objects_} objects, {qt.n_queries_} queries; identify the {target[:-1]}",
        f"criterion {qt.criterion_} at cost base λ = {lam:g} ({qt.status_})",
        f"cost L_λ = {qt.cost_:.6g} (lower bound {qt.lower_bound_:.6g})",
        f"expected questions {qt.expected_queries_:.6g}, at most {qt.max_queries_}",
    ]
    fmt = args.format
    if fmt is None:
        extension = os.path.splitext(args.output or "")[1].lower()
        fmt = {".dot": "dot", ".gv": "dot", ".json": "json"}.get(extension, "text")
    if fmt == "text":
        text = export_text(qt.tree_)
    elif fmt == "dot":
        text = export_dot(qt.tree_)
    else:
        meta = {
            "criterion": qt.criterion_,
            "cost_base": None if math.isinf(lam) else lam,
            "cost": qt.cost_,
            "status": qt.status_,
        }
        text = to_json(qt.tree_, metadata=meta, indent=1)
    if args.output is None:
        sys.stdout.write("\n".join(summary) + "\n\n")
        _emit(text, None)
    else:
        _emit(text, args.output)
        sys.stdout.write("\n".join(summary) + f"\nwrote {args.output}\n")
    return 130 if qt.status_ == "interrupted" else 0  # as fit: the tree, and the cut-short code


_YES, _NO = {"y", "yes", "1", "true"}, {"n", "no", "0", "false"}


def _left(session: Any, out: Any) -> None:
    """Prints where an unfinished session stands: the most likely candidates left."""
    n = session.n_questions
    candidates = session.candidates()
    out.write(
        f"stopped after {n} question{'' if n == 1 else 's'}; {len(candidates)} candidate"
        f"{'' if len(candidates) == 1 else 's'} left:\n"
    )
    _list(candidates, out)


def _list(candidates: list, out: Any) -> None:
    """Prints the ten most likely candidates with their probabilities."""
    for name, p in candidates[:10]:
        out.write(f"  {name}  {p:.3f}\n")


def _interactive(qt: Any) -> int:
    from optitree.cli import _note

    session = qt.session()
    out = sys.stdout
    out.write("Answer y(es) / n(o); u = undo, c = candidates, q = quit.\n")
    while not session.done:
        query = session.next_query()
        try:
            reply = input(f"Q{session.n_questions + 1}. {query}? ").strip().lower()
        except EOFError:
            out.write("\n")
            _note("the answers ended before the object was identified")
            _left(session, out)
            return 1
        if reply in ("q", "quit"):
            _left(session, out)
            return 0
        if reply in ("u", "undo"):
            if session.n_questions:
                session.undo()
            continue
        if reply in ("c", "candidates"):
            _list(session.candidates(), out)
            continue
        if reply not in _YES | _NO:
            out.write("  please answer y or n (u undo, c candidates, q quit)\n")
            continue
        from optitree.exceptions import DataError

        try:
            session.answer(query, reply in _YES)
        except DataError as exc:
            out.write(f"  {exc}\n")
    result = session.result
    shown = " or ".join(map(str, result)) if isinstance(result, tuple) else str(result)
    n = session.n_questions
    out.write(f"=> {shown}  ({n} question{'' if n == 1 else 's'})\n")
    return 0
