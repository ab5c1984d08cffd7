"""Compression, Ingot vs PyTorch (`bench/compare --compress`): Fashion-MNIST, the CNN of
configs/fashion_mnist_cnn.yaml as the trained f32 model (Ingot f32 is the base of every ratio).

Ingot side, each an `ingot run` of a config written under --out/configs (init_from the teacher's
weights, `report: {stages: true}`, so every run's metrics hold the measured rows of the stage
table):
  int8_static     quantize static (histogram observers, 32 calibration batches, gate 0.005)
  int8_dynamic    quantize dynamic (Linear layers)
  prune_global80  prune global_unstructured 0.8 + 2 epochs of fine-tuning
  prune_ln50      prune ln_structured 0.5 (n=1, physically shrunk) + 2 epochs of fine-tuning
  distill         for each seed: the same student alone (alpha 0: plain cross entropy, no teacher
                  forward) and distilled (alpha 0.9, T 4) from two teachers: the 4-epoch one
                  above and the same CNN trained 12 epochs (a teacher that knows more than the
                  student learns alone in 4)
  pipeline        configs/fashion_mnist_compress.yaml as shipped
PyTorch side (bench/torch_compress.py, PyTorch 2.x from the build's venv): the same teacher weights
through quantize_dynamic, eager static quantization and torch.nn.utils.prune (no fine-tuning:
torch's pruning changes neither size nor speed, which is what that column shows).
The tables go into bench/RESULTS.md between the `compare-compress` markers.
"""
import json
import os
import statistics
import subprocess
import sys
import time

import yaml

import compare_amp
import compare_env as E
import compare_report as R

BEGIN, END = "<!-- compare-compress:begin -->", "<!-- compare-compress:end -->"
LONG_TEACHER_EPOCHS = 12
STUDENT = {"preset": "simple_cnn", "input_shape": [1, 28, 28], "width": 16, "hidden": 64, "dropout": 0.1,
           "classes": 10}
FINE_TUNE = {"epochs": 2, "optimizer": {"type": "adamw", "lr": 0.0005, "weight_decay": 0.0},
             "scheduler": {"type": "cosine", "eta_min": 0.0}}
EXPERIMENTS = {
    "int8_static": [{"type": "quantize", "mode": "static", "calibration": {"batches": 32, "observer": "histogram"},
                     "tolerance": {"absolute": 0.005}}],
    "int8_dynamic": [{"type": "quantize", "mode": "dynamic"}],
    "prune_global80": [{"type": "prune", "method": "global_unstructured", "amount": 0.8, "fine_tune": FINE_TUNE}],
    "prune_ln50": [{"type": "prune", "method": "ln_structured", "amount": 0.5, "n": 1, "fine_tune": FINE_TUNE}],
}


def ingot_run(ingot, config, runs, log, threads):
    env = dict(os.environ, OMP_NUM_THREADS=str(threads))
    t0 = time.time()
    r = subprocess.run([ingot, "run", config, "--runs-dir", runs, "--force"], capture_output=True, text=True, env=env)
    log("  %s: exit %d in %.0f s" % (os.path.basename(config), r.returncode, time.time() - t0))
    if r.returncode != 0:
        raise RuntimeError("ingot run %s failed (%d):\n%s%s" % (config, r.returncode, r.stdout[-3000:], r.stderr[-3000:]))
    return r.stdout


def stage_rows(run_dir):
    rows = []
    with open(os.path.join(run_dir, "metrics.jsonl")) as f:
        for line in f:
            rec = json.loads(line)
            if rec.get("event") == "stage_report":
                rows.append(rec)
    return rows


def write_config(out, name, base, stages, extra=None):
    cfg = dict(base)
    cfg["name"] = name
    cfg["report"] = {"stages": True}
    cfg["stages"] = stages
    cfg.update(extra or {})
    path = os.path.join(out, "configs", name + ".yaml")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        yaml.safe_dump(cfg, f, sort_keys=False)
    return path


def ratio(a, b):
    return a / b if b else float("nan")


def lever_row(label, rows, target):
    base, last = rows[0], rows[-1]
    return "| %s | %.2f%% -> %.2f%% (%+.2f) | %.2fx | %.2fx | %.2fx | %s | %s |" % (
        label, 100 * base["accuracy"], 100 * last["accuracy"], 100 * (last["accuracy"] - base["accuracy"]),
        ratio(base["bytes_on_disk"], last["bytes_on_disk"]), ratio(last["images_per_s"], base["images_per_s"]),
        ratio(base["latency_b1_ms"], last["latency_b1_ms"]), target, last.get("note", ""))


def torch_row(label, base, row):
    return "| %s | %.2f%% -> %.2f%% (%+.2f) | %.2fx | %.2fx | %.2fx |" % (
        label, 100 * base["accuracy"], 100 * row["accuracy"], 100 * (row["accuracy"] - base["accuracy"]),
        ratio(base["bytes"], row["bytes"]), ratio(row["images_per_s"], base["images_per_s"]),
        ratio(base["latency_b1_ms"], row["latency_b1_ms"]))


def run(args, log):
    out = args.out or os.path.join(compare_amp.build_dir(), "bench-compress")
    runs = os.path.join(out, "runs")
    ingot = args.ingot or os.path.join(compare_amp.build_dir(), "apps", "ingot", "ingot")
    threads = 2
    base = yaml.safe_load(open(os.path.join(E.ROOT, "configs", "fashion_mnist_cnn.yaml")))
    base["threads"] = threads
    started = time.time()
    load = os.getloadavg()[0]
    log("teacher: %s" % "configs/fashion_mnist_cnn.yaml")
    teacher_cfg = write_config(out, "teacher", base, ["train", "evaluate", "save"])
    ingot_run(ingot, teacher_cfg, runs, log, threads)
    teacher = os.path.join(runs, "teacher", "model.safetensors")
    start = dict(base, init_from=teacher)
    results = {}
    for name, stages in EXPERIMENTS.items():
        ingot_run(ingot, write_config(out, name, start, stages), runs, log, threads)
        results[name] = stage_rows(os.path.join(runs, name))
    long_cfg = write_config(out, "teacher_long", dict(base, train=dict(base["train"], epochs=LONG_TEACHER_EPOCHS)),
                            ["train", "evaluate", "save"])
    ingot_run(ingot, long_cfg, runs, log, threads)
    long_teacher = os.path.join(runs, "teacher_long", "model.safetensors")
    distill = {"alone": [], "distilled": [], "distilled_long": [], "teachers": []}
    for kind, alpha, weights in (("alone", 0.0, teacher), ("distilled", 0.9, teacher),
                                 ("distilled_long", 0.9, long_teacher)):
        for seed in range(args.seeds):
            name = "student_%s_seed%d" % (kind, seed)
            stage = {"type": "distill", "teacher": "current", "student": STUDENT, "temperature": 4, "alpha": alpha,
                     "fine_tune": {"epochs": base["train"].get("epochs", 4)}}
            cfg = dict(start, seed=seed, init_from=weights)
            ingot_run(ingot, write_config(out, name, cfg, [stage]), runs, log, threads)
            rows = stage_rows(os.path.join(runs, name))
            distill[kind].append(rows[-1]["accuracy"])
            if seed == 0 and kind != "alone":
                distill["teachers"].append(rows[0]["accuracy"])
    log("pipeline: configs/fashion_mnist_compress.yaml")
    ingot_run(ingot, os.path.join(E.ROOT, "configs", "fashion_mnist_compress.yaml"), runs, log, threads)
    pipeline_md = open(os.path.join(runs, "fashion_mnist_compress", "compression.md")).read()
    python, version, note = compare_amp.find_torch_python(args.torch_python, args.install_torch, log)
    log("PyTorch %s: %s" % (version, python))
    r = subprocess.run([python, os.path.join(E.ROOT, "bench", "torch_compress.py"), teacher_cfg, teacher,
                        "--threads", str(threads)], capture_output=True, text=True, check=True)
    torch_rows = {row["variant"]: row for row in map(json.loads, r.stdout.splitlines())}
    minutes = (time.time() - started) / 60
    return report(args, results, distill, torch_rows, pipeline_md, version, note, load, minutes)


def report(args, results, distill, torch_rows, pipeline_md, version, note, load, minutes):
    a = distill["alone"]

    def gain(key):
        d = distill[key]
        return 100 * (statistics.mean(d) - statistics.mean(a)) if d and a else float("nan")

    def accs(key):
        return ", ".join("%.2f%%" % (100 * x) for x in distill[key])

    lines = [
        "Command: `bench/compare --compress%s` (%.0f minutes; load average %.2f at the start; 2 threads on "
        "both sides; Fashion-MNIST, the CNN of configs/fashion_mnist_cnn.yaml trained 4 epochs as the f32 base)."
        % (" --seeds %d" % args.seeds if args.seeds != 3 else "", minutes, load),
        "",
        "Ingot: each lever applied to the same trained f32 model; ratios against that model as Ingot runs it in f32.",
        "",
        "| lever | accuracy | smaller | images/s at 256 | batch-1 latency | target | what it did |",
        "|---|---|---|---|---|---|---|",
        lever_row("static int8", results["int8_static"], "<= 0.5 points, >= 3.5x smaller, >= 2.5x at 256"),
        lever_row("dynamic int8 (Linear)", results["int8_dynamic"], "-"),
        lever_row("global L1 80% + 2 epochs", results["prune_global80"], "<= 0.5 points"),
        lever_row("L1 structured 50% + 2 epochs", results["prune_ln50"], ">= 1.6x at 256"),
        "",
        "Distillation, student %s trained 4 epochs, mean of %d seeds (target: distilled >= alone + 0.3 points):"
        % (json.dumps(STUDENT), len(a)),
        "",
        "| student | accuracy per seed | mean gain over alone |",
        "|---|---|---|",
        "| alone (alpha 0) | %s | - |" % accs("alone"),
        "| distilled from the 4-epoch teacher (%.2f%%), alpha 0.9, T 4 | %s | %+.2f |"
        % (100 * distill["teachers"][0], accs("distilled"), gain("distilled")),
        "| distilled from the %d-epoch teacher (%.2f%%), alpha 0.9, T 4 | %s | %+.2f |"
        % (LONG_TEACHER_EPOCHS, 100 * distill["teachers"][1], accs("distilled_long"), gain("distilled_long")),
        "",
        "PyTorch %s on the same trained weights (its own f32 as the base)%s:" % (version, " " + note if note else ""),
        "",
        "| torch lever | accuracy | smaller | images/s at 256 | batch-1 latency |",
        "|---|---|---|---|---|",
    ]
    base = torch_rows["f32"]
    for key, label in (("static_int8", "static int8 (eager, x86 engine)"),
                       ("dynamic_int8", "quantize_dynamic (Linear)"),
                       ("pruned_global80", "prune.global_unstructured 80% (no fine-tuning)"),
                       ("pruned_ln50", "prune.ln_structured 50% (masks, no fine-tuning)")):
        lines.append(torch_row(label, base, torch_rows[key]))
    ingot_f32 = results["int8_static"][0]
    lines += ["", "Absolute speed, f32 and int8 (images/s at 256 / batch-1 ms): Ingot f32 %.0f / %.3f, Ingot int8 "
              "%.0f / %.3f; PyTorch f32 %.0f / %.3f, PyTorch int8 %.0f / %.3f."
              % (ingot_f32["images_per_s"], ingot_f32["latency_b1_ms"], results["int8_static"][-1]["images_per_s"],
                 results["int8_static"][-1]["latency_b1_ms"], base["images_per_s"], base["latency_b1_ms"],
                 torch_rows["static_int8"]["images_per_s"], torch_rows["static_int8"]["latency_b1_ms"]),
              "", "The shipped pipeline, configs/fashion_mnist_compress.yaml (its compression.md):", "",
              pipeline_md.split("\n\n", 2)[-1].strip()]
    return "\n".join(lines)


def main(args, argv, log):
    text = run(args, log)
    print(text)
    if not args.no_write:
        R.replace_section(args.results or os.path.join(E.ROOT, "bench", "RESULTS.md"), text, BEGIN, END)
    return 0


if __name__ == "__main__":
    sys.exit("run through bench/compare --compress")
