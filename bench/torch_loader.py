"""torchvision's side of bench/compare_vision.py: DataLoader(ImageFolder(ROOT, RandomResizedCrop(224),
RandomHorizontalFlip(), ToTensor(), Normalize(ImageNet's mean and std)), batch 32, shuffled,
WORKERS workers), images/s over BATCHES batches after one untimed batch (the workers start), for
REPEAT fresh iterators; prints one JSON line:

    {"images_per_s": [one per repeat], "images": N, "workers": W, "rss_mib": main's ru_maxrss,
     "tree_rss_mib": main + workers resident, "tree_pss_mib": main + workers proportional,
     "versions": {...}}

tree_*: read from /proc/PID/smaps_rollup of the main process and its live workers at the end of
each repeat's timed batches (the iterator still open), the largest over the repeats. Workers are
forked, so their RSS counts the pages they share with the main process again; PSS splits every
shared page among the processes that map it, which makes the sum the memory the tree holds.

    python torch_loader.py ROOT WORKERS BATCHES REPEAT
"""
import json
import os
import resource
import sys
import time

import PIL
import torch
import torchvision
from torchvision import datasets, transforms


def rollup(pid):
    """(Rss, Pss) of a process in MiB from /proc/PID/smaps_rollup; (0, 0) where it cannot be read."""
    out = {"Rss:": 0.0, "Pss:": 0.0}
    try:
        with open("/proc/%d/smaps_rollup" % pid) as f:
            for line in f:
                parts = line.split()
                if parts and parts[0] in out:
                    out[parts[0]] = float(parts[1]) / 1024.0
    except OSError:
        pass
    return out["Rss:"], out["Pss:"]


def tree_memory(it):
    """(Rss, Pss) in MiB of this process and the iterator's worker processes, summed."""
    pids = [os.getpid()] + [w.pid for w in getattr(it, "_workers", []) if w.pid]
    figures = [rollup(p) for p in pids]
    return sum(r for r, _ in figures), sum(p for _, p in figures)


def main():
    if len(sys.argv) != 5:
        sys.exit("usage: python torch_loader.py ROOT WORKERS BATCHES REPEAT")
    root, workers, batches, repeat = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
    torch.manual_seed(0)
    tf = transforms.Compose([transforms.RandomResizedCrop(224), transforms.RandomHorizontalFlip(), transforms.ToTensor(),
                             transforms.Normalize([0.485, 0.456, 0.406], [0.229, 0.224, 0.225])])
    dataset = datasets.ImageFolder(root, tf)
    loader = torch.utils.data.DataLoader(dataset, batch_size=32, shuffle=True,
                                         num_workers=workers, prefetch_factor=2 if workers else None,
                                         persistent_workers=False)
    rates, tree_rss, tree_pss = [], 0.0, 0.0
    for _ in range(repeat):
        it = iter(loader)
        next(it)
        t0, images = time.perf_counter(), 0
        for _ in range(batches):
            try:
                x, _ = next(it)
            except StopIteration:
                it = iter(loader)
                x, _ = next(it)
            images += x.shape[0]
        rates.append(images / (time.perf_counter() - t0))
        rss, pss = tree_memory(it)
        tree_rss, tree_pss = max(tree_rss, rss), max(tree_pss, pss)
        del it
    print(json.dumps({"images_per_s": rates, "images": len(dataset), "workers": workers, "batch_size": 32,
                      "rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0,
                      "tree_rss_mib": tree_rss, "tree_pss_mib": tree_pss,
                      "versions": {"torch": torch.__version__, "torchvision": torchvision.__version__,
                                   "pillow": PIL.__version__}}))


if __name__ == "__main__":
    main()
