"""bench/compare's search for PyTorch's best configuration on this machine: heap allocator, OpenBLAS
build, OPENBLAS_NUM_THREADS, OPENBLAS_CORETYPE and torch threads, per workload row."""
import math
import os

import compare_env as E
import compare_report as R


def sweep(runner, inits, workloads, settings, log):
    """Coordinate-wise, torch threads 1 and 2 everywhere: the allocators (OpenBLAS pthread, 1 thread,
    detected core; every workload), then OPENBLAS_CORETYPE with the best allocator, then the OpenBLAS
    variant x OPENBLAS_NUM_THREADS with the best core type (MLP and CNN: ResNet-8's only BLAS call is
    its last layer). Returns (points, chosen): {key: {(workload, part): value}}, {(workload, part): key}."""
    points = {}

    def measure(env, workloads):
        if not env.available():
            log("sweep: %s not available here, skipped" % env.process_key())
            return []
        name = "sweep-" + env.process_key().replace("/", "_")
        res = runner.torch_bench(workloads, env, E.TORCH_THREADS, settings, name, inits=[inits[w] for w in workloads])
        for r in res:
            w = os.path.splitext(os.path.basename(r["config"]))[0]
            for part in ("train", "inference", "latency"):
                points.setdefault("%s/%d" % (env.process_key(), r["threads"]), {})[(w, part)] = R.metric(r, part)
        return [env] if res else []

    def best(keys):
        chosen = {}
        for _, w, part, _, _ in R.ROWS:
            for k in keys:
                if R.better(part, points[k].get((w, part)), points.get(chosen.get((w, part)), {}).get((w, part))):
                    chosen[(w, part)] = k
        return chosen

    def winner(envs):
        """The process configuration whose best thread count comes closest to the best on every row."""
        keys = [k for k in points if any(k.startswith(e.process_key() + "/") for e in envs)]
        chosen = best(keys)

        def score(env):
            logs = []
            for (w, part), k in chosen.items():
                vals = [points[x][(w, part)] for x in keys if x.startswith(env.process_key() + "/")
                        and points[x].get((w, part))]
                if not vals:
                    return float("-inf")
                ref = points[k][(w, part)]
                logs.append(math.log(ref / min(vals) if part == "latency" else max(vals) / ref))
            return sum(logs) / max(len(logs), 1)
        return max(envs, key=score)

    tried = []
    for alloc in E.ALLOCATORS:
        tried += measure(E.TorchEnv(alloc, "pthread", 1, "unset", 1), workloads)
    if not tried:
        raise SystemExit("compare: the PyTorch sweep produced no result; see %s/raw/sweep-*.log" % runner.out)
    top = winner(tried)
    log("sweep: allocator %s (load %s)" % (top.alloc, E.loadavg()))
    blas = ("mlp", "cnn")
    cores = [top]
    for core in E.CORETYPES[1:]:
        cores += measure(E.TorchEnv(top.alloc, "pthread", 1, core, 1), blas)
    top = winner(cores)
    log("sweep: OPENBLAS_CORETYPE %s (load %s)" % (top.core, E.loadavg()))
    for variant in E.VARIANTS:
        for bt in E.BLAS_THREADS:
            if (variant, bt) != ("pthread", 1):
                measure(E.TorchEnv(top.alloc, variant, bt, top.core, 1), blas)
    return points, best(list(points))
