"""Side-by-side benchmark: optitree's BranchesClassifier against other sparse-tree solvers.

Every method solves the same problem on the same 0/1 data: the tree maximising

    H(T) = accuracy(T) - λ · splits(T)

on the one-hot files of the Branches paper (``optitree.datasets.load_branches_encoding``),
at the paper's λ. The peers state their objectives differently, so this script never trusts
them: it walks each returned tree itself, counts its correct training rows and its splits, and
scores every method as ``correct/n - λ·splits`` in exact rational arithmetic.

- optitree ``BranchesClassifier(penalty=λ, categorical="all")``: maximises H directly;
  "optitree-d" does so with ``max_depth`` = STreeD's depth limit d, STreeD's own problem.
- imodels ``FastSmallTreeClassifier(regularization=λ)``: minimises error + λ·leaves. A binary
  tree has splits + 1 leaves, so that is 1 + λ - H: the same optimum.
- GOSDT ``GOSDTClassifier(regularization=λ, allow_small_reg=True)``: the same objective as
  imodels (error + λ·leaves); ``allow_small_reg`` stops it from raising λ to 1/n.
- STreeD ``STreeDClassifier("cost-complex-accuracy", cost_complexity=λ, max_depth=d)``:
  minimises misclassifications + λ·n·branching nodes = n·(1 - H), but only over trees of depth
  at most d. Its "optimal" is optimal *within that depth*; d defaults to the depth of the
  reference tree of each instance (``--streed-depth`` overrides it).

Each (instance, method) runs in a fresh worker process (this file with ``--worker``) with the
peer's own time limit, a hard kill at ``1.5 × limit + 60 s``, an address-space cap
(``--memory-limit``) and one thread; the worker first fits a tiny warm-up problem so that
imports, numba's compiled cache and similar start-up costs are not timed. "fit s" is the wall
time of ``fit`` on the instance (``time.perf_counter``); "search s" is the search time the
method reports itself, where it reports one. This VM's speed drifts by 10-30% over minutes, so
each method that proved optimality quickly enough is timed in ``--rounds`` rounds per instance,
the methods taking turns, and the median round is reported: a slow spell then slows every
method alike instead of deciding one method's figure.

Usage (from the repository root, with the benchmark virtualenv of ``setup_peers.sh``)::

    benchmarks/.venv/bin/python benchmarks/branches_peers.py [--time-limit 60]
        [--instances monk1,tictactoe-f] [--methods optitree,optitree-d,imodels,streed,gosdt]
        [--rounds 3] [--output benchmarks/results/branches_peers.md]

The peers are never dependencies of optitree: they live only in ``benchmarks/.venv``.
"""

from __future__ import annotations

import argparse
import datetime
import importlib.metadata
import json
import os
import platform
import resource
import shlex
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
DEFAULT_OUTPUT = HERE / "results" / "branches_peers.md"
TOLERANCE = Fraction(1, 10**9)
METHODS = ("optitree", "optitree-d", "imodels", "streed", "gosdt")
METHOD_LABELS = {
    "optitree": "optitree",
    "optitree-d": "optitree, max_depth = STreeD's",
    "imodels": "imodels FastSmallTree",
    "streed": "STreeD",
    "gosdt": "GOSDT",
}
# Distribution names whose versions go into the report header.
PACKAGES = ("optitree", "imodels", "pystreed", "gosdt", "numba", "numpy", "scikit-learn", "pandas")
# Which methods accept more than two classes (all four do today; a method without multiclass
# support is reported as "n/a" on multiclass instances rather than run).
MULTICLASS = {m: True for m in METHODS}
THREAD_VARIABLES = (
    "OMP_NUM_THREADS",
    "OPENBLAS_NUM_THREADS",
    "MKL_NUM_THREADS",
    "NUMBA_NUM_THREADS",
    "TBB_NUM_THREADS",
)


@dataclass(frozen=True)
class Instance:
    """One benchmark problem: a Branches encoding at the paper's λ, with its best known value.

    ``correct``, ``n`` and ``splits`` give the reference value exactly:
    ``correct/n - λ·splits``. ``proven`` says whether it is a proven optimum or only the best
    known value. ``depth`` is the depth of the reference tree where the sources give it.
    ``streed_depth`` is the depth limit given to STreeD.
    """

    name: str
    penalty: str
    correct: int
    n: int
    splits: int
    proven: bool
    depth: int | None
    streed_depth: int

    @property
    def lam(self) -> Fraction:
        return Fraction(self.penalty)

    @property
    def reference(self) -> Fraction:
        return Fraction(self.correct, self.n) - self.lam * self.splits


# Values from the Branches paper's results (the reference optima table of the project's specs):
# λ, the reference tree's correct rows / n and splits, whether proven optimal, and the
# reference tree's depth (the authors' experiments table). tictactoe's value 889/958 - 18λ is
# inferred from the paper's rounded accuracy, and the depth of that tree is not published, so
# STreeD gets depth 6 (the depth of the authors' own tictactoe tree).
INSTANCES = {
    i.name: i
    for i in (
        Instance("monk1", "0.01", 124, 124, 6, True, 4, 4),
        Instance("monk1-l", "0.01", 124, 124, 7, True, 5, 5),
        Instance("monk1-f", "0.001", 124, 124, 17, True, 7, 7),
        Instance("monk2", "0.001", 169, 169, 32, True, 6, 6),
        Instance("monk2-f", "0.001", 169, 169, 67, True, 9, 9),
        Instance("monk3", "0.001", 122, 122, 15, True, 8, 8),
        Instance("monk3-f", "0.001", 122, 122, 17, True, 7, 7),
        Instance("tictactoe", "0.005", 889, 958, 18, False, None, 6),
        Instance("tictactoe-f", "0.005", 906, 958, 19, True, 6, 6),
        Instance("mushroom", "0.01", 8004, 8124, 3, True, 3, 3),
        Instance("mushroom-f", "0.01", 8004, 8124, 4, True, 3, 3),
        Instance("krvskp", "0.01", 3007, 3196, 4, False, 4, 4),
        Instance("balance", "0.005", 504, 625, 8, False, 8, 8),
    )
}


# ---------------------------------------------------------------------------------------------
# Trees: every peer's tree is converted into this one form and scored by the same code.


@dataclass
class Node:
    """A leaf (``label`` set) or a binary test ``X[:, feature] <op> reference``."""

    label: Any = None
    feature: int = -1
    op: str = "=="
    reference: float = 1.0
    if_true: Node | None = None
    if_false: Node | None = None

    @property
    def is_leaf(self) -> bool:
        return self.if_true is None


def route(node: Node, X: np.ndarray, rows: np.ndarray, out: np.ndarray) -> None:
    """Write each row's predicted label into ``out`` by walking ``node``."""
    if node.is_leaf:
        out[rows] = node.label
        return
    column = X[rows, node.feature]
    if node.op == "==":
        test = column == node.reference
    elif node.op == ">=":
        test = column >= node.reference
    else:
        raise ValueError(f"unknown test {node.op!r}")
    route(node.if_true, X, rows[test], out)
    route(node.if_false, X, rows[~test], out)


def shape(node: Node) -> tuple[int, int]:
    """(splits, depth) of a tree."""
    if node.is_leaf:
        return 0, 0
    s1, d1 = shape(node.if_true)
    s0, d0 = shape(node.if_false)
    return s1 + s0 + 1, 1 + max(d1, d0)


def score_tree(node: Node, X: np.ndarray, y: np.ndarray) -> dict[str, int]:
    """Correct training rows, splits and depth of a converted tree."""
    predicted = np.empty(len(y), dtype=object)
    route(node, X, np.arange(len(y)), predicted)
    correct = int(sum(1 for p, t in zip(predicted, y.tolist()) if p == t))
    splits, depth = shape(node)
    return {"correct": correct, "splits": splits, "depth": depth}


def from_gosdt(obj: dict) -> Node:
    """GOSDT's JSON model: ``feature`` true -> "true" subtree; leaves hold a class index."""
    if "prediction" in obj:
        return Node(label=int(obj["prediction"]))
    return Node(
        feature=int(obj["feature"]),
        op="==",
        reference=1,
        if_true=from_gosdt(obj["true"]),
        if_false=from_gosdt(obj["false"]),
    )


def from_imodels(obj: dict) -> Node:
    """imodels' ``tree_`` dict: rules ``X[feature] == reference`` or ``>= reference``."""
    if "prediction" in obj:
        return Node(label=obj["prediction"])
    return Node(
        feature=int(obj["feature"]),
        op=obj["relation"],
        reference=obj["reference"],
        if_true=from_imodels(obj["true"]),
        if_false=from_imodels(obj["false"]),
    )


def from_streed(tree: Any) -> Node:
    """STreeD's tree: the right child takes the rows with the (binary) feature set."""
    if tree.is_leaf_node():
        return Node(label=int(tree.label))
    return Node(
        feature=int(tree.feature),
        op="==",
        reference=1,
        if_true=from_streed(tree.right_child),
        if_false=from_streed(tree.left_child),
    )


# ---------------------------------------------------------------------------------------------
# The worker: one method on one instance, in its own process.


def load_instance(name: str) -> tuple[np.ndarray, np.ndarray]:
    from optitree.datasets import load_branches_encoding

    matrix = load_branches_encoding(name)
    return np.ascontiguousarray(matrix[:, :-1]), np.ascontiguousarray(matrix[:, -1])


def warmup_data() -> tuple[np.ndarray, np.ndarray]:
    """A tiny problem that needs a few splits: y = x0 xor x1 on 16 rows, plus noise columns."""
    grid = np.array([[(i >> k) & 1 for k in range(4)] for i in range(16)], dtype=np.int64)
    return grid, (grid[:, 0] ^ grid[:, 1]).astype(np.int64)


def timed_fit(make, X, y, search_seconds, spec: dict) -> tuple[Any, float, float | None, int]:
    """Fit ``make()`` on a warm-up problem, then on (X, y), timing the second fit.

    A fit shorter than a second is repeated (fresh estimator each time) until about a second
    of fitting, at most ``repeats`` times, and the medians are reported, since single
    millisecond timings are mostly noise (as the paper-table benchmark does). Returns
    the first fitted model, the median fit wall time, the median reported search time (None if
    the method reports none) and the number of timed fits.
    """
    make().fit(*warmup_data())  # imports, numba's compiled cache, first-call costs
    walls, searches, first = [], [], None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # peers warn when a limit stops their search
        while True:
            model = make()
            start = time.perf_counter()
            model.fit(X, y)
            walls.append(time.perf_counter() - start)
            searches.append(search_seconds(model))
            first = first if first is not None else model
            if len(walls) >= spec["repeats"] or sum(walls) >= 1.0:
                break
    search = None if searches[0] is None else statistics.median(searches)
    return first, statistics.median(walls), search, len(walls)


def run_optitree(X, y, lam: str, spec: dict, max_depth: int | None = None) -> dict:
    from optitree import BranchesClassifier

    def make():
        return BranchesClassifier(
            penalty=float(lam),
            max_depth=max_depth,
            categorical="all",
            time_limit=spec["time_limit"],
            memory_limit=spec["solver_memory"],
        )

    clf, wall, search, fits = timed_fit(make, X, y, lambda m: float(m.statistics_["seconds"]), spec)
    status = {
        "optimal": "optimal",
        "time_limit": "timeout",
        "memory_limit": "memory",
    }.get(clf.status_, "error")
    predicted = clf.predict(X)
    return {
        "status": status,
        "fit_seconds": wall,
        "search_seconds": search,
        "fits": fits,
        "correct": int(np.sum(predicted == y)),
        "splits": int(clf.get_n_splits()),
        "depth": int(clf.get_depth()),
        "claimed": float(clf.objective_),
        "note": "" if status != "error" else f"status_={clf.status_}",
    }


def run_imodels(X, y, lam: str, spec: dict) -> dict:
    from imodels import FastSmallTreeClassifier

    def make():
        return FastSmallTreeClassifier(
            regularization=float(lam),
            time_limit=spec["time_limit"],
            memory_limit=spec["solver_memory"],
        )

    model, wall, search, fits = timed_fit(make, X, y, lambda m: float(m.time_), spec)
    if model.optimal_:
        status = "optimal"
    else:
        status = "memory" if "memory" in str(model.stop_reason_) else "timeout"
    tree = score_tree(from_imodels(model.tree_), X, y)
    # objective_ = error rate + λ·leaves = 1 + λ - H for a binary tree
    return {
        "status": status,
        "fit_seconds": wall,
        "search_seconds": search,
        "fits": fits,
        **tree,
        "claimed": 1.0 + float(lam) - float(model.objective_),
        "note": "",
    }


def run_streed(X, y, lam: str, spec: dict) -> dict:
    from pystreed import STreeDClassifier

    def make():
        return STreeDClassifier(
            optimization_task="cost-complex-accuracy",
            max_depth=spec["streed_depth"],
            cost_complexity=float(lam),
            time_limit=spec["time_limit"],
        )

    model, wall, _, fits = timed_fit(make, X, y, lambda m: None, spec)
    if list(model.binarizer_.binary_columns) != list(range(X.shape[1])):
        raise RuntimeError("STreeD re-encoded the 0/1 columns; its feature indices would not map")
    if not model.is_fitted():
        return {"status": "error", "fit_seconds": wall, "note": "no feasible tree"}
    status = "optimal" if model.fit_result.is_optimal() else "timeout"
    tree = score_tree(from_streed(model.tree_), X, y)
    return {
        "status": status,
        "fit_seconds": wall,
        "search_seconds": None,
        "fits": fits,
        **tree,
        "claimed": None,
        "note": f"depth ≤ {spec['streed_depth']}",
    }


def run_gosdt(X, y, lam: str, spec: dict) -> dict:
    from gosdt import GOSDTClassifier, Status

    def make():
        return GOSDTClassifier(
            regularization=float(lam),
            allow_small_reg=True,
            time_limit=max(1, round(spec["time_limit"])),
            worker_limit=1,
        )

    model, wall, search, fits = timed_fit(make, X, y, lambda m: float(m.result_.time), spec)
    result = model.result_
    if result.status == Status.CONVERGED:
        status, note = "optimal", ""
    elif result.status == Status.TIMEOUT:
        status, note = "timeout", ""
    else:
        status, note = "error", f"GOSDT status {result.status}"
    # Predict through our own walk of the JSON model (GOSDT's predict breaks on newer
    # scikit-learn); a leaf's "prediction" indexes classes_.
    models = json.loads(result.model)
    if not models:
        return {"status": "error", "fit_seconds": wall, "note": "GOSDT returned no tree"}
    node = from_gosdt(models[0])
    classes = list(model.classes_)

    def relabel(n: Node) -> None:
        if n.is_leaf:
            n.label = classes[n.label]
        else:
            relabel(n.if_true)
            relabel(n.if_false)

    relabel(node)
    tree = score_tree(node, X, y)
    # upper bound = error rate + λ·leaves = 1 + λ - H for the returned binary tree
    return {
        "status": status,
        "fit_seconds": wall,
        "search_seconds": search,
        "fits": fits,
        **tree,
        "claimed": 1.0 + float(lam) - float(result.upperbound),
        "note": note,
    }


RUNNERS = {
    "optitree": run_optitree,
    # STreeD's problem: the same objective over trees no deeper than STreeD's limit.
    "optitree-d": lambda X, y, lam, spec: run_optitree(X, y, lam, spec, spec["streed_depth"]),
    "imodels": run_imodels,
    "streed": run_streed,
    "gosdt": run_gosdt,
}


def worker(spec_path: str) -> int:
    """Run one method on one instance as ``spec_path`` says; write the result next to it."""
    spec = json.loads(Path(spec_path).read_text())
    out = Path(spec["result_path"])
    if spec["address_space"]:
        limit = int(spec["address_space"])
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    result: dict[str, Any]
    started = time.perf_counter()

    def after() -> str:
        return f" after {time.perf_counter() - started:.1f} s, counting data loading and warm-up"

    try:
        import optitree

        if not Path(optitree.__file__).resolve().is_relative_to(Path(spec["snapshot"]).resolve()):
            raise RuntimeError(f"imported optitree from {optitree.__file__}, not the snapshot")
        instance = INSTANCES[spec["instance"]]
        X, y = load_instance(instance.name)
        result = RUNNERS[spec["method"]](X, y, instance.penalty, spec)
    except MemoryError:
        result = {"status": "memory", "note": "MemoryError at the address-space cap" + after()}
    except Exception as exc:  # a peer's crash is a result, not a benchmark failure
        result = {"status": "error", "note": f"{type(exc).__name__}: {exc}"[:300] + after()}
    result["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    out.write_text(json.dumps(result))
    return 0


# ---------------------------------------------------------------------------------------------
# The driver.


def available_gib() -> float | None:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable"):
                return int(line.split()[1]) / 2**20
    except OSError:
        pass
    return None


def wait_for_memory(needed_gib: float, patience: float = 600.0) -> None:
    """Hold the next run while the machine has less free memory than its cap (shared machine)."""
    deadline = time.monotonic() + patience
    announced = False
    while True:
        free = available_gib()
        if free is None or free >= needed_gib or time.monotonic() > deadline:
            return
        if not announced:
            print(
                f"... waiting: {free:.1f} GiB available, the next run may take {needed_gib:g}",
                flush=True,
            )
            announced = True
        time.sleep(10)


def run_one(method: str, instance: Instance, args: argparse.Namespace, tmp: Path) -> dict:
    """Run one worker process; turn a hang, a crash or a kill into a result."""
    stem = f"{instance.name}.{method}"
    spec_path, result_path = tmp / f"{stem}.spec.json", tmp / f"{stem}.result.json"
    memory = int(args.memory_limit * 2**30)
    spec = {
        "method": method,
        "instance": instance.name,
        "time_limit": args.time_limit,
        "address_space": memory,
        # solvers with a graceful memory limit get three quarters of the process cap
        "solver_memory": memory * 3 // 4,
        "streed_depth": args.streed_depth or instance.streed_depth,
        "repeats": args.repeats,
        "result_path": str(result_path),
    }
    env = dict(os.environ)
    env.update({name: "1" for name in THREAD_VARIABLES})
    env["PYTHONPATH"] = os.pathsep.join(
        [args.snapshot, *filter(None, [os.environ.get("PYTHONPATH")])]
    )
    spec["snapshot"] = args.snapshot
    spec_path.write_text(json.dumps(spec))
    result_path.unlink(missing_ok=True)  # an earlier round's result must not stand in
    hard_limit = 1.5 * args.time_limit + 60
    wait_for_memory(args.memory_limit + 0.5)
    with open(tmp / f"{stem}.log", "wb") as log:
        proc = subprocess.Popen(
            [sys.executable, str(Path(__file__).resolve()), "--worker", str(spec_path)],
            stdout=log,
            stderr=subprocess.STDOUT,
            env=env,
            start_new_session=True,
        )
        start = time.perf_counter()
        began = datetime.datetime.now().astimezone().isoformat(timespec="seconds")
        try:
            code = proc.wait(timeout=hard_limit)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            return {
                "status": "timeout",
                "fit_seconds": time.perf_counter() - start,
                "note": f"killed after {hard_limit:.0f} s without returning",
                "killed": True,
                "started": began,
            }
    if result_path.exists():
        return {**json.loads(result_path.read_text()), "started": began}
    tail = (tmp / f"{stem}.log").read_bytes()[-400:].decode(errors="replace").strip()
    reason = f"signal {-code}" if code < 0 else f"exit code {code}"
    return {"status": "error", "note": f"worker died ({reason}): {tail[-200:]}", "started": began}


def worth_another_round(result: dict, args: argparse.Namespace) -> bool:
    """Whether to time a method again: it proved optimality, quickly enough to repeat."""
    return result["status"] == "optimal" and result["fit_seconds"] <= args.round_cap


def add_round(result: dict, again: dict) -> None:
    """Fold a later round's times into ``result``: its times become the medians over rounds.

    The rounds interleave the methods, so a slow spell of the machine slows every method
    alike instead of deciding one method's figure. A round that ended differently (a limit,
    a crash) is recorded but not timed.
    """
    walls = result.setdefault("round_fit_seconds", [result["fit_seconds"]])
    searches = result.setdefault("round_search_seconds", [result.get("search_seconds")])
    if again.get("status") != result["status"]:
        result.setdefault("odd_rounds", []).append(again.get("status"))
        return
    walls.append(again["fit_seconds"])
    searches.append(again.get("search_seconds"))
    result["fit_seconds"] = statistics.median(walls)
    if None not in searches:
        result["search_seconds"] = statistics.median(searches)


def objective_f(result: dict) -> float:
    return float(result["objective"])


def exact_objective(result: dict, instance: Instance) -> Fraction | None:
    if result.get("correct") is None:
        return None
    return Fraction(result["correct"], instance.n) - instance.lam * result["splits"]


def optimality_class(method: str, result: dict) -> int | None:
    """None when the method proved nothing; else the depth bound of its proof (0 = none)."""
    if result["status"] != "optimal":
        return None
    return result.get("depth_bound", 0)


def cross_check(instance: Instance, results: dict[str, dict]) -> list[str]:
    """Every inconsistency between the methods' proofs, trees and the reference value.

    A method that proves optimality over a class of trees (all trees; or, for STreeD, trees of
    depth ≤ d) must score at least as well as every tree of that class that any other method
    returned; so two methods proving optimality over the same class agree. A proven reference
    optimum must be matched by every method that proves optimality over all trees.
    """
    problems = []
    for a, ra in results.items():
        bound = optimality_class(a, ra)
        if bound is None or ra.get("objective") is None:
            continue
        for b, rb in results.items():
            if b == a or rb.get("objective") is None:
                continue
            in_class = bound == 0 or rb["depth"] <= bound
            if in_class and rb["objective"] > ra["objective"] + TOLERANCE:
                problems.append(
                    f"{a} claims optimal at {float(ra['objective']):.9f} but {b}'s tree "
                    f"scores {float(rb['objective']):.9f}"
                )
        if instance.proven:
            ref = instance.reference
            reference_in_class = bound == 0 or (
                instance.depth is not None and instance.depth <= bound
            )
            if reference_in_class and ra["objective"] < ref - TOLERANCE:
                problems.append(
                    f"{a} claims optimal at {float(ra['objective']):.9f} below the proven "
                    f"optimum {float(ref):.9f}"
                )
    if instance.proven:
        for a, ra in results.items():
            if ra.get("objective") is not None and ra["objective"] > instance.reference + TOLERANCE:
                problems.append(
                    f"{a}'s tree scores {float(ra['objective']):.9f}, above the proven optimum "
                    f"{float(instance.reference):.9f}"
                )
    return problems


def depth_limited_notes(results: dict[str, dict]) -> None:
    """Explain a depth-limited proof (STreeD) that is below the proven optimum over all trees."""
    unbounded = [
        r
        for r in results.values()
        if optimality_class("", r) == 0 and r.get("objective") is not None
    ]
    if not unbounded:
        return
    best = max(r["objective"] for r in unbounded)
    for r in results.values():
        bound = optimality_class("", r)
        if bound and r.get("objective") is not None and r["objective"] < best - TOLERANCE:
            depth = min(u["depth"] for u in unbounded if u["objective"] == best)
            r["info"] = (
                f"depth-limited: the optimum over all trees, {float(best):.9f}, was found "
                f"with depth {depth} > {bound}"
            )


def fmt_seconds(value: float | None) -> str:
    if value is None:
        return "—"
    return f"{value:.3f}" if value < 10 else f"{value:.1f}"


def fmt_x(value: float) -> str:
    return f"{value:.2f}" if value < 10 else f"{value:.1f}" if value < 100 else f"{value:.0f}"


def fmt_ratio(peer: dict, base: dict) -> tuple[str, float | None, str | None]:
    """(cell text, ratio if both finished, who was faster if decidable)."""
    p, o = peer.get("fit_seconds"), base.get("fit_seconds")
    if p is None or o is None or peer["status"] in ("error", "n/a"):
        return "—", None, None
    if base["status"] != "optimal":
        if peer["status"] == "optimal":
            return f"< {fmt_x(p / o)}", None, "peer"
        return "—", None, None
    if peer["status"] == "optimal":
        ratio = p / o
        return fmt_x(ratio), ratio, "optitree" if ratio > 1 else "peer"
    return f"> {fmt_x(p / o)}", None, "optitree"


def machine_lines() -> list[str]:
    cpu = "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    memory = "unknown"
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal"):
                memory = f"{int(line.split()[1]) / 2**20:.1f} GiB"
                break
    except OSError:
        pass
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None
    return [
        f"- machine: {platform.machine()}, nproc {usable or os.cpu_count()}, CPU {cpu}, "
        f"RAM {memory}, load average at start {'/'.join(f'{x:.2f}' for x in os.getloadavg())}",
        f"- python {platform.python_version()} ({sys.executable})",
    ]


def version_line() -> str:
    parts = []
    for name in PACKAGES:
        try:
            parts.append(f"{name} {importlib.metadata.version(name)}")
        except importlib.metadata.PackageNotFoundError:
            parts.append(f"{name} (not installed)")
    return "- packages: " + ", ".join(parts)


def tree_fingerprint(package: Path) -> str:
    """A hash of every file of a package directory (sources, compiled module, data)."""
    import hashlib

    digest = hashlib.sha256()
    for path in sorted(package.rglob("*")):
        if path.is_file() and "__pycache__" not in path.parts:
            digest.update(str(path.relative_to(package)).encode() + b"\0")
            digest.update(path.read_bytes())
    return digest.hexdigest()[:12]


def snapshot_optitree(dest: Path) -> tuple[Path, str]:
    """Copy the installed optitree package (Python sources and compiled module) into ``dest``.

    In an editable install the package is the working tree, which may be edited and rebuilt
    while a long benchmark runs; every worker imports the snapshot instead (it goes first on
    PYTHONPATH), so all rows measure one build. Returns the package's source directory and
    the snapshot's fingerprint.
    """
    import importlib.util
    import shutil

    spec = importlib.util.find_spec("optitree")
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit("optitree is not installed in this environment")
    source = Path(next(iter(spec.submodule_search_locations)))
    target = dest / "optitree"
    for _ in range(10):
        before = tree_fingerprint(source)
        shutil.copytree(source, target, ignore=shutil.ignore_patterns("__pycache__"))
        copied = tree_fingerprint(target)
        if before == copied == tree_fingerprint(source):
            return source, copied
        shutil.rmtree(target)  # copied in the middle of a rebuild: try again
        time.sleep(10)
    raise SystemExit(f"{source} kept changing while it was being copied")


def git_line() -> str:
    try:
        commit = subprocess.run(
            ["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "-C", str(REPO), "status", "--porcelain", "--untracked-files=no"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "- optitree commit: unknown"
    return f"- optitree commit: {commit}{' (with uncommitted changes)' if dirty else ''}"


def write_report(
    path: Path,
    args: argparse.Namespace,
    header: list[str],
    table: dict[str, dict[str, dict]],
    mismatches: dict[str, list[str]],
    started: float,
) -> None:
    methods = args.methods
    peers = [m for m in methods if not m.startswith("optitree")]
    lines = [
        "# Branches: optitree against peer solvers",
        "",
        *header,
        f"- load average at end {'/'.join(f'{x:.2f}' for x in os.getloadavg())}; "
        f"whole run {time.perf_counter() - started:.0f} s",
        f"- time limit per run {args.time_limit:g} s (hard kill at "
        f"{1.5 * args.time_limit + 60:g} s); address-space cap {args.memory_limit:g} GiB "
        f"per worker; one thread per worker; a fit under 1 s is repeated (about 1 s in all, "
        f"at most {args.repeats} fits) and the medians are reported; each method "
        f"that proved optimality within {args.round_cap:g} s is timed in {args.rounds} rounds "
        "per instance, the methods taking turns, and the median round is reported",
        "",
        "Objective = training accuracy − λ·splits, recomputed by this script from each "
        "method's returned tree (exact rationals, printed to 9 decimals). imodels and GOSDT "
        "minimise error + λ·leaves = 1 + λ − objective, STreeD minimises n·(1 − objective) "
        "over trees of depth ≤ d: the same optimum (STreeD's within its depth). "
        "`fit s` = wall time of `fit` in the worker after a warm-up fit; `search s` = the "
        "search time the method reports (optitree `statistics_['seconds']`, imodels `time_`, "
        "GOSDT `result_.time`; STreeD reports none). `ratio` = method fit s / optitree fit s "
        "(`>`: the method hit its limit, `<`: optitree did).",
        "",
        "| instance | n × m | λ | reference | method | status | objective | splits | depth "
        "| fit s | search s | ratio | peak MB | check |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for name, results in table.items():
        inst = INSTANCES[name]
        ref = f"{float(inst.reference):.9f}" + ("" if inst.proven else " (best known)")
        for method in methods:
            r = results[method]
            objective = r.get("objective")
            ratio = "1" if method == "optitree" else fmt_ratio(r, results.get("optitree", {}))[0]
            if "optitree" not in results:
                ratio = "—"
            mine = (method + " ", method + "'s ")  # not "optitree-d ..." for "optitree"
            check = "; ".join(p for p in mismatches.get(name, []) if p.startswith(mine))
            check = f"**MISMATCH**: {check}" if check else "ok"
            if r.get("info") and not check.startswith("**"):
                check = f"ok ({r['info']})"
            if objective is None:
                check = "—"
            note = r.get("note", "")
            status = r["status"] + (f" ({note})" if note else "")
            peak = r.get("peak_rss_mb")
            lines.append(
                f"| {name} | {r.get('shape', '')} | {inst.penalty} | {ref} | "
                f"{METHOD_LABELS[method]} | {status} | "
                f"{'—' if objective is None else f'{float(objective):.9f}'} | "
                f"{r.get('splits', '—')} | {r.get('depth', '—')} | "
                f"{fmt_seconds(r.get('fit_seconds'))} | {fmt_seconds(r.get('search_seconds'))} "
                f"| {ratio} | {'—' if peak is None else f'{peak:.0f}'} | {check} |"
            )
    all_problems = [f"{n}: {p}" for n, ps in mismatches.items() for p in ps]
    lines += ["", "## Cross-check", ""]
    if all_problems:
        lines += ["**MISMATCHES**:", "", *[f"- {p}" for p in all_problems]]
    else:
        lines.append(
            "No mismatch: wherever methods proved optimality over the same class of trees their "
            "objectives agree to 1e-9, no returned tree beats a proven optimum, and every "
            "proof over all trees matches the proven reference value."
        )
    news = []
    for name, results in table.items():
        inst = INSTANCES[name]
        if inst.proven:
            continue
        provers = [
            METHOD_LABELS[m]
            for m, r in results.items()
            if optimality_class(m, r) == 0 and r.get("objective") is not None
        ]
        scored = [r["objective"] for r in results.values() if r.get("objective") is not None]
        if provers:
            best = next(
                r
                for r in results.values()
                if optimality_class("", r) == 0 and r.get("objective") is not None
            )
            news.append(
                f"- {name}: optimum {float(best['objective']):.9f} = {best['correct']}/{inst.n} − "
                f"{best['splits']}·λ proven by {', '.join(provers)} "
                f"(the reference lists {float(inst.reference):.9f} as best known)"
            )
        elif scored and max(scored) > inst.reference + TOLERANCE:
            news.append(
                f"- {name}: best tree {float(max(scored)):.9f}, above the best known "
                f"{float(inst.reference):.9f} (not proven)"
            )
    if news:
        lines += ["", "Instances whose reference value is only a best known value:", "", *news]
    lines += ["", "## Summary", ""]
    if "optitree" in methods and peers:
        lines += [
            "| peer | instances compared | optitree faster | peer faster | peer failed | "
            "undecided | median ratio (both optimal) | instances where the peer was faster |",
            "|---|---|---|---|---|---|---|---|",
        ]
        for peer in peers:
            compared = faster = slower = failed = undecided = 0
            ratios, peer_wins = [], []
            for name, results in table.items():
                r = results[peer]
                if r["status"] == "n/a":
                    continue
                compared += 1
                if r["status"] in ("error", "memory") or r.get("fit_seconds") is None:
                    failed += 1
                    continue
                _, ratio, winner = fmt_ratio(r, results["optitree"])
                if ratio is not None:
                    ratios.append(ratio)
                if winner == "optitree":
                    faster += 1
                elif winner == "peer":
                    slower += 1
                    peer_wins.append(name)
                else:
                    undecided += 1
            median = f"{fmt_x(statistics.median(ratios))} (of {len(ratios)})" if ratios else "—"
            lines.append(
                f"| {METHOD_LABELS[peer]} | {compared} | {faster} | {slower} | {failed} | "
                f"{undecided} | {median} | {', '.join(peer_wins) or '—'} |"
            )
        lines += [
            "",
            '"optitree faster": optitree proved optimality and the peer took longer or hit its '
            'time limit. "peer failed": the peer ran out of memory or crashed. "undecided": '
            "both hit the time limit, or optitree failed. The median ratio is over the instances "
            "where both proved optimality (STreeD: within its depth limit).",
        ]
    if {"optitree-d", "streed"} <= set(methods):
        lines += same_problem_summary(table)
    if {"optitree", "optitree-d", "imodels", "streed"} <= set(methods):
        lines += target_table(table)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n")


def same_problem_summary(table: dict[str, dict[str, dict]]) -> list[str]:
    """STreeD against optitree given the same depth limit: the same problem for both."""
    ratios, wins = [], []
    for name, results in table.items():
        _, ratio, winner = fmt_ratio(results["streed"], results["optitree-d"])
        if ratio is not None:  # both proved optimality
            ratios.append(ratio)
            if winner == "peer":
                wins.append(name)
    if not ratios:
        return []
    return [
        "",
        "Same problem: STreeD's fit time over optitree's with `max_depth` set to STreeD's "
        f"depth limit, on the {len(ratios)} instances where both proved optimality: median "
        f"{fmt_x(statistics.median(ratios))}, smallest {fmt_x(min(ratios))}; STreeD faster on "
        f"{', '.join(wins) or 'none'}.",
    ]


# The one-hot binary instances that issue 3's speed targets name.
TARGET_INSTANCES = ("monk1", "monk2", "monk3", "tictactoe", "mushroom", "krvskp", "balance")


def target_table(table: dict[str, dict[str, dict]]) -> list[str]:
    """Issue 3's per-instance targets: optitree faster than imodels' own search time, and at
    least 10x faster than STreeD at the depth it needs (over all trees, and on STreeD's own
    depth-limited problem)."""
    rows = []
    for name in TARGET_INSTANCES:
        results = table.get(name)
        if results is None:
            continue
        ours, ours_d = results["optitree"], results["optitree-d"]
        imodels_search = results["imodels"].get("search_seconds")
        streed = results["streed"]
        _, all_trees, _ = fmt_ratio(streed, ours)
        _, same, _ = fmt_ratio(streed, ours_d)
        vs_imodels = (
            imodels_search / ours["fit_seconds"]
            if imodels_search and ours.get("fit_seconds") and ours["status"] == "optimal"
            else None
        )
        rows.append((name, ours, imodels_search, vs_imodels, streed, all_trees, same))
    if not rows:
        return []

    def cell(x: float | None) -> str:
        return "—" if x is None else fmt_x(x)

    lines = [
        "",
        "## Issue 3's targets on its one-hot instances",
        "",
        "| instance | optitree fit s | imodels search s | imodels search / optitree fit | "
        "STreeD fit s | STreeD / optitree (all trees) | STreeD / optitree (same depth) |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for name, ours, imodels_search, vs_imodels, streed, all_trees, same in rows:
        lines.append(
            f"| {name} | {fmt_seconds(ours.get('fit_seconds'))} | {fmt_seconds(imodels_search)} "
            f"| {cell(vs_imodels)} | {fmt_seconds(streed.get('fit_seconds'))} | "
            f"{cell(all_trees)} | {cell(same)} |"
        )
    beat_imodels = sum(1 for r in rows if r[3] is not None and r[3] > 1)
    tenfold = [r[0] for r in rows if r[5] is not None and r[5] >= 10]
    tenfold_same = [r[0] for r in rows if r[6] is not None and r[6] >= 10]
    lines += [
        "",
        f"Faster than imodels' own search time on {beat_imodels} of {len(rows)}; at least 10x "
        f"faster than STreeD on {len(tenfold)} of {len(rows)} over all trees "
        f"({', '.join(tenfold) or 'none'}) and on {len(tenfold_same)} of {len(rows)} with "
        f"STreeD's depth limit ({', '.join(tenfold_same) or 'none'}).",
    ]
    return lines


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description="Benchmark optitree's BranchesClassifier against imodels, STreeD and GOSDT.",
    )
    parser.add_argument("--time-limit", type=float, default=60.0, help="seconds per run")
    parser.add_argument(
        "--instances",
        default=",".join(INSTANCES),
        help=f"comma-separated, from: {', '.join(INSTANCES)}",
    )
    parser.add_argument(
        "--methods", default=",".join(METHODS), help=f"comma-separated, from: {', '.join(METHODS)}"
    )
    parser.add_argument("--output", type=Path, default=DEFAULT_OUTPUT, help="markdown report")
    parser.add_argument(
        "--memory-limit",
        type=float,
        default=4.0,
        help="address-space cap per worker process, GiB (default 4)",
    )
    parser.add_argument(
        "--streed-depth",
        type=int,
        default=None,
        help="STreeD's max_depth for every instance (default: the reference tree's depth)",
    )
    parser.add_argument(
        "--repeats",
        type=int,
        default=200,
        help="fits are repeated until about 1 s of fitting, at most this many times; medians "
        "are reported (the median of a process's first five 0.2-ms monk1 fits was 25-35%% "
        "above that of 200)",
    )
    parser.add_argument(
        "--rounds",
        type=int,
        default=3,
        help="time each method this many times per instance, interleaved, and report the "
        "median (only runs that proved optimality within --round-cap seconds are repeated)",
    )
    parser.add_argument(
        "--round-cap",
        type=float,
        default=20.0,
        help="a method whose fit took longer is timed once (default 20 s)",
    )
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        return args
    args.instances = [s.strip() for s in args.instances.split(",") if s.strip()]
    args.methods = [s.strip() for s in args.methods.split(",") if s.strip()]
    for name in args.instances:
        if name not in INSTANCES:
            parser.error(f"unknown instance {name!r}; choose from {', '.join(INSTANCES)}")
    for name in args.methods:
        if name not in METHODS:
            parser.error(f"unknown method {name!r}; choose from {', '.join(METHODS)}")
    if args.time_limit <= 0:
        parser.error("--time-limit must be positive")
    if args.repeats < 1:
        parser.error("--repeats must be at least 1")
    if args.rounds < 1:
        parser.error("--rounds must be at least 1")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.worker:
        return worker(args.worker)
    started = time.perf_counter()
    command = " ".join(shlex.quote(a) for a in [Path(sys.executable).name, *sys.argv])
    table: dict[str, dict[str, dict]] = {}
    mismatches: dict[str, list[str]] = {}
    raw: list[dict] = []
    with tempfile.TemporaryDirectory(prefix="branches_peers_") as tmpdir:
        tmp = Path(tmpdir)
        snapshot = tmp / "snapshot"
        source, fingerprint = snapshot_optitree(snapshot)
        sys.path.insert(0, str(snapshot))  # this process reads its data through the snapshot
        args.snapshot, args.fingerprint = str(snapshot), fingerprint
        header = [
            f"- date: {datetime.datetime.now().astimezone().isoformat(timespec='seconds')}",
            *machine_lines(),
            version_line(),
            git_line(),
            f"- optitree as measured: a copy of {source} taken at the start (fingerprint "
            f"{fingerprint}), so edits and rebuilds during the run do not mix builds",
            f"- command: `{command}`",
        ]
        for name in args.instances:
            inst = INSTANCES[name]
            X, y = load_instance(name)
            multiclass = len(np.unique(y)) > 2
            results: dict[str, dict] = {}
            for method in args.methods:
                if multiclass and not MULTICLASS[method]:
                    result = {"status": "n/a", "note": "binary labels only"}
                else:
                    result = run_one(method, inst, args, tmp)
                result["shape"] = f"{X.shape[0]} × {X.shape[1]}"
                result["objective"] = exact_objective(result, inst)
                if method in ("streed", "optitree-d") and result["status"] == "optimal":
                    result["depth_bound"] = args.streed_depth or inst.streed_depth
                claimed = result.get("claimed")
                if claimed is not None and result["objective"] is not None:
                    # a proof of optimality should be about the returned tree
                    if result["status"] == "optimal" and abs(claimed - objective_f(result)) > 1e-6:
                        extra = f"its own objective says {claimed:.9f}"
                        result["note"] = "; ".join(x for x in (result.get("note"), extra) if x)
                results[method] = result
                objective = result["objective"]
                print(
                    f"{name:12} {method:9} {result['status']:8} "
                    f"objective {'—' if objective is None else f'{float(objective):.9f}':12} "
                    f"splits {result.get('splits', '—')!s:4} "
                    f"fit {fmt_seconds(result.get('fit_seconds')):>7} s  {result.get('note', '')}",
                    flush=True,
                )
            for _ in range(1, args.rounds):
                for method in args.methods:
                    if worth_another_round(results[method], args):
                        add_round(results[method], run_one(method, inst, args, tmp))
            problems = cross_check(inst, results)
            depth_limited_notes(results)
            for problem in problems:
                print(f"!!! MISMATCH on {name}: {problem}", file=sys.stderr, flush=True)
            if problems:
                mismatches[name] = problems
            table[name] = results
            for method, r in results.items():
                entry = {k: v for k, v in r.items() if k != "objective"}
                objective = r["objective"]
                entry.update(
                    instance=name,
                    method=method,
                    penalty=inst.penalty,
                    objective=None if objective is None else float(objective),
                    objective_exact=None if objective is None else str(objective),
                )
                raw.append(entry)
            # rewrite the report after every instance, so a long run leaves partial results
            write_report(args.output, args, header, table, mismatches, started)
            args.output.with_suffix(".json").write_text(json.dumps(raw, indent=1) + "\n")
    total = sum(len(p) for p in mismatches.values())
    print(f"wrote {args.output} ({total} mismatch{'es' if total != 1 else ''})")
    return 1 if total else 0


if __name__ == "__main__":
    sys.exit(main())
