#!/usr/bin/python3
"""Tests of bench/compare --device cuda that need no GPU: its tables from recorded JSON, the names
shared by the bench_cuda_* programs, bench/torch_gpu_ops.py and the tables, a whole run with every
program replaced by recorded output, and its refusals (exit 3, one line) where the GPU, PyTorch's
CUDA or Ingot's cuda backend is missing.

    bench/test_compare_gpu.py [-v]
Environment: INGOT_BIN (the ingot binary) and INGOT_CUDA_BENCH_PROGRAMS (the bench_cuda_*
programs, ':'-separated) enable the cases that run them; ctest sets both.
"""
import contextlib
import io
import json
import os
import stat
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import compare_gpu_report as G  # noqa: E402

COMPARE = os.path.join(HERE, "compare")
PROGRAMS = [p for p in os.environ.get("INGOT_CUDA_BENCH_PROGRAMS", "").split(":") if p]
INGOT = os.environ.get("INGOT_BIN", "")


def gbench_doc():
    """Google Benchmark JSON as the bench_cuda_* programs write it (--benchmark_out_format=json)."""
    benches = [{"name": "BM_matmul/f32/4096/manual_time", "run_type": "iteration", "iterations": 10,
                "real_time": 3.1, "ingot_ms": 3.1, "cublas_ms": 3.0, "ingot_TFLOP/s": 44.3, "cublas_TFLOP/s": 45.8,
                "ratio": 0.967, "target": 0.95},
               {"name": "BM_matmul/bf16/4096/manual_time", "run_type": "iteration", "ingot_ms": 0.3,
                "cublas_ms": 0.2, "ingot_TFLOP/s": 458.0, "cublas_TFLOP/s": 687.0, "ratio": 0.667, "target": 0.95},
               {"name": "BM_matmul/tf32/4096/manual_time", "run_type": "iteration", "error_occurred": True,
                "error_message": "the cuda plugin did not use TF32"},
               {"name": "BM_add/f32/64Mi/manual_time", "run_type": "iteration", "ingot_ms": 0.25, "memcpy_ms": 0.14,
                "ingot_GB/s": 3221.0, "memcpy_GB/s": 3834.0, "ratio": 0.84, "target": 0.8},
               {"name": "BM_conv/fwd/f16/nhwc/manual_time", "run_type": "iteration", "ingot_ms": 0.1,
                "cudnn_ms": 0.05, "ingot_TFLOP/s": 74.0, "cudnn_TFLOP/s": 148.0, "ratio": 0.5, "target": 0.0},
               {"name": "BM_conv/fwd/f16/nhwc/manual_time_mean", "run_type": "aggregate", "ratio": 9.9},
               {"name": "BM_softmax/f32/16384x4096/manual_time", "run_type": "iteration", "ingot_ms": 0.2,
                "ingot_GB/s": 2684.0},
               {"name": "BM_tiny_add/f32/1/manual_time", "run_type": "iteration", "ingot_ms": 0.006}]
    return {"context": {}, "benchmarks": benches}


class Tables(unittest.TestCase):
    def test_gbench_names_and_errors(self):
        r = G.gbench_results(gbench_doc())
        self.assertEqual(r["matmul/f32/4096"]["ratio"], 0.967)
        self.assertEqual(r["matmul/tf32/4096"], {"error": "the cuda plugin did not use TF32"})
        self.assertEqual(r["conv/fwd/f16/nhwc"]["ratio"], 0.5)  # the aggregate row is not taken
        self.assertNotIn("conv/fwd/f16/nhwc/manual_time_mean", r)
        self.assertEqual(G.rate_keys(r["add/f32/64Mi"]), ("GB/s", "memcpy"))
        self.assertEqual(G.rate_keys(r["softmax/f32/16384x4096"]), ("GB/s", None))

    def test_vendor_table_verdicts(self):
        text, misses, missing = G.vendor_table(G.gbench_results(gbench_doc()))
        self.assertEqual(misses, ["matmul/bf16/4096"])
        self.assertIn("matmul/tf32/4096", missing)  # an error is a missing row, never a pass
        self.assertIn("matmul/f32/8192", missing)   # not run
        self.assertNotIn("add/f32/64Mi", missing)
        row = next(ln for ln in text.splitlines() if ln.startswith("| matmul/f32/4096 "))
        self.assertIn("0.967", row)
        self.assertIn("pass", row)
        self.assertIn("cublas: 45.80 TFLOP/s", row)
        nhwc = next(ln for ln in text.splitlines() if ln.startswith("| conv/fwd/f16/nhwc "))
        self.assertNotIn("pass", nhwc)  # no target there
        self.assertNotIn("miss", nhwc)
        self.assertIn("the cuda plugin did not use TF32", text)

    def test_torch_join(self):
        ingot = G.gbench_results(gbench_doc())
        torch_doc = {"version": "2.11", "results": {"softmax/f32/16384x4096": {"ms": 0.1, "GB/s": 5368.0},
                                                    "tiny_add/f32/1": {"ms": 0.003},
                                                    "conv/fwd/f16/nhwc": {"error": "cuDNN error"}}}
        text, missing = G.torch_ops_table(ingot, torch_doc)
        softmax = next(ln for ln in text.splitlines() if ln.startswith("| softmax/f32/16384x4096 "))
        self.assertTrue(softmax.endswith("| 0.50 |"), softmax)  # PyTorch's 0.1 ms / Ingot's 0.2 ms
        self.assertIn("2,684.00 GB/s", softmax)
        tiny = next(ln for ln in text.splitlines() if ln.startswith("| tiny_add/f32/1 "))
        self.assertIn("6.00 us/op", tiny)
        self.assertTrue(tiny.endswith("| 0.50 |"), tiny)
        self.assertIn("conv/fwd/f16/nhwc", missing)
        self.assertIn("layer_norm/f32/16384x4096", missing)
        self.assertNotIn("softmax/f32/16384x4096", missing)

    def test_e2e_ratios(self):
        def res(ips, ms):
            return {"train": {"images_per_s": {"median": ips}}, "inference": {"images_per_s": {"median": 2 * ips}},
                    "latency_b1_ms": {"median": ms}, "device": "cuda:0", "params": 11173962,
                    "ops_by_backend": {"cuda": 1000}, "memory": {"peak_allocated_bytes": 2**30}}
        ingot = {"resnet18": [res(1000.0, 2.0), res(1200.0, 2.2)]}
        torch_runs = {"resnet18": [res(2000.0, 1.0), None]}
        text, missing = G.e2e_table(["resnet18", "mlp"], ingot, torch_runs, 256)
        train = next(ln for ln in text.splitlines() if "resnet18 | train" in ln)
        self.assertIn("| 256 |", train)
        self.assertTrue(train.endswith("| 0.55 |"), train)  # median 1100 / 2000
        latency = next(ln for ln in text.splitlines() if "resnet18 | latency" in ln)
        self.assertTrue(latency.endswith("| 2.10 |"), latency)
        self.assertEqual([m for m in missing if m.startswith("resnet18")], [])
        self.assertIn("mlp train", missing)
        details = G.e2e_details(["resnet18"], ingot, torch_runs)
        self.assertIn("cuda 1,000", details)
        self.assertIn("11,173,962", details)


@unittest.skipUnless(PROGRAMS, "INGOT_CUDA_BENCH_PROGRAMS not set")
class Names(unittest.TestCase):
    def test_every_table_row_is_a_benchmark(self):
        listed = set()
        for p in PROGRAMS:
            out = subprocess.run([p, "--benchmark_list_tests"], capture_output=True, text=True, check=True).stdout
            listed |= {G.gbench_results({"benchmarks": [{"name": n}]}).popitem()[0] for n in out.split()}
        self.assertEqual(sorted(set(G.VENDOR_ROWS) - listed), [])
        self.assertEqual(sorted(set(G.TORCH_ROWS) - listed), [])

    def test_torch_side_has_the_same_names(self):
        r = subprocess.run(["/usr/bin/python3", os.path.join(HERE, "torch_gpu_ops.py"), "--device", "cpu", "--smoke"],
                           capture_output=True, text=True)
        if r.returncode != 0 and "No module named 'torch'" in r.stderr:
            self.skipTest("Debian's python3-torch is not installed")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(sorted(json.loads(r.stdout)["results"]), sorted(G.TORCH_ROWS))


class Flow(unittest.TestCase):
    """compare_gpu.main end to end with every program replaced by recorded output."""

    def fake_run(self, cmd, env, name, timeout):
        self.calls.append((name, cmd, env))
        def bench(framework):
            return json.dumps({"framework": framework, "device": "cuda:0", "params": 10, "ops_by_backend": {"cuda": 5},
                               "train": {"images_per_s": {"median": 1000.0}, "ms_per_step": {"median": 256.0}},
                               "inference": {"images_per_s": {"median": 4000.0}, "ms_per_batch": {"median": 64.0}},
                               "latency_b1_ms": {"median": 1.0, "p90": 1.2}, "memory": {"peak_allocated_bytes": 2**20}})
        if "ingot" in name:
            return 0, bench("ingot") + "\n", ""
        if name.startswith("run"):
            return 0, bench("pytorch") + "\n", ""
        if name.startswith("bench_cuda_"):
            out = next(a for a in cmd if a.startswith("--benchmark_out=")).split("=", 1)[1]
            rows = [n for n in G.VENDOR_ROWS + G.TORCH_ROWS]
            with open(out, "w") as f:
                json.dump({"benchmarks": [{"name": "BM_%s/manual_time" % n, "run_type": "iteration", "ingot_ms": 1.0,
                                           "ref_ms": 0.9, "ingot_GB/s": 900.0, "ref_GB/s": 1000.0, "ratio": 0.9,
                                           "target": 0.8} for n in rows]}, f)
            return 0, "", ""
        if name == "torch_gpu_ops":
            return 0, json.dumps({"version": "2.11", "results": {n: {"ms": 2.0} for n in G.TORCH_ROWS}}) + "\n", ""
        raise AssertionError(name)

    def test_complete_tables_written_between_markers(self):
        import argparse
        import compare_env
        import compare_gpu
        self.calls = []
        patches = [(compare_gpu, "find_torch_python", lambda p: ("/fake/python3", "torch 2.11 CUDA 13.0 GPU")),
                   (compare_gpu, "cuda_library_dirs", lambda p: ["/fake/cuda/lib64"]),
                   (compare_gpu, "which_ingot", lambda p: "/fake/build/apps/ingot/ingot"),
                   (compare_env, "has_bench", lambda p: True),
                   (compare_gpu, "command_output", lambda cmd: "fake"),
                   (compare_gpu.Runner, "run", lambda runner, *a: self.fake_run(*a)),
                   (compare_gpu.os, "access", lambda path, mode: True)]
        saved = [(m, n, getattr(m, n)) for m, n, _ in patches]
        with tempfile.TemporaryDirectory() as d:
            results = os.path.join(d, "RESULTS.md")
            with open(results, "w") as f:
                f.write("# Before\n\n%s\nold\n%s\n\n# After\n" % (G.GPU_BEGIN, G.GPU_END))
            args = argparse.Namespace(gpu_parts="e2e,kernels", python=None, ingot=None, tf32="default", quick=True,
                                      runs=2, out=d, bench_dir=None, no_write=False, results=results)
            try:
                for m, n, v in patches:
                    setattr(m, n, v)
                with contextlib.redirect_stdout(io.StringIO()):
                    rc = compare_gpu.main(args, ["--device", "cuda"], lambda msg: None)
            finally:
                for m, n, v in saved:
                    setattr(m, n, v)
            with open(results) as f:
                text = f.read()
        self.assertEqual(rc, 0)
        self.assertTrue(text.startswith("# Before") and text.rstrip().endswith("# After"))
        self.assertNotIn("old", text)
        self.assertIn("| resnet18 | train images/s | 256 | 1,000 (1,000-1,000) | 1,000 (1,000-1,000) | 1.00 |", text)
        self.assertIn("| softmax/f32/16384x4096 | 1.000 ms (900.00 GB/s) | 2.000 ms | 2.00 |", text)
        self.assertIn("Targets missed: none.", text)
        names = [c[0] for c in self.calls]
        self.assertEqual(names[:4], ["init-ingot-%s" % w for w in compare_gpu.WORKLOADS])
        self.assertEqual(names.count("run1-torch-resnet18"), 1)
        for prog in compare_gpu.PROGRAMS:
            self.assertIn(prog, names)
        ingot_env = next(env for name, cmd, env in self.calls if name == "run0-ingot-resnet18")
        self.assertEqual((ingot_env["INGOT_CUDA_CONV_TF32"], ingot_env["INGOT_CUDA_MATMUL_TF32"]), ("1", "0"))
        self.assertTrue(ingot_env["LD_LIBRARY_PATH"].startswith("/fake/cuda/lib64"))
        torch_cmd = next(cmd for name, cmd, env in self.calls if name == "run0-torch-resnet18")
        self.assertEqual(torch_cmd[torch_cmd.index("--tf32") + 1], "default")
        self.assertIn("--device", torch_cmd)


class Refusals(unittest.TestCase):
    """Without a GPU every path ends in one clear line and exit 3."""

    def run_compare(self, *args):
        with tempfile.TemporaryDirectory() as out:
            r = subprocess.run([COMPARE, "--device", "cuda", "--quick", "--no-write", "--out", out] + list(args),
                               capture_output=True, text=True, timeout=300)
        return r.returncode, (r.stdout + r.stderr).strip().splitlines()

    def test_no_torch_with_cuda(self):
        rc, lines = self.run_compare("--python", "/bin/false")
        self.assertEqual(rc, 3, lines)
        self.assertTrue(lines[-1].startswith("compare: error: no python with a CUDA-enabled PyTorch"), lines)

    @unittest.skipUnless(INGOT, "INGOT_BIN not set")
    @unittest.skipIf(os.path.exists("/dev/nvidia0"), "this machine has an NVIDIA GPU")
    def test_ingot_without_cuda(self):
        with tempfile.TemporaryDirectory() as d:
            fake = os.path.join(d, "python3")  # a python whose torch claims a GPU: Ingot's side decides
            with open(fake, "w") as f:
                f.write("#!/bin/sh\ncase \"$2\" in *getsitepackages*) echo '[]';; "
                        "*) echo 'True torch 0.0 CUDA 13.0 a pretend GPU';; esac\n")
            os.chmod(fake, stat.S_IRWXU)
            for parts in ("e2e", "kernels"):
                extra = ["--bench-dir", os.path.dirname(PROGRAMS[0])] if PROGRAMS else []
                rc, lines = self.run_compare("--python", fake, "--ingot", INGOT, "--gpu-parts", parts, *extra)
                if parts == "kernels" and not PROGRAMS:
                    continue
                self.assertEqual(rc, 3, lines)
                self.assertRegex(lines[-1], r"^compare: error: .*cuda backend (cannot run here|unavailable)", lines)


if __name__ == "__main__":
    unittest.main(verbosity=2)
