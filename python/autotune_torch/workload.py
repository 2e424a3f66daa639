"""The workload of a real PyTorch model, for `autotune workloads --from-torch MODEL`.

Runs a few real forward/backward/optimizer steps of the model on random input and prints
autotune's workload JSON on stdout: every parameter that gets a gradient, in the order the
gradients become ready, with its name, shape, dtype, registration index (its place in
model.parameters()) and median ready time from the start of the backward pass, and the
median forward, backward and optimizer times.

  python3 -m autotune_torch.workload --model torchvision:resnet18 [--batch N]
          [--input C,H,W] [--steps K] [--warmup W]
MODEL is torchvision:NAME or package.module:callable (a function or class returning an
nn.Module; the current directory is importable)."""
import argparse
import importlib
import json
import os
import re
import statistics
import sys
import time

_DTYPES = {"float32": "float32", "float64": "float64", "float16": "float16",
           "bfloat16": "bfloat16", "int32": "int32", "int64": "int64"}


def _fail(line):
    print(f"autotune_torch.workload: {line}", file=sys.stderr)
    raise SystemExit(2)


def _build(spec):
    import torch
    if ":" not in spec:
        _fail(f"--model {spec!r}: expected torchvision:NAME or package.module:callable")
    where, name = spec.split(":", 1)
    if where == "torchvision":
        import torchvision
        factory = getattr(torchvision.models, name, None)
        if factory is None or not callable(factory):
            _fail(f"--model {spec!r}: torchvision.models has no model {name!r}")
    else:
        sys.path.insert(0, os.getcwd())
        try:
            module = importlib.import_module(where)
        except ImportError as e:
            _fail(f"--model {spec!r}: cannot import {where}: {e}")
        factory = getattr(module, name, None)
        if factory is None or not callable(factory):
            _fail(f"--model {spec!r}: {where} has no callable {name!r}")
    model = factory()
    if not isinstance(model, torch.nn.Module):
        _fail(f"--model {spec!r}: {name}() returned {type(model).__name__}, not a torch.nn.Module")
    return model


def _ms(seconds):
    return seconds * 1e3


def measure(model, batch, shape, steps, warmup):
    import torch
    params = [(n, p) for n, p in model.named_parameters() if p.requires_grad]
    ready = {}  # parameter position in params -> its ready times (s from backward start)
    clock = {"backward": 0.0}

    def hook_for(i):
        def hook(grad):
            ready.setdefault(i, []).append(time.perf_counter() - clock["backward"])
            return grad
        return hook

    for i, (_, p) in enumerate(params):
        p.register_hook(hook_for(i))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    data = torch.randn(batch, *shape)
    times = {"forward": [], "backward": [], "optimizer": []}
    for step in range(warmup + steps):
        if step == warmup:
            ready.clear()
        optimizer.zero_grad()
        t0 = time.perf_counter()
        out = model(data)
        if isinstance(out, (tuple, list)):
            out = out[0]
        if hasattr(out, "logits"):
            out = out.logits
        target = torch.randint(0, out.shape[-1], out.shape[:-1])
        loss = torch.nn.functional.cross_entropy(out.reshape(-1, out.shape[-1]), target.reshape(-1))
        t1 = time.perf_counter()
        clock["backward"] = t1
        loss.backward()
        t2 = time.perf_counter()
        optimizer.step()
        t3 = time.perf_counter()
        if step >= warmup:
            times["forward"].append(_ms(t1 - t0))
            times["backward"].append(_ms(t2 - t1))
            times["optimizer"].append(_ms(t3 - t2))
    return params, ready, {k: statistics.median(v) for k, v in times.items()}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", required=True)
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--input", default="3,224,224", help="C,H,W of one sample")
    parser.add_argument("--steps", type=int, default=5)
    parser.add_argument("--warmup", type=int, default=2)
    a = parser.parse_args()
    # The model's own prints (Python or C, on fd 1) go to stderr: stdout carries the JSON only.
    result = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    try:
        shape = [int(x) for x in a.input.split(",")]
    except ValueError:
        shape = []
    if not shape or min(shape) < 1:
        _fail(f"--input {a.input!r}: expected positive integers C,H,W")
    if a.batch < 1 or a.steps < 1 or a.warmup < 0:
        _fail("--batch and --steps must be at least 1, --warmup at least 0")
    try:
        import torch
    except ImportError:
        _fail("PyTorch is not importable by this interpreter")
    torch.manual_seed(0)
    model = _build(a.model)
    params, ready, phase_ms = measure(model, a.batch, shape, a.steps, a.warmup)
    registration = {id(p): i for i, p in enumerate(model.parameters())}
    tensors, missing = [], []
    for i, (name, p) in enumerate(params):
        if i not in ready:
            missing.append(name)
            continue
        dtype = str(p.dtype).replace("torch.", "")
        if dtype not in _DTYPES:
            _fail(f"parameter {name}: dtype {dtype} is not one autotune models")
        tensors.append({"name": name, "shape": list(p.shape), "dtype": _DTYPES[dtype],
                        "ready_ms": _ms(statistics.median(ready[i])),
                        "registration": registration[id(p)]})
    if missing:
        print(f"autotune_torch.workload: {len(missing)} parameters got no gradient and are left "
              f"out: {', '.join(missing[:5])}{' ...' if len(missing) > 5 else ''}",
              file=sys.stderr)
    tensors.sort(key=lambda t: t["ready_ms"])
    backward = max(phase_ms["backward"], tensors[-1]["ready_ms"] if tensors else 0.0)
    # Registration indices among the kept parameters only, 0..n-1 in model order.
    for rank, t in enumerate(sorted(tensors, key=lambda t: t["registration"])):
        t["registration"] = rank
    name = re.sub(r"[^A-Za-z0-9_.-]", "_", a.model.split(":", 1)[1])
    print(json.dumps({"name": name, "dtype": "float32", "forward_ms": phase_ms["forward"],
                      "backward_ms": backward, "optimizer_ms": phase_ms["optimizer"],
                      "tensors": tensors}, indent=1), file=result)
    result.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
