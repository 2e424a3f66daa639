#!/usr/bin/env python3
"""A real Horovod training job for bench/horovod: synthetic data, SGD with momentum wrapped in
hvd.DistributedOptimizer (gradients allreduced from backward hooks), broadcast of parameters
and optimizer state first, then --warmup untimed and --steps timed steps.

Each rank times every step (wall clock, from before zero_grad to after optimizer.step());
with --seconds S the timed steps go on until S seconds have passed instead of --steps (the
ranks agree to stop through a one-number allreduce issued at each step's start);
rank 0 gathers all ranks' times and prints one JSON line:
  {"model": ..., "ranks": N, "step_ms": [max over ranks, per timed step], "rank_step_ms": [...]}
The communication knobs come from the environment (HOROVOD_FUSION_THRESHOLD, ...), as
`autotune apply` or horovodrun set them; HOROVOD_TIMELINE, when set, makes Horovod write its
timeline on rank 0.

Models (resnet50 and mlp on 3x32x32 inputs, 1,000 classes):
  resnet50: torchvision resnet50, random init (161 gradient tensors, compute-bound here);
  mlp:      Flatten -> Linear(3072,256) -> 100 x [Linear(256,256), LayerNorm(256), ReLU]
            -> Linear(256,1000) (404 small tensors, little compute);
  transformer (also as heldout_transformer: the prefix marks a model whose runs are only
            scored on, never used to fit or tune anything): a language model over --batch
            sequences of 32 tokens of an 8,000-token vocabulary: Embedding(8000,128) +
            a learned position embedding -> nn.TransformerEncoder of 4 layers (d_model 128,
            4 heads, feed-forward 512, no dropout) -> LayerNorm -> Linear(128,8000),
            next-token cross entropy (54 gradient tensors: 2 of 1.02M parameters, 52 small;
            2.85M parameters in all; compute per step between mlp's and resnet50's);
  convnet (as heldout_convnet: held out the same way): a small CNN, Conv2d(3,16,3) -> ReLU ->
            MaxPool -> Conv2d(16,32,3) -> ReLU -> MaxPool -> Linear(2048,128) -> ReLU ->
            Linear(128,1000) (8 gradient tensors, 0.4M parameters, 1.6 MB; a short step, so a
            long cycle time is a large part of it).
"""
import argparse
import json
import os
import sys
import time

import torch
import horovod.torch as hvd


def make_model(name):
    if name == "resnet50":
        import torchvision
        return torchvision.models.resnet50()
    if name == "mlp":
        layers = [torch.nn.Flatten(), torch.nn.Linear(3 * 32 * 32, 256)]
        for _ in range(100):
            layers += [torch.nn.Linear(256, 256), torch.nn.LayerNorm(256), torch.nn.ReLU()]
        layers.append(torch.nn.Linear(256, 1000))
        return torch.nn.Sequential(*layers)
    if name == "transformer":
        return TokenTransformer()
    if name == "convnet":
        return torch.nn.Sequential(
            torch.nn.Conv2d(3, 16, 3, padding=1), torch.nn.ReLU(), torch.nn.MaxPool2d(2),
            torch.nn.Conv2d(16, 32, 3, padding=1), torch.nn.ReLU(), torch.nn.MaxPool2d(2),
            torch.nn.Flatten(), torch.nn.Linear(32 * 8 * 8, 128), torch.nn.ReLU(),
            torch.nn.Linear(128, 1000))
    raise SystemExit(f"train.py: unknown --model {name!r} (resnet50 | mlp | transformer | "
                     "convnet)")


class TokenTransformer(torch.nn.Module):
    VOCAB, LENGTH, WIDTH = 8000, 32, 128

    def __init__(self):
        super().__init__()
        self.embed = torch.nn.Embedding(self.VOCAB, self.WIDTH)
        self.position = torch.nn.Parameter(torch.zeros(1, self.LENGTH, self.WIDTH))
        layer = torch.nn.TransformerEncoderLayer(self.WIDTH, nhead=4, dim_feedforward=512,
                                                 dropout=0.0, batch_first=True)
        self.encoder = torch.nn.TransformerEncoder(layer, num_layers=4)
        self.norm = torch.nn.LayerNorm(self.WIDTH)
        self.head = torch.nn.Linear(self.WIDTH, self.VOCAB)

    def forward(self, tokens):
        return self.head(self.norm(self.encoder(self.embed(tokens) + self.position)))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="resnet50")
    parser.add_argument("--batch", type=int, default=4)
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--steps", type=int, default=8)
    parser.add_argument("--num-groups", type=int, default=0)
    parser.add_argument("--ready-log", default="",
                        help="a folder: each rank writes its gradient-ready times there "
                             "(autotune_torch.horovod_ready; autotune import --ready-log)")
    parser.add_argument("--seconds", type=float, default=0.0,
                        help="time the steps after the warm-up until this many seconds of wall "
                             "clock have passed (--steps is then ignored); 0: run --steps")
    args = parser.parse_args()

    torch.set_num_threads(1)
    torch.manual_seed(0)
    hvd.init()
    kind = args.model.removeprefix("heldout_")
    model = make_model(kind)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    optimizer = hvd.DistributedOptimizer(optimizer, named_parameters=model.named_parameters(),
                                         num_groups=args.num_groups)
    ready = None
    if args.ready_log:
        sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                        "python"))
        from autotune_torch import horovod_ready
        ready = horovod_ready.Recorder(model.named_parameters(), args.ready_log)
    hvd.broadcast_parameters(model.state_dict(), root_rank=0)
    hvd.broadcast_optimizer_state(optimizer, root_rank=0)
    if kind == "transformer":
        tokens = torch.randint(0, TokenTransformer.VOCAB,
                               (args.batch, TokenTransformer.LENGTH + 1))
        data, target = tokens[:, :-1], tokens[:, 1:].reshape(-1)
        flat = TokenTransformer.VOCAB
    else:
        data = torch.randn(args.batch, 3, 32, 32)
        target = torch.randint(0, 1000, (args.batch,))
        flat = None
    cross_entropy = torch.nn.CrossEntropyLoss()

    def loss_fn(output, target):
        return cross_entropy(output.reshape(-1, flat) if flat else output, target)

    times = []
    timed_start = None
    step = 0
    while True:
        if args.seconds <= 0 and step >= args.warmup + args.steps:
            break
        if ready is not None:
            ready.step()
        start = time.perf_counter()
        if step == args.warmup:
            timed_start = start
        stop = None
        if args.seconds > 0 and step >= args.warmup:
            # Whether any rank's clock has run out, agreed by an allreduce that Horovod runs in
            # the step's first cycle, under its compute (collected after the step).
            over = float(start - timed_start >= args.seconds)
            stop = hvd.allreduce_async(torch.tensor([over]), op=hvd.Sum, name="seconds_over")
        optimizer.zero_grad()
        loss = loss_fn(model(data), target)
        loss.backward()
        optimizer.step()
        if stop is not None and hvd.synchronize(stop).item() > 0:
            break
        if step >= args.warmup:
            times.append((time.perf_counter() - start) * 1000.0)
        step += 1
    gathered = hvd.allgather(torch.tensor([times], dtype=torch.float64))
    if hvd.rank() == 0:
        per_rank = gathered.tolist()
        step_ms = [max(r[i] for r in per_rank) for i in range(len(times))]
        print(json.dumps({"model": args.model, "ranks": hvd.size(), "step_ms": step_ms,
                          "rank_step_ms": per_rank}), flush=True)
    if ready is not None:
        ready.close()
    hvd.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
