#!/usr/bin/env bash
# The whole test suite, on a fresh machine with a Rust toolchain and Python 3.9+:
#  1. the Rust workspace (library and command line: property, crash, corruption,
#     bad-input and Graphalytics tests),
#  2. the Python module built from source (pip + maturin, no prebuilt downloads of ours)
#     into the virtualenv .venv, and its pytest suite, which compares it with the
#     command line, SciPy and NetworkX.
# Arguments go to `cargo test` (e.g. a test name filter).
set -euo pipefail
cd "$(dirname "$0")/.."

cargo test --locked "$@"

if [ ! -x .venv/bin/python ]; then
  python3 -m venv .venv
fi
.venv/bin/python -m pip install -q --upgrade pip
# The module and its test dependencies (numpy, scipy, networkx, pyarrow, pytest). The
# module builds with cargo's dev profile, as the tests above did, so that it reuses their
# compiled dependencies instead of building everything again optimised (`pip install
# ./python` alone builds the release a user wants).
MATURIN_PEP517_ARGS="${MATURIN_PEP517_ARGS:---profile dev}" \
  .venv/bin/python -m pip install -q "./python[test]"
# pytest compares with the binary `cargo test` just built.
EVOGRAPH_BIN="$PWD/target/debug/evograph" .venv/bin/python -m pytest -q python/tests
