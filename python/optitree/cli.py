"""The ``optitree`` command line: list datasets, fit trees, predict and show saved models.

Run ``optitree --help`` (or ``python -m optitree --help``) for the commands and
``optitree COMMAND --help`` for their options:

``optitree datasets``
    The bundled datasets with their sizes.
``optitree fit (--dataset NAME | DATA.csv) [options]``
    Fit a tree, print a summary of the data, the tree and its certificate (objective, status,
    bounds), and optionally save it as JSON.
``optitree predict MODEL.json DATA.csv``
    Predict the rows of a CSV file with a saved model.
``optitree show MODEL.json``
    Print a saved model as text, Graphviz DOT or JSON, or draw it as PNG/SVG.

The command line is built on the public API only (:mod:`optitree`, :mod:`optitree.export`,
:mod:`optitree.datasets`, :mod:`optitree.tree`). Adding a solver to it means adding one entry to
:data:`ALGORITHMS`.

Exit codes: 0 success, 1 a problem with the data or a model file, 2 a usage error (unknown
option, bad parameter value), 130 interrupted (a search stopped by Ctrl-C still prints, and
saves, the best tree it found). Every error is reported as one line
``optitree: error: ...`` on standard error.
"""

from __future__ import annotations

import argparse
import difflib
import math
import os
import re
import secrets
import sys
import textwrap
import time
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Callable

__all__ = ["ALGORITHMS", "Algorithm", "AlgorithmOption", "main"]

PROG = "optitree"

# How many features (and classes) the data summary lists before it writes "... N more".
_MAX_LISTED = 20


# ---------------------------------------------------------------------------
# Errors
# ---------------------------------------------------------------------------


class CLIError(Exception):
    """A problem to report as one ``optitree: error:`` line, exiting with ``code``."""

    code = 1


class UsageError(CLIError):
    """The command line itself is wrong (exit code 2)."""

    code = 2


class _ArgumentParser(argparse.ArgumentParser):
    """An ArgumentParser whose errors are one line, ``optitree: error: ...``, exit code 2."""

    def error(self, message: str) -> None:  # type: ignore[override]
        raise UsageError(f"{message} (see '{self.prog} --help')")


def _one_line(message: str) -> str:
    """Folds a multi-line message into one line; bullet lines (``- x``) become ``x, y``."""
    groups: list[tuple[str, list[str]]] = []  # (line, the bullets that follow it)
    for raw in str(message).splitlines():
        line = raw.strip()
        if line.startswith("- ") and groups:
            groups[-1][1].append(line[2:])
        elif line:
            groups.append((line, []))
    return " ".join(f"{line} {', '.join(items)}" if items else line for line, items in groups)


def _os_error_text(exc: OSError, verb: str, what: str, *, own_name: bool = False) -> str:
    """The error's text naming the file it names, or ``what`` (always with ``own_name``: a
    write through a temporary file should name the user's path, not the temporary one)."""
    reason = (exc.strerror or str(exc)).rstrip(".")
    name = exc.filename if exc.filename is not None and not own_name else what
    return f"cannot {verb} {name!r}: {reason[:1].lower()}{reason[1:]}"


# ---------------------------------------------------------------------------
# Argument types
# ---------------------------------------------------------------------------


def _parse(
    text: str, cast: Callable[[str], Any], kind: str, ok: Callable[[Any], bool], allowed: str
) -> Any:
    """Reads ``text`` with ``cast`` and checks it with ``ok`` (argparse errors otherwise)."""
    try:
        value = cast(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected {kind}, got {text!r}") from None
    if not ok(value):
        raise argparse.ArgumentTypeError(f"must be {allowed}, got {text!r}")
    return value


def positive_float(text: str) -> float:
    """argparse type: a finite number > 0."""
    return _parse(
        text, float, "a number", lambda v: math.isfinite(v) and v > 0, "a positive number"
    )


def _time_limit(text: str) -> float:
    """argparse type: seconds >= 0 (0: return the first tree at once; inf: no limit)."""
    return _parse(text, float, "a number", lambda v: v >= 0, "a number of seconds >= 0")


def nonnegative_float(text: str) -> float:
    """argparse type: a finite number >= 0."""
    return _parse(text, float, "a number", lambda v: math.isfinite(v) and v >= 0, "a number >= 0")


def _penalty(text: str) -> float:
    """argparse type: a number in [0, 1] (the price of a split in training accuracy)."""
    return _parse(text, float, "a number", lambda v: 0 <= v <= 1, "a number in [0, 1]")


def nonnegative_int(text: str) -> int:
    """argparse type: an integer >= 0."""
    return _parse(text, int, "an integer", lambda v: v >= 0, "an integer >= 0")


# ---------------------------------------------------------------------------
# The algorithm registry
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class AlgorithmOption:
    """A command-line option that sets one estimator parameter.

    Attributes
    ----------
    flag : str
        The option, e.g. ``"--max-depth"``. Several algorithms may declare the same flag; they
        must then agree on ``param``, ``type`` and ``metavar``.
    param : str
        The estimator's parameter name, e.g. ``"max_depth"``.
    type : callable
        Converts the typed text (an argparse type; raise ``argparse.ArgumentTypeError``).
    help : str
        Help text; say what the value means and what is allowed.
    metavar : str
        Placeholder shown in the help.
    """

    flag: str
    param: str
    type: Callable[[str], Any]
    help: str
    metavar: str = "X"


@dataclass(frozen=True)
class Algorithm:
    """One ``--algorithm`` choice: how to build its estimator and which options it takes.

    Attributes
    ----------
    summary : str
        One line for ``optitree fit --help``.
    factory : callable
        ``factory(**params)`` returns an unfitted estimator. Import the estimator inside the
        factory so that ``optitree --help`` stays fast.
    options : tuple of AlgorithmOption
        The options this algorithm accepts; an option that is not given leaves the
        estimator's default.
    """

    summary: str
    factory: Callable[..., Any]
    options: tuple[AlgorithmOption, ...] = field(default_factory=tuple)


def _stump(**params: Any) -> Any:
    from optitree import StumpClassifier

    return StumpClassifier(**params)


_TIME_LIMIT = AlgorithmOption(
    "--time-limit",
    "time_limit",
    _time_limit,
    "stop after S seconds and report the best tree found (status 'time_limit'); default: no limit",
    metavar="S",
)


def _branches(**params: Any) -> Any:
    from optitree import BranchesClassifier

    return BranchesClassifier(**params)


def byte_size(text: str) -> int:
    """A number of bytes, optionally with a unit: ``4G``, ``500M``, ``64k``, ``1000000``.

    Examples
    --------
    >>> byte_size("4G"), byte_size("500M"), byte_size("123")
    (4294967296, 524288000, 123)
    """
    units = {"": 1, "K": 2**10, "M": 2**20, "G": 2**30, "T": 2**40}
    cleaned = text.strip().upper().removesuffix("B").removesuffix("I")
    number, unit = cleaned, ""
    if cleaned and cleaned[-1] in units:
        number, unit = cleaned[:-1], cleaned[-1]
    try:
        value = float(number) * units[unit]
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected a size in bytes such as 4G, 500M or 1000000, got {text!r}"
        ) from None
    if not math.isfinite(value) or value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1 byte, got {text!r}")
    return int(value)


def positive_int(text: str) -> int:
    """argparse type: an integer >= 1."""
    return _parse(text, int, "an integer", lambda v: v >= 1, "an integer >= 1")


def _yes_no(text: str) -> bool:
    """argparse type: yes/no, true/false or 1/0."""
    value = text.strip().lower()
    if value in ("yes", "true", "1"):
        return True
    if value in ("no", "false", "0"):
        return False
    raise argparse.ArgumentTypeError(f"expected yes or no, got {text!r}")


_BRANCHES_OPTIONS = (
    _TIME_LIMIT,
    AlgorithmOption(
        "--penalty",
        "penalty",
        _penalty,
        "price of one split in training accuracy, in [0, 1] (branches default: 0.01); "
        "taken exactly as written, e.g. 0.005 = 1/200",
        metavar="L",
    ),
    AlgorithmOption(
        "--max-depth",
        "max_depth",
        nonnegative_int,
        "longest root-to-leaf path (default: unlimited); needed when --penalty is 0",
        metavar="D",
    ),
    AlgorithmOption(
        "--min-samples-leaf",
        "min_samples_leaf",
        nonnegative_int,
        "fewest training rows a leaf may hold (default: 1; proper also takes 0, which allows "
        "empty leaves as its paper does)",
        metavar="N",
    ),
    AlgorithmOption(
        "--memory-limit",
        "memory_limit",
        byte_size,
        "stop when the search holds this much memory, e.g. 4G (status 'memory_limit'); "
        "default: no limit",
        metavar="BYTES",
    ),
    AlgorithmOption(
        "--max-thresholds",
        "max_thresholds",
        positive_int,
        "candidate thresholds per numeric column (default: every midpoint)",
        metavar="K",
    ),
    AlgorithmOption(
        "--fewest-splits",
        "fewest_splits",
        _yes_no,
        "yes (default): among equally good trees, prove and return one with the fewest splits; "
        "no: any optimal tree, much faster when many tie (e.g. --penalty 0)",
        "yes|no",
    ),
)


def _maptree(**params: Any) -> Any:
    from optitree import MAPTreeClassifier

    return MAPTreeClassifier(**params)


def _unit_float(text: str) -> float:
    """argparse type: a number strictly between 0 and 1."""
    return _parse(text, float, "a number", lambda v: 0 < v < 1, "a number in (0, 1)")


def _maptree_mode(text: str) -> str:
    if text not in ("fast", "reference"):
        raise argparse.ArgumentTypeError(f"expected 'fast' or 'reference', got {text!r}")
    return text


def positive_float_list(text: str) -> Any:
    """argparse type: one positive number, or several separated by commas (``2.5`` or ``1,3``)."""
    parts = [positive_float(p) for p in text.split(",")]
    return parts[0] if len(parts) == 1 else tuple(parts)


def _n_jobs(text: str) -> int:
    """argparse type: a thread count >= 1, or -1 for all cores."""
    return _parse(text, int, "an integer", lambda v: v >= 1 or v == -1, "an integer >= 1 or -1")


_N_JOBS = AlgorithmOption(
    "--n-jobs", "n_jobs", _n_jobs, "threads, -1 for all cores (default 1)", "N"
)

_MAPTREE_OPTIONS = (
    _TIME_LIMIT,
    _BRANCHES_OPTIONS[4],  # --memory-limit
    AlgorithmOption(
        "--alpha", "alpha", _unit_float, "BCART split scale α in (0, 1) (default 0.95)", "A"
    ),
    AlgorithmOption(
        "--beta", "beta", nonnegative_float, "BCART split decay β >= 0 (default 0.5)", "B"
    ),
    AlgorithmOption(
        "--rho",
        "rho",
        positive_float_list,
        "Dirichlet pseudo-count per class: one number for all, or one per class separated by "
        "commas (default 2.5)",
        "R",
    ),
    AlgorithmOption(
        "--mode",
        "mode",
        _maptree_mode,
        "search order: 'fast' (default) or 'reference' (the authors' order, bound for bound)",
        "M",
    ),
    AlgorithmOption(
        "--max-expansions",
        "max_expansions",
        positive_int,
        "stop after N expansions (status 'node_limit'; reproducible, unlike a time limit)",
        "N",
    ),
    _N_JOBS,
)


def _proper(**params: Any) -> Any:
    from optitree import ProperTreeClassifier

    return ProperTreeClassifier(**params)


def _choice(*allowed: str) -> Callable[[str], str]:
    """argparse type: one of ``allowed``."""

    def parse(text: str) -> str:
        if text not in allowed:
            raise argparse.ArgumentTypeError(
                f"expected one of {', '.join(repr(a) for a in allowed)}, got {text!r}"
            )
        return text

    return parse


_PROPER_OPTIONS = (
    _TIME_LIMIT,
    _BRANCHES_OPTIONS[2],  # --max-depth
    _BRANCHES_OPTIONS[3],  # --min-samples-leaf
    _BRANCHES_OPTIONS[4],  # --memory-limit
    AlgorithmOption("--n-splits", "n_splits", positive_int, "number of splits K (default 2)", "K"),
    AlgorithmOption(
        "--rule",
        "rule",
        _choice("axis", "hyperplane", "polynomial", "mixed"),
        "candidate rules: axis (default), hyperplane, polynomial or mixed",
        "R",
    ),
    AlgorithmOption(
        "--degree", "degree", positive_int, "degree of polynomial rules (default 2)", "M"
    ),
    AlgorithmOption(
        "--exactly",
        "exactly",
        _yes_no,
        "yes: exactly K splits (the paper's problem); no (default): at most K",
        "yes|no",
    ),
    AlgorithmOption(
        "--objective",
        "objective",
        _choice("misclassification", "gini", "entropy"),
        "training loss: misclassification (default), gini or entropy",
        "L",
    ),
    _N_JOBS,
    AlgorithmOption(
        "--side-assignment",
        "side_assignment",
        _choice("all", "closed"),
        "sides of a surface's defining rows: all (default, complete) or closed",
        "S",
    ),
    AlgorithmOption(
        "--engine",
        "engine",
        _choice("auto", "topdown", "combinations"),
        "auto (default), topdown or combinations (the paper's enumeration)",
        "E",
    ),
)

#: ``--algorithm`` name -> how to build it and its options. A solver joins the command line by
#: adding one entry here.
ALGORITHMS: dict[str, Algorithm] = {
    "branches": Algorithm(
        "provably optimal sparse tree: maximise accuracy - penalty x splits (multiway splits on "
        "categorical columns)",
        _branches,
        _BRANCHES_OPTIONS,
    ),
    "maptree": Algorithm(
        "the maximum-a-posteriori tree under the Bayesian CART prior (binary splits), proven "
        "or with a gap",
        _maptree,
        _MAPTREE_OPTIONS,
    ),
    "proper": Algorithm(
        "provably optimal proper tree with K axis, hyperplane or polynomial splits (He & "
        "Little); numeric columns",
        _proper,
        _PROPER_OPTIONS,
    ),
    "stump": Algorithm(
        "the most accurate tree with at most one split (multiway on categorical columns)",
        _stump,
        (_TIME_LIMIT,),
    ),
}

DEFAULT_ALGORITHM = "branches"


def _option_table() -> dict[str, tuple[AlgorithmOption, list[str]]]:
    """Every algorithm option once, keyed by flag, with the algorithms that accept it."""
    table: dict[str, tuple[AlgorithmOption, list[str]]] = {}
    for name, algorithm in ALGORITHMS.items():
        for option in algorithm.options:
            if option.flag in table:
                first, users = table[option.flag]
                if (first.param, first.type, first.metavar) != (
                    option.param,
                    option.type,
                    option.metavar,
                ):
                    raise RuntimeError(f"algorithms disagree about what {option.flag} means")
                users.append(name)
            else:
                table[option.flag] = (option, [name])
    return table


def _dest(option: AlgorithmOption) -> str:
    return "algo_" + option.param


# ---------------------------------------------------------------------------
# Parser
# ---------------------------------------------------------------------------


def build_parser() -> argparse.ArgumentParser:
    """Builds the ``optitree`` argument parser with its subcommands.

    Returns
    -------
    argparse.ArgumentParser
    """
    import optitree

    parser = _ArgumentParser(
        prog=PROG,
        description="Provably optimal decision trees from the command line.",
        epilog="Run 'optitree COMMAND --help' for the options of a command.",
    )
    parser.add_argument(
        "--version",
        action="version",
        version=f"{PROG} {optitree.__version__}",
        help="print the optitree version and exit",
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", title="commands")

    # -- datasets ----------------------------------------------------------------------------
    commands.add_parser(
        "datasets",
        help="list the bundled datasets",
        description="List the datasets bundled with optitree (names for 'fit --dataset').",
    )

    # -- fit ---------------------------------------------------------------------------------
    fit = commands.add_parser(
        "fit",
        help="fit a tree on a bundled dataset or a CSV file",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description=textwrap.fill(
            "Fit a decision tree and print a summary of the data, the tree and its "
            "certificate: objective, status (optimal, or why the search stopped), lower and "
            "upper bounds, size and training accuracy. In a CSV file, columns of text are "
            "categorical and columns of numbers numeric, except that branches and maptree "
            "split columns of whole numbers by value (the summary says which); only empty "
            "cells count as missing.",
            width=80,
        ),
        epilog="algorithms:\n"
        + "\n".join(
            textwrap.fill(
                alg.summary,
                width=80,
                initial_indent=f"  {name:<12}",
                subsequent_indent=" " * 14,
            )
            for name, alg in ALGORITHMS.items()
        ),
    )
    source = fit.add_argument_group("data (give a CSV file or --dataset)")
    source.add_argument(
        "csv",
        nargs="?",
        metavar="DATA.csv",
        help="CSV file with a header row, one row per sample (spaces around cells are ignored)",
    )
    source.add_argument(
        "--dataset",
        metavar="NAME",
        help="a bundled dataset instead of a CSV file (see 'optitree datasets')",
    )
    source.add_argument(
        "--target",
        metavar="COL",
        help="name of the label column of the CSV file (default: the last column)",
    )
    source.add_argument(
        "--sep",
        metavar="SEP",
        help="field separator of the CSV file, taken literally; \\t for a tab (default: ',')",
    )
    source.add_argument(
        "--categorical",
        metavar="COLS",
        help="comma-separated CSV columns to treat as categorical even if they hold numbers",
    )
    fit.add_argument(
        "--algorithm",
        choices=list(ALGORITHMS),
        default=DEFAULT_ALGORITHM,
        help=f"the solver to run (default: {DEFAULT_ALGORITHM}); see the list below",
    )
    solver = fit.add_argument_group(
        "solver options (each applies to the algorithms named in brackets)"
    )
    for flag, (option, users) in _option_table().items():
        solver.add_argument(
            flag,
            dest=_dest(option),
            type=option.type,
            default=None,
            metavar=option.metavar,
            help=f"{option.help} [{', '.join(users)}]",
        )
    out = fit.add_argument_group("output")
    out.add_argument(
        "--format",
        choices=("text", "dot", "json"),
        default="text",
        help="how to print the tree: indented rules, Graphviz DOT or the JSON model "
        "(default: text); with dot or json the tree alone goes to standard output and the "
        "summary to standard error, so that it can be piped",
    )
    out.add_argument(
        "--save", metavar="MODEL.json", help="write the fitted model (with its metadata) here"
    )
    out.add_argument(
        "--quiet",
        "-q",
        action="store_true",
        help="print only the result lines, not the data summary nor (with --format text) the "
        "tree; DOT or JSON still goes to standard output",
    )

    # -- predict -----------------------------------------------------------------------------
    predict = commands.add_parser(
        "predict",
        help="predict the rows of a CSV file with a saved model",
        description=(
            "Predict every row of a CSV file with a model saved by 'optitree fit --save' (or "
            "by save_json). The model's label column is ignored if present; every column the "
            "tree splits is needed, and other columns are ignored with a note. Categories not "
            "seen in training are predicted with the class distribution of the node where the "
            "row stops. The output is a CSV with a 'prediction' column, in the order of the "
            "input rows."
        ),
    )
    predict.add_argument("model", metavar="MODEL.json", help="a model saved by 'optitree fit'")
    predict.add_argument("data", metavar="DATA.csv", help="CSV file with a header row")
    predict.add_argument(
        "--output", "-o", metavar="OUT.csv", help="write the predictions here (default: stdout)"
    )
    predict.add_argument(
        "--proba",
        action="store_true",
        help="add one column 'proba_<class>' per class with the predicted probabilities",
    )
    predict.add_argument(
        "--sep", default=",", metavar="SEP", help="field separator of DATA.csv and of the output"
    )

    # -- show --------------------------------------------------------------------------------
    from optitree._cli_query import add_query_parser

    add_query_parser(commands)

    show = commands.add_parser(
        "show",
        help="print or draw a saved model",
        description=(
            "Print a saved model as indented rules (text), Graphviz DOT or JSON, or draw it "
            "as a PNG or SVG image (needs matplotlib and --output)."
        ),
    )
    show.add_argument("model", metavar="MODEL.json", help="a model saved by 'optitree fit'")
    show.add_argument(
        "--format",
        choices=("text", "dot", "json", "png", "svg"),
        help="output format (default: from the --output extension, else text)",
    )
    show.add_argument(
        "--output",
        "-o",
        metavar="PATH",
        help="write to this file instead of stdout (required for png and svg)",
    )
    return parser


# ---------------------------------------------------------------------------
# Reading and writing files
# ---------------------------------------------------------------------------


def _separator(sep: str) -> str:
    """The --sep value, with the escape ``\\t`` accepted for a tab."""
    if not sep:
        raise UsageError("--sep must not be empty")
    return "\t" if sep == "\\t" else sep


def _read_csv(
    path: str, sep: str, dtypes: dict[str, Any] | None = None, *, short_rows: bool = False
) -> Any:
    """Reads a CSV file; only empty cells are missing (text like 'NA' stays a category).

    The separator is taken literally, however long. Spaces around a header or a cell are
    dropped, so that ``yes`` and `` yes`` are one class. Duplicate headers are refused
    (pandas would rename the second ``a`` to ``a.1``). A row with fewer cells than the header
    is refused unless ``short_rows`` (``predict`` needs only the columns the tree splits, and
    a file of new rows may leave out the trailing label cell)."""
    import re

    import pandas as pd

    sep = _separator(sep)
    if not os.path.exists(path):
        raise CLIError(f"cannot read {path!r}: no such file")
    # pandas reads a separator of more than one character as a regular expression, with a
    # warning unless its Python engine is named.
    literal = {"sep": sep} if len(sep) == 1 else {"sep": re.escape(sep), "engine": "python"}
    options: dict[str, Any] = {"keep_default_na": False, "na_values": [""], **literal}
    try:
        header = pd.read_csv(path, header=None, nrows=1, dtype=str, **options)
        frame = pd.read_csv(path, dtype=dtypes or None, **options)
    except OSError as exc:
        raise CLIError(_os_error_text(exc, "read", path)) from exc
    except pd.errors.EmptyDataError as exc:
        raise CLIError(f"cannot read {path!r}: the file is empty") from exc
    except UnicodeDecodeError as exc:
        raise CLIError(f"cannot read {path!r}: the file is not UTF-8 text ({exc.reason})") from exc
    except (pd.errors.ParserError, ValueError) as exc:
        raise CLIError(f"cannot read {path!r} as CSV: {_one_line(str(exc))}") from exc
    if frame.shape[0] == 0:
        raise CLIError(f"{path!r} has a header but no data rows")
    names = ["" if pd.isna(name) else str(name).strip() for name in header.iloc[0]]
    _check_headers(path, names)
    if not short_rows and len(sep) == 1 and frame.iloc[:, -1].isna().any():
        _check_short_rows(path, sep, len(names))
    frame.columns = names
    for name in names:
        column = frame[name]
        if not (pd.api.types.is_numeric_dtype(column) or pd.api.types.is_bool_dtype(column)):
            stripped = column.astype(object).map(lambda v: v.strip() if isinstance(v, str) else v)
            frame[name] = stripped.mask(stripped == "")
    return frame


def _check_short_rows(path: str, sep: str, n_columns: int) -> None:
    """Refuses a row with fewer cells than the header, which pandas pads with empty cells: a
    row cut short is a broken file, not missing values. Called only when the last column has
    an empty cell, so that clean files are read once."""
    import csv

    with open(path, newline="", encoding="utf-8") as handle:
        # pandas skips blank lines, spaces-only ones included.
        rows = (row for row in csv.reader(handle, delimiter=sep) if "".join(row).strip())
        next(rows, None)  # the header
        for number, row in enumerate(rows, start=1):
            if len(row) < n_columns:
                raise CLIError(
                    f"{path!r}: row {number} after the header has {len(row)} cell(s) but the "
                    f"header names {n_columns} columns (a row cut short or a missing separator?)"
                )


def _check_headers(path: str, names: list[str]) -> None:
    """Refuses a blank or repeated column name, naming it and its columns (1-based)."""
    seen: dict[str, int] = {}
    for j, name in enumerate(names, start=1):
        if not name:
            hint = (
                " (a column of row numbers, as pandas' to_csv writes by default?)" if j == 1 else ""
            )
            raise CLIError(f"{path!r}: column {j} has no name in the header row{hint}")
        if name in seen:
            raise CLIError(
                f"{path!r}: columns {seen[name]} and {j} are both named {name!r}; column names "
                "must be unique"
            )
        seen[name] = j


def _check_writable(path: str) -> None:
    """Refuses, before any work, a path that cannot become a file: a directory, or a file in
    a directory that does not exist."""
    if os.path.isdir(path):
        raise CLIError(f"cannot write {path!r}: it is a directory")
    directory = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(directory):
        raise CLIError(f"cannot write {path!r}: no directory {directory!r}")


def _temp_beside(path: str) -> tuple[int, str]:
    """Creates a new temporary file next to ``path``; mode 0o666 filtered by the umask, like
    an ordinary ``open``, so that ``os.replace`` leaves a file with the usual permissions."""
    directory = os.path.dirname(os.path.abspath(path))
    base, extension = os.path.splitext(os.path.basename(path))
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0)
    for _ in range(100):
        tmp = os.path.join(directory, f".{base}.{secrets.token_hex(6)}.tmp{extension}")
        try:
            return os.open(tmp, flags, 0o666), tmp
        except FileExistsError:
            continue
        except OSError as exc:
            raise CLIError(_os_error_text(exc, "write", path, own_name=True)) from exc
    raise CLIError(f"cannot write {path!r}: no free temporary name")  # pragma: no cover


def _replace_from_temp(path: str, write: Callable[[int, str], None]) -> None:
    """Runs ``write(fd, tmp)`` on a temporary file, then moves it over ``path`` in one step."""
    _check_writable(path)
    fd, tmp = _temp_beside(path)
    try:
        write(fd, tmp)
        os.replace(tmp, path)
    except BaseException as exc:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        if isinstance(exc, OSError):
            raise CLIError(_os_error_text(exc, "write", path, own_name=True)) from exc
        raise


def _write_atomic(path: str, text: str) -> None:
    """Writes ``text`` (UTF-8) to ``path`` through a temporary file and ``os.replace``."""

    def write(fd: int, tmp: str) -> None:
        with os.fdopen(fd, "wb") as handle:
            handle.write(text.encode("utf-8"))

    _replace_from_temp(path, write)


def _emit(text: str, output: str | None) -> None:
    """Prints ``text`` or writes it (atomically) to ``output``."""
    if not text.endswith("\n"):
        text += "\n"
    if output is None:
        sys.stdout.write(text)
    else:
        _write_atomic(output, text)


def _load_model(path: str) -> tuple[Any, dict[str, Any]]:
    from optitree.exceptions import DataError
    from optitree.export import load_json

    if not os.path.exists(path):
        raise CLIError(f"cannot read model {path!r}: no such file")
    try:
        return load_json(path)
    except OSError as exc:
        raise CLIError(_os_error_text(exc, "read", path)) from exc
    except DataError as exc:  # SchemaVersionError included
        raise CLIError(f"{path}: {_one_line(str(exc))}") from exc


# ---------------------------------------------------------------------------
# optitree datasets
# ---------------------------------------------------------------------------


def _table(header: Sequence[str], rows: list[Sequence[Any]], right: Sequence[bool]) -> str:
    """An aligned text table (the last column is never padded)."""
    cells = [list(header)] + [[str(v) for v in row] for row in rows]
    widths = [max(len(row[j]) for row in cells) for j in range(len(header))]
    lines = []
    for row in cells:
        parts = []
        for j, value in enumerate(row):
            last = j == len(row) - 1
            if right[j]:
                parts.append(value.rjust(widths[j]))
            else:
                parts.append(value if last else value.ljust(widths[j]))
        lines.append("  ".join(parts).rstrip())
    return "\n".join(lines) + "\n"


def cmd_datasets(args: argparse.Namespace) -> int:
    """``optitree datasets``: prints the bundled datasets as a table.

    Parameters
    ----------
    args : argparse.Namespace
        The parsed command line.

    Returns
    -------
    int
        The exit code.
    """
    from optitree.datasets import list_datasets

    rows = [(d.name, d.n_rows, d.n_features, d.n_classes, d.description) for d in list_datasets()]
    header = ("name", "rows", "features", "classes", "description")
    sys.stdout.write(_table(header, rows, (False, True, True, True, False)))
    return 0


# ---------------------------------------------------------------------------
# optitree fit
# ---------------------------------------------------------------------------


@dataclass
class _Data:
    X: Any  # DataFrame of features
    y: Any  # Series of labels
    target: str
    source: dict[str, Any]
    label: str  # how the summary names the data


def _load_bundled(name: str) -> _Data:
    from optitree.datasets import list_datasets, load_dataset

    names = [d.name for d in list_datasets()]
    if name not in names:
        close = difflib.get_close_matches(name, names, n=1)
        hint = f"did you mean {close[0]!r}? " if close else ""
        raise UsageError(
            f"unknown dataset {name!r}; {hint}see 'optitree datasets' for the "
            f"{len(names)} names ({', '.join(names[:4])}, ...)"
        )
    bunch = load_dataset(name)
    target = str(bunch.target.name) if bunch.target.name is not None else "target"
    return _Data(bunch.data, bunch.target, target, {"dataset": name}, f"dataset {name}")


def _load_csv_data(path: str, target: str | None, sep: str, categorical: str | None) -> _Data:
    frame = _read_csv(path, sep)
    columns = [str(c) for c in frame.columns]
    frame.columns = columns
    if len(columns) < 2:
        raise CLIError(
            f"{path!r} has {len(columns)} column ({', '.join(columns)}); it needs at least one "
            f"feature column and a label column (is the separator {sep!r} right? see --sep)"
        )
    if target is None:
        target = columns[-1]
    elif target not in columns:
        raise CLIError(
            f"{path!r} has no column {target!r} (--target); its columns are: " + ", ".join(columns)
        )
    if categorical:
        wanted = [c.strip() for c in categorical.split(",") if c.strip()]
        unknown = [c for c in wanted if c not in columns]
        if unknown:
            raise CLIError(
                f"{path!r} has no column {', '.join(map(repr, unknown))} (--categorical); its "
                f"columns are: {', '.join(columns)}"
            )
        for c in wanted:
            if c != target:
                frame[c] = frame[c].astype("category")
    source = {"csv": os.path.abspath(path), "sep": sep}
    return _Data(frame.drop(columns=[target]), frame[target], target, source, path)


def _column_kind(column: Any, forced: bool = False) -> tuple[str, str]:
    """(kind, details) of a feature column, following optitree's encoding rules; ``forced``:
    the algorithm splits this column by category even if it holds numbers."""
    import pandas as pd

    dtype = column.dtype
    if isinstance(dtype, pd.CategoricalDtype):
        return "categorical", f"{len(dtype.categories)} values"
    if pd.api.types.is_bool_dtype(dtype):
        return "categorical", "2 values (boolean)"
    if forced and pd.api.types.is_numeric_dtype(dtype):
        return "categorical", f"{column.nunique()} values (numbers, one branch per value)"
    if pd.api.types.is_numeric_dtype(dtype):
        if column.isna().any() or len(column) == 0:
            return "numeric", f"{column.nunique()} distinct"
        lo, hi = column.min(), column.max()
        return "numeric", f"{column.nunique()} distinct, {lo:g} .. {hi:g}"
    return "categorical", f"{column.nunique()} values"


def _check_cells(data: _Data, named: bool) -> None:
    """Refuses, naming the line of the file, an empty cell (no estimator takes missing
    values), and a label column of fractional numbers (classes are wanted) with a pointer to
    ``--target`` when the column was taken by default (the last one)."""
    import numpy as np

    empty = data.X.isna().to_numpy()
    empty = np.column_stack([empty, data.y.isna().to_numpy()])
    if empty.any():
        row = int(np.argmax(empty.any(axis=1)))
        names = [*map(str, data.X.columns), f"{data.target} (the labels)"]
        columns = ", ".join(repr(n) for n, e in zip(names, empty[row]) if e)
        raise CLIError(
            f"{data.label}: row {row + 1} after the header has an empty cell in {columns}; "
            "optitree needs every cell filled (fill or drop such rows)"
        )
    y = data.y
    if y.dtype.kind != "f":
        return
    values = y.dropna().to_numpy()
    fractional = values[values != np.round(values)]
    if fractional.size:
        where = f"{data.target!r}" if named else f"{data.target!r} (the last column)"
        hint = "" if named else "; name the label column with --target"
        raise CLIError(
            f"the label column {where} holds numbers such as {fractional[0]:g}, not classes{hint}"
        )


def _check_rho(rho: Any, data: _Data) -> None:
    """Refuses a --rho list whose length is neither 1 nor the number of classes, listing the
    classes in the order the values are read."""
    import numpy as np

    if not isinstance(rho, tuple):  # None, or one number for every class
        return
    classes = np.unique(data.y.to_numpy())  # sorted, as the estimators' classes_ (one type)
    if len(rho) != len(classes):
        raise UsageError(
            f"--rho has {len(rho)} values but the labels ({data.target!r}) have "
            f"{len(classes)} classes: {', '.join(map(str, classes[:_MAX_LISTED]))}"
            f"{', ...' if len(classes) > _MAX_LISTED else ''}; give one value per class, "
            "in that order, or one for all"
        )


def _forced_categorical(estimator: Any, X: Any) -> set[str]:
    """The columns of ``X`` the estimator splits by category although they hold numbers
    (BranchesClassifier and MAPTreeClassifier: integer columns)."""
    chosen = getattr(estimator, "_categorical_columns", lambda X: None)(X)
    if chosen is None:
        return set()
    names = [str(c) for c in X.columns]
    if len(chosen) == len(names) and all(isinstance(c, bool) for c in chosen):
        return {name for name, keep in zip(names, chosen) if keep}
    return {str(c) for c in chosen}


def _summary(data: _Data, forced: set[str] = frozenset()) -> str:
    kinds = [
        (str(name), *_column_kind(data.X[name], str(name) in forced)) for name in data.X.columns
    ]
    n_cat = sum(kind == "categorical" for _, kind, _ in kinds)
    lines = [
        f"data: {data.label}",
        f"rows: {data.X.shape[0]}",
        f"features: {len(kinds)} ({n_cat} categorical, {len(kinds) - n_cat} numeric)",
    ]
    shown = kinds[:_MAX_LISTED]
    width = max((len(name) for name, _, _ in shown), default=0)
    for name, kind, details in shown:
        lines.append(f"  {name.ljust(width)}  {kind}, {details}")
    if len(kinds) > len(shown):
        lines.append(f"  ... and {len(kinds) - len(shown)} more")
    counts = data.y.value_counts(dropna=False)
    try:
        counts = counts.sort_index()
    except TypeError:  # labels of types that do not sort together
        pass
    lines.append(f"classes: {len(counts)} (label column {data.target!r})")
    labels = [str(v) for v in counts.index]
    label_width = max((len(v) for v in labels), default=0)
    count_width = max((len(str(v)) for v in counts.to_numpy()), default=0)
    for label, count in zip(labels[:_MAX_LISTED], counts.to_numpy()[:_MAX_LISTED]):
        lines.append(f"  {label.ljust(label_width)}  {str(count).rjust(count_width)}")
    if len(labels) > _MAX_LISTED:
        lines.append(f"  ... and {len(labels) - _MAX_LISTED} more")
    return "\n".join(lines) + "\n"


def _algorithm_params(args: argparse.Namespace) -> dict[str, Any]:
    """The estimator parameters given on the command line for the chosen algorithm."""
    algorithm = ALGORITHMS[args.algorithm]
    accepted = {option.flag for option in algorithm.options}
    params: dict[str, Any] = {}
    for flag, (option, users) in _option_table().items():
        value = getattr(args, _dest(option))
        if value is None:
            continue
        if flag not in accepted:
            raise UsageError(
                f"{flag} does not apply to --algorithm {args.algorithm} "
                f"(it applies to {', '.join(users)})"
            )
        params[option.param] = value
    if params.get("degree") is not None and params.get("rule", "axis") not in (
        "polynomial",
        "mixed",
    ):
        rule = params.get("rule", "axis")
        raise UsageError(
            f"--degree applies to --rule polynomial or mixed, not to --rule {rule}"
            + (" (the default)" if "rule" not in params else "")
        )
    return params


def _fmt(value: Any) -> str:
    if value is None:
        return "n/a"
    value = float(value)
    return f"{value:.6g}" if math.isfinite(value) else str(value)


def cmd_fit(args: argparse.Namespace) -> int:
    """``optitree fit``: fits the chosen algorithm and prints data, tree and certificate.

    Parameters
    ----------
    args : argparse.Namespace
        The parsed command line.

    Returns
    -------
    int
        The exit code.
    """
    import optitree
    from optitree.export import export_dot, export_text, json_safe, save_json, to_json

    if args.csv is None and args.dataset is None:
        raise UsageError("no data: give a CSV file or --dataset NAME")
    if args.csv is not None and args.dataset is not None:
        raise UsageError(
            f"give a CSV file or --dataset NAME, not both ({args.csv!r} and "
            f"--dataset {args.dataset})"
        )
    params = _algorithm_params(args)
    if args.save is not None:
        _check_writable(args.save)  # before a possibly long search
    if args.dataset is not None:
        given = (
            ("--target", args.target),
            ("--categorical", args.categorical),
            ("--sep", args.sep),
        )
        for flag, value in given:
            if value is not None:
                raise UsageError(f"{flag} applies to a CSV file, not to --dataset")
        data = _load_bundled(args.dataset)
    else:
        data = _load_csv_data(args.csv, args.target, args.sep or ",", args.categorical)
        _check_cells(data, named=args.target is not None)
    _check_rho(params.get("rho"), data)
    estimator = ALGORITHMS[args.algorithm].factory(**params)
    if args.algorithm == "proper":
        categorical = [
            str(c) for c in data.X.columns if _column_kind(data.X[c])[0] == "categorical"
        ]
        if categorical:
            listed = ", ".join(map(repr, categorical[:5])) + (", ..." * (len(categorical) > 5))
            raise CLIError(
                f"--algorithm proper compares numbers, but {len(categorical)} column(s) are "
                f"categorical ({listed}); use --algorithm branches, maptree or stump, which "
                "split categories, or give those columns as numbers (one 0/1 column per "
                "category, for instance)"
            )
    if not args.quiet and "verbose" in estimator.get_params():
        # Long searches show their progress (iterations, bounds, gap, memory) on stderr.
        estimator.set_params(verbose=1)

    # DOT or JSON on standard output stays parseable: the rest goes to standard error.
    out = sys.stdout if args.format == "text" else sys.stderr
    if not args.quiet:
        out.write(_summary(data, _forced_categorical(estimator, data.X)))
        out.flush()  # the summary is useful while a long search runs

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        start = time.perf_counter()
        # A solver interrupted by Ctrl-C returns its best tree with status 'interrupted'.
        estimator.fit(data.X, data.y)
        seconds = time.perf_counter() - start
        accuracy = float(estimator.score(data.X, data.y))
    tree = estimator.tree_
    status = str(getattr(estimator, "status_", "unknown"))
    objective = getattr(estimator, "objective_", None)
    # MAPTree's bounds are on the cost −log P(T, Y | X): its tree's own cost goes beside them.
    objective_name = "objective"
    if objective is None and hasattr(estimator, "log_posterior_"):
        objective, objective_name = -estimator.log_posterior_, "cost (-log posterior)"
    lower = getattr(estimator, "lower_bound_", None)
    upper = getattr(estimator, "upper_bound_", None)

    metadata = {
        "algorithm": args.algorithm,
        "parameters": json_safe(estimator.get_params()),
        "status": status,
        "objective": json_safe(objective),
        "lower_bound": json_safe(lower),
        "upper_bound": json_safe(upper),
        "target": data.target,
        "optitree_version": optitree.__version__,
        "source": data.source,
        "n_rows": int(data.X.shape[0]),
    }
    if hasattr(estimator, "_binary_sources"):
        # MAPTree's tree splits derived 0/1 features: how to derive them from the columns.
        metadata["binary_features"] = json_safe(estimator._binary_sources())

    if args.format == "text":
        if not args.quiet:
            out.write("\n" + export_text(tree) + "\n")
    else:
        # DOT or JSON is the output asked for: --quiet silences only the text around it.
        out.flush()
        text = (
            export_dot(tree) if args.format == "dot" else to_json(tree, metadata=metadata, indent=2)
        )
        sys.stdout.write(text + "\n")
        sys.stdout.flush()
        if not args.quiet:
            out.write("\n")
    results = (
        (objective_name, _fmt(objective)),
        ("status", status),
        ("lower bound", _fmt(lower)),
        ("upper bound", _fmt(upper)),
        ("splits", tree.get_n_splits()),
        ("leaves", tree.get_n_leaves()),
        ("depth", tree.get_depth()),
        ("training accuracy", f"{accuracy:.6g}"),
        ("time (s)", f"{seconds:.3f}"),
    )
    width = max(len(name) for name, _ in results) + 1
    for name, value in results:
        out.write(f"{(name + ':').ljust(width)} {value}\n")

    notes = []
    for warning in caught:
        text = _one_line(str(warning.message))
        if text not in notes:
            notes.append(text)
    if status != "optimal" and not any(status in note for note in notes):
        notes.append(
            f"the search stopped with status {status!r} before proving optimality; the tree "
            "is the best one found and the bounds say how far from optimal it may be"
        )
    for note in notes:
        out.write(f"note: {note}\n")

    if args.save is not None:
        try:
            save_json(tree, args.save, metadata=metadata, indent=2)
        except OSError as exc:
            raise CLIError(_os_error_text(exc, "write", args.save)) from exc
        if not args.quiet:
            out.write(f"saved model to {args.save}\n")
    # The tree of a search stopped by Ctrl-C is printed and saved, but a script must still
    # be able to tell the run was cut short.
    return 130 if status == "interrupted" else 0


# ---------------------------------------------------------------------------
# optitree predict
# ---------------------------------------------------------------------------


def _note(text: str) -> None:
    sys.stderr.write(f"{PROG}: note: {text}\n")


def cmd_predict(args: argparse.Namespace) -> int:
    """``optitree predict``: predicts a CSV file with a saved model and writes a CSV.

    Parameters
    ----------
    args : argparse.Namespace
        The parsed command line.

    Returns
    -------
    int
        The exit code.
    """
    import pandas as pd

    from optitree import UnseenCategoryWarning
    from optitree.tree import Tree

    tree, metadata = _load_model(args.model)
    if not isinstance(tree, Tree):
        # A question tree identifies one object by asking; it has no rows of features to read.
        raise CLIError(
            f"{args.model} holds a question tree (from 'optitree query'), which predicts no "
            "CSV rows; 'optitree predict' takes a model saved by 'optitree fit --save'. Ask "
            "its questions with 'optitree query OBJECTS.csv --interactive', or print it with "
            "'optitree show'"
        )
    sources = metadata.get("binary_features")
    derived = isinstance(sources, list) and tree.feature_names is not None
    if derived:
        tree, sources = _used_features(tree, sources)
    names = _source_columns(sources) if derived else tree.feature_names
    # Columns whose categories are all text are read as text, so a file in which such a
    # column happens to hold only digits still matches the model's categories.
    dtypes: dict[str, Any] = {}
    column_categories = (
        [(s["column"], s.get("categories")) for s in sources]
        if derived
        else zip(names or [], tree.categories or [])
    )
    for name, cats in column_categories:
        if cats and all(isinstance(c, str) for c in cats):
            dtypes[name] = str
    frame = _read_csv(args.data, args.sep, dtypes, short_rows=True)
    frame.columns = [str(c) for c in frame.columns]
    target = metadata.get("target")
    if isinstance(target, str) and target in frame.columns:
        frame = frame.drop(columns=[target])
    if names is not None:
        # Only the columns the tree splits are needed; the others are filled with a value the
        # tree never reads (a column dropped after training must not block predictions).
        used = sorted(set(tree.used_features().tolist()))
        split = _source_columns([sources[f] for f in used]) if derived else [names[j] for j in used]
        missing = [n for n in split if n not in frame.columns]
        if missing:
            raise CLIError(
                f"{args.data!r} lacks column(s) the model splits: {', '.join(missing)}; its "
                f"columns are: {', '.join(frame.columns) or 'none'}"
                + _derived_hint(missing, frame.columns, metadata)
            )
        extra = [c for c in frame.columns if c not in names]
        if extra:
            _note(f"ignoring column(s) the model does not use: {', '.join(extra)}")
        frame = frame[[n for n in names if n in frame.columns]].copy()
        placeholders = (
            [(str(s["column"]), s.get("categories")) for s in sources]
            if derived
            else zip(names, tree.categories or [None] * len(names))
        )
        for name, labels in placeholders:
            if name not in split:
                frame[name] = labels[0] if labels else 0.0
        frame = frame[names]
        for name in split:
            empty = frame[name].isna().to_numpy()
            if empty.any():
                raise CLIError(
                    f"{args.data!r}: row {int(empty.argmax()) + 1} after the header has an "
                    f"empty cell in {name!r}, a column the model splits; fill or drop such rows"
                )
    fitted_labels = (
        {str(s["column"]): s.get("categories", ()) for s in sources if "above" not in s}
        if derived
        else dict(zip(names or [], tree.categories or [None] * len(names or [])))
    )
    for name, labels in fitted_labels.items():
        if name in frame.columns:
            frame[name] = _typed_like(frame[name], labels, name, args.data)
    if not derived:
        used = set(tree.used_features().tolist())
        for j, (name, labels) in enumerate(fitted_labels.items()):
            if labels and j in used:
                _note_unseen(frame[name], labels, name)
    if derived:
        frame = _derive_binary(frame, sources, tree.feature_names, args.data)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", UnseenCategoryWarning)
        result = pd.DataFrame({"prediction": tree.predict(frame)})
        if args.proba:
            proba = tree.predict_proba(frame)
            classes = tree.class_names or list(range(tree.n_classes))
            for k, label in enumerate(classes):
                result[f"proba_{label}"] = proba[:, k]
    # Unseen cells were noted above by their column and file row (the library's warning names
    # a derived feature, or counts rows from 0).
    for w in caught:
        if not issubclass(w.category, UnseenCategoryWarning):
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    text = result.to_csv(index=False, sep=_separator(args.sep), lineterminator="\n")
    _emit(text, args.output)
    return 0


def _derived_hint(missing: list[str], columns: Any, metadata: dict[str, Any]) -> str:
    """Why a model asks for columns named like ``age > 50.5``, when its file holds a tree
    alone (no estimator or algorithm recorded): a MAPTree saved as its ``tree_``, which does
    not say how its 0/1 features come from the columns."""
    if "estimator" in metadata or "algorithm" in metadata:
        return ""
    derived = [n for n in missing if (m := re.match(r"(.+?)(?: > |=)", n)) and m[1] in columns]
    if not derived:
        return ""
    return (
        f". Names such as {derived[0]!r} are 0/1 features derived from a column: if this is a "
        "MAPTreeClassifier saved as its tree_, save the fitted estimator instead, "
        "save_json(model, path), and the file will say how to derive them; if you encoded "
        "the columns yourself, encode this file the same way"
    )


def _typed_like(raw: Any, labels: Any, column: str, path: str) -> Any:
    """A CSV column in the type the model was fitted on. pandas reads a whole column as text
    when one cell is not a number: the model's numbers then matched no cell ("2" is not 2), and
    every row was predicted as unseen without a word.

    A column the model splits by value (``labels`` None) must hold numbers (an error names
    the first cell that is not one; empty cells stay missing). In a column of categories that
    are not text, cells that read as a number or a boolean become it (matched by value, as a
    clean column would be: ``2.0`` is 2, ``TRUE`` is True); the others stay as read (unseen).
    """
    import numpy as np
    import pandas as pd

    if not (pd.api.types.is_object_dtype(raw) or pd.api.types.is_string_dtype(raw)):
        return raw
    if labels is not None and (not labels or all(isinstance(c, str) for c in labels)):
        return raw  # text categories: text is their type
    read = raw.astype(object).map(_parsed_cell)
    if labels is None:
        values = pd.to_numeric(
            read.map(lambda v: int(v) if isinstance(v, bool) else v), errors="coerce"
        )
        bad = (values.isna() & raw.notna()).to_numpy()
        if bad.any():
            row = int(np.argmax(bad))
            raise CLIError(
                f"{path!r}: column {column!r} needs numbers (the model splits it by value), "
                f"but row {row + 1} after the header holds {raw.iloc[row]!r}"
            )
        return values
    # The model's own label objects, found by value (1.0 is the label 1, or True): pandas
    # matches a lone 1.0 to no boolean label.
    by_value = {label: label for label in labels}
    return read.map(lambda v: by_value.get(v, v) if isinstance(v, (bool, float)) else v)


#: How pandas spells booleans in a CSV file.
_BOOLEANS = {
    "True": True,
    "TRUE": True,
    "true": True,
    "False": False,
    "FALSE": False,
    "false": False,
}


def _parsed_cell(cell: Any) -> Any:
    """A CSV cell read as text, as a boolean or a number when it spells one, else as it is."""
    if not isinstance(cell, str):
        return cell
    text = cell.strip()
    if text in _BOOLEANS:
        return _BOOLEANS[text]
    try:
        number = float(text)
    except ValueError:
        return cell
    return number if math.isfinite(number) else cell


def _note_unseen(raw: Any, labels: list[Any], column: str) -> None:
    """Notes the cells of ``raw`` that are none of the model's ``labels`` (by value): the rows
    stop where the tree splits on the column and are predicted there, as the library does."""
    import numpy as np

    unseen = (~raw.isin(labels)).to_numpy() & raw.notna().to_numpy()
    if unseen.any():
        row = int(np.argmax(unseen))
        value = raw.iloc[row]
        value = value.item() if isinstance(value, np.generic) else value
        _note(
            f"column {column!r} holds {int(unseen.sum())} value(s) not seen at fit time (the "
            f"first: {value!r}, row {row + 1} after the header); where the tree splits "
            "on it such rows stop and are predicted as the nearest node above with training rows"
        )


def _used_features(tree: Any, sources: list[dict[str, Any]]) -> tuple[Any, list[dict[str, Any]]]:
    """The tree over only the binary features its splits use, with their sources: a MAPTree
    model of 3,000 rows x 10 numeric columns derives 30,000 features and splits a handful, and
    deriving them all took 40 s to predict 3,000 rows."""
    if len(sources) != tree.n_features:
        return tree, sources
    compact, used = tree.restricted_to_used_features()
    return compact, [sources[int(f)] for f in used]


def _source_columns(sources: list[dict[str, Any]]) -> list[str]:
    """The input columns that binary features are derived from, each once, in order."""
    return list(dict.fromkeys(str(s["column"]) for s in sources))


def _derive_binary(frame: Any, sources: list[dict[str, Any]], names: list[str], path: str) -> Any:
    """The 0/1 features a MAPTree model splits, from the input columns (see
    ``MAPTreeClassifier._binary_sources``): "yes"/"no" for a threshold or a category, the
    column itself for a two-valued column. A category the model never saw stays unreadable
    (the row is predicted where it stops, as the library does)."""
    import numpy as np
    import pandas as pd

    columns = {}
    noted = set()
    for name, source in zip(names, sources):
        raw = frame[str(source["column"])]
        if "above" not in source and source.get("categories") and source["column"] not in noted:
            noted.add(source["column"])
            _note_unseen(raw, source["categories"], str(source["column"]))
        if "above" in source:
            values = pd.to_numeric(raw, errors="coerce")
            bad = values.isna().to_numpy()
            if bad.any():
                row = int(np.argmax(bad))
                raise CLIError(
                    f"{path!r}: column {source['column']!r} needs numbers, but row {row + 1} "
                    f"after the header holds {raw.iloc[row]!r}"
                )
            columns[name] = np.where(values > source["above"], "yes", "no")
        elif "equals" in source:
            known = raw.isin(source["categories"]).to_numpy()
            hit = (raw == source["equals"]).to_numpy()
            columns[name] = np.where(known, np.where(hit, "yes", "no"), "(unseen)")
        else:
            columns[name] = raw.to_numpy()
    return pd.DataFrame(columns)


# ---------------------------------------------------------------------------
# optitree show
# ---------------------------------------------------------------------------

_EXTENSIONS = {
    ".txt": "text",
    ".dot": "dot",
    ".gv": "dot",
    ".json": "json",
    ".png": "png",
    ".svg": "svg",
}


# Image files show cannot write: refused rather than filled with text.
_OTHER_IMAGES = {".pdf", ".jpg", ".jpeg", ".gif", ".bmp", ".tif", ".tiff", ".webp", ".eps", ".ps"}


def cmd_show(args: argparse.Namespace) -> int:
    """``optitree show``: prints a saved model or draws it to an image file.

    Parameters
    ----------
    args : argparse.Namespace
        The parsed command line.

    Returns
    -------
    int
        The exit code.
    """
    fmt = args.format
    extension = os.path.splitext(args.output)[1].lower() if args.output else ""
    if extension in _OTHER_IMAGES:
        raise UsageError(
            f"cannot write {args.output!r}: trees are drawn as .png or .svg, and printed as "
            ".txt, .dot or .json"
        )
    if fmt is None:
        fmt = _EXTENSIONS.get(extension, "text")
    if fmt in ("text", "dot", "json") and extension in (".png", ".svg"):
        raise UsageError(f"--format {fmt} writes text, but --output {args.output!r} is an image")
    if fmt in ("png", "svg"):
        if args.output is None:
            raise UsageError(f"--format {fmt} writes an image: give --output TREE.{fmt}")
        if extension != f".{fmt}":
            raise UsageError(f"--output must end in .{fmt} for --format {fmt}, got {args.output!r}")
    tree, metadata = _load_model(args.model)
    if fmt in ("png", "svg"):
        _draw(tree, args.output)
        return 0
    from optitree.export import export_dot, export_text, to_json

    if fmt == "text":
        text = export_text(tree)
    elif fmt == "dot":
        text = export_dot(tree)
    else:
        text = to_json(tree, metadata=metadata, indent=2)
    _emit(text, args.output)
    return 0


def _draw(tree: Any, path: str) -> None:
    try:
        import matplotlib
    except ImportError as exc:
        raise CLIError(
            "drawing a tree needs matplotlib (pip install 'optitree[plot]'); "
            "text, dot and json work without it"
        ) from exc
    if "matplotlib.pyplot" not in sys.modules:
        matplotlib.use("Agg")  # no window: the figure only goes to a file
    from optitree import plot_tree

    def write(fd: int, tmp: str) -> None:
        os.close(fd)
        plot_tree(tree, path=tmp)

    _replace_from_temp(path, write)


# ---------------------------------------------------------------------------
# Entry point
# ---------------------------------------------------------------------------

_COMMANDS: dict[str, Callable[[argparse.Namespace], int]] = {
    "datasets": cmd_datasets,
    "fit": cmd_fit,
    "predict": cmd_predict,
    "show": cmd_show,
    "query": lambda args: _cmd_query(args),
}


def _cmd_query(args: argparse.Namespace) -> int:
    from optitree._cli_query import cmd_query

    return cmd_query(args)


def _error(message: str) -> None:
    sys.stderr.write(f"{PROG}: error: {_one_line(message)}\n")


def _joined_negative_values(argv: Sequence[str]) -> list[str]:
    """``--opt -inf`` as ``--opt=-inf``: argparse takes ``-inf`` (unlike ``-1``) for an option
    and says the value is missing, where the option's own check would say what is allowed."""
    out: list[str] = []
    for arg in argv:
        if out and out[-1].startswith("--") and "=" not in out[-1] and _NEGATIVE_WORD.match(arg):
            out[-1] = f"{out[-1]}={arg}"
        else:
            out.append(arg)
    return out


#: Values argparse mistakes for options: ``-inf``, ``-infinity``, ``-nan``.
_NEGATIVE_WORD = re.compile(r"-(inf|infinity|nan)$", re.IGNORECASE)


def main(argv: Sequence[str] | None = None) -> int:
    """Runs the ``optitree`` command line.

    Parameters
    ----------
    argv : list of str, optional
        The arguments after the program name; default ``sys.argv[1:]``.

    Returns
    -------
    int
        The exit code: 0 success, 1 a data or model problem, 2 a usage error, 130 interrupted.

    Examples
    --------
    >>> from optitree.cli import main
    >>> main(["datasets"])  # doctest: +ELLIPSIS
    name ...
    0
    """
    from optitree.exceptions import InvalidParameterError, OptitreeError

    parser = build_parser()
    try:
        try:
            args = parser.parse_args(
                _joined_negative_values(sys.argv[1:] if argv is None else argv)
            )
        except SystemExit as exc:  # --help, --version
            return exc.code if isinstance(exc.code, int) else 0
        if args.command is None:
            raise UsageError(
                f"missing command; choose one of {', '.join(_COMMANDS)} (see 'optitree --help')"
            )
        return _COMMANDS[args.command](args)
    except CLIError as exc:
        _error(str(exc))
        return exc.code
    except InvalidParameterError as exc:
        _error(str(exc))
        return 2
    except OptitreeError as exc:
        message = str(exc)
        if type(exc).__name__ == "InternalError":
            message += " (this is a bug in optitree; please report it)"
        _error(message)
        return 1
    except ImportError as exc:
        _error(str(exc))
        return 1
    except OSError as exc:
        if isinstance(exc, BrokenPipeError):  # e.g. 'optitree datasets | head -1'
            _silence_stdout()
            return 1
        _error(_os_error_text(exc, "access", "a file"))
        return 1
    except KeyboardInterrupt:
        return 130


def _silence_stdout() -> None:
    """After a broken pipe, points stdout at devnull so that the exit flush stays quiet."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):
        pass


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
