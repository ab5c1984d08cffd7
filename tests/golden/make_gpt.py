"""A GPT-2 in torch, written out (nn.Linear weights, Ingot's state-dict names), for
tests/nn/test_gpt_golden.cpp: the initial weights, one batch's logits, loss and every gradient,
and the losses of 100 AdamW steps on fixed batches.

Run by hand with Debian's torch (never the python first on PATH):
    /usr/bin/python3 tests/golden/make_gpt.py
Writes tests/golden/data/gpt.safetensors: "init.<name>" per parameter, "batch.<s>.x" and
"batch.<s>.y" (int64 [B, T]) per step, "step0.logits", "step0.grad.<name>", "losses" ([steps],
f64). Metadata: "config" (JSON), "optimizer" (JSON), "torch", and "thread_spread": the largest
difference of a loss between torch run with 1 thread and with 2 (the spread torch shows against
itself, which bounds the agreement a test can ask for).
"""
import json
import math
import os

import torch
import torch.nn as nn
import torch.nn.functional as F

import st_io

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "data")
CONFIG = dict(n_layer=2, n_head=2, n_embd=32, block_size=16, vocab_size=64, bias=True)
OPT = dict(lr=3e-3, betas=(0.9, 0.95), eps=1e-8, weight_decay=0.1)
STEPS, BATCH, T = 100, 4, 16


class Block(nn.Module):
    def __init__(self, c):
        super().__init__()
        d = c["n_embd"]
        self.n_head = c["n_head"]
        self.ln_1 = nn.LayerNorm(d)
        self.attn = nn.Module()
        self.attn.c_attn = nn.Linear(d, 3 * d, bias=c["bias"])
        self.attn.c_proj = nn.Linear(d, d, bias=c["bias"])
        self.ln_2 = nn.LayerNorm(d)
        self.mlp = nn.Module()
        self.mlp.c_fc = nn.Linear(d, 4 * d, bias=c["bias"])
        self.mlp.c_proj = nn.Linear(4 * d, d, bias=c["bias"])

    def attention(self, x):
        b, t, c = x.shape
        h = self.n_head
        q, k, v = self.attn.c_attn(x).split(c, dim=2)
        q, k, v = (z.view(b, t, h, c // h).transpose(1, 2) for z in (q, k, v))
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(c // h))
        causal = torch.ones(t, t, dtype=torch.bool).tril()
        att = att.masked_fill(~causal, float("-inf")).softmax(-1)
        y = (att @ v).transpose(1, 2).contiguous().view(b, t, c)
        return self.attn.c_proj(y)

    def forward(self, x):
        x = x + self.attention(self.ln_1(x))
        return x + self.mlp.c_proj(F.gelu(self.mlp.c_fc(self.ln_2(x)), approximate="tanh"))


class GPT(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.transformer = nn.Module()
        self.transformer.wte = nn.Embedding(c["vocab_size"], c["n_embd"])
        self.transformer.wpe = nn.Module()
        self.transformer.wpe.weight = nn.Parameter(torch.zeros(c["block_size"], c["n_embd"]))
        self.transformer.h = nn.ModuleList([Block(c) for _ in range(c["n_layer"])])
        self.transformer.ln_f = nn.LayerNorm(c["n_embd"])
        gen = torch.Generator().manual_seed(11)
        for name, p in self.named_parameters():  # GPT-2's initialisation
            with torch.no_grad():
                if ".ln_" in name:
                    continue
                if name.endswith(".bias"):
                    p.zero_()
                else:
                    std = 0.02 / math.sqrt(2 * c["n_layer"]) if name.endswith("c_proj.weight") else 0.02
                    p.copy_(torch.randn(p.shape, generator=gen) * std)

    def forward(self, ids):
        tr = self.transformer
        x = tr.wte(ids) + tr.wpe.weight[: ids.shape[1]]
        for block in tr.h:
            x = block(x)
        return tr.ln_f(x) @ tr.wte.weight.t()  # the tied head


def run(threads, init, batches):
    torch.set_num_threads(threads)
    model = GPT(CONFIG)
    model.load_state_dict(init)
    opt = torch.optim.AdamW(model.parameters(), foreach=False, **OPT)
    losses, step0 = [], {}
    for s, (x, y) in enumerate(batches):
        logits = model(x)
        loss = F.cross_entropy(logits.view(-1, logits.shape[-1]), y.view(-1))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        if s == 0:
            step0["logits"] = logits.detach().clone()
            for name, p in model.named_parameters():
                step0[f"grad.{name}"] = p.grad.detach().clone()
        opt.step()
        losses.append(loss.item())
    return losses, step0


def main():
    init = {k: v.detach().clone() for k, v in GPT(CONFIG).state_dict().items()}
    gen = torch.Generator().manual_seed(5)
    # a learnable stream: each sequence counts up by a random step, modulo the vocabulary
    batches = []
    for _ in range(STEPS):
        start = torch.randint(0, CONFIG["vocab_size"], (BATCH, 1), generator=gen)
        step = torch.randint(1, 4, (BATCH, 1), generator=gen)
        seq = (start + step * torch.arange(T + 1)) % CONFIG["vocab_size"]
        batches.append((seq[:, :T].contiguous(), seq[:, 1:].contiguous()))
    losses, step0 = run(1, init, batches)
    losses2, _ = run(2, init, batches)
    spread = max(abs(a - b) for a, b in zip(losses, losses2))
    tensors = {f"init.{k}": v for k, v in init.items()}
    for s, (x, y) in enumerate(batches):
        tensors[f"batch.{s}.x"] = x
        tensors[f"batch.{s}.y"] = y
    tensors["step0.logits"] = step0["logits"]
    for k, v in step0.items():
        if k.startswith("grad."):
            tensors[f"step0.{k}"] = v
    tensors["losses"] = torch.tensor(losses, dtype=torch.float64)
    meta = {"config": json.dumps(CONFIG), "optimizer": json.dumps(OPT), "torch": torch.__version__,
            "thread_spread": repr(spread)}
    st_io.save_file(tensors, os.path.join(OUT, "gpt.safetensors"), metadata=meta)
    print(f"losses {losses[0]:.4f} -> {losses[-1]:.4f}; torch 1 vs 2 threads differ by up to {spread:.3g}")


if __name__ == "__main__":
    main()
