"""Each rank's gradient-ready times of a real Horovod job, for `autotune import
--horovod-timeline FILE --ready-log DIR`.

Horovod's timeline is written by rank 0 alone and sees a tensor only when its background
thread does: a rank's offer reaches it at the next cycle that rank runs, and with the response
cache on (Horovod's default) it shows no rank's own offer at all, only the first cycle in which
any rank had offered the tensor and the cycle in which every rank had. While a long collective
runs no cycle runs, so a tensor offered during it reads as offered at its end. This recorder
gives the import what the timeline cannot: when each rank's backward pass produced each
gradient.

    from autotune_torch import horovod_ready
    ready = horovod_ready.Recorder(model.named_parameters(), "ready")   # after hvd.init()
    for batch in data:
        ready.step()          # each step's start, before the forward pass
        ...
    # written at exit (or ready.close()): ready/rank<R>.json

A hook on each parameter takes the wall clock (CLOCK_REALTIME, the clock of the timeline's
start_time_since_epoch_in_micros) when its gradient is computed, just before Horovod's own
hook offers it. Each file:
  {"format": "autotune-horovod-ready", "version": 1, "rank", "size", "hostname",
   "clock": "CLOCK_REALTIME",
   "tensors": [the timeline's names: "allreduce." + the parameter's name],
   "steps": [{"start_ns", "ready_us": [per tensor, from start_ns; null where none]}]}
Steps are every step() from the first, warm-up included, as the timeline holds them."""
import atexit
import json
import os
import socket
import time


class Recorder:
    def __init__(self, named_parameters, directory, rank=None, size=None):
        if rank is None or size is None:
            import horovod.torch as hvd
            rank, size = hvd.rank(), hvd.size()
        self._rank, self._size, self._directory = rank, size, directory
        self._names = []
        self._steps = []
        self._closed = False
        for name, p in named_parameters:
            if not p.requires_grad:
                continue
            index = len(self._names)
            self._names.append("allreduce." + name)
            p.register_hook(self._hook(index))
        atexit.register(self.close)

    def _hook(self, index):
        def record(grad):
            if self._steps:
                ready = self._steps[-1]["ready_us"]
                if ready[index] is None:
                    ready[index] = (time.time_ns() - self._steps[-1]["start_ns"]) / 1e3
            return grad
        return record

    def step(self):
        """Marks a step's start: call it once per step, before the forward pass."""
        self._steps.append({"start_ns": time.time_ns(), "ready_us": [None] * len(self._names)})

    def close(self):
        if self._closed:
            return
        self._closed = True
        os.makedirs(self._directory, exist_ok=True)
        path = os.path.join(self._directory, f"rank{self._rank}.json")
        with open(path + ".part", "w") as f:
            json.dump({"format": "autotune-horovod-ready", "version": 1, "rank": self._rank,
                       "size": self._size, "hostname": socket.gethostname(),
                       "clock": "CLOCK_REALTIME", "tensors": self._names,
                       "steps": self._steps}, f)
        os.replace(path + ".part", path)
