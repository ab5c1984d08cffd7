"""torchvision's side of bench/compare_vision.py: DataLoader(ImageFolder(ROOT, RandomResizedCrop(224),
RandomHorizontalFlip(), ToTensor(), Normalize(ImageNet's mean and std)), batch 32, shuffled,
WORKERS workers), images/s over BATCHES batches after one untimed batch (the workers start), for
REPEAT fresh iterators; prints one JSON line {"images_per_s": [...], "rss_mib": ...}.

    python torch_loader.py ROOT WORKERS BATCHES REPEAT
"""
import json
import resource
import sys
import time

import torch
from torchvision import datasets, transforms


def main():
    root, workers, batches, repeat = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
    torch.manual_seed(0)
    tf = transforms.Compose([transforms.RandomResizedCrop(224), transforms.RandomHorizontalFlip(), transforms.ToTensor(),
                             transforms.Normalize([0.485, 0.456, 0.406], [0.229, 0.224, 0.225])])
    loader = torch.utils.data.DataLoader(datasets.ImageFolder(root, tf), batch_size=32, shuffle=True,
                                         num_workers=workers, prefetch_factor=2 if workers else None,
                                         persistent_workers=False)
    rates = []
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
        del it
    print(json.dumps({"images_per_s": rates,
                      "rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0}))


if __name__ == "__main__":
    main()
