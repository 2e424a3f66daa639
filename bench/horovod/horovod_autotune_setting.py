#!/usr/bin/env python3
"""The setting Horovod's autotune log ends on, as an autotune config file.

Usage: horovod_autotune_setting.py LOG OUT.yaml

LOG is the CSV Horovod writes with HOROVOD_AUTOTUNE_LOG (horovod/common/parameter_manager.cc:
header hierarchical_allreduce,hierarchical_allgather,torus_allreduce,cache_enabled,
cycle_time_ms,tensor_fusion_threshold,score; the threshold in MB, the score in bytes/us).
When Horovod's tuning ended, its last row is the best setting (its score repeats the best
earlier row's): that row is taken. When the job stopped before (no such row), the row with
the highest score is taken: the best Horovod had seen. A log without rows means the job ended
during Horovod's warm-up samples, whose scores parameter_manager.cc ignores without changing a
parameter: the job ran on Horovod's initial values, its defaults when no knob is in the
environment (operations.cc: 128 MB, 1 ms, the cache on, hierarchical off), and those are
taken. Prints one line saying which, and writes OUT.yaml (params: the threshold, the cycle
time, cache_capacity 1024 when the cache was enabled, else 0, and the hierarchical flags)."""
import csv
import sys

# Horovod 0.28's initial values with no knob in the environment (horovod/common/operations.cc),
# in its log's columns.
HOROVOD_DEFAULTS = {"hierarchical_allreduce": "0", "hierarchical_allgather": "0",
                    "cache_enabled": "1", "cycle_time_ms": "1", "tensor_fusion_threshold": "128"}


def main():
    if len(sys.argv) != 3:
        print(__doc__.splitlines()[2], file=sys.stderr)
        return 2
    path, out = sys.argv[1], sys.argv[2]
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f, skipinitialspace=True))
    if not rows:
        chosen = HOROVOD_DEFAULTS
        how = ("no rows: the job ended in Horovod's warm-up samples (a row is logged per tuned "
               "sample after them), so it ran on Horovod's defaults")
    else:
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
    score = f"score {float(chosen['score']):g} bytes/us" if rows else "no score"
    print(f"# horovod autotune: {how}: "
          + ", ".join(f"{k}={v}" for k, v in knobs.items())
          + f", {score} ({len(rows)} rows)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
