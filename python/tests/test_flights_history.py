"""History on a real timestamped stream: scripts/flights-history.py checks every day of the
2001 US flights, as a sliding window of routes, against a store of that day alone."""

import os
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]


def test_every_day_of_the_flights_reads_as_a_store_of_that_day_alone(tmp_path):
    binary = os.environ.get("EVOGRAPH_BIN", str(ROOT / "target" / "debug" / "evograph"))
    # Downloaded once from the npm registry (vega-datasets), kept beside the build.
    parquet = ROOT / "target" / "data" / "flights-3m.parquet"
    script = ROOT / "scripts" / "flights-history.py"
    args = ["--bin", binary, "--parquet", str(parquet), "--work", str(tmp_path), "--window", "1"]
    r = subprocess.run([sys.executable, str(script), *args], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "182 days match, 0 differ" in r.stdout, r.stdout
