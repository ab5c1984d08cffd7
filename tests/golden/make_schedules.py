"""Records torch.optim.lr_scheduler learning rates per step for tests/train_math/test_lr_schedule.cpp.

Run by hand with Debian's torch (never the python first on PATH):
    /usr/bin/python3 tests/golden/make_schedules.py
Writes tests/golden/data/sched_torch.json: for each case, the Ingot `train.scheduler:` config,
the run's total steps, the base lr and the lr torch's optimizer holds before each optimizer step.
Each case's config is turned into the equivalent torch scheduler below, so the C++ test also
covers the YAML factory (defaults included).
"""
import json
import os
import warnings

import torch
from torch.optim import lr_scheduler as S

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "sched_torch.json")


def torch_schedule(opt, cfg, total):
    """The torch scheduler for an Ingot config; `total` is the steps it runs (Ingot's defaults)."""
    warmup = cfg.get("warmup")
    if warmup:
        first = S.LinearLR(opt, start_factor=warmup.get("start_factor", 1.0 / 3),
                           end_factor=warmup.get("end_factor", 1.0), total_iters=warmup["steps"])
        rest = dict(cfg)
        del rest["warmup"]
        main = torch_schedule(opt, rest, total - warmup["steps"])
        return S.SequentialLR(opt, [first, main], milestones=[warmup["steps"]])
    t = cfg["type"]
    if t == "constant":
        return S.ConstantLR(opt, factor=cfg.get("factor", 1.0), total_iters=cfg.get("total_iters", 5))
    if t == "step":
        return S.StepLR(opt, step_size=cfg["step_size"], gamma=cfg.get("gamma", 0.1))
    if t == "multistep":
        return S.MultiStepLR(opt, milestones=cfg["milestones"], gamma=cfg.get("gamma", 0.1))
    if t == "exponential":
        return S.ExponentialLR(opt, gamma=cfg["gamma"])
    if t == "cosine":
        return S.CosineAnnealingLR(opt, T_max=cfg.get("t_max", total), eta_min=cfg.get("eta_min", 0.0))
    if t == "linear":
        return S.LinearLR(opt, start_factor=cfg.get("start_factor", 1.0 / 3), end_factor=cfg.get("end_factor", 1.0),
                          total_iters=cfg.get("total_iters", 5))
    if t == "one_cycle":
        return S.OneCycleLR(opt, max_lr=cfg.get("max_lr", opt.param_groups[0]["lr"]),
                            total_steps=cfg.get("total_steps", total), pct_start=cfg.get("pct_start", 0.3),
                            anneal_strategy=cfg.get("anneal_strategy", "cos"), div_factor=cfg.get("div_factor", 25.0),
                            final_div_factor=cfg.get("final_div_factor", 1e4),
                            three_phase=cfg.get("three_phase", False), cycle_momentum=False)
    if t == "sequential":
        ms = cfg["milestones"]
        bounds = [0] + ms + [total]
        parts = [torch_schedule(opt, c, bounds[i + 1] - bounds[i]) for i, c in enumerate(cfg["schedulers"])]
        return S.SequentialLR(opt, parts, milestones=ms)
    raise ValueError(t)


CASES = [
    ("constant_plain", {"type": "constant"}, 60, 0.1),
    ("constant_factor", {"type": "constant", "factor": 0.25, "total_iters": 7}, 60, 0.1),
    ("step_7_half", {"type": "step", "step_size": 7, "gamma": 0.5}, 80, 0.1),
    ("step_default_gamma", {"type": "step", "step_size": 20}, 100, 0.3),
    ("multistep", {"type": "multistep", "milestones": [10, 25, 40], "gamma": 0.3}, 80, 0.05),
    ("multistep_repeated", {"type": "multistep", "milestones": [30, 10, 30]}, 60, 1.0),
    ("exponential_95", {"type": "exponential", "gamma": 0.95}, 120, 0.1),
    ("exponential_999", {"type": "exponential", "gamma": 0.999}, 200, 0.01),
    ("cosine_50_past_tmax", {"type": "cosine", "t_max": 50}, 160, 0.1),
    ("cosine_eta_min", {"type": "cosine", "t_max": 37, "eta_min": 0.001}, 90, 0.1),
    ("cosine_default_tmax", {"type": "cosine", "eta_min": 1e-5}, 100, 0.5),
    ("linear_default", {"type": "linear"}, 40, 0.1),
    ("linear_down", {"type": "linear", "start_factor": 1.0, "end_factor": 0.05, "total_iters": 30}, 60, 0.2),
    ("warmup_cosine", {"type": "cosine", "eta_min": 0.0001, "warmup": {"steps": 20, "start_factor": 0.1}}, 150, 0.1),
    ("warmup_cosine_tmax", {"type": "cosine", "t_max": 60, "warmup": {"steps": 12}}, 100, 0.05),
    ("warmup_step", {"type": "step", "step_size": 15, "gamma": 0.5,
                     "warmup": {"steps": 10, "start_factor": 0.01, "end_factor": 0.9}}, 80, 0.1),
    ("warmup_multistep", {"type": "multistep", "milestones": [20, 40], "warmup": {"steps": 5}}, 60, 0.1),
    ("warmup_exponential", {"type": "exponential", "gamma": 0.97, "warmup": {"steps": 8, "start_factor": 0.2}}, 70, 0.1),
    ("warmup_constant", {"type": "constant", "warmup": {"steps": 25, "start_factor": 0.05}}, 60, 0.3),
    ("warmup_linear_decay", {"type": "linear", "start_factor": 1.0, "end_factor": 0.0, "total_iters": 50,
                             "warmup": {"steps": 10}}, 70, 0.1),
    ("sequential_three", {"type": "sequential", "milestones": [10, 50],
                          "schedulers": [{"type": "linear", "start_factor": 0.1, "total_iters": 10},
                                         {"type": "cosine", "eta_min": 0.01},
                                         {"type": "exponential", "gamma": 0.9}]}, 90, 0.1),
    ("sequential_constant_exp", {"type": "sequential", "milestones": [2],
                                 "schedulers": [{"type": "constant", "factor": 0.1, "total_iters": 2},
                                                {"type": "exponential", "gamma": 0.9}]}, 30, 1.0),
    ("one_cycle_cos", {"type": "one_cycle", "max_lr": 0.5}, 100, 0.1),
    ("one_cycle_linear", {"type": "one_cycle", "max_lr": 0.2, "anneal_strategy": "linear", "pct_start": 0.25}, 120, 0.1),
    ("one_cycle_three_phase", {"type": "one_cycle", "max_lr": 1.0, "three_phase": True, "div_factor": 10.0,
                               "final_div_factor": 100.0}, 90, 0.1),
    ("one_cycle_three_phase_linear", {"type": "one_cycle", "max_lr": 0.3, "three_phase": True, "pct_start": 0.2,
                                      "anneal_strategy": "linear"}, 75, 0.1),
    ("one_cycle_base_lr_total", {"type": "one_cycle", "total_steps": 80, "pct_start": 0.4}, 60, 0.4),
]


def record(cfg, total, base_lr):
    p = torch.nn.Parameter(torch.zeros(1))
    opt = torch.optim.SGD([p], lr=base_lr)
    sched = torch_schedule(opt, cfg, total)
    lrs = []
    for _ in range(total):
        lrs.append(opt.param_groups[0]["lr"])
        opt.step()
        sched.step()
    return lrs


def main():
    warnings.simplefilter("ignore")  # step(0) inside SequentialLR warns about the epoch argument
    cases = []
    for name, cfg, total, base_lr in CASES:
        cases.append({"name": name, "config": cfg, "total_steps": total, "base_lr": base_lr,
                      "lr": record(cfg, total, base_lr)})
    with open(OUT, "w") as f:
        json.dump({"torch_version": torch.__version__, "cases": cases}, f, indent=None, separators=(",", ":"))
        f.write("\n")
    print(f"wrote {OUT}: {len(cases)} cases")


if __name__ == "__main__":
    main()
