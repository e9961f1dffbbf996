"""test_torch_checkpoint.py — a --save checkpoint loads into the workshop's PyTorch model.

The workshop builds its MLP as nn.Sequential(Linear, ReLU, Linear, ReLU, ..., Linear), whose
state_dict names the i-th Linear's tensors "{2i}.weight" / "{2i}.bias". dpscale writes them as
"layers.{i}.weight" / "layers.{i}.bias" ([out, in] and [out], float32, as nn.Linear stores
them). The README's mapping is exactly this test's `sequential_state_dict`: rename, nothing else.

The test trains a small model with train_single_gpu on .npy data, loads its checkpoint into the
workshop's nn.Sequential with Debian's python3-torch, and holds PyTorch's logits against the
logits dpscale's own forward pass gives for the same checkpoint (tests/interop/forward_logits).
Tolerance: both are fp32 sums of at most 784 products of O(1) terms per layer in different
orders; relative differences of a few 1e-6 per layer, so |Δ| <= 1e-4 + 1e-4·|logit|.
Negative controls: the checkpoint with two layers swapped, and one weight nudged, must not pass.
Skips (exit 77) when torch is not installed.
"""
import os
import subprocess
import tempfile
import unittest

from torch_safetensors import read_safetensors  # first: exits 77 (skip) where torch is missing
import numpy as np
import torch
from torch import nn

BIN = os.environ["DPSCALE_BIN_DIR"]
WIDTHS = [784, 64, 32, 10]
MODEL = ",".join(map(str, WIDTHS))


def workshop_model(sizes):
    """model_common.py's build: Linear + ReLU between, Linear last."""
    layers = []
    for i in range(len(sizes) - 1):
        layers.append(nn.Linear(sizes[i], sizes[i + 1]))
        if i < len(sizes) - 2:
            layers.append(nn.ReLU())
    return nn.Sequential(*layers)


def sequential_state_dict(tensors):
    """layers.{i}.weight|bias -> {2i}.weight|bias: the one mapping a user needs."""
    out = {}
    for name, t in tensors.items():
        _, i, kind = name.split(".")
        out[f"{2 * int(i)}.{kind}"] = t
    return out


class TorchLoadsCheckpoint(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory(prefix="dpscale-interop-")
        d = cls.tmp.name
        rng = np.random.default_rng(7)
        x = rng.standard_normal((512, WIDTHS[0]), dtype=np.float32)
        y = rng.integers(0, WIDTHS[-1], 512).astype(np.int64)
        cls.features = os.path.join(d, "x.npy")
        np.save(cls.features, x)
        np.save(os.path.join(d, "y.npy"), y)
        cls.ckpt = os.path.join(d, "w.safetensors")
        subprocess.run([os.path.join(BIN, "train_single_gpu"), "--model", MODEL, "--data", "npy",
                        "--features", cls.features, "--labels", os.path.join(d, "y.npy"),
                        "--batch-size", "128", "--epochs", "2", "--lr", "0.05", "--backend", "cpu",
                        "--quiet", "--save", cls.ckpt], check=True, capture_output=True)
        cls.x = torch.from_numpy(x)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def dpscale_logits(self, ckpt):
        out = os.path.join(self.tmp.name, "logits.npy")
        subprocess.run([os.path.join(BIN, "forward_logits"), MODEL, ckpt, self.features, out],
                       check=True, capture_output=True)
        return torch.from_numpy(np.load(out))

    def torch_logits(self, tensors):
        model = workshop_model(WIDTHS)
        model.load_state_dict(sequential_state_dict(tensors), strict=True)
        with torch.no_grad():
            return model(self.x)

    def close(self, a, b):
        return bool(torch.all((a - b).abs() <= 1e-4 + 1e-4 * b.abs()))

    def test_names_shapes_and_dtype(self):
        t = read_safetensors(self.ckpt)
        self.assertEqual(sorted(t), sorted(f"layers.{i}.{k}" for i in range(3) for k in ("weight", "bias")))
        for i in range(3):
            self.assertEqual(list(t[f"layers.{i}.weight"].shape), [WIDTHS[i + 1], WIDTHS[i]])
            self.assertEqual(list(t[f"layers.{i}.bias"].shape), [WIDTHS[i + 1]])

    def test_logits_agree_with_dpscale(self):
        ours = self.dpscale_logits(self.ckpt)
        theirs = self.torch_logits(read_safetensors(self.ckpt))
        self.assertEqual(ours.shape, theirs.shape)
        self.assertTrue(self.close(theirs, ours), f"max |Δ| = {float((theirs - ours).abs().max()):.3g}")
        # The trained model is not trivial: its logits differ across rows and classes.
        self.assertGreater(float(ours.std()), 0.1)

    def test_negative_control_nudged_weight(self):
        t = read_safetensors(self.ckpt)
        t["layers.1.weight"][0, 0] += 0.5
        self.assertFalse(self.close(self.torch_logits(t), self.dpscale_logits(self.ckpt)))

    def test_negative_control_wrong_mapping(self):
        # Without the rename PyTorch refuses the names outright.
        with self.assertRaises(RuntimeError):
            workshop_model(WIDTHS).load_state_dict(read_safetensors(self.ckpt), strict=True)


if __name__ == "__main__":
    unittest.main()
