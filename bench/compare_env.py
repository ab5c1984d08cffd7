"""bench/compare's machine side: Debian packages, the Ingot binary, the facts about this machine that
go into bench/RESULTS.md, and the PyTorch environments the sweep tries."""
import os
import platform
import shutil
import subprocess
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PYTHON = "/usr/bin/python3"  # Debian's, with python3-torch (never the python first on PATH)
LIBDIR = "/usr/lib/x86_64-linux-gnu"
PACKAGES = ["python3-torch", "python3-yaml", "libopenblas0-openmp", "libopenblas0-pthread", "libjemalloc2",
            "libtcmalloc-minimal4"]

# PyTorch's knobs on a CPU: heap allocator (glibc returns big blocks to the kernel, so every
# step page-faults them in again; jemalloc / tcmalloc or glibc's tunables keep them), OpenBLAS
# build, OpenBLAS threads and kernel family, and torch's intra-op threads.
ALLOCATORS = {
    "glibc": {},
    "glibc-tuned": {"GLIBC_TUNABLES": "glibc.malloc.mmap_threshold=1073741824:glibc.malloc.trim_threshold=4294967296"},
    "jemalloc": {"LD_PRELOAD": LIBDIR + "/libjemalloc.so.2"},
    "tcmalloc": {"LD_PRELOAD": LIBDIR + "/libtcmalloc_minimal.so.4"},
}
VARIANTS = ("openmp", "pthread")
BLAS_THREADS = (1, 2)
CORETYPES = ("unset", "Haswell", "SkylakeX", "Cooperlake", "Zen")
TORCH_THREADS = (1, 2)
# `bench/compare --env VAR=VALUE`: set for both sides (e.g. OMP_WAIT_POLICY, which both OpenMP
# runtimes read).
BOTH = {}
# Variables that would leak the caller's settings into a side's measurement.
SCRUB = ("LD_PRELOAD", "GLIBC_TUNABLES", "OPENBLAS_CORETYPE", "OPENBLAS_NUM_THREADS", "GOTO_NUM_THREADS",
         "OMP_NUM_THREADS", "MKL_NUM_THREADS")


class TorchEnv:
    """One PyTorch configuration: allocator, OpenBLAS variant / threads / core type, torch threads."""

    def __init__(self, alloc, variant, blas_threads, core, threads):
        self.alloc, self.variant, self.blas_threads, self.core, self.threads = \
            alloc, variant, int(blas_threads), core, int(threads)

    @classmethod
    def parse(cls, text):
        """'alloc/variant/blas_threads/core/threads', e.g. glibc-tuned/pthread/1/unset/1."""
        parts = text.split("/")
        if len(parts) != 5 or parts[0] not in ALLOCATORS or parts[1] not in VARIANTS or \
                parts[3] not in CORETYPES or not parts[2].isdigit() or not parts[4].isdigit():
            raise ValueError("--torch-env %s: expected ALLOC/VARIANT/BLAS_THREADS/CORE/THREADS with ALLOC in %s, "
                             "VARIANT in %s, CORE in %s, e.g. glibc-tuned/pthread/1/unset/1"
                             % (text, ",".join(ALLOCATORS), ",".join(VARIANTS), ",".join(CORETYPES)))
        return cls(*parts)

    def key(self):
        return "%s/%s/%d/%s/%d" % (self.alloc, self.variant, self.blas_threads, self.core, self.threads)

    def process_key(self):
        """Everything but torch threads (which one process can change)."""
        return self.key().rsplit("/", 1)[0]

    def variables(self):
        """The variables this configuration sets (what RESULTS.md records)."""
        v = {"LD_LIBRARY_PATH": "%s/openblas-%s" % (LIBDIR, self.variant),
             "OPENBLAS_NUM_THREADS": str(self.blas_threads)}
        if self.core != "unset":
            v["OPENBLAS_CORETYPE"] = self.core
        v.update(ALLOCATORS[self.alloc])
        return v

    def environ(self):
        env = {k: v for k, v in os.environ.items() if k not in SCRUB}
        env.update(self.variables())
        if os.environ.get("LD_LIBRARY_PATH"):
            env["LD_LIBRARY_PATH"] += ":" + os.environ["LD_LIBRARY_PATH"]
        env.update(BOTH)
        return env

    def available(self):
        pre = ALLOCATORS[self.alloc].get("LD_PRELOAD")
        return (pre is None or os.path.exists(pre)) and os.path.isdir("%s/openblas-%s" % (LIBDIR, self.variant))


def ingot_environ(threads):
    env = {k: v for k, v in os.environ.items() if k not in SCRUB}
    env["OMP_NUM_THREADS"] = str(threads)
    env.update(BOTH)
    return env


def recorded_environ(env):
    """The variables of a side's environment that can change its speed."""
    prefixes = ("OMP_", "KMP_", "GOMP_", "OPENBLAS_", "GOTO_", "MKL_", "DNNL_", "ONEDNN_", "INGOT_", "GLIBC_TUNABLES",
                "LD_PRELOAD", "LD_LIBRARY_PATH", "MALLOC_")
    return {k: v for k, v in sorted(env.items()) if k.startswith(prefixes)}


def sudo():
    return [] if os.geteuid() == 0 else ["sudo"]


def missing_packages():
    out = []
    for p in PACKAGES:
        r = subprocess.run(["dpkg-query", "-W", "-f=${Status}", p], capture_output=True, text=True)
        if "install ok installed" not in r.stdout:
            out.append(p)
    return out


def install_packages(log):
    """apt-get install what is missing (idempotent: nothing to do, nothing run)."""
    missing = missing_packages()
    if not missing:
        return
    log("installing: " + " ".join(missing))
    subprocess.run(sudo() + ["apt-get", "update", "-qq"], check=True)
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    subprocess.run(sudo() + ["apt-get", "install", "-y", "-qq", "--no-install-recommends"] + missing, check=True,
                   env=env, stdout=subprocess.DEVNULL)


def torch_importable():
    r = subprocess.run([PYTHON, "-c", "import torch, yaml"], capture_output=True, text=True)
    return r.returncode == 0, (r.stderr.strip().splitlines() or [""])[-1]


def has_bench(ingot):
    if not ingot or not os.access(ingot, os.X_OK):
        return False
    # `ingot bench` without a config answers with its own usage line; an older ingot says
    # "unknown command" (and `--help` is global, so it proves nothing).
    r = subprocess.run([ingot, "bench"], capture_output=True, text=True)
    return "usage: ingot bench" in r.stdout + r.stderr


def build_ingot(install, log):
    """scripts/setup's ingot_build (and its package install unless --no-install)."""
    log("building Ingot with scripts/setup (build/)")
    steps = "source scripts/setup && " + ("ingot_install_packages && " if install else "") + "ingot_build"
    subprocess.run(["bash", "-c", steps], cwd=ROOT, check=True)
    return os.path.join(os.environ.get("INGOT_BUILD", os.path.join(ROOT, "build")), "apps", "ingot", "ingot")


def command_output(cmd):
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=60).stdout.strip()
    except (OSError, subprocess.TimeoutExpired):
        return ""


def machine_facts(ingot):
    cpu = next((ln.split(":", 1)[1].strip() for ln in command_output(["lscpu"]).splitlines()
                if ln.startswith("Model name")), platform.processor())
    flags = command_output(["grep", "-m1", "^flags", "/proc/cpuinfo"])
    isa = [f for f in ("avx2", "avx512f", "avx512_bf16", "avx512_vnni", "amx_tile") if " %s" % f in flags]
    blas_alt = next((ln.split(":", 1)[1].strip() for ln in command_output(
        ["update-alternatives", "--query", "libblas.so.3-x86_64-linux-gnu"]).splitlines() if ln.startswith("Value:")),
        "?")
    return {
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "cpu": cpu, "isa": " ".join(isa), "cores": os.cpu_count(), "kernel": platform.release(),
        "ingot": command_output([ingot, "--version"]) if ingot else "",
        "onednn_deb": command_output(["dpkg-query", "-W", "-f=${Version}", "libdnnl2"]),
        "openblas_deb": command_output(["dpkg-query", "-W", "-f=${Version}", "libopenblas0-pthread"]),
        "libblas_alternative": blas_alt,
    }


def loadavg():
    return "%.2f" % os.getloadavg()[0]


def which_ingot(arg):
    if arg:
        return os.path.abspath(arg)
    build = os.environ.get("INGOT_BUILD", os.path.join(ROOT, "build"))
    path = os.path.join(build, "apps", "ingot", "ingot")
    return path if os.path.exists(path) else shutil.which("ingot")
