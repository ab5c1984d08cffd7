#!/usr/bin/python3
"""Ingot vs PyTorch 2.x on a GPT-2-shaped model (6 layers, 6 heads, width 384, byte vocabulary),
side by side on this machine: training tokens/s at T 256, batch 8 (PyTorch eager and
torch.compile after its warm-up), bf16 autocast against f32, peak step memory at T 1024 (what a
step holds at its peak beyond what it started with: Ingot's allocator counters — its caching
allocator keeps freed blocks, so its resident set does not move — and PyTorch's resident-set
high-water mark, as its CPU allocator returns memory to the system), gradient
checkpointing per block, the attention op forward + backward at T 1024, batch-1 greedy
generation through the KV cache against Hugging Face's GPT2LMHeadModel.generate, and a BERT
classifier of the same shape at T 128, batch 16 against transformers' BertForSequenceClassification.
Runs alternate; each number is the median of --runs runs.

    bench/compare_gpt.py [--runs 3] [--python build/torch-venv/bin/python] [--build build] [--quick]

Prints a Markdown table (paste it into bench/RESULTS.md) and writes every run's JSON to
build/bench-compare/gpt.jsonl.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def run(cmd, env=None):
    out = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if out.returncode != 0:
        sys.exit(f"failed ({out.returncode}): {' '.join(cmd)}\n{out.stderr[-2000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--python", default=os.path.join(ROOT, "build/torch-venv/bin/python"))
    p.add_argument("--build", default=os.path.join(ROOT, "build"))
    p.add_argument("--quick", action="store_true", help="fewer steps (a smoke run of the script)")
    a = p.parse_args()
    env = dict(os.environ, OMP_NUM_THREADS="2")
    step = os.path.join(a.build, "bench/gpt_step")
    attn = os.path.join(a.build, "bench/bench_attention")
    torch = [a.python, os.path.join(HERE, "torch_gpt.py")]
    steps = ["--steps", "3" if a.quick else "8", "--warmup", "1" if a.quick else "2"]
    long = ["--block", "1024", "--steps", "2" if a.quick else "3", "--warmup", "1"]
    jobs = {
        "ingot f32": [step] + steps,
        "torch eager": torch + ["--mode", "eager"] + steps,
        "torch compile": torch + ["--mode", "compile"] + steps,
        "ingot bf16": [step, "--bf16"] + steps,
        "torch bf16": torch + ["--mode", "bf16"] + steps,
        "ingot T1024": [step] + long,
        "ingot T1024 checkpoint": [step, "--checkpoint"] + long,
        "torch T1024": torch + ["--mode", "eager"] + long,
        "torch T1024 checkpoint": torch + ["--mode", "checkpoint"] + long,
        "ingot generate": [step, "--generate", "200"],
        "torch generate": torch + ["--generate", "200"],
        "torch attention": torch + ["--attention", "--steps", "3"],
        "ingot bert": [step, "--bert", "--block", "128", "--batch", "16"] + steps,
        "torch bert eager": torch + ["--bert", "--mode", "eager", "--block", "128", "--batch", "16"] + steps,
        "torch bert compile": torch + ["--bert", "--mode", "compile", "--block", "128", "--batch", "16"] + steps,
        "ingot bert bf16": [step, "--bert", "--bf16", "--block", "128", "--batch", "16"] + steps,
        "torch bert bf16": torch + ["--bert", "--mode", "bf16", "--block", "128", "--batch", "16"] + steps,
    }
    results = {k: [] for k in jobs}
    results["ingot attention"] = []
    os.makedirs(os.path.join(a.build, "bench-compare"), exist_ok=True)
    log = open(os.path.join(a.build, "bench-compare", "gpt.jsonl"), "w")
    for r in range(a.runs):
        for name, cmd in jobs.items():
            res = run(cmd, env)
            res["job"], res["run"] = name, r
            results[name].append(res)
            log.write(json.dumps(res) + "\n")
            print(f"run {r + 1}/{a.runs} {name}: {res}", file=sys.stderr)
        out = subprocess.run([attn, "--benchmark_filter=_f32", "--benchmark_format=json"],
                             capture_output=True, text=True, env=env)
        try:
            bench = json.loads(out.stdout)["benchmarks"]
            fwd = [b for b in bench if "f32" in b["name"] and "bwd" not in b["name"]]
            bwd = [b for b in bench if "f32" in b["name"] and "bwd" in b["name"]]
            total = (fwd[0]["real_time"] + bwd[0]["real_time"]) / 1e3  # ms -> s
            results["ingot attention"].append({"fwd_bwd_s": total})
        except (ValueError, KeyError, IndexError):
            print(f"bench_attention gave no f32 numbers:\n{out.stdout[-500:]}{out.stderr[-500:]}", file=sys.stderr)

    def med(name, key):
        vals = [x[key] for x in results[name] if key in x]
        return statistics.median(vals) if vals else float("nan")

    tok = {k: med(k, "tokens_per_s") for k in ("ingot f32", "torch eager", "torch compile", "ingot bf16", "torch bf16")}
    best = max(tok["torch eager"], tok["torch compile"])
    rows = [
        ("training tokens/s, T 256, batch 8, f32", f"{tok['ingot f32']:.0f}",
         f"eager {tok['torch eager']:.0f}, compile {tok['torch compile']:.0f}", tok["ingot f32"] / best, ">= 1.5"),
        ("bf16 autocast tokens/s (vs Ingot f32)", f"{tok['ingot bf16']:.0f}", f"bf16 {tok['torch bf16']:.0f}",
         tok["ingot bf16"] / tok["ingot f32"], ">= 1.5"),
    ]
    pk_i, pk_t = med("ingot T1024", "peak_bytes"), med("torch T1024", "peak_rss_bytes")
    rows.append(("peak step memory above the step's start, T 1024 (MiB)", f"{pk_i / 2**20:.0f}", f"{pk_t / 2**20:.0f}",
                 pk_i / pk_t, "<= 0.5"))
    ck_i, ck_t = med("ingot T1024 checkpoint", "peak_bytes"), med("torch T1024 checkpoint", "peak_rss_bytes")
    st, stc = med("ingot T1024", "step_s"), med("ingot T1024 checkpoint", "step_s")
    rows.append(("checkpointing per block, T 1024: peak (MiB) / step time", f"{ck_i / 2**20:.0f} / +{100 * (stc / st - 1):.0f}%",
                 f"{ck_t / 2**20:.0f}", 1 - ck_i / pk_i, "peak cut >= 0.5, time <= +35%"))
    at_i, at_t = med("ingot attention", "fwd_bwd_s"), med("torch attention", "fwd_bwd_s")
    rows.append(("attention fwd+bwd, B 8 H 6 T 1024 D 64 causal (ms)", f"{1e3 * at_i:.1f}", f"{1e3 * at_t:.1f}",
                 at_t / at_i, ">= 1.2"))
    g_i, g_t = med("ingot generate", "tokens_per_s"), med("torch generate", "tokens_per_s")
    rows.append(("batch-1 generation, 200 tokens (tokens/s)", f"{g_i:.0f}", f"{g_t:.0f} (HF generate)", g_i / g_t, ">= 2"))
    b = {k: med(k, "tokens_per_s") for k in ("ingot bert", "torch bert eager", "torch bert compile", "ingot bert bf16",
                                            "torch bert bf16")}
    rows.append(("BERT classifier training tokens/s, T 128, batch 16, f32", f"{b['ingot bert']:.0f}",
                 f"eager {b['torch bert eager']:.0f}, compile {b['torch bert compile']:.0f}",
                 b["ingot bert"] / max(b["torch bert eager"], b["torch bert compile"]), "—"))
    rows.append(("BERT classifier, bf16 autocast tokens/s", f"{b['ingot bert bf16']:.0f}",
                 f"bf16 {b['torch bert bf16']:.0f}", b["ingot bert bf16"] / b["torch bert bf16"], "—"))
    version = results["torch eager"][0].get("torch", "?")
    print(f"\nGPT 6 x 6 x 384, byte vocabulary, 2 threads, median of {a.runs} alternating runs; PyTorch {version}\n")
    print("| what | Ingot | PyTorch | ratio | target |")
    print("|---|---|---|---|---|")
    for what, i, t, ratio, target in rows:
        print(f"| {what} | {i} | {t} | {ratio:.2f} | {target} |")


if __name__ == "__main__":
    main()
