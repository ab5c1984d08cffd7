"""Golden loss-scaling trajectories (torch.cuda.amp.GradScaler) for tests/core/amp/test_grad_scaler.cpp.

Run by hand with Debian's torch (never the python first on PATH):
    /usr/bin/python3 tests/golden/make_amp.py
Writes tests/golden/data/amp_grad_scaler.safetensors.

torch 1.13 has no CPU kernel for aten::_amp_update_scale_ nor for
aten::_amp_foreach_non_finite_check_and_unscale_ ("Could not run ... with arguments from the 'CPU'
backend"), so update_scale() and unscale() below port the CUDA kernels of
aten/src/ATen/native/cuda/AmpKernels.cu (1.13) statement by statement, with their dtypes: the
scale is a float32 value, the factors are doubles (float * double in double, then stored to
float32), the growth is dropped when it is not finite in float32; a gradient is read in opmath
(float32 for float16, else its own type), checked with isfinite before the multiply and written
back as static_cast<scalar_t>(val * inv_scale). The GradScaler glue is torch's own: inv_scale =
scale.double().reciprocal().float(), and scale(loss) = loss * the float32 scale tensor.

Metadata "cases" (JSON) lists each case: name, kind ("update": found_inf flags only; "unscale":
gradients too), options (GradScaler's, Ingot's names), steps, and for "unscale" the parameter
dtypes. Tensors, prefixed "<case>/":
  flags         uint8 [steps]  found_inf fed to update (kind "update") or found by unscale
  scale         f32 [steps]    the scale after step s's update
  tracker       i64 [steps]    growth_tracker after step s's update
  grad.<s>.<k>  (unscale)      parameter k's scaled gradient before step s's unscale
  unscaled.<s>.<k>             the same gradient after unscale
  loss.<s>, scaled_loss.<s>    a 0-dim loss (float16 on even steps, float32 on odd) and
                               loss * scale before step s, as torch computes it (float32 [1])
"""
import json
import os

import torch

import st_io

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "data", "amp_grad_scaler.safetensors")

DEFAULTS = dict(init_scale=65536.0, growth_factor=2.0, backoff_factor=0.5, growth_interval=2000)


def to_f32(x):
    """A Python float (double) stored to float32, like an assignment to float in CUDA (RNE, inf on overflow)."""
    return torch.tensor([x], dtype=torch.float64).float()


def update_scale(scale, tracker, found_inf, o):
    """amp_update_scale_cuda_kernel: scale is a float32 [1] tensor, tracker an int."""
    if found_inf:
        return to_f32(float(scale) * o["backoff_factor"]), 0
    successful = tracker + 1
    if successful == o["growth_interval"]:
        new_scale = to_f32(float(scale) * o["growth_factor"])
        return (new_scale if torch.isfinite(new_scale).all() else scale), 0
    return scale, successful


def unscale(grads, scale):
    """GradScaler._unscale_grads_ + _amp_foreach_non_finite_check_and_unscale_cuda_, in place."""
    inv_scale = scale.double().reciprocal().float()
    found_inf = False
    for g in grads:
        val = g.float() if g.dtype == torch.float16 else g  # opmath_t
        if not torch.isfinite(val).all():
            found_inf = True
        if inv_scale.item() != 1.0:
            val = val * inv_scale.to(val.dtype)  # float * float, or double * (double) float
        g.copy_(val.to(g.dtype))
    return found_inf


def run_update_case(out, name, options, flags):
    o = dict(DEFAULTS, **options)
    scale, tracker = to_f32(o["init_scale"]), 0
    scales, trackers = [], []
    for f in flags:
        scale, tracker = update_scale(scale, tracker, f, o)
        scales.append(float(scale))
        trackers.append(tracker)
    out[f"{name}/flags"] = torch.tensor(flags, dtype=torch.uint8)
    out[f"{name}/scale"] = torch.tensor(scales, dtype=torch.float32)
    out[f"{name}/tracker"] = torch.tensor(trackers, dtype=torch.int64)
    return dict(name=name, kind="update", options=options, steps=len(flags))


def run_unscale_case(out, name, options, shapes, steps, magnitude, inject, seed):
    """`inject`: {step: [(param, flat index, value)]} written into the scaled gradients."""
    o = dict(DEFAULTS, **options)
    gen = torch.Generator().manual_seed(seed)
    scale, tracker = to_f32(o["init_scale"]), 0
    flags, scales, trackers = [], [], []
    for s in range(steps):
        loss = (torch.rand((), generator=gen) * 10).to(torch.float16 if s % 2 == 0 else torch.float32)
        out[f"{name}/loss.{s}"] = loss
        out[f"{name}/scaled_loss.{s}"] = loss * scale  # GradScaler.scale: outputs * self._scale
        grads = []
        for k, (shape, dtype) in enumerate(shapes):
            g = (torch.randn(shape, generator=gen, dtype=torch.float64) * magnitude[k]).to(dtype)
            for pk, index, value in inject.get(s, []):
                if pk == k:
                    g.view(-1)[index] = value
            out[f"{name}/grad.{s}.{k}"] = g.clone()
            grads.append(g)
        found = unscale(grads, scale)
        for k, g in enumerate(grads):
            out[f"{name}/unscaled.{s}.{k}"] = g
        scale, tracker = update_scale(scale, tracker, found, o)
        flags.append(int(found))
        scales.append(float(scale))
        trackers.append(tracker)
    out[f"{name}/flags"] = torch.tensor(flags, dtype=torch.uint8)
    out[f"{name}/scale"] = torch.tensor(scales, dtype=torch.float32)
    out[f"{name}/tracker"] = torch.tensor(trackers, dtype=torch.int64)
    dtypes = [str(dt).replace("torch.", "") for _, dt in shapes]
    return dict(name=name, kind="unscale", options=options, steps=steps, dtypes=dtypes)


def flags_of(pattern):
    """'C' clean, 'I' overflow."""
    return [1 if c == "I" else 0 for c in pattern.replace(" ", "")]


def main():
    out, cases = {}, []
    inf, nan = float("inf"), float("nan")
    # Long clean runs with a short interval, overflows in a row, alternation, growth after backoff.
    cases.append(run_update_case(out, "interval3", dict(growth_interval=3), flags_of(
        "CCCCCCCCCC III CCCCCCC ICICICICICIC CCICCIC CCCCCCCCC I CC I CCC IIIII CCCCCCCCCCCC")))
    # Factors that are not powers of two: every change rounds from double to float32.
    cases.append(run_update_case(out, "odd_factors",
                                 dict(init_scale=1000.0, growth_factor=3.0, backoff_factor=0.3, growth_interval=2),
                                 flags_of("CCCCCC I CC II CCCCC ICIC CCCCCCCC III CCCCCCCCCC I CCCCCCC")))
    # Growth stops below float32's overflow (2^128 would be inf): the scale stays, the tracker resets.
    cases.append(run_update_case(out, "f32_ceiling",
                                 dict(init_scale=2.0 ** 125, growth_factor=2.0, growth_interval=1),
                                 flags_of("CCCCC I CCCC II CCC")))
    cases.append(run_update_case(out, "f32_ceiling_odd",
                                 dict(init_scale=3.0e38, growth_factor=1.5, growth_interval=2),
                                 flags_of("CCCC I CC I CCCC")))
    # Backoff into float32's subnormals and to 0 (2^-150 rounds to even: 0), then growth from 0 stays 0.
    cases.append(run_update_case(out, "underflow",
                                 dict(init_scale=2.0 ** -140, growth_interval=2),
                                 flags_of("IIIIIIIIIIII CCCC")))
    # torch's defaults: growth only after 2000 clean steps in a row.
    cases.append(run_update_case(out, "defaults", {},
                                 [0] * 1999 + [1] + [0] * 2000 + [0] * 5 + [1, 1] + [0] * 2001))

    f32, f16, f64 = torch.float32, torch.float16, torch.float64
    # Scaled gradients with inf / -inf / NaN injected, large finite values that a sum of squares
    # would overflow (f16 65504, f32 3e38) on clean steps, float16 / float32 / float64 parameters.
    cases.append(run_unscale_case(
        out, "unscale_mixed", dict(growth_interval=3),
        [((3, 4), f32), ((37,), f16), ((2, 3), f64), ((5,), f16)], 16, [4096.0, 4096.0, 4096.0, 4096.0],
        {1: [(0, 3, 3.0e38), (1, 5, 65504.0), (1, 6, -65504.0)],
         2: [(0, 7, inf)],
         3: [(1, 0, nan)],
         4: [(2, 1, -inf)],
         5: [(3, 4, inf), (1, 2, nan)],
         9: [(1, 36, -inf)],
         11: [(0, 0, 3.4e38), (0, 1, 3.4e38), (2, 0, 1.0e308)],
         13: [(3, 0, nan)]},
        seed=11))
    # A scale that is not a power of two: inv_scale = float32(1 / 1000) rounds every product;
    # float16 gradients round once, from the float32 product.
    cases.append(run_unscale_case(
        out, "unscale_odd_scale", dict(init_scale=1000.0, growth_factor=3.0, backoff_factor=0.3, growth_interval=2),
        [((513,), f16), ((64,), f32), ((9,), f64)], 8, [3000.0, 3000.0, 3000.0],
        {2: [(0, 100, inf)], 5: [(1, 3, nan)]}, seed=12))
    # Unscaling into float16 subnormals (and to zero).
    cases.append(run_unscale_case(
        out, "unscale_subnormal", dict(init_scale=2.0 ** 24, growth_interval=4),
        [((300,), f16), ((16,), f32)], 6, [200.0, 200.0], {3: [(1, 0, inf)]}, seed=13))
    # A scale below 1: unscaling a large finite float16 gradient overflows to inf, and found_inf
    # stays 0 because torch checks the gradient before the multiply.
    cases.append(run_unscale_case(
        out, "unscale_below_one", dict(init_scale=0.25, growth_interval=1000),
        [((8,), f16), ((4,), f32)], 4, [100.0, 100.0],
        {0: [(0, 2, 30000.0)], 1: [(1, 1, 3.0e38)], 2: [(0, 0, inf)]}, seed=14))

    st_io.save_file(out, OUT, {"cases": json.dumps(cases)})
    print(f"wrote {len(cases)} cases ({len(out)} tensors) to {OUT}")


if __name__ == "__main__":
    main()
