"""The most accurate tree of bounded depth (penalty 0): optitree against STreeD and DL8.5.

With ``penalty=0`` and ``max_depth=d``, ``BranchesClassifier`` solves the problem DL8.5 and
MurTree solve: the tree of depth at most d with the most correct training rows. By default it
also proves that no equally accurate tree has fewer splits (its tie-break); with
``fewest_splits=False`` it returns the first optimal tree it proves, as the peers do. Both are
timed here, next to

- STreeD ``STreeDClassifier(optimization_task="accuracy", max_depth=d)``;
- DL8.5 ``DL85Classifier(max_depth=d)`` (package ``pydl8.5``, imported as ``pydl85``).

Data: the one-hot (0/1) files of the Branches paper (``load_branches_encoding``). Every peer's
returned tree is walked by this script (``branches_peers.score_tree``), which counts its
correct rows, splits and depth (optitree's through its own ``predict``, ``get_n_splits`` and
``get_depth``). A claim of optimality refuted by another method's tree within the depth is
reported, and so is a default optitree tree with more splits than an equally accurate one.

Each (instance, method) runs in a fresh worker process (this file with ``--worker``) holding
one thread, with the method's own time limit per fit and a hard kill of the worker; it fits a
warm-up problem first. A fit under a second is repeated for about a second and the median is
reported (``branches_peers.timed_fit``). ``ratio`` = the method's fit time over optitree's with
``fewest_splits=False`` (the same problem).

Usage (from the repository root, with the benchmark virtualenv of ``setup_peers.sh``)::

    benchmarks/.venv/bin/python benchmarks/branches_depth.py [--time-limit 60]
        [--instances monk1,mushroom] [--depths 2,3,4,5]
        [--output benchmarks/results/branches_depth.md]
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import resource
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from importlib.metadata import version
from pathlib import Path
from typing import Any

import branches_peers as peers
import numpy as np

HERE = Path(__file__).resolve().parent
DEFAULT_OUTPUT = HERE / "results" / "branches_depth.md"
INSTANCES = (
    "monk1",
    "monk2",
    "monk3",
    "tictactoe",
    "tictactoe-f",
    "mushroom",
    "mushroom-f",
    "krvskp",
    "balance",
)
DEPTHS = (2, 3, 4, 5)
PACKAGES = ("optitree", "pystreed", "pydl8.5", "numpy", "scikit-learn")
METHODS = ("optitree", "optitree-fewest", "streed", "dl85")
LABELS = {
    "optitree": "optitree, fewest_splits=False",
    "optitree-fewest": "optitree (default: fewest splits proven)",
    "streed": "STreeD",
    "dl85": "DL8.5",
}


def run_optitree(X, y, depth: int, spec: dict, fewest: bool) -> dict:
    from optitree import BranchesClassifier

    def make():
        return BranchesClassifier(
            penalty=0,
            max_depth=depth,
            categorical="all",
            fewest_splits=fewest,
            time_limit=spec["time_limit"],
        )

    clf, wall, _, fits = peers.timed_fit(make, X, y, lambda m: None, spec)
    predicted = clf.predict(X)
    return {
        "status": "optimal" if clf.status_ == "optimal" else clf.status_,
        "fit_seconds": wall,
        "fits": fits,
        "correct": int(np.sum(predicted == y)),
        "splits": int(clf.get_n_splits()),
        "depth": int(clf.get_depth()),
    }


def run_streed(X, y, depth: int, spec: dict) -> dict:
    from pystreed import STreeDClassifier

    def make():
        return STreeDClassifier(
            optimization_task="accuracy", max_depth=depth, time_limit=spec["time_limit"]
        )

    model, wall, _, fits = peers.timed_fit(make, X, y, lambda m: None, spec)
    if list(model.binarizer_.binary_columns) != list(range(X.shape[1])):
        raise RuntimeError("STreeD re-encoded the 0/1 columns; its feature indices would not map")
    status = "optimal" if model.fit_result.is_optimal() else "time_limit"
    tree = peers.score_tree(peers.from_streed(model.tree_), X, y)
    return {"status": status, "fit_seconds": wall, "fits": fits, **tree}


def from_dl85(node: dict) -> peers.Node:
    """DL8.5's ``tree_`` dict: rows with ``feat`` = 1 go ``left``; leaves hold ``value``."""
    if "feat" not in node:
        return peers.Node(label=node["value"])
    return peers.Node(
        feature=int(node["feat"]),
        op="==",
        reference=1,
        if_true=from_dl85(node["left"]),
        if_false=from_dl85(node["right"]),
    )


def run_dl85(X, y, depth: int, spec: dict) -> dict:
    from pydl85 import DL85Classifier

    def make():
        return DL85Classifier(max_depth=depth, time_limit=spec["time_limit"], quiet=True)

    model, wall, _, fits = peers.timed_fit(make, X, y, lambda m: None, spec)
    status = "time_limit" if model.timeout_ else "optimal"
    tree = peers.score_tree(from_dl85(model.tree_), X, y)
    # DL8.5's own count, to tell its claim from a conversion error here.
    note = f"its own error_: {model.error_:g}" if len(y) - tree["correct"] != model.error_ else ""
    return {"status": status, "fit_seconds": wall, "fits": fits, **tree, "note": note}


RUNNERS = {
    "optitree": lambda X, y, d, spec: run_optitree(X, y, d, spec, fewest=False),
    "optitree-fewest": lambda X, y, d, spec: run_optitree(X, y, d, spec, fewest=True),
    "streed": run_streed,
    "dl85": run_dl85,
}


def worker(spec_path: str) -> int:
    """One method on one instance at every depth of the spec; results written as JSON."""
    spec = json.loads(Path(spec_path).read_text())
    X, y = peers.load_instance(spec["instance"])
    results = {}
    for depth in spec["depths"]:
        try:
            results[depth] = RUNNERS[spec["method"]](X, y, depth, spec)
        except Exception as exc:  # a peer's crash is a result, not a benchmark failure
            results[depth] = {"status": "error", "note": f"{type(exc).__name__}: {exc}"[:300]}
        # Written after every depth, so that a killed worker still leaves what it finished.
        Path(spec["result_path"]).write_text(json.dumps(results))
    return 0


def run_worker(method: str, instance: str, args: argparse.Namespace, tmp: Path) -> dict:
    stem = f"{instance}.{method}"
    spec_path, result_path = tmp / f"{stem}.spec.json", tmp / f"{stem}.result.json"
    spec = {
        "method": method,
        "instance": instance,
        "depths": args.depths,
        "time_limit": args.time_limit,
        "repeats": 200,
        "result_path": str(result_path),
    }
    spec_path.write_text(json.dumps(spec))
    env = dict(os.environ)
    env.update({name: "1" for name in peers.THREAD_VARIABLES})
    env["PYTHONPATH"] = os.pathsep.join([args.snapshot, str(HERE)])
    hard_limit = len(args.depths) * (1.5 * args.time_limit + 30)
    with open(tmp / f"{stem}.log", "wb") as log:
        proc = subprocess.Popen(
            [sys.executable, str(Path(__file__).resolve()), "--worker", str(spec_path)],
            stdout=log,
            stderr=subprocess.STDOUT,
            env=env,
            start_new_session=True,
        )
        try:
            proc.wait(timeout=hard_limit)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    done = json.loads(result_path.read_text()) if result_path.exists() else {}
    tail = (tmp / f"{stem}.log").read_bytes()[-200:].decode(errors="replace").strip()
    return {
        d: done.get(str(d), {"status": "error", "note": f"worker gave no result: {tail}"})
        for d in args.depths
    }


def fmt_seconds(x: float | None) -> str:
    if x is None:
        return "—"
    return f"{x:.4f}" if x < 0.1 else f"{x:.3f}" if x < 10 else f"{x:.1f}"


def cross_check(instance: str, depth: int, row: dict[str, dict]) -> list[tuple[str, str]]:
    """(method, what is wrong) for each claim the row's trees refute: every tree was walked
    here, so the most correct rows of a tree within the depth are achievable, and an "optimal"
    tree with fewer is not optimal."""
    within = {m: r for m, r in row.items() if "correct" in r and r["depth"] <= depth}
    problems = [
        (m, f"{instance} d={depth}: {LABELS[m]} returned a tree of depth {r['depth']}")
        for m, r in row.items()
        if "correct" in r and r["depth"] > depth
    ]
    if not within:
        return problems
    best = max(within.values(), key=lambda r: r["correct"])["correct"]
    makers = ", ".join(LABELS[m] for m, r in within.items() if r["correct"] == best)
    fewest = row.get("optitree-fewest", {})
    if fewest.get("status") == "optimal" and fewest.get("correct") == best:
        smaller = [
            m for m, r in within.items() if r["correct"] == best and r["splits"] < fewest["splits"]
        ]
        problems += [
            (
                "optitree-fewest",
                f"{instance} d={depth}: {LABELS['optitree-fewest']} has {fewest['splits']} splits, "
                f"{LABELS[m]} an equally accurate tree with {within[m]['splits']}",
            )
            for m in smaller
        ]
    for method, r in within.items():
        if r["status"] == "optimal" and r["correct"] < best:
            problems.append(
                (
                    method,
                    f"{instance} d={depth}: {LABELS[method]} claims optimality with "
                    f"{r['correct']} correct rows, but {makers} returned a tree of depth "
                    f"≤ {depth} with {best}",
                )
            )
    return problems


def write_report(
    results: dict, args: argparse.Namespace, header: list[str]
) -> list[tuple[str, str]]:
    """Writes the Markdown report; returns the cross-check problems found."""
    problems = []
    lines = [
        "# Branches at bounded depth, penalty 0: optitree against STreeD and DL8.5",
        "",
        *header,
        "",
        "The most accurate tree of depth ≤ d on the Branches paper's one-hot files "
        "(the DL8.5/MurTree problem). `correct` = training rows the returned tree classifies "
        "correctly, counted by this script from each method's tree. `fit s` = median wall time "
        "of `fit` after a warm-up. `ratio` = fit s / optitree's with `fewest_splits=False` "
        "(the same problem; the default also proves that no equally accurate tree has fewer "
        "splits).",
        "",
        "| instance | d | method | status | correct | splits | depth | fit s | ratio |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    ratios: dict[str, list[float]] = {m: [] for m in args.methods}
    for instance in args.instances:
        for depth in args.depths:
            row = {m: results[instance][m][depth] for m in args.methods}
            base = row.get("optitree", {})
            problems += cross_check(instance, depth, row)
            for method, r in row.items():
                ratio = "—"
                both = r.get("status") == base.get("status") == "optimal"
                if both and base["fit_seconds"] > 0:
                    value = r["fit_seconds"] / base["fit_seconds"]
                    ratios[method].append(value)
                    ratio = f"{value:.3g}"
                cells = [
                    instance,
                    str(depth),
                    LABELS[method],
                    r.get("status", "error") + (f" ({r['note']})" if r.get("note") else ""),
                    str(r.get("correct", "—")),
                    str(r.get("splits", "—")),
                    str(r.get("depth", "—")),
                    fmt_seconds(r.get("fit_seconds")),
                    ratio,
                ]
                lines.append("| " + " | ".join(cells) + " |")
    lines += [
        "",
        "## Summary",
        "",
        "| method | runs timed | median ratio | slower than optitree (fewest_splits=False) in |",
        "|---|---|---|---|",
    ]
    for method in args.methods:
        values = sorted(ratios[method])
        if method == "optitree" or not values:
            continue
        median = statistics.median(values)
        slower = sum(v > 1 for v in values)
        lines.append(f"| {LABELS[method]} | {len(values)} | {median:.3g} | {slower} |")
    lines += ["", "## Cross-check", ""]
    lines += [f"- {text}" for _, text in problems] or [
        "Every method that proved optimality found the same number of correct rows."
    ]
    Path(args.output).write_text("\n".join(lines) + "\n")
    return problems


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--time-limit", type=float, default=60.0, help="seconds per fit")
    parser.add_argument("--instances", default=",".join(INSTANCES))
    parser.add_argument("--depths", default=",".join(map(str, DEPTHS)))
    parser.add_argument("--methods", default=",".join(METHODS))
    parser.add_argument("--output", default=str(DEFAULT_OUTPUT))
    args = parser.parse_args(argv)
    args.instances = args.instances.split(",")
    args.depths = [int(d) for d in args.depths.split(",")]
    args.methods = args.methods.split(",")
    unknown = set(args.methods) - set(METHODS)
    if unknown:
        parser.error(f"unknown methods {sorted(unknown)}; choose from {', '.join(METHODS)}")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.worker:
        return worker(args.worker)
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="branches_depth.") as tmp_name:
        tmp = Path(tmp_name)
        snapshot = tmp / "snapshot"
        snapshot.mkdir()
        _, fingerprint = peers.snapshot_optitree(snapshot)
        args.snapshot = str(snapshot)
        results: dict[str, dict[str, Any]] = {}
        for instance in args.instances:
            results[instance] = {}
            for method in args.methods:
                results[instance][method] = run_worker(method, instance, args, tmp)
                seconds = [r.get("fit_seconds") for r in results[instance][method].values()]
                print(f"{instance:12s} {method:16s} {seconds}", flush=True)
    header = [
        f"- date: {datetime.datetime.now().astimezone().isoformat(timespec='seconds')}",
        *peers.machine_lines(),
        peers.git_line(),
        "- packages: " + ", ".join(f"{n} {version(n)}" for n in PACKAGES),
        f"- optitree as measured: a snapshot of the installed package (fingerprint {fingerprint})",
        f"- command: `python benchmarks/branches_depth.py {' '.join(sys.argv[1:])}`".rstrip(),
        f"- time limit per fit {args.time_limit:g} s; one thread per worker; whole run "
        f"{time.perf_counter() - started:.0f} s; peak RSS of this driver "
        f"{resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB",
    ]
    problems = write_report(results, args, header)
    print(f"wrote {args.output}")
    # A peer's wrong claim is a finding; optitree's, or a failed optitree run, is a bug.
    failed = any(
        r.get("status") == "error"
        for by_method in results.values()
        for method, by_depth in by_method.items()
        if method.startswith("optitree")
        for r in by_depth.values()
    )
    return 1 if failed or any(method.startswith("optitree") for method, _ in problems) else 0


if __name__ == "__main__":
    sys.exit(main())
