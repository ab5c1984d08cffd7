"""PyTorch's side of `bench/compare --distributed`: the model of an Ingot config trained with
torch.nn.parallel.DistributedDataParallel over gloo (W processes x T threads) or alone (W = 1), on
in-memory random batches of the config's shape; prints one JSON line with the median step time of
rank 0 (steps after a warm-up) and the images per second of the whole group.

    python torch_ddp.py CONFIG.yaml --world W --threads T --steps S --global-batch B
"""
import argparse
import json
import os
import statistics
import sys
import time

import torch
import torch.distributed as dist
import torch.multiprocessing as mp

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch_bench  # noqa: E402


def rank_main(rank, args, out):
    torch.set_num_threads(args.threads)
    world = args.world
    if world > 1:
        dist.init_process_group("gloo", rank=rank, world_size=world)
    cfg = torch_bench.load_config(args.config, [])
    spec, classes = torch_bench.model_spec(cfg, args.config)
    torch.manual_seed(0)
    model, classes = torch_bench.build_model(spec, classes)
    if world > 1:
        model = torch.nn.parallel.DistributedDataParallel(model)  # bucket_cap_mb 25, as Ingot's default
    opt = torch.optim.AdamW(model.parameters(), lr=0.002, weight_decay=0.01)
    batch = args.global_batch // world
    g = torch.Generator().manual_seed(rank)
    x = torch.randn((batch, *spec["input_shape"]), generator=g)
    y = torch.randint(0, classes, (batch,), generator=g)
    times = []
    for _ in range(args.steps):
        t0 = time.perf_counter()
        opt.zero_grad(set_to_none=True)
        torch.nn.functional.cross_entropy(model(x), y).backward()
        opt.step()
        times.append(time.perf_counter() - t0)
    if rank == 0:
        step = statistics.median(times[args.steps // 5:])
        out.put({"world": world, "threads": args.threads, "step_s": step, "images_per_s": args.global_batch / step,
                 "torch": torch.__version__})
    if world > 1:
        dist.barrier()
        dist.destroy_process_group()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("config")
    ap.add_argument("--world", type=int, default=1)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--global-batch", type=int, default=128)
    args = ap.parse_args()
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", str(29700 + os.getpid() % 1000))
    ctx = mp.get_context("spawn")
    out = ctx.Queue()
    if args.world == 1:
        rank_main(0, args, out)
    else:
        mp.start_processes(rank_main, args=(args, out), nprocs=args.world, start_method="spawn")
    print(json.dumps(out.get()))


if __name__ == "__main__":
    main()
