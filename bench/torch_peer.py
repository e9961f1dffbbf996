#!/usr/bin/env python3
"""torch_peer.py — the workshop's PyTorch trainers on the CPU: the peer dpscale's CPU backend is
measured against (experiments/pytorch-peer/run.sh runs both side by side).

    python3 bench/torch_peer.py --model medium --mode single [--samples 8192 --batch-size 1024
                                --epochs 2 --lr 0.01 --warmup-steps 3]
    python3 bench/torch_peer.py --model medium --mode ddp --world-size 2

The workshop's code (model_common.py, train_single_gpu.py, train_dp_naive.py,
train_dp_interleaved.py, train_ddp_builtin.py) with the GPU taken out: the same nn.Sequential of
Linear + ReLU, nn.CrossEntropyLoss, SGD, synthetic standard-normal data, batches in order, each
of K ranks taking an equal contiguous shard; K > 1 over gloo (torch.distributed's CPU backend),
one process per rank started here. Modes:
  single       one process, the whole batch
  naive        backward, then a blocking all_reduce per parameter, / K
  interleaved  an async all_reduce fired as each parameter's gradient is accumulated (the
               AccumulateGrad hook; PyTorch 1.13 has no register_post_accumulate_grad_hook), waited
               for before the step
  ddp          DistributedDataParallel (25 MiB buckets, overlapped with backward)
One thread per rank (torch.set_num_threads(1); OMP_NUM_THREADS and OPENBLAS_NUM_THREADS set to 1
before torch loads, as PyTorch's fp32 Linear runs the system BLAS), 3 untimed warm-up steps.
Prints one line, "TORCH_JSON: {...}": epoch_times_s (the slowest rank's wall time per epoch, as
dpscale's record), avg_epoch_s, throughput_samples_per_s, losses, and torch's configuration.
"""
import argparse
import json
import os
import sys
import tempfile
import time

for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[var] = "1"

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402
import torch.multiprocessing as mp  # noqa: E402
import torch.nn as nn  # noqa: E402

PRESETS = {
    "small": [784, 1024, 512, 256, 10],
    "medium": [784, 2048, 2048, 1024, 512, 10],
    "large": [784, 4096, 4096, 2048, 2048, 1024, 512, 10],
    "xlarge": [784, 4096, 4096, 4096, 2048, 2048, 1024, 512, 10],
}
MODES = ("single", "naive", "interleaved", "ddp")


def build_model(widths):
    layers = []
    for i in range(len(widths) - 1):
        layers.append(nn.Linear(widths[i], widths[i + 1]))
        if i < len(widths) - 2:
            layers.append(nn.ReLU())
    return nn.Sequential(*layers)


class InterleavedDP:
    """The workshop's InterleavedDP: one async all_reduce per parameter, fired when its gradient
    has been accumulated (the hook of the parameter's AccumulateGrad node)."""

    def __init__(self, model, world_size):
        self.world_size = world_size
        self.handles = []
        self.grad_accs = []  # kept alive: the hooks live on these nodes
        for p in model.parameters():
            acc = p.expand_as(p).grad_fn.next_functions[0][0]
            acc.register_hook(self._make_hook(p))
            self.grad_accs.append(acc)

    def _make_hook(self, p):
        def hook(*_):
            self.handles.append((dist.all_reduce(p.grad, op=dist.ReduceOp.SUM, async_op=True), p))
        return hook

    def finish(self):
        for h, p in self.handles:
            h.wait()
            p.grad /= self.world_size
        self.handles.clear()


def train(rank, world_size, args, init_file, out_file):
    torch.set_num_threads(1)
    if world_size > 1:
        dist.init_process_group("gloo", init_method=f"file://{init_file}", rank=rank, world_size=world_size)
    torch.manual_seed(42)
    widths = PRESETS[args.model]
    model = build_model(widths)
    sync = None
    if args.mode == "ddp":
        model = nn.parallel.DistributedDataParallel(model)
    elif args.mode == "interleaved":
        sync = InterleavedDP(model, world_size)
    opt = torch.optim.SGD(model.parameters(), lr=args.lr)
    loss_fn = nn.CrossEntropyLoss()
    gen = torch.Generator().manual_seed(42)
    X = torch.randn(args.samples, widths[0], generator=gen)
    y = torch.randint(0, widths[-1], (args.samples,), generator=gen)
    bs, chunk = args.batch_size, args.batch_size // world_size

    def step(start):
        xb = X[start + rank * chunk:start + (rank + 1) * chunk]
        yb = y[start + rank * chunk:start + (rank + 1) * chunk]
        opt.zero_grad()
        loss = loss_fn(model(xb), yb)
        loss.backward()
        if args.mode == "naive":
            for p in model.parameters():
                dist.all_reduce(p.grad, op=dist.ReduceOp.SUM)
                p.grad /= world_size
        elif sync is not None:
            sync.finish()
        return loss

    for i in range(args.warmup_steps):  # untimed; weights restored after
        step((i * bs) % (args.samples - bs + 1))
    torch.manual_seed(42)
    fresh = build_model(widths)
    target = model.module if args.mode == "ddp" else model
    target.load_state_dict(fresh.state_dict())
    opt = torch.optim.SGD(model.parameters(), lr=args.lr)

    times, losses = [], []
    for _ in range(args.epochs):
        if world_size > 1:
            dist.barrier()
        t0 = time.perf_counter()
        total, n = 0.0, 0
        for start in range(0, args.samples - bs + 1, bs):
            loss = step(start)
            opt.step()
            total += loss.item()
            n += 1
        t = time.perf_counter() - t0
        if world_size > 1:
            tt = torch.tensor([t])
            dist.all_reduce(tt, op=dist.ReduceOp.MAX)
            t = float(tt[0])
        times.append(t)
        losses.append(total / n)
    if rank == 0:
        steps = (args.samples // bs) * args.epochs
        rec = {"framework": "pytorch", "torch_version": torch.__version__, "model": args.model, "mode": args.mode,
               "world_size": world_size, "global_batch": bs, "n_samples": args.samples, "epochs": args.epochs,
               "epoch_times_s": times, "avg_epoch_s": sum(times) / len(times),
               "throughput_samples_per_s": steps * bs / sum(times), "losses": losses,
               "threads_per_rank": torch.get_num_threads(),
               "openblas_coretype": os.environ.get("OPENBLAS_CORETYPE", "")}
        with open(out_file, "w") as f:
            json.dump(rec, f)
    if world_size > 1:
        dist.destroy_process_group()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", choices=sorted(PRESETS), default="medium")
    ap.add_argument("--mode", choices=MODES, default="single")
    ap.add_argument("--world-size", type=int, default=1)
    ap.add_argument("--samples", type=int, default=8192)
    ap.add_argument("--batch-size", type=int, default=1024)
    ap.add_argument("--epochs", type=int, default=2)
    ap.add_argument("--lr", type=float, default=0.01)
    ap.add_argument("--warmup-steps", type=int, default=3)
    args = ap.parse_args()
    k = args.world_size
    if (args.mode == "single") != (k == 1) or k < 1 or args.batch_size % k or args.samples < args.batch_size:
        print("torch_peer.py: single runs at --world-size 1, the DP modes above it; the batch must split into K "
              "equal shards and fit in --samples", file=sys.stderr)
        sys.exit(2)
    with tempfile.TemporaryDirectory() as tmp:
        init, out = os.path.join(tmp, "init"), os.path.join(tmp, "out.json")
        if k == 1:
            train(0, 1, args, init, out)
        else:
            mp.spawn(train, args=(k, args, init, out), nprocs=k, join=True)
        with open(out) as f:
            print("TORCH_JSON: " + f.read(), flush=True)


if __name__ == "__main__":
    main()
