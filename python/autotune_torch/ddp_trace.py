"""A trace of a real PyTorch DDP job, for `autotune import --ddp-trace DIR`.

attach(ddp, directory, settings) is called by autotune's sitecustomize right after a
DistributedDataParallel is built when AUTOTUNE_DDP_TRACE=DIR is set. From then on every rank
records, per step (a step starts at each forward call of the module and ends at the next):
the forward's end (taken as the backward's start), each parameter's gradient-ready time
(a hook on the parameter), and each bucket's allreduce (a communication hook that does what
DDP's default one does: divide the bucket by the world size, allreduce it asynchronously)
with its start, its completion and its parameters. Times are microseconds from the step's
start on the host's monotonic clock (CLOCK_MONOTONIC); each step also gives that start itself
("start_ns"), and the file the clock's name and the kernel's boot id, so an import can put every
rank on rank 0's clock where the ranks share one kernel (one machine, or the network
namespaces of tools/cluster.sh). For ranks on other machines, attach measures each rank's
clock offset from rank 0's (rank 0 and each rank in turn exchange their clock's reading
through the process group, 8 round trips; the offset is the rank's reading less the middle
of rank 0's round trip, from the shortest trip, whose half bounds its error) and writes it.
At exit each rank writes DIR/rank<R>.json:
  {"format": "autotune-ddp-trace", "version": 2, "rank", "world_size", "hostname",
   "clock": {"name": "CLOCK_MONOTONIC", "boot_id", "offset_to_rank0_ns",
             "offset_error_ns"} (version 2; the offset pair absent where it was not measured),
   "backend" (the process group's: "gloo", "nccl", ...), "device" ("cpu", "cuda"),
   "bucket_cap_mb", "first_bucket_mb", "gradient_as_bucket_view",
   "parameters": [{"name", "shape", "dtype"}] (registration order),
   "steps": [{"start_ns" (version 2), "forward_end_us", "end_us",
              "ready_us": [per parameter, null if none],
              "buckets": [{"index", "parameters": [...], "start_us", "end_us"}]}]}
The last forward call opens a step that never ends: it is not written."""
import atexit
import json
import os
import socket
import time


def _now_ns():
    return time.clock_gettime_ns(time.CLOCK_MONOTONIC)


def _now_us():
    return _now_ns() / 1e3


def _boot_id():
    """The running kernel's boot id: equal for every process of one machine (its network
    namespaces too), different on another machine or after a reboot; "" if unreadable."""
    try:
        with open("/proc/sys/kernel/random/boot_id") as f:
            return f.read().strip()
    except OSError:
        return ""


_CLOCK_ROUND_TRIPS = 8


def _clock_offset(dist, rank, world):
    """(this rank's clock less rank 0's, the bound on that estimate's error), in ns; every rank
    must call it at the same point (it exchanges readings through the process group: a gloo
    group of its own when the job's backend is another, as NCCL sends only device tensors).
    None where it cannot be measured. Its cost is paid once, when DDP is built: (world - 1) x 8
    round trips one after another (on tools/cluster.sh's 4 ranks, 43-137 us each)."""
    import torch
    try:
        group = None if str(dist.get_backend()) == "gloo" else dist.new_group(backend="gloo")
        reading = torch.zeros(1, dtype=torch.int64)
        found = torch.zeros(world, 2, dtype=torch.int64)
        for peer in range(1, world):
            best = None
            for _ in range(_CLOCK_ROUND_TRIPS):
                if rank == 0:
                    sent = _now_ns()
                    dist.send(torch.tensor([sent], dtype=torch.int64), dst=peer, group=group)
                    dist.recv(reading, src=peer, group=group)
                    back = _now_ns()
                    trip = back - sent
                    if best is None or trip < best[1]:
                        best = (int(reading[0]) - (sent + back) // 2, trip)
                elif rank == peer:
                    dist.recv(reading, src=0, group=group)
                    dist.send(torch.tensor([_now_ns()], dtype=torch.int64), dst=0, group=group)
            if rank == 0:
                found[peer, 0], found[peer, 1] = best[0], (best[1] + 1) // 2
        dist.broadcast(found, src=0, group=group)
        return int(found[rank, 0]), int(found[rank, 1])
    except (RuntimeError, ValueError):
        return None


class _Recorder:
    def __init__(self, ddp, directory, settings):
        import torch.distributed as dist
        self.dist = dist
        self.directory = directory
        self.settings = settings
        self.rank = dist.get_rank()
        self.world = dist.get_world_size()
        self.params = [(n, p) for n, p in ddp.module.named_parameters() if p.requires_grad]
        self.backend = str(dist.get_backend())
        self.device = self.params[0][1].device.type if self.params else "cpu"
        self.index = {id(p): i for i, (_, p) in enumerate(self.params)}
        self.steps = []
        self.current = None
        self.clock = {"name": "CLOCK_MONOTONIC", "boot_id": _boot_id()}
        offset = _clock_offset(dist, self.rank, self.world)
        if offset is not None:
            self.clock["offset_to_rank0_ns"], self.clock["offset_error_ns"] = offset
        for i, (_, p) in enumerate(self.params):
            p.register_hook(self._ready_hook(i))
        ddp.register_forward_pre_hook(self._forward_start)
        ddp.register_forward_hook(self._forward_end)
        ddp.register_comm_hook(None, self._allreduce)
        atexit.register(self.write)

    def _forward_start(self, module, inputs):
        now_ns = _now_ns()
        now = now_ns / 1e3
        if self.current is not None:
            self.current["end_us"] = now - self.current["start"]
            self.steps.append(self.current)
        self.current = {"start": now, "start_ns": now_ns, "forward_end_us": None, "end_us": None,
                        "ready_us": [None] * len(self.params), "buckets": []}

    def _forward_end(self, module, inputs, output):
        if self.current is not None:
            self.current["forward_end_us"] = _now_us() - self.current["start"]

    def _ready_hook(self, i):
        def hook(grad):
            if self.current is not None:
                self.current["ready_us"][i] = _now_us() - self.current["start"]
            return grad
        return hook

    def _allreduce(self, state, bucket):
        step = self.current
        record = {"index": bucket.index(),
                  "parameters": [self.index.get(id(p), -1) for p in bucket.parameters()],
                  "start_us": _now_us() - step["start"], "end_us": None}
        step["buckets"].append(record)
        tensor = bucket.buffer()
        tensor.div_(self.world)
        future = self.dist.all_reduce(tensor, async_op=True).get_future()

        def done(fut):
            record["end_us"] = _now_us() - step["start"]
            return fut.value()[0]
        return future.then(done)

    def write(self):
        os.makedirs(self.directory, exist_ok=True)
        steps = [{k: v for k, v in s.items() if k != "start"} for s in self.steps]
        out = {"format": "autotune-ddp-trace", "version": 2, "rank": self.rank,
               "clock": self.clock,
               "backend": self.backend, "device": self.device,
               "world_size": self.world, "hostname": socket.gethostname(),
               "parameters": [{"name": n, "shape": list(p.shape),
                               "dtype": str(p.dtype).replace("torch.", "")}
                              for n, p in self.params],
               "steps": steps, **self.settings}
        path = os.path.join(self.directory, f"rank{self.rank}.json")
        with open(path + ".tmp", "w") as f:
            json.dump(out, f)
        os.replace(path + ".tmp", path)


def attach(ddp, directory, settings):
    """Records ddp's steps on this rank into directory/rank<R>.json at exit."""
    ddp._autotune_trace = _Recorder(ddp, directory, settings)
