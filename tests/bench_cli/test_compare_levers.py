#!/usr/bin/python3
"""Tests of bench/compare --levers (mixed precision and gradient checkpointing against PyTorch):
its tables and verdicts from recorded JSON, bench/torch_levers.py's activation bytes and step
peak against values worked out by hand, its checkpoint_sequential against plain training, and a
--quick run end to end with the PyTorch of /usr/bin/python3 (Debian's 1.13 stands in for 2.x).

    tests/bench_cli/test_compare_levers.py [-v]
Environment: INGOT_BIN (the ingot binary) enables the end-to-end case; ctest sets it. The torch
cases are skipped where this python has no torch.
"""
import json
import os
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "bench"))
import compare_amp_report as A  # noqa: E402

try:
    import torch
    import torch.nn.functional as F
    import torch_levers as L
except ImportError:
    torch = None
INGOT = os.environ.get("INGOT_BIN", "")
MiB = 2**20


def rec(ips=None, ms=None, act=None, peak=None, dtype="f32", ops=None):
    r = {"dtype": dtype, "train": {}, "memory": {"activation_bytes": act, "step_peak_bytes": peak}}
    if ips is not None:
        r["train"]["images_per_s"] = {"median": ips}
    if ms is not None:
        r["train"]["ms_per_step"] = {"median": ms}
    if ops:
        r["ops_by_backend"] = ops
    return r


class Tables(unittest.TestCase):
    def test_bf16_ratios_and_verdicts(self):
        bf = "bf16 autocast"
        runs = {("cnn", "ingot-f32"): [rec(1000), rec(1100), rec(900)],
                ("cnn", "ingot-bf16"): [rec(1600, dtype=bf), rec(1500, dtype=bf),
                                        rec(1700, dtype=bf, ops={"cpu_onednn": 9, "reference": 2})],
                ("cnn", "torch-f32"): [rec(500)], ("cnn", "torch-bf16"): [rec(800, dtype=bf)],
                ("resnet8", "ingot-f32"): [rec(1000)], ("resnet8", "ingot-bf16"): [rec(1200, dtype=bf)],
                ("resnet8", "torch-f32"): [rec(400)], ("resnet8", "torch-bf16"): [rec(500, dtype=bf)]}
        table, misses, complete = A.bf16_table(runs)
        self.assertTrue(complete)
        cnn = next(ln for ln in table.splitlines() if ln.startswith("| cnn"))
        # medians 1000 and 1600: 1.60 >= 1.5; 1600 / 800 = 2.00 >= 2.0; fastest runs 1700 / 1100, 1700 / 800
        self.assertIn("| 1.60 (1.55) | >= 1.5 | pass | 2.00 (2.12) | >= 2.0 | pass | cpu_onednn 9, reference 2 |",
                      cnn)
        self.assertIn("| 1,000 (900-1,100) | 1,600 (1,500-1,700) |", cnn)
        # resnet8: 1.20 < 1.5 and 2.40 >= 2
        self.assertIn("| 1.20 (1.20) | >= 1.5 | miss | 2.40 (2.40) | >= 2.0 | pass |", table)
        self.assertEqual(misses, ["resnet8 bf16 vs Ingot f32"])
        self.assertEqual(A.dtype_problems(runs), [])
        runs[("cnn", "torch-bf16")] = [rec(800)]  # autocast that did not apply
        self.assertEqual(A.dtype_problems(runs), ["cnn torch-bf16 reported dtype f32"])
        del runs[("resnet8", "torch-bf16")]
        self.assertFalse(A.bf16_table(runs)[2])

    def test_bf16_refused_on_a_cpu_without_bf16_kernels(self):
        why = "train.amp.dtype bf16 on cpu: no backend here runs conv2d in bf16 ... slower than f32"
        runs = {(w, k): [rec(1000)] for w in A.BF16_WORKLOADS for k in ("ingot-f32", "torch-f32")}
        for w in A.BF16_WORKLOADS:
            runs[(w, "ingot-bf16")], runs[(w, "torch-bf16")] = [{"refused": why}], [None]
        table, misses, complete = A.bf16_table(runs)
        self.assertTrue(complete)  # said, not missing
        self.assertEqual(misses, [])
        self.assertIn("Ingot refused bf16 here: " + why, table)

    def test_checkpoint_peak_slowdown_and_batch(self):
        plan = {"policy": "balanced", "segments": ["a-b", "c-d"], "estimated_peak_bytes": 1}
        runs = {("ingot", 0): [rec(ms=100, act=100 * MiB, peak=120 * MiB), rec(ms=90, act=100 * MiB),
                               rec(ms=400, act=100 * MiB, peak=120 * MiB)],
                ("ingot", 3): [dict(rec(ms=130, act=50 * MiB, peak=60 * MiB), checkpointing=plan)],
                ("ingot", "blocks"): [rec(ms=120, act=70 * MiB, peak=84 * MiB)],
                ("torch", 0): [rec(ms=200, act=80 * MiB, peak=100 * MiB)],
                ("torch", 3): [rec(ms=300, act=20 * MiB, peak=50 * MiB)], ("torch", "blocks"): [None],
                ("scaling", 0): [{"scaling": {"max_batch": 100, "memory_limit_bytes": 200 * MiB}}],
                ("scaling", 3): [{"scaling": {"max_batch": 170, "memory_limit_bytes": 200 * MiB}}],
                ("scaling", "blocks"): [{"scaling": {"max_batch": 150, "memory_limit_bytes": 200 * MiB}}]}
        table, misses, complete = A.checkpoint_table(runs, [3])
        lines = table.splitlines()
        self.assertIn("| Ingot | plain | 120.0 | | 100.0 | 100.0 (90.0) | | 100 | | |", lines)  # median 100, fastest 90
        # peak 60 / 120 = 0.50 <= 0.6, +30% <= 35%, batch 170 / 100 = 1.70 >= 1.6
        self.assertIn("| Ingot | 3 segments (by measured bytes: 2 used) | 60.0 | 0.50x | 50.0 | 130.0 (130.0) | "
                      "+30% (+44%) | 170 | 1.70x | pass |", lines)
        # peak 84 / 120 = 0.70 > 0.6 and batch 1.50 < 1.6
        self.assertIn("| Ingot | per block | 84.0 | 0.70x | 70.0 | 120.0 (120.0) | +20% (+33%) | 150 | 1.50x | miss |",
                      lines)
        self.assertIn("| PyTorch | 3 segments | 50.0 | 0.50x | 20.0 | 300.0 (300.0) | +50% (+50%) |  |  | miss |", lines)
        self.assertEqual(misses, ["Ingot per block"])
        self.assertIn("Largest batch within 200.0 MiB", table)
        self.assertFalse(complete)  # PyTorch's per-block run failed


@unittest.skipIf(torch is None, "no torch for this python")
class TorchLevers(unittest.TestCase):
    """Linear(4,6), ReLU, Linear(6,3), ReLU, Linear(3,2), ReLU on 5 samples, cross-entropy. Saved for
    backward and new in the step: ReLU results (5x6 and 5x3 floats, also the next Linear's input),
    the last ReLU's result (5x2), log_softmax's result (5x2) and nll_loss's total weight (one float):
    120 + 60 + 40 + 40 + 4 = 264 bytes; x, y and the weights existed before and do not count."""

    def setUp(self):
        torch.manual_seed(0)
        self.model = torch.nn.Sequential(torch.nn.Linear(4, 6), torch.nn.ReLU(), torch.nn.Linear(6, 3),
                                         torch.nn.ReLU(), torch.nn.Linear(3, 2), torch.nn.ReLU())
        self.x, self.y = torch.randn(5, 4), torch.tensor([0, 1, 0, 1, 1])

    def step(self, segments):
        self.model.zero_grad(set_to_none=True)
        levers = L.Levers(None, segments, "cpu")
        saved = L.SavedBytes(list(self.model.parameters()) + [self.x, self.y])
        with levers.forward_context(saved):
            loss = F.cross_entropy(levers.train_forward(self.model, self.x), self.y)
        loss.backward()
        return saved.total(), [p.grad.clone() for p in self.model.parameters()], levers

    def test_activation_bytes(self):
        plain, grads, _ = self.step(0)
        self.assertEqual(plain, 264)
        # 2 segments of 3 layers: the first is checkpointed (its input x existed: nothing kept of
        # it); the second keeps the second ReLU's result (60), 40, 40 and 4.
        two, grads2, levers = self.step(2)
        self.assertEqual(two, 144)
        self.assertIn("use_reentrant=False", levers.checkpoint_method)
        # 3 segments of 2: the second segment's input (the first ReLU's result, 120) is kept.
        three, grads3, _ = self.step(3)
        self.assertEqual(three, 264)
        for g, g2, g3 in zip(grads, grads2, grads3):  # recomputation gives the same gradients
            self.assertTrue(torch.equal(g, g2) and torch.equal(g, g3))

    def test_step_peak(self):
        with L.StepPeak() as p:
            a = torch.empty(1000)
            del a
            b, c = torch.empty(500), torch.empty(100)
            del b, c
        self.assertEqual(p.peak, 4000)

    def test_config_and_flags(self):
        cpu = torch.device("cpu")
        lv = L.Levers.from_config({"amp": {"dtype": "bf16"}, "checkpointing": {"segments": 2}}, None, None,
                                  self.model, cpu)
        self.assertEqual((lv.dtype, lv.segments, lv.dtype_name), (torch.bfloat16, 2, "bf16 autocast"))
        lv = L.Levers.from_config({"amp": {"dtype": "bf16", "enabled": False}}, None, 0, self.model, cpu)
        self.assertEqual((lv.dtype, lv.segments, lv.dtype_name), (None, 0, "f32"))
        self.assertIsNone(L.Levers.from_config({"amp": {"dtype": "bf16"}}, "f32", None, self.model, cpu).dtype)
        with self.assertRaisesRegex(L.LeverError, "7 segments, but the model has 6 top-level layers"):
            L.Levers.from_config({}, None, 7, self.model, cpu)
        with self.assertRaisesRegex(L.LeverError, "only bf16"):
            L.Levers.from_config({"amp": {"dtype": "fp16"}}, None, None, self.model, cpu)


@unittest.skipIf(torch is None or not INGOT, "needs torch for this python and INGOT_BIN")
class QuickRun(unittest.TestCase):
    def test_levers_quick(self):
        with tempfile.TemporaryDirectory() as out:
            r = subprocess.run([os.path.join(ROOT, "bench", "compare"), "--levers", "--quick", "--no-write",
                                "--batch", "8", "--segments", "3", "--ingot", INGOT, "--torch-python", sys.executable,
                                "--out", out], capture_output=True, text=True, cwd=ROOT, timeout=600)
            self.assertEqual(r.returncode, 0, r.stdout[-3000:] + r.stderr[-3000:])
            for needle in ("## bf16 autocast", "## Gradient checkpointing", "| PyTorch | 3 segments", "| Ingot | per block",
                           "To measure again on an idle machine: `bench/compare --levers --install-torch`"):
                self.assertIn(needle, r.stdout)
            raw = os.path.join(out, "levers", "raw")
            ingot = json.loads(open(os.path.join(raw, "levers-run0-cnn-ingot-bf16.out")).read().strip() or "{}")
            if ingot:  # (a CPU without bf16 kernels refuses it: the table says so)
                torch_bf16 = json.loads(open(os.path.join(raw, "levers-run0-cnn-torch-bf16.out")).read().strip())
                self.assertEqual((ingot["dtype"], torch_bf16["dtype"]), ("bf16 autocast", "bf16 autocast"))
            else:
                self.assertIn("Ingot refused bf16 here", r.stdout)
            rec_of = lambda name: json.loads(open(os.path.join(raw, name + ".out")).read().strip())
            seg, plain = rec_of("levers-run0-resnet20-ingot-seg3"), rec_of("levers-run0-resnet20-ingot-plain")
            blocks = rec_of("levers-run0-resnet20-ingot-blocks")
            self.assertEqual((plain["checkpointing_segments"], blocks["checkpointing"]["policy"]), (0, "blocks"))
            self.assertTrue(1 <= seg["checkpointing_segments"] <= 3)
            # checkpointing lowers the step's peak on Ingot's side, and fits larger batches
            for r_ in (seg, blocks):
                self.assertLess(r_["memory"]["step_peak_bytes"], 0.8 * plain["memory"]["step_peak_bytes"])
            scaled = {v: rec_of("levers-scaling-" + v)["scaling"]["max_batch"] for v in ("plain", "blocks")}
            self.assertGreater(scaled["blocks"], scaled["plain"])
            tseg = rec_of("levers-run0-resnet20-torch-seg3")
            tplain = rec_of("levers-run0-resnet20-torch-plain")
            self.assertLess(tseg["memory"]["activation_bytes"], tplain["memory"]["activation_bytes"])
            tblocks = rec_of("levers-run0-resnet20-torch-blocks")
            self.assertIn("per residual block", tblocks["checkpointing"])


if __name__ == "__main__":
    unittest.main()
