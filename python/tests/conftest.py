"""Shared fixtures: the `evograph` binary, the Graphalytics graphs, fresh store paths."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def _binary() -> str:
    """The command-line binary the tests compare with: $EVOGRAPH_BIN, else the workspace's
    build (the README's test command builds it first)."""
    env = os.environ.get("EVOGRAPH_BIN")
    if env:
        return env
    for profile in ("release", "debug"):
        p = REPO / "target" / profile / "evograph"
        if p.is_file():
            return str(p)
    found = shutil.which("evograph")
    if found:
        return found
    pytest.fail("no evograph binary: run `cargo build` first or set EVOGRAPH_BIN")


@pytest.fixture(scope="session")
def evograph_bin() -> str:
    return _binary()


@pytest.fixture(scope="session")
def cli(evograph_bin):
    """Runs the binary; returns stdout, failing the test with stderr on a non-zero exit."""

    def run(*args: str, check: bool = True) -> subprocess.CompletedProcess:
        r = subprocess.run([evograph_bin, *map(str, args)], capture_output=True, text=True)
        if check and r.returncode != 0:
            pytest.fail(f"evograph {' '.join(map(str, args))} exited {r.returncode}: {r.stderr}")
        return r

    return run


def graphalytics_dir() -> Path | None:
    """`shared/data/graphalytics` beside the workspace; required when CI=true."""
    for base in [REPO, *REPO.parents]:
        p = base / "shared" / "data" / "graphalytics"
        if p.is_dir():
            return p
    return None


@pytest.fixture(scope="session")
def graphalytics() -> Path:
    p = graphalytics_dir()
    if p is None:
        if os.environ.get("CI") == "true":
            pytest.fail("shared/data/graphalytics is missing and CI=true")
        pytest.skip("shared/data/graphalytics not found")
    return p


@pytest.fixture
def store(tmp_path) -> Path:
    """A path for a new store (nothing there yet)."""
    return tmp_path / "store"
