#!/usr/bin/env python3
"""bench/horovod/horovod_autotune_setting.py on hand-made Horovod autotune logs.

Columns in the order horovod/common/parameter_manager.cc writes them. Three logs:
- tuning ended: Horovod's last row repeats the best earlier row's score (4.0 of row 2), so the
  last row is the setting: 8 MB, 2.5 ms, cache on, hierarchical allgather on;
- tuning not ended: no such repeat, so the best-scored row (row 2: 3 ms, 16 MB, cache off);
- no rows (the job ended in Horovod's warm-up samples): Horovod's defaults, 128 MB, 1 ms,
  the cache on (capacity 1024), hierarchical off.
Usage: horovod_autotune_setting_test.py"""
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "..", "..", "bench", "horovod", "horovod_autotune_setting.py")
HEADER = ("hierarchical_allreduce,hierarchical_allgather,torus_allreduce,cache_enabled,"
          "cycle_time_ms,tensor_fusion_threshold,score\n")


def setting(d, name, rows):
    log, out = os.path.join(d, f"{name}.csv"), os.path.join(d, f"{name}.yaml")
    with open(log, "w") as f:
        f.write(HEADER + "".join(r + "\n" for r in rows))
    subprocess.run([sys.executable, SCRIPT, log, out], check=True, capture_output=True)
    params = {}
    with open(out) as f:
        for line in f:
            if line.startswith("  "):
                key, value = line.strip().split(": ")
                params[key] = value
    return params


def main():
    cases = {
        "ended": (["0,0,0,1,1,64,3.0", "0,1,0,1,2.5,8,4.0", "0,0,0,0,5,32,3.5",
                   "0,1,0,1,2.5,8,4.0"],
                  {"fusion_threshold_mb": "8.0", "cycle_time_ms": "2.5", "cache_capacity": "1024",
                   "hierarchical_allreduce": "false", "hierarchical_allgather": "true"}),
        "not_ended": (["0,0,0,1,1,64,3.0", "0,0,0,0,3,16,5.0", "0,0,0,1,7,2,4.5"],
                      {"fusion_threshold_mb": "16.0", "cycle_time_ms": "3.0",
                       "cache_capacity": "0", "hierarchical_allreduce": "false",
                       "hierarchical_allgather": "false"}),
        "no_rows": ([], {"fusion_threshold_mb": "128.0", "cycle_time_ms": "1.0",
                         "cache_capacity": "1024", "hierarchical_allreduce": "false",
                         "hierarchical_allgather": "false"}),
    }
    failures = []
    with tempfile.TemporaryDirectory() as d:
        for name, (rows, want) in cases.items():
            got = setting(d, name, rows)
            if got != want:
                failures.append(f"{name}: got {got}, want {want}")
    for f in failures:
        print(f"FAIL {f}")
    print("OK" if not failures else f"{len(failures)} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
