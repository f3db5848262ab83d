#!/usr/bin/env bash
# The whole test suite, as the README's second command runs it: quality gates (ruff, rustfmt,
# clippy), the Rust tests, then the Python tests and the docstring examples. Stops at the first
# failure with a non-zero exit code. Extra arguments are passed to pytest (e.g. `-m slow`).
set -euo pipefail
cd "$(dirname "$0")/.."

step() { printf '\n== %s\n' "$*"; }

step "ruff (lint + format)"
ruff check python tests benchmarks scripts
ruff format --check python tests benchmarks scripts

step "rustfmt"
cargo fmt --all -- --check

step "clippy"
cargo clippy --workspace --all-targets --locked -- -D warnings

step "Rust tests"
# The binding crate is a Python extension module and is tested from Python.
if cargo nextest --version >/dev/null 2>&1; then
    cargo nextest run -p optitree-core --locked --no-fail-fast
else
    cargo test -p optitree-core --locked
fi

step "Python tests and docstring examples"
python -m pytest tests python/optitree docs --doctest-modules --doctest-glob="*.md" -q "$@"
