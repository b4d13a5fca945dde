"""A Spark driver run as its own process by the server tests: appends batches to a fieldshift table
through ``df.write.format("fieldshift")`` on the given master, one job and one commit per batch.
Prints one line per commit, like tests/table/writer_process.py, so the parent knows what landed."""

from __future__ import annotations

import argparse
import os

BATCH_ROWS = 500


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("master")
    ap.add_argument("location")
    ap.add_argument("--catalog")
    ap.add_argument("--table")
    ap.add_argument("--writer", type=int, default=100)
    ap.add_argument("--batches", type=int, default=4)
    args = ap.parse_args()
    from pyspark.sql import functions as F

    from fieldshift.spark import session

    # executors open object-store locations from the URI: they need the S3 endpoint and credentials, which
    # spark.executorEnv.* hands them (as a real cluster's submit would)
    aws = {f"spark.executorEnv.{k}": v for k, v in os.environ.items() if k.startswith("AWS_")}
    spark = session(master=args.master, **{"spark.executor.memory": "512m", "spark.driver.memory": "512m",
                                           "spark.driver.host": "127.0.0.1", "spark.default.parallelism": "2",
                                           "spark.sql.shuffle.partitions": "2", **aws})
    for b in range(args.batches):
        df = spark.range(0, BATCH_ROWS, 1, 2).select(F.lit(args.writer).cast("int").alias("writer"),
                                                     F.lit(b).cast("int").alias("batch"), F.col("id").alias("value"))
        writer = df.write.format("fieldshift").mode("append")
        if args.catalog:
            writer = writer.option("catalog", args.catalog).option("table", args.table)
        writer.save(args.location)
        print(f"appended {args.writer} {b}", flush=True)
    spark.stop()


if __name__ == "__main__":
    main()
