"""Records torch.nn.utils.prune masks for tests/compress/test_prune_golden.cpp.

Run by hand with Debian's torch (never the python first on PATH):
    /usr/bin/python3 tests/golden/make_prune.py
Writes tests/golden/data/prune.safetensors. For each case "<case>":
  <case>.weight            the weight before pruning (float32, random normal, no two |w| equal and
                           no two filter norms equal, so the masks do not depend on tie-breaking)
  <case>.mask              torch's mask (float32, 1 = kept)
Global cases hold <case>.<i>.weight and <case>.<i>.mask for each of their layers. Cases:
  l1_frac       l1_unstructured(amount=0.3) on a Conv2d weight [8, 4, 3, 3]
  l1_count      l1_unstructured(amount=7) on the same weight
  global        global_unstructured(L1Unstructured, amount=0.6) over Conv2d [8, 4, 3, 3],
                Conv2d [16, 8, 3, 3] and Linear [10, 64]
  ln1_conv      ln_structured(amount=0.5, n=1, dim=0) on a Conv2d weight [8, 4, 3, 3]
  ln2_conv      ln_structured(amount=0.5, n=2, dim=0) on the same weight
  ln1_linear    ln_structured(amount=0.5, n=1, dim=0) on a Linear weight [12, 20]
  ln2_linear    ln_structured(amount=0.5, n=2, dim=0) on the same weight
  twice_l1      l1_unstructured(0.5) then l1_unstructured(0.5) again (a PruningContainer: the
                second prunes half of the remaining weights) on a Linear weight [10, 30]
  twice_ln      ln_structured(0.5, n=2, dim=0) twice on a Conv2d weight [8, 4, 3, 3] (the second
                among the filters left: 8 -> 4 -> 2)
  twice_global  global_unstructured(0.5) twice over the three layers of `global`
"""
import os
import sys

import torch
from torch import nn
from torch.nn.utils import prune

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from st_io import save_file  # noqa: E402

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")
torch.manual_seed(20261214)


def no_ties(*weights):
    """Random normal values whose magnitudes (and filter norms) are all distinct."""
    values = torch.cat([w.detach().abs().flatten() for w in weights])
    assert values.unique().numel() == values.numel(), "tied magnitudes: pick another seed"
    for w in weights:
        rows = w.detach().flatten(1)
        for p in (1, 2):
            norms = rows.norm(p=p, dim=1)
            assert norms.unique().numel() == norms.numel(), "tied norms: pick another seed"


def spiky(m):
    """Row 0 made of one large value and small ones: a small 1-norm but a large 2-norm, so that
    ln_structured with n=1 and n=2 choose differently."""
    with torch.no_grad():
        row = m.weight[0].view(-1)
        row.mul_(0.1)
        row[0] = 9.0
    return m


def conv(cin, cout):
    m = nn.Conv2d(cin, cout, 3)
    with torch.no_grad():
        m.weight.normal_()
    return m


def linear(cin, cout):
    m = nn.Linear(cin, cout)
    with torch.no_grad():
        m.weight.normal_()
    return m


out = {}


def record(case, module):
    """The weight before pruning is module.weight_orig (unchanged by pruning)."""
    out[case + ".weight"] = module.weight_orig.detach().clone()
    out[case + ".mask"] = module.weight_mask.detach().clone()


def single(case, module, fn):
    no_ties(module.weight)
    fn(module)
    record(case, module)


base_conv = spiky(conv(4, 8))
for case, fn in [("l1_frac", lambda m: prune.l1_unstructured(m, "weight", amount=0.3)),
                 ("l1_count", lambda m: prune.l1_unstructured(m, "weight", amount=7)),
                 ("ln1_conv", lambda m: prune.ln_structured(m, "weight", amount=0.5, n=1, dim=0)),
                 ("ln2_conv", lambda m: prune.ln_structured(m, "weight", amount=0.5, n=2, dim=0))]:
    m = conv(4, 8)
    m.load_state_dict(base_conv.state_dict())
    single(case, m, fn)

base_linear = spiky(linear(20, 12))
for case, n in [("ln1_linear", 1), ("ln2_linear", 2)]:
    m = linear(20, 12)
    m.load_state_dict(base_linear.state_dict())
    single(case, m, lambda m, n=n: prune.ln_structured(m, "weight", amount=0.5, n=n, dim=0))

m = linear(30, 10)
single("twice_l1", m, lambda m: (prune.l1_unstructured(m, "weight", amount=0.5),
                                 prune.l1_unstructured(m, "weight", amount=0.5)))
m = conv(4, 8)
single("twice_ln", m, lambda m: (prune.ln_structured(m, "weight", amount=0.5, n=2, dim=0),
                                 prune.ln_structured(m, "weight", amount=0.5, n=2, dim=0)))


def global_case(case, amounts):
    torch.manual_seed(7)
    layers = [conv(4, 8), conv(8, 16), linear(64, 10)]
    no_ties(*[m.weight for m in layers])
    for amount in amounts:
        prune.global_unstructured([(m, "weight") for m in layers], pruning_method=prune.L1Unstructured,
                                  amount=amount)
    for i, m in enumerate(layers):
        record("%s.%d" % (case, i), m)


global_case("global", [0.6])
global_case("twice_global", [0.5, 0.5])

# What the masks must come to (checked here, so a torch that behaved otherwise is noticed).
assert int((out["l1_count.mask"] == 0).sum()) == 7
assert not torch.equal(out["ln1_conv.mask"], out["ln2_conv.mask"])
assert not torch.equal(out["ln1_linear.mask"], out["ln2_linear.mask"])
assert int((out["l1_frac.mask"] == 0).sum()) == round(0.3 * 288)
assert int((out["twice_l1.mask"] == 0).sum()) == 150 + round(0.5 * 150)
assert int((out["twice_ln.mask"].flatten(1).sum(1) != 0).sum()) == 2
total = 288 + 1152 + 640
assert sum(int((out["twice_global.%d.mask" % i] == 0).sum()) for i in range(3)) == \
    round(0.5 * total) + round(0.5 * (total - round(0.5 * total)))
assert sum(int((out["global.%d.mask" % i] == 0).sum()) for i in range(3)) == round(0.6 * total)

os.makedirs(DATA, exist_ok=True)
path = os.path.join(DATA, "prune.safetensors")
save_file(out, path, {"torch": torch.__version__})
print("wrote", path, len(out), "tensors")
