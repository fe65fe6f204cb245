"""Standing kernels on a real timestamped stream: scripts/flights-standing.py keeps daily
PageRank and components of the 2001 US flights current, and checks every day against a
recompute."""

import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]


def test_every_day_of_the_flights_is_kept_right(tmp_path):
    # Downloaded once from the npm registry (vega-datasets), kept beside the build.
    parquet = ROOT / "target" / "data" / "flights-3m.parquet"
    script = ROOT / "scripts" / "flights-standing.py"
    args = ["--parquet", str(parquet), "--work", str(tmp_path), "--window", "7"]
    r = subprocess.run([sys.executable, str(script), *args], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "days right: 116 of 116" in r.stdout, r.stdout
