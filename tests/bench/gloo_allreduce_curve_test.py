#!/usr/bin/env python3
"""bench/ddp/gloo_allreduce_curve.py on 2 local ranks: one [MB, ms] pair per size asked for,
each time positive (the sums are checked by the script itself), and a bad size refused."""
import json
import os
import subprocess
import sys

script = os.path.join(os.path.dirname(__file__), "..", "..", "bench", "ddp",
                      "gloo_allreduce_curve.py")
python = "/usr/bin/python3"  # Debian's python3-torch
env = dict(os.environ, MASTER_ADDR="127.0.0.1", MASTER_PORT=str(29600 + os.getpid() % 300),
           OMP_NUM_THREADS="1")
run = subprocess.run(["mpirun", "--allow-run-as-root", "--oversubscribe", "-np", "2",
                      python, script, "--sizes-mb", "0.01,0.5", "--calls", "3"],
                     env=env, capture_output=True, text=True, timeout=300)
assert run.returncode == 0, run.stderr
lines = [l for l in run.stdout.splitlines() if l.startswith("[")]
assert len(lines) == 1, run.stdout  # rank 0 alone prints
curve = json.loads(lines[0])
assert [c[0] for c in curve] == [0.01, 0.5], curve
assert all(c[1] > 0 for c in curve), curve

bad = subprocess.run([python, script, "--sizes-mb", "0,x"], capture_output=True,
                     text=True, timeout=60)
assert bad.returncode == 2, bad
assert len(bad.stderr.strip().splitlines()) == 1 and "--sizes-mb" in bad.stderr, bad.stderr
print("ok")
