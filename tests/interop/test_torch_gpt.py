"""test_torch_gpt.py — the transformer's loss and every gradient against PyTorch's.

tests/interop/gpt_grads runs one forward and backward of gpt-tiny (CPU backend, fp32) on a batch
of tokens and writes the weights it used and all its gradients as safetensors under Hugging Face
GPT-2's names. This test reads that file with PyTorch (Debian's python3-torch), computes GPT-2's
loss there with torch's own operations — F.embedding, F.layer_norm, the Conv1D matmuls
(x @ W + b with W stored [in, out]), softmax attention under a torch.tril mask, F.gelu's tanh
form, F.linear against wte for the tied head, F.cross_entropy's mean — and autograd's gradients,
and holds ours against them tensor by tensor.

Tolerance: both sides are fp32 with different summation orders (OpenBLAS against torch's own
kernels). A gradient element is a sum of up to B·S = 128 rows of products (the weight GEMMs),
each carried through ~10 layers of fp32 arithmetic, so rounding differences reach ~√n·ε_32·depth
≈ 1e-5 of the terms' magnitudes, which cancellation can make large against a small element;
hence per tensor |ours − torch| ≤ 1e-4·max|torch| + 1e-4·|torch|, and the loss to 1e-5
relative. What is achieved is printed and must sit 10× inside (measured: 0.005 of it).

Negative controls (flags of the reference, each must fail the same comparison): the causal mask
one position off (torch.tril(..., diagonal=1): each query sees one future key), LayerNorm's ε ten
times larger (1e-4), and the head untied from the embedding (a copy of wte: the embedding's
gradient then lacks the head's part). Also the round trip the other way: weights PyTorch writes
(σ 0.1, gains ≠ 1) are read by gpt_grads --init and give PyTorch's gradients.
Skips (exit 77) when torch is not installed.
"""
import math
import os
import subprocess
import tempfile
import unittest

from torch_safetensors import read_safetensors, read_safetensors_with_meta, write_safetensors  # first: exits 77 (skip) where torch is missing
import numpy as np
import torch
import torch.nn.functional as F

BIN = os.environ["DPSCALE_BIN_DIR"]
MODEL, LAYERS, DIM, HEADS, VOCAB, CONTEXT = "gpt-tiny", 2, 64, 4, 256, 64
SEQ, BATCH = 32, 4
RTOL, ATOL_OF_MAX = 1e-4, 1e-4


def gpt2_loss(W, x, y, mask_shift=0, eps=1e-5, untied=False):
    """GPT-2's forward in torch; returns (loss, the leaf the head used)."""
    B, S = x.shape
    d, H = DIM, HEADS
    hd = d // H
    h = F.embedding(x, W["wte.weight"]) + W["wpe.weight"][:S]
    mask = torch.tril(torch.ones(S, S, dtype=torch.bool), diagonal=mask_shift)
    for l in range(LAYERS):
        p = f"h.{l}."
        a = F.layer_norm(h, (d,), W[p + "ln_1.weight"], W[p + "ln_1.bias"], eps)
        qkv = a @ W[p + "attn.c_attn.weight"] + W[p + "attn.c_attn.bias"]
        q, k, v = (t.view(B, S, H, hd).transpose(1, 2) for t in qkv.split(d, dim=2))
        att = (q @ k.transpose(-2, -1)) / math.sqrt(hd)
        att = att.masked_fill(~mask, float("-inf")).softmax(dim=-1)
        o = (att @ v).transpose(1, 2).reshape(B, S, d)
        h = h + o @ W[p + "attn.c_proj.weight"] + W[p + "attn.c_proj.bias"]
        a = F.layer_norm(h, (d,), W[p + "ln_2.weight"], W[p + "ln_2.bias"], eps)
        f = F.gelu(a @ W[p + "mlp.c_fc.weight"] + W[p + "mlp.c_fc.bias"], approximate="tanh")
        h = h + f @ W[p + "mlp.c_proj.weight"] + W[p + "mlp.c_proj.bias"]
    h = F.layer_norm(h, (d,), W["ln_f.weight"], W["ln_f.bias"], eps)
    head = W["wte.weight"].detach().clone().requires_grad_(True) if untied else W["wte.weight"]
    logits = F.linear(h, head)
    return F.cross_entropy(logits.reshape(-1, VOCAB), y.reshape(-1)), head


def torch_grads(weights, x, y, **control):
    W = {k: v.clone().requires_grad_(True) for k, v in weights.items()}
    loss, _ = gpt2_loss(W, x, y, **control)
    loss.backward()
    return loss.item(), {k: v.grad for k, v in W.items()}


def worst(ours, ref):
    """(worst ratio of |Δ| to the tolerance over all tensors, its tensor name)."""
    ratio, name = 0.0, ""
    for k, r in ref.items():
        tol = ATOL_OF_MAX * r.abs().max() + RTOL * r.abs()
        q = ((ours[k] - r).abs() / tol.clamp_min(1e-30)).max().item()
        if not q <= ratio:
            ratio, name = q, k
    return ratio, name


class TorchGpt(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp()
        rng = np.random.default_rng(7)
        rows = rng.integers(0, VOCAB, size=(BATCH, SEQ + 1), dtype=np.int64)
        cls.tokens = os.path.join(cls.dir, "tokens.npy")
        np.save(cls.tokens, rows)
        cls.x = torch.from_numpy(rows[:, :SEQ].copy())
        cls.y = torch.from_numpy(rows[:, 1:].copy())

    def run_ours(self, *how):
        out = subprocess.run([os.path.join(BIN, "gpt_grads"), MODEL, str(SEQ), self.tokens, self.dir, *how],
                             capture_output=True, text=True)
        self.assertEqual(out.returncode, 0, out.stderr)
        weights = read_safetensors(os.path.join(self.dir, "weights.safetensors"))
        grads, meta = read_safetensors_with_meta(os.path.join(self.dir, "grads.safetensors"))
        return weights, grads, float(meta["loss"])

    def check(self, weights, grads, loss):
        self.assertEqual(len(weights), 4 + 12 * LAYERS)  # the tied head is stored once
        self.assertEqual(tuple(weights["h.0.attn.c_attn.weight"].shape), (DIM, 3 * DIM))
        ref_loss, ref = torch_grads(weights, self.x, self.y)
        self.assertLess(abs(loss - ref_loss), 1e-5 * ref_loss, (loss, ref_loss))
        ratio, name = worst(grads, ref)
        print(f"[torch gpt] loss ours {loss:.7f} torch {ref_loss:.7f}; worst gradient at {ratio:.3f} of the "
              f"tolerance ({name})")
        self.assertLess(ratio, 0.1, name)  # 10x inside the tolerance
        for control in ({"mask_shift": 1}, {"eps": 1e-4}, {"untied": True}):
            _, bad = torch_grads(weights, self.x, self.y, **control)
            r, n = worst(grads, bad)
            print(f"[torch gpt] control {control}: worst gradient at {r:.1f} of the tolerance ({n})")
            self.assertGreater(r, 1.0, f"control {control} passed the comparison")

    def test_our_init_matches_torch(self):
        self.check(*self.run_ours("--seed", "42"))

    def test_weights_torch_writes_load_and_match(self):
        weights, _, _ = self.run_ours("--seed", "1")
        g = torch.Generator().manual_seed(3)
        theirs = {k: (1.0 if ".ln_" in "." + k and k.endswith("weight") else 0.0) + 0.1 * torch.randn(v.shape, generator=g)
                  for k, v in weights.items()}
        path = os.path.join(self.dir, "theirs.safetensors")
        write_safetensors(path, theirs)
        w2, grads, loss = self.run_ours("--init", path)
        for k in theirs:
            self.assertTrue(torch.equal(w2[k], theirs[k].float()), k)
        self.check(w2, grads, loss)


if __name__ == "__main__":
    unittest.main()
