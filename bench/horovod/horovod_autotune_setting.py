#!/usr/bin/env python3
"""The setting Horovod's autotune log ends on, as an autotune config file.

Usage: horovod_autotune_setting.py LOG OUT.yaml

LOG is the CSV Horovod writes with HOROVOD_AUTOTUNE_LOG (horovod/common/parameter_manager.cc:
header hierarchical_allreduce,hierarchical_allgather,torus_allreduce,cache_enabled,
cycle_time_ms,tensor_fusion_threshold,score; the threshold in MB, the score in bytes/us).
When Horovod's tuning ended, its last row is the best setting (its score repeats the best
earlier row's): that row is taken. When the job stopped before (no such row), the row with
the highest score is taken: the best Horovod had seen. Prints one line saying which, and
writes OUT.yaml (params: the threshold, the cycle time, cache_capacity 1024 when the cache
was enabled, else 0, and the hierarchical flags)."""
import csv
import sys


def main():
    if len(sys.argv) != 3:
        print(__doc__.splitlines()[2], file=sys.stderr)
        return 2
    path, out = sys.argv[1], sys.argv[2]
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f, skipinitialspace=True))
    if not rows:
        print(f"horovod_autotune_setting.py: {path}: no rows (Horovod logs a row per tuned "
              "sample, after its warm-up samples: the job was too short)", file=sys.stderr)
        return 1
    scores = [float(r["score"]) for r in rows]
    ended = len(rows) >= 2 and scores[-1] == max(scores[:-1])
    chosen = rows[-1] if ended else rows[scores.index(max(scores))]
    how = ("Horovod's tuning ended: its best row (the last)" if ended else
           f"Horovod's tuning had not ended: its best-scored row of {len(rows)}")
    knobs = {
        "fusion_threshold_mb": float(chosen["tensor_fusion_threshold"]),
        "cycle_time_ms": float(chosen["cycle_time_ms"]),
        "cache_capacity": 1024 if int(float(chosen["cache_enabled"])) else 0,
        "hierarchical_allreduce": bool(int(float(chosen["hierarchical_allreduce"]))),
        "hierarchical_allgather": bool(int(float(chosen["hierarchical_allgather"]))),
    }
    with open(out, "w") as f:
        f.write("params:\n")
        for key, value in knobs.items():
            f.write(f"  {key}: {str(value).lower() if isinstance(value, bool) else value:}\n")
    print(f"# horovod autotune: {how}: "
          + ", ".join(f"{k}={v}" for k, v in knobs.items())
          + f", score {float(chosen['score']):g} bytes/us ({len(rows)} rows)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
