"""Query trees: build times, greedy against the exact optimum, and the paper's experiment.

1. Build time of the greedy builders on random question banks up to 10,000 objects × 1,000
   queries (median of three builds, in-process ``QueryTree.fit``).
2. Cost of GBS, λ-GBS and the exact optimum (``criterion="optimal"``) on random small problems.
3. The shape of the paper's Figure 3 on its synthetic active-learning problem (spec §4.1): mean
   L_λ under the true prior of λ-GBS, GBS and uniform-prior GBS over 100 runs with random
   tie-breaking, for several β, next to the spec's independent prototype (§4.2).

No peer library implements these algorithms, so there is no side-by-side timing.

Usage::

    python benchmarks/query_trees.py [--quick]

Writes ``benchmarks/results/query_trees.md``, ``query_trees.json`` and ``query_trees.png``.
"""

from __future__ import annotations

import argparse
import datetime
import json
import math
import os
import platform
import statistics
import time
from pathlib import Path

import numpy as np

from optitree import QueryTree
from optitree.datasets import make_threshold_active_learning, zipf_prior

RESULTS = Path(__file__).resolve().parent / "results"
LAMBDAS = [1.0, 1.5, 2.0, 4.0, 8.0, 16.0, 64.0, 256.0, 1024.0]
BETAS = [0.5, 1.0, 2.0]
# Spec query-learning.md §4.2 (an independent prototype, not paper numbers): (GBS, uniform, λ-GBS).
SPEC_TABLE = {
    (0.5, 1.0): (6.5927, 6.7227, 6.5923),
    (0.5, 1.5): (6.6532, 6.7592, 6.6393),
    (0.5, 2.0): (6.6952, 6.7814, 6.6799),
    (0.5, 4.0): (6.8067, 6.8289, 6.7563),
    (0.5, 8.0): (6.9051, 6.8634, 6.8166),
    (0.5, 16.0): (7.0080, 6.8897, 6.8532),
    (0.5, 64.0): (7.2161, 6.9224, 6.8999),
    (0.5, 256.0): (7.3566, 6.9410, 6.9245),
    (0.5, 1024.0): (7.4754, 6.9528, 6.9399),
    (1.0, 1.0): (6.2905, 6.7191, 6.2899),
    (1.0, 1.5): (6.5185, 6.7617, 6.4445),
    (1.0, 2.0): (6.6747, 6.7770, 6.5233),
    (1.0, 4.0): (7.0028, 6.8309, 6.5982),
    (1.0, 8.0): (7.2378, 6.8659, 6.6933),
    (1.0, 16.0): (7.3790, 6.8893, 6.7540),
    (1.0, 64.0): (7.5798, 6.9222, 6.8364),
    (1.0, 256.0): (7.7029, 6.9403, 6.8908),
    (1.0, 1024.0): (7.7721, 6.9522, 6.9135),
    (2.0, 1.0): (5.1548, 6.7107, 5.1586),
    (2.0, 1.5): (5.7370, 6.7590, 5.6314),
    (2.0, 2.0): (6.2898, 6.7822, 5.8992),
    (2.0, 4.0): (7.4434, 6.8316, 6.1567),
    (2.0, 8.0): (8.2331, 6.8704, 6.3759),
    (2.0, 16.0): (8.5544, 6.8959, 6.4251),
    (2.0, 64.0): (9.1777, 6.9237, 6.6164),
    (2.0, 256.0): (9.4186, 6.9367, 6.7226),
    (2.0, 1024.0): (9.5265, 6.9527, 6.7819),
}


def distinct_random_matrix(rng, m: int, n: int, density: float = 0.5) -> np.ndarray:
    while True:
        B = (rng.random((m, n)) < density).astype(np.uint8)
        if len({row.tobytes() for row in B}) == m:
            return B


def build_times(sizes, repeats: int = 3) -> list[dict]:
    rng = np.random.default_rng(0)
    rows = []
    for m, n in sizes:
        B = distinct_random_matrix(rng, m, n)
        prior = zipf_prior(m, 1.0, rng=1)
        groups = rng.integers(0, 20, m)
        cases = [
            ("gbs", 1.0, None),
            ("lambda-gbs", 2.0, None),
            ("worst-case", math.inf, None),
            ("ggbs", 1.0, groups),
            ("lambda-ggbs", 2.0, groups),
        ]
        for criterion, lam, g in cases:
            seconds = []
            for _ in range(repeats):
                start = time.perf_counter()
                qt = QueryTree(criterion=criterion, cost_base=lam).fit(B, prior=prior, groups=g)
                seconds.append(time.perf_counter() - start)
            rows.append(
                {
                    "objects": m,
                    "queries": n,
                    "criterion": criterion,
                    "cost_base": lam,
                    "seconds": statistics.median(seconds),
                    "nodes": qt.tree_.n_nodes,
                    "cost": qt.cost_,
                    "lower_bound": qt.lower_bound_,
                }
            )
            print(f"build {m}x{n} {criterion:12s} {rows[-1]['seconds']:.3f} s", flush=True)
    return rows


def greedy_vs_optimal(n_instances: int, m: int = 12, n: int = 16) -> list[dict]:
    rng = np.random.default_rng(1)
    problems = [
        (distinct_random_matrix(rng, m, n, density=0.35), zipf_prior(m, 1.0, rng=k))
        for k in range(n_instances)
    ]
    rows = []
    for lam in [1.0, 2.0, 4.0, 16.0, math.inf]:
        gbs, lgbs, opt, bound, optimal_hits = [], [], [], [], 0
        for B, prior in problems:
            g = QueryTree(criterion="gbs", cost_base=lam).fit(B, prior=prior)
            lg = QueryTree(cost_base=lam).fit(B, prior=prior)
            o = QueryTree(criterion="optimal", cost_base=lam).fit(B, prior=prior)
            gbs.append(g.cost_)
            lgbs.append(lg.cost_)
            opt.append(o.cost_)
            bound.append(o.lower_bound_)
            optimal_hits += lg.cost_ <= o.cost_ + 1e-9
            assert lg.cost_ >= o.cost_ - 1e-9 and g.cost_ >= o.cost_ - 1e-9
        rows.append(
            {
                "cost_base": lam,
                "gbs": statistics.mean(gbs),
                "lambda_gbs": statistics.mean(lgbs),
                "optimal": statistics.mean(opt),
                "entropy_bound": statistics.mean(bound),
                "lambda_gbs_optimal_share": optimal_hits / len(problems),
                "worst_lambda_gbs_excess": max(a - b for a, b in zip(lgbs, opt)),
            }
        )
        print(f"optimal λ={lam}: {rows[-1]}", flush=True)
    return rows


def paper_experiment(repeats: int) -> list[dict]:
    rows = []
    for beta in BETAS:
        B, prior = make_threshold_active_learning(beta)
        sums = {(lam, k): 0.0 for lam in LAMBDAS for k in ("gbs", "uniform", "lambda")}
        for rep in range(repeats):
            common = {"tie_break": "random", "random_state": rep}
            gbs = QueryTree(criterion="gbs", **common).fit(B, prior=prior)
            uniform = QueryTree(criterion="gbs", **common).fit(B)  # built ignoring the prior
            for lam in LAMBDAS:
                lgbs = QueryTree(criterion="lambda-gbs", cost_base=lam, **common).fit(
                    B, prior=prior
                )
                sums[lam, "gbs"] += gbs.cost(lam)
                sums[lam, "uniform"] += uniform.cost(lam, prior=prior)
                sums[lam, "lambda"] += lgbs.cost_
        for lam in LAMBDAS:
            rows.append(
                {
                    "beta": beta,
                    "cost_base": lam,
                    "gbs": sums[lam, "gbs"] / repeats,
                    "gbs_uniform": sums[lam, "uniform"] / repeats,
                    "lambda_gbs": sums[lam, "lambda"] / repeats,
                    "spec": SPEC_TABLE.get((beta, lam)),
                }
            )
        print(f"paper experiment β={beta} done", flush=True)
    return rows


def plot(rows: list[dict], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(BETAS), figsize=(4.2 * len(BETAS), 3.6), sharey=False)
    for ax, beta in zip(axes, BETAS):
        sel = [r for r in rows if r["beta"] == beta]
        lams = [r["cost_base"] for r in sel]
        ax.plot(lams, [r["lambda_gbs"] for r in sel], "o-", label="λ-GBS")
        ax.plot(lams, [r["gbs"] for r in sel], "s--", label="GBS")
        ax.plot(lams, [r["gbs_uniform"] for r in sel], "^:", label="GBS, uniform prior")
        ax.set_xscale("log", base=2)
        ax.set_xlabel("λ")
        ax.set_title(f"synthetic active learning, β = {beta:g}")
    axes[0].set_ylabel("mean L_λ under the true prior")
    axes[0].legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def fmt(x: float) -> str:
    return "∞" if math.isinf(x) else f"{x:g}"


def write_report(build, optimal, paper, repeats: int) -> None:
    lines = [
        "# Query trees: benchmark",
        "",
        f"Generated by `benchmarks/query_trees.py` on {datetime.date.today()} "
        f"({platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}). "
        "Times are in-process `QueryTree.fit` seconds (median of 3), including validation.",
        "",
        "## 1. Build time on random question banks",
        "",
        "Random 0/1 matrices (density 0.5, distinct rows), Zipf(β = 1) prior; groups: 20 random.",
        "",
        "| objects × queries | criterion | λ | seconds | nodes | L_λ | entropy bound |",
        "|---|---|---|---:|---:|---:|---:|",
    ]
    for r in build:
        lines.append(
            f"| {r['objects']} × {r['queries']} | {r['criterion']} | {fmt(r['cost_base'])} | "
            f"{r['seconds']:.3f} | {r['nodes']} | {r['cost']:.4f} | {r['lower_bound']:.4f} |"
        )
    lines += [
        "",
        "## 2. Greedy against the exact optimum",
        "",
        "Random 12-object × 16-query problems (density 0.35, distinct rows, "
        "Zipf(1) prior in random order); means over the instances.",
        "",
        "| λ | GBS | λ-GBS (auto) | optimum | entropy bound | λ-GBS optimal on "
        "| worst λ-GBS excess |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for r in optimal:
        lines.append(
            f"| {fmt(r['cost_base'])} | {r['gbs']:.4f} | {r['lambda_gbs']:.4f} | "
            f"{r['optimal']:.4f} | {r['entropy_bound']:.4f} | "
            f"{100 * r['lambda_gbs_optimal_share']:.0f}% | {r['worst_lambda_gbs_excess']:.4f} |"
        )
    lines += [
        "",
        "## 3. The paper's experiment (synthetic active learning)",
        "",
        f"100 threshold classifiers × 676 grid queries (spec §4.1 generator), {repeats} runs "
        "with random tie-breaking; mean L_λ under the true prior. In brackets: the spec's "
        "independent prototype (§4.2), itself a 100-run mean.",
        "",
        "![λ-GBS vs GBS vs uniform-prior GBS](query_trees.png)",
        "",
        "| β | λ | GBS | GBS, uniform prior | λ-GBS | λ-GBS best? |",
        "|---|---|---:|---:|---:|---|",
    ]
    for r in paper:
        spec = r["spec"] or (math.nan,) * 3
        best = r["lambda_gbs"] <= min(r["gbs"], r["gbs_uniform"]) + 1e-9
        lines.append(
            f"| {r['beta']:g} | {fmt(r['cost_base'])} | {r['gbs']:.4f} ({spec[0]:.4f}) | "
            f"{r['gbs_uniform']:.4f} ({spec[1]:.4f}) | {r['lambda_gbs']:.4f} ({spec[2]:.4f}) | "
            f"{'yes' if best else 'no'} |"
        )
    (RESULTS / "query_trees.md").write_text("\n".join(lines) + "\n", encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes, few repetitions")
    args = parser.parse_args()
    RESULTS.mkdir(exist_ok=True)
    sizes = [(1000, 100), (1000, 1000), (10000, 100), (10000, 1000)]
    if args.quick:
        sizes = sizes[:2]
    build = build_times(sizes)
    optimal = greedy_vs_optimal(10 if args.quick else 100)
    repeats = 5 if args.quick else 100
    paper = paper_experiment(repeats)
    write_report(build, optimal, paper, repeats)
    plot(paper, RESULTS / "query_trees.png")
    with open(RESULTS / "query_trees.json", "w", encoding="utf-8") as fh:
        json.dump({"build": build, "optimal": optimal, "paper": paper}, fh, indent=1, default=str)
    print(f"wrote {RESULTS / 'query_trees.md'}")


if __name__ == "__main__":
    main()
