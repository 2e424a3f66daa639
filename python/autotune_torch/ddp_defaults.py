"""DistributedDataParallel's bucket settings from autotune's environment.

`autotune apply --config-file F` exports, for a config with a ddp: section,
  AUTOTUNE_DDP_BUCKET_CAP_MB            -> bucket_cap_mb
  AUTOTUNE_DDP_GRADIENT_AS_BUCKET_VIEW  -> gradient_as_bucket_view (1/0)
  AUTOTUNE_DDP_FIRST_BUCKET_MB          -> torch.distributed._DEFAULT_FIRST_BUCKET_BYTES
and this module hands them to every DistributedDataParallel the script builds, unless the
script passes the argument itself: then the script's value wins and one line on rank 0 says
so. AUTOTUNE_DDP_STEP_LOG=PATH makes rank 0 write the step times (time between consecutive
forward calls of the first DDP module) to PATH as JSON at exit; AUTOTUNE_DDP_TRACE=DIR hands
the module to autotune_torch.ddp_trace (when present) to record a trace."""
import atexit
import importlib.abc
import json
import os
import sys
import time

_TARGET = "torch.nn.parallel.distributed"
_BOOL = {"1": True, "true": True, "0": False, "false": False}


def _fail(line):
    """A malformed variable: one line naming it, and the job stops (exit status 2)."""
    print(line, file=sys.stderr, flush=True)
    raise SystemExit(2)


def _env_number(name):
    text = os.environ.get(name)
    if text is None:
        return None
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not value > 0:
        _fail(f"autotune: {name}={text!r} is not a positive number of MB")
    return value


def _env_bool(name):
    text = os.environ.get(name)
    if text is None:
        return None
    if text.lower() not in _BOOL:
        _fail(f"autotune: {name}={text!r} is not 1 or 0")
    return _BOOL[text.lower()]


def _rank():
    return int(os.environ.get("RANK", os.environ.get("OMPI_COMM_WORLD_RANK", "0")))


def _say(line):
    if _rank() == 0:
        print(line, file=sys.stderr, flush=True)


class _StepLog:
    """Forward-call times of the first DDP module; rank 0 writes them at exit."""

    def __init__(self, path, module, settings):
        self.path, self.settings, self.times = path, settings, []
        self.world = module.process_group.size() if hasattr(module, "process_group") else 1
        atexit.register(self.write)

    def tick(self):
        self.times.append(time.perf_counter())

    def write(self):
        if _rank() != 0:
            return
        step_ms = [(b - a) * 1e3 for a, b in zip(self.times, self.times[1:])]
        with open(self.path, "w") as f:
            json.dump(dict(framework="ddp", world_size=self.world, step_ms=step_ms,
                           **self.settings), f)


def _patch(ddp_module):
    ddp = ddp_module.DistributedDataParallel
    if getattr(ddp, "_autotune_patched", False):
        return
    original_init = ddp.__init__
    original_forward = ddp.forward
    state = {"log": None}

    def __init__(self, *args, **kwargs):
        import torch.distributed as dist
        cap = _env_number("AUTOTUNE_DDP_BUCKET_CAP_MB")
        first = _env_number("AUTOTUNE_DDP_FIRST_BUCKET_MB")
        view = _env_bool("AUTOTUNE_DDP_GRADIENT_AS_BUCKET_VIEW")
        # bucket_cap_mb is DDP's 7th positional parameter (after module, device_ids,
        # output_device, dim, broadcast_buffers, process_group); gradient_as_bucket_view is
        # keyword-only in practice (the 10th).
        for name, value, position in (("bucket_cap_mb", cap, 6),
                                      ("gradient_as_bucket_view", view, 9)):
            if value is None:
                continue
            if name in kwargs or len(args) > position:
                given = kwargs.get(name, args[position] if len(args) > position else None)
                if given != value:
                    _say(f"autotune: DDP {name}={given} from the script wins over the "
                         f"config's {value}")
            else:
                kwargs[name] = value
        saved = dist._DEFAULT_FIRST_BUCKET_BYTES
        if first is not None:
            dist._DEFAULT_FIRST_BUCKET_BYTES = int(first * 1024 * 1024)
        try:
            original_init(self, *args, **kwargs)
        finally:
            dist._DEFAULT_FIRST_BUCKET_BYTES = saved
        settings = dict(bucket_cap_mb=self.bucket_bytes_cap / (1024 * 1024),
                        first_bucket_mb=(first if first is not None else saved / (1024 * 1024)),
                        gradient_as_bucket_view=bool(self.gradient_as_bucket_view))
        path = os.environ.get("AUTOTUNE_DDP_STEP_LOG")
        if path and state["log"] is None:
            state["log"] = _StepLog(path, self, settings)
            self._autotune_step_log = state["log"]
        trace = os.environ.get("AUTOTUNE_DDP_TRACE")
        if trace:
            try:
                from autotune_torch import ddp_trace
            except ImportError:
                _say("autotune: AUTOTUNE_DDP_TRACE is set but this autotune has no DDP trace "
                     "recorder; no trace written")
            else:
                ddp_trace.attach(self, trace, settings)

    def forward(self, *args, **kwargs):
        log = getattr(self, "_autotune_step_log", None)
        if log is not None:
            log.tick()
        return original_forward(self, *args, **kwargs)

    ddp.__init__ = __init__
    ddp.forward = forward
    ddp._autotune_patched = True


class _Loader(importlib.abc.Loader):
    def __init__(self, inner):
        self.inner = inner

    def create_module(self, spec):
        return self.inner.create_module(spec)

    def exec_module(self, module):
        self.inner.exec_module(module)
        _patch(module)


class _Finder(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name != _TARGET:
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(name, path, target)
            if spec is not None:
                spec.loader = _Loader(spec.loader)
                return spec
        return None


def install():
    """Patches DDP now if it is loaded, else when it is imported."""
    if _TARGET in sys.modules:
        _patch(sys.modules[_TARGET])
    elif not any(isinstance(f, _Finder) for f in sys.meta_path):
        sys.meta_path.insert(0, _Finder())
