"""Mixed precision, gradient checkpointing and activation memory for bench/torch_bench.py: the
PyTorch counterparts of Ingot's train.amp (torch.autocast, f32 master weights) and
train.checkpointing (torch.utils.checkpoint.checkpoint_sequential, non-reentrant), the bytes
autograd keeps between forward and backward (saved_tensors_hooks) and a step's peak (the
profiler's allocation records).
"""
import contextlib
import inspect

import torch
import torch.utils.checkpoint as ckpt


class LeverError(ValueError):
    pass


def storage_of(t):
    """(key, bytes) of the storage under tensor t: views of one buffer share a key."""
    try:
        st = t.untyped_storage() if hasattr(t, "untyped_storage") else t.storage()  # torch 1.13: storage()
        return ("storage", st.data_ptr()), st.nbytes()
    except (RuntimeError, NotImplementedError):  # opaque layouts (mkldnn) have no storage to ask
        return ("tensor", id(t)), t.numel() * t.element_size()


class SavedBytes:
    """Activation memory of one training step, measured as Ingot's `ingot bench` defines it: the
    bytes the autograd graph holds from the end of forward (loss computed) to the start of backward.
    PyTorch's CPU allocator keeps no statistics, so this counts what the graph holds instead: every
    tensor autograd saves for backward passes through the pack hook, and the sum of the distinct
    storages among them that did not exist before the step (parameters, buffers, the batch) is what
    the graph keeps alive. Exact for these models: a saved tensor stays alive until backward, so two
    keys cannot name one reused address, and a view counts its whole storage once. Tensors saved
    inside a non-reentrant checkpoint go to the checkpoint's own (inner) hooks and are not kept,
    while the segment's inputs, saved by the checkpoint itself, come through here and count."""

    def __init__(self, existing):
        self.before = {storage_of(t)[0] for t in existing}
        self.saved = {}

    def pack(self, t):
        key, nbytes = storage_of(t)
        if key not in self.before:
            self.saved[key] = max(nbytes, self.saved.get(key, 0))
        return t

    def hooks(self):
        return torch.autograd.graph.saved_tensors_hooks(self.pack, lambda t: t)

    def total(self):
        return sum(self.saved.values())


class StepPeak:
    """Peak bytes allocated above the start of forward and backward on a CPU, where torch keeps no
    allocator statistics: torch.profiler with profile_memory records every allocation and free of
    the CPU allocator with its size and time; their running sum in time order is what was
    allocated beyond the start, and its maximum the step's peak (Ingot: peak_allocated minus
    allocated at the start). None where this torch's profiler does not expose the records."""

    def __init__(self):
        self.peak = None
        self._prof = torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU], profile_memory=True)

    def __enter__(self):
        self._prof.__enter__()
        return self

    def __exit__(self, *exc):
        self._prof.__exit__(*exc)
        try:
            events = self._prof.profiler.kineto_results.events()
            records = sorted((e.start_ns() if hasattr(e, "start_ns") else 1000 * e.start_us(), e.nbytes())
                             for e in events if e.name() == "[memory]" and str(e.device_type()).endswith("CPU"))
        except (AttributeError, RuntimeError):
            return False
        now = peak = 0
        for _, nbytes in records:
            now += nbytes
            peak = max(peak, now)
        self.peak = peak
        return False


def _run(layers):
    def forward(x):
        for layer in layers:
            x = layer(x)
        return x
    return forward


def emulated_checkpoint_sequential(model, segments, x, saved=None):
    """checkpoint_sequential(model, segments, x, use_reentrant=False) for a torch whose
    checkpoint_sequential has no use_reentrant (1.13): the same split (len // segments layers per
    segment, the rest in the last, which runs without checkpointing), each segment through
    checkpoint(use_reentrant=False). That torch's checkpoint keeps a segment's input in a closure
    rather than through save_for_backward, so `saved` (SavedBytes) is told about it here."""
    layers = list(model.children())
    size, end = len(layers) // segments, -1
    for start in range(0, size * (segments - 1), size):
        end = start + size - 1
        if saved is not None:
            saved.pack(x)
        x = ckpt.checkpoint(_run(layers[start:end + 1]), x, use_reentrant=False)
    return _run(layers[end + 1:])(x)


def checkpoint_blocks(model, levers):
    """Runs every residual block of `model` (a module whose class is BasicBlock) through
    checkpoint(use_reentrant=False) while gradients are recorded, as Ingot's
    train.checkpointing.blocks does; once per model."""
    for m in model.modules():
        if type(m).__name__ != "BasicBlock" or hasattr(m, "_plain_forward"):
            continue
        m._plain_forward = m.forward

        def forward(x, m=m):
            if not torch.is_grad_enabled():
                return m._plain_forward(x)
            if levers._saved is not None:  # (1.13's checkpoint keeps its input in a closure)
                levers._saved.pack(x)
            return ckpt.checkpoint(m._plain_forward, x, use_reentrant=False)
        m.forward = forward


class Levers:
    """What a training step and inference run under: autocast dtype (None: f32) and checkpoint
    segments (0: off) or one checkpoint per residual block (blocks)."""

    def __init__(self, dtype, segments, device_type, blocks=False):
        self.dtype, self.segments, self.device_type, self.blocks = dtype, segments, device_type, blocks
        self.dtype_name = "bf16 autocast" if dtype is not None else "f32"
        self.checkpoint_method = None
        self._checkpoint = None
        self._saved = None  # the SavedBytes of the step being measured
        if blocks:
            self.checkpoint_method = "checkpoint(use_reentrant=False) per residual block"

            def per_block(m, x):
                checkpoint_blocks(m, self)
                return m(x)
            self._checkpoint = per_block
        elif segments > 1:
            if "use_reentrant" in inspect.signature(ckpt.checkpoint_sequential).parameters:
                self.checkpoint_method = "checkpoint_sequential(use_reentrant=False)"
                self._checkpoint = lambda m, x: ckpt.checkpoint_sequential(m, segments, x, use_reentrant=False)
            elif "use_reentrant" in inspect.signature(ckpt.checkpoint).parameters:
                self.checkpoint_method = ("checkpoint(use_reentrant=False) per segment: torch %s's "
                                          "checkpoint_sequential has no use_reentrant" % torch.__version__)
                self._checkpoint = lambda m, x: emulated_checkpoint_sequential(m, segments, x, self._saved)
            else:
                raise LeverError("torch %s has no non-reentrant checkpoint (use_reentrant); use torch >= 1.11"
                                 % torch.__version__)

    @classmethod
    def from_config(cls, train, amp_arg, segments_arg, model, device):
        """From the config's train section (train.amp.dtype, train.checkpointing.segments, as Ingot
        reads them), each overridden by its flag when given (--amp f32|bf16, --checkpoint-segments)."""
        amp = train.get("amp")
        dtype = None
        if amp_arg is not None:
            dtype = torch.bfloat16 if amp_arg == "bf16" else None
        elif isinstance(amp, dict) and amp.get("enabled", True):
            name = amp.get("dtype", "bf16")
            if name != "bf16":
                raise LeverError("train.amp.dtype %s: only bf16 is compared on PyTorch's side" % name)
            dtype = torch.bfloat16
        segments = segments_arg
        checkpointing = train.get("checkpointing") or {}
        blocks = segments_arg is None and bool(checkpointing.get("blocks"))
        if segments is None:
            segments = int(checkpointing.get("segments") or 0)
        if segments < 0:
            raise LeverError("checkpoint segments %d: give 0 (off) or more" % segments)
        if segments > 0:
            if not isinstance(model, torch.nn.Sequential):
                raise LeverError("checkpointing needs an nn.Sequential model, not %s" % type(model).__name__)
            if segments > len(model):
                raise LeverError("checkpointing in %d segments, but the model has %d top-level layers"
                                 % (segments, len(model)))
        if blocks and not any(type(m).__name__ == "BasicBlock" for m in model.modules()):
            raise LeverError("train.checkpointing.blocks: the model has no residual blocks")
        return cls(dtype, segments, device.type, blocks)

    def autocast(self):
        if self.dtype is None:
            return contextlib.nullcontext()
        return torch.autocast(self.device_type, dtype=self.dtype)

    def forward_context(self, saved=None):
        """Where a training step's forward and loss run: autocast, and `saved`'s hooks if given."""
        stack = contextlib.ExitStack()
        if saved is not None:
            stack.enter_context(saved.hooks())
            self._saved = saved
            stack.callback(setattr, self, "_saved", None)
        stack.enter_context(self.autocast())
        return stack

    def train_forward(self, model, x):
        return self._checkpoint(model, x) if self._checkpoint else model(x)
