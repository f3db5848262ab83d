#!/usr/bin/env bash
# Create the benchmark virtualenv benchmarks/.venv: optitree from this checkout (editable, which
# compiles the Rust extension in release mode, about 1-2 minutes) plus the peer solvers of
# benchmarks/requirements-peers.txt. The venv is clean (no system site-packages), so the peers
# and their dependencies never leak into the environment optitree is developed or tested in.
#
# Usage (from anywhere):  bash benchmarks/setup_peers.sh
# Environment:            PYTHON=python3.11 to choose the interpreter (default: python3)
#                         RECREATE=1 to delete and rebuild an existing benchmarks/.venv
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/.." && pwd)"
venv="$here/.venv"
python="${PYTHON:-python3}"

if [[ -d "$venv" && "${RECREATE:-0}" == "1" ]]; then
    rm -rf "$venv"
fi
if [[ ! -x "$venv/bin/python" ]]; then
    "$python" -m venv "$venv"
fi
cd "$repo"
"$venv/bin/python" -m pip install -e . -r benchmarks/requirements-peers.txt
"$venv/bin/python" - <<'PY'
import importlib.metadata as md

for name in ("optitree", "imodels", "pystreed", "gosdt", "pydl8.5", "numba", "scikit-learn", "numpy"):
    try:
        print(f"{name:>14} {md.version(name)}")
    except md.PackageNotFoundError:
        print(f"{name:>14} MISSING")
PY
echo "benchmark venv ready: $venv/bin/python benchmarks/branches_peers.py --help"
