#!/usr/bin/env python3
"""torch_gpt_peer.py — PyTorch's CPU training step of the same GPT-2-style decoder: the peer
dpscale's transformer step is measured against (experiments/transformer/vs-pytorch.sh runs both in rounds).

    python3 bench/torch_gpt_peer.py --model gpt-tiny --seq-len 64 --batch-size 16 --steps 20

GPT-2 as nn.Modules (nn.Embedding, nn.LayerNorm(eps 1e-5), nn.Linear, F.gelu tanh, causal softmax
attention under a tril mask, the head tied to the token embedding, nn.CrossEntropyLoss's mean over
every position), plain SGD, uniform random tokens, no dropout. One thread (torch.set_num_threads(1);
OMP/OpenBLAS threads 1 before torch loads), fp32, 3 untimed warm-up steps. Prints one line,
"TORCH_JSON: {...}": step_s (the median of the timed steps), steps, the model's shape, torch's version.
"""
import argparse
import json
import math
import os
import statistics
import time

for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[var] = "1"

import torch  # noqa: E402
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402

PRESETS = {"gpt-tiny": (2, 64, 4, 256, 64), "gpt2-small": (12, 768, 12, 50257, 1024),
           "gpt2-medium": (24, 1024, 16, 50257, 1024)}


def parse_model(text):
    if text in PRESETS:
        return PRESETS[text]
    kv = dict(item.split("=") for item in text[len("gpt:"):].split(","))
    return tuple(int(kv[k]) for k in ("layers", "dim", "heads", "vocab", "context"))


class Block(nn.Module):
    def __init__(self, d, h):
        super().__init__()
        self.h = h
        self.ln_1, self.ln_2 = nn.LayerNorm(d, eps=1e-5), nn.LayerNorm(d, eps=1e-5)
        self.c_attn, self.attn_proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.c_fc, self.mlp_proj = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)

    def forward(self, x, mask):
        B, S, d = x.shape
        q, k, v = (t.view(B, S, self.h, d // self.h).transpose(1, 2) for t in self.c_attn(self.ln_1(x)).split(d, dim=2))
        att = ((q @ k.transpose(-2, -1)) / math.sqrt(d // self.h)).masked_fill(~mask[:S, :S], float("-inf")).softmax(-1)
        x = x + self.attn_proj((att @ v).transpose(1, 2).reshape(B, S, d))
        return x + self.mlp_proj(F.gelu(self.c_fc(self.ln_2(x)), approximate="tanh"))


class Gpt(nn.Module):
    def __init__(self, layers, d, h, vocab, context):
        super().__init__()
        self.wte, self.wpe = nn.Embedding(vocab, d), nn.Embedding(context, d)
        self.blocks = nn.ModuleList(Block(d, h) for _ in range(layers))
        self.ln_f = nn.LayerNorm(d, eps=1e-5)
        self.register_buffer("mask", torch.tril(torch.ones(context, context, dtype=torch.bool)))
        for name, p in self.named_parameters():  # GPT-2's init
            if p.dim() == 2:
                nn.init.normal_(p, 0.0, 0.02 / math.sqrt(2 * layers) if name.endswith("proj.weight") else 0.02)

    def forward(self, x):
        h = self.wte(x) + self.wpe(torch.arange(x.shape[1]))
        for b in self.blocks:
            h = b(h, self.mask)
        return F.linear(self.ln_f(h), self.wte.weight)  # the tied head


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default="gpt-tiny")
    ap.add_argument("--seq-len", type=int, default=64)
    ap.add_argument("--batch-size", type=int, default=16)
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--lr", type=float, default=0.05)
    a = ap.parse_args()
    torch.set_num_threads(1)
    torch.manual_seed(0)
    layers, d, h, vocab, context = parse_model(a.model)
    m = Gpt(layers, d, h, vocab, context)
    opt = torch.optim.SGD(m.parameters(), lr=a.lr)
    loss_fn = nn.CrossEntropyLoss()
    tokens = torch.randint(0, vocab, (a.batch_size * (a.steps + 3), a.seq_len + 1))
    times = []
    for i in range(a.steps + 3):
        rows = tokens[i * a.batch_size:(i + 1) * a.batch_size]
        t0 = time.perf_counter()
        opt.zero_grad(set_to_none=True)
        loss = loss_fn(m(rows[:, :-1]).reshape(-1, vocab), rows[:, 1:].reshape(-1))
        loss.backward()
        opt.step()
        loss.item()
        if i >= 3:
            times.append(time.perf_counter() - t0)
    print("TORCH_JSON: " + json.dumps({"framework": "torch", "model": a.model, "seq_len": a.seq_len,
                                       "batch_size": a.batch_size, "steps": a.steps, "step_s": statistics.median(times),
                                       "n_params": sum(p.numel() for p in m.parameters()), "torch": torch.__version__,
                                       "threads": torch.get_num_threads()}), flush=True)


if __name__ == "__main__":
    main()
