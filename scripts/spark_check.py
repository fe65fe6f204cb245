"""Moving a store to Spark: export it as Parquet, load it in pyspark, compute connected
components and PageRank there, and check both against evograph's own results.

    python scripts/spark_check.py [--evograph target/debug/evograph] [--graph NAME ...]

For each LDBC Graphalytics graph named (default: the two example graphs and the
test-wcc/test-pr ones), the script ingests it with `evograph ingest`, runs
`evograph export STORE --format parquet OUT --kernels pr,wcc`, then in Spark local mode
reads OUT/vertices and OUT/edges and computes

- connected components by min-label propagation with DataFrame joins (undirected view of
  the edges), compared with evograph's `wcc` column as partitions;
- PageRank with the Graphalytics definition (fixed iterations, sinks' rank spread over
  every vertex), compared with evograph's `pr` column to 1e-6 relative (evograph rounds
  PageRank contributions to float32, within 1e-6 of float64; Spark sums in float64).

GraphFrames would do both in two calls, but its jar is not reachable from this
machine's package mirror (Maven Central answers 404 for io.graphframes, and
repos.spark-packages.org does not resolve), so the check uses plain DataFrames, which
need nothing beyond pyspark. The README shows the GraphFrames form for a cluster.

The export writes ids and degrees as `int64` when every id fits (these graphs' do), so
Spark reads them as LONG with no cast; `load` checks that it does.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DEFAULT_GRAPHS = ["example-directed", "example-undirected", "test-wcc-directed", "test-wcc-undirected",
                  "test-pr-directed", "test-pr-undirected"]


def graphalytics() -> Path:
    for base in [REPO, *REPO.parents]:
        p = base / "shared" / "data" / "graphalytics"
        if p.is_dir():
            return p
    sys.exit("spark_check: shared/data/graphalytics not found beside the repository")


def properties(d: Path) -> dict:
    out = {}
    for line in (d / f"{d.name}.properties").read_text().splitlines():
        if "=" in line and not line.lstrip().startswith("#"):
            k, v = line.split("=", 1)
            out[k.strip().removeprefix(f"graph.{d.name}.")] = v.strip()
    return out


def run(binary: str, *args) -> str:
    r = subprocess.run([binary, *map(str, args)], capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"spark_check: evograph {' '.join(map(str, args))}: {r.stderr.strip()}")
    return r.stdout


def load(spark, out: Path):
    """The exported tables, whose ids Spark must read as LONG as they are."""
    v = spark.read.parquet(str(out / "vertices"))
    e = spark.read.parquet(str(out / "edges"))
    types = dict(v.dtypes) | dict(e.dtypes)
    for c in ("id", "out_degree", "in_degree", "src", "dst"):
        if types[c] != "bigint":
            sys.exit(f"spark_check: column {c} reads as {types[c]} in Spark, not bigint (long)")
    return v, e


def components(v, e):
    """Min-label propagation over the undirected edges until no label changes."""
    from pyspark.sql import functions as F

    both = e.select("src", "dst").union(e.select(F.col("dst").alias("src"), F.col("src").alias("dst")))
    both = both.cache()
    labels = v.select("id", F.col("id").alias("label")).cache()
    rounds = 0
    while True:
        rounds += 1
        incoming = (both.join(labels, both.src == labels.id)
                    .groupBy(both.dst.alias("id")).agg(F.min("label").alias("m")))
        new = (labels.join(incoming, "id", "left")
               .select("id", F.least("label", F.coalesce("m", "label")).alias("label"))
               .localCheckpoint())
        changed = new.join(labels.withColumnRenamed("label", "old"), "id").where("label != old").count()
        labels = new
        if changed == 0:
            return labels, rounds


def pagerank(v, e, iterations: int, damping: float):
    """Graphalytics PageRank: fixed iterations, sinks' rank spread over all vertices."""
    from pyspark.sql import functions as F

    n = v.count()
    directed_e = e.select("src", "dst")
    deg = v.select("id", "out_degree").cache()
    rank = v.select("id", F.lit(1.0 / n).alias("rank")).cache()
    for _ in range(iterations):
        with_deg = rank.join(deg, "id")
        sink = with_deg.where("out_degree = 0").agg(F.sum("rank")).first()[0] or 0.0
        contrib = with_deg.where("out_degree > 0").select("id", (F.col("rank") / F.col("out_degree")).alias("c"))
        sums = (directed_e.join(contrib, directed_e.src == contrib.id)
                .groupBy(directed_e.dst.alias("id")).agg(F.sum("c").alias("s")))
        base = (1.0 - damping) / n + damping * sink / n
        rank = (v.select("id").join(sums, "id", "left")
                .select("id", (F.lit(base) + damping * F.coalesce("s", F.lit(0.0))).alias("rank"))
                .localCheckpoint())
    return rank


def undirected_edges(e, undirected: bool):
    """An undirected export lists each edge once: PageRank reads both directions."""
    from pyspark.sql import functions as F

    if not undirected:
        return e
    rev = e.select(F.col("dst").alias("src"), F.col("src").alias("dst")).where("src != dst")
    return e.select("src", "dst").union(rev)


def check_graph(spark, binary: str, d: Path, work: Path) -> dict:
    p = properties(d)
    store, out = work / f"{d.name}.store", work / f"{d.name}.parquet"
    run(binary, "ingest", store, d / f"{d.name}.properties", "--format", "ldbc")
    iterations = int(p.get("pr.num-iterations", 10))
    damping = float(p.get("pr.damping-factor", 0.85))
    # The export's pr column uses `evograph run`'s defaults; PageRank is re-run here with
    # the graph's own parameters for the comparison.
    run(binary, "export", store, "--format", "parquet", out, "--kernels", "wcc")
    ours_pr = {}
    for line in run(binary, "run", store, "pr", "--iterations", iterations, "--damping", damping).splitlines():
        a, b = line.split()
        ours_pr[int(a)] = float(b)
    meta = json.loads((out / "evograph.json").read_text())
    t = time.perf_counter()
    v, e = load(spark, out)
    labels, rounds = components(v, e)
    spark_cc = {r["id"]: r["label"] for r in labels.collect()}
    ours_cc = {r["id"]: r["wcc"] for r in v.select("id", "wcc").collect()}
    pairs = {(spark_cc[i], ours_cc[i]) for i in ours_cc}
    ok_cc = (set(spark_cc) == set(ours_cc)
             and len(pairs) == len(set(spark_cc.values())) == len(set(ours_cc.values())))
    ranks = pagerank(v, undirected_edges(e, not meta["directed"]), iterations, damping)
    spark_pr = {r["id"]: r["rank"] for r in ranks.collect()}
    worst = max(abs(spark_pr[i] - ours_pr[i]) / abs(ours_pr[i]) for i in ours_pr)
    ok_pr = set(spark_pr) == set(ours_pr) and worst <= 1e-6
    return {"graph": d.name, "vertices": meta["vertices"], "edges": meta["edges"],
            "components": len(set(ours_cc.values())), "cc_rounds": rounds, "cc_ok": ok_cc,
            "pr_iterations": iterations, "pr_max_rel_diff": worst, "pr_ok": ok_pr,
            "spark_seconds": time.perf_counter() - t}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--evograph", default=str(REPO / "target" / "debug" / "evograph"))
    ap.add_argument("--graph", action="append", help="Graphalytics graph name (repeatable)")
    a = ap.parse_args()
    from pyspark.sql import SparkSession

    t0 = time.perf_counter()
    spark = (SparkSession.builder.master("local[2]").appName("evograph-spark-check")
             .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
             .config("spark.sql.shuffle.partitions", "4")
             .getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    results = []
    with tempfile.TemporaryDirectory(prefix="evograph-spark-") as work:
        for name in a.graph or DEFAULT_GRAPHS:
            r = check_graph(spark, a.evograph, graphalytics() / name, Path(work))
            results.append(r)
            print(json.dumps(r), flush=True)
    spark.stop()
    total = time.perf_counter() - t0
    bad = [r["graph"] for r in results if not (r["cc_ok"] and r["pr_ok"])]
    print(f"spark_check: {len(results)} graphs, {total:.1f} s in all (Spark start included); "
          + ("all match evograph" if not bad else f"MISMATCH on {', '.join(bad)}"))
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
