"""PyTorch's side of bench/compare_gpt.py: the GPT-2-shaped model of bench/gpt_step.cpp (nanoGPT's
layout, F.scaled_dot_product_attention, tanh GELU, tied head), AdamW, cross-entropy; one JSON
line per run. Modes: eager, compile (torch.compile, timed after its warm-up), bf16 (autocast),
checkpoint (torch.utils.checkpoint per block); --generate N times Hugging Face's
GPT2LMHeadModel.generate (greedy, KV cache) built from a config of the same shape; --attention
times F.scaled_dot_product_attention forward + backward at B 8, H 6, T 1024, D 64, causal. --bert
trains transformers' BertForSequenceClassification of the same shape instead (built from a
config, 2 labels, dropout 0.1, an all-ones attention mask, its default SDPA attention).

    build/torch-venv/bin/python bench/torch_gpt.py --mode eager --layers 6 --heads 6 --embd 384 --block 256
"""
import argparse
import json
import math
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.utils.checkpoint as ckpt


def rss_kib(field):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return 0


def reset_hwm():
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")


class Block(nn.Module):
    def __init__(self, d, h):
        super().__init__()
        self.h = h
        self.ln_1, self.ln_2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.c_attn, self.c_proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.c_fc, self.mlp_proj = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)

    def forward(self, x):
        b, t, c = x.shape
        q, k, v = self.c_attn(self.ln_1(x)).split(c, dim=2)
        q, k, v = (z.view(b, t, self.h, c // self.h).transpose(1, 2) for z in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.c_proj(y.transpose(1, 2).reshape(b, t, c))
        return x + self.mlp_proj(F.gelu(self.c_fc(self.ln_2(x)), approximate="tanh"))


class GPT(nn.Module):
    def __init__(self, a, checkpoint=False):
        super().__init__()
        self.wte, self.wpe = nn.Embedding(a.vocab, a.embd), nn.Embedding(a.block, a.embd)
        self.h = nn.ModuleList([Block(a.embd, a.heads) for _ in range(a.layers)])
        self.ln_f = nn.LayerNorm(a.embd)
        self.checkpoint = checkpoint

    def forward(self, ids):
        x = self.wte(ids) + self.wpe(torch.arange(ids.shape[1]))
        for blk in self.h:
            x = ckpt.checkpoint(blk, x, use_reentrant=False) if self.checkpoint else blk(x)
        return self.ln_f(x) @ self.wte.weight.t()


def bert_model(a):
    from transformers import BertConfig, BertForSequenceClassification
    cfg = BertConfig(vocab_size=a.vocab + 4, hidden_size=a.embd, num_hidden_layers=a.layers,
                     num_attention_heads=a.heads, intermediate_size=4 * a.embd, max_position_embeddings=a.block,
                     pad_token_id=a.vocab, num_labels=2)
    model = BertForSequenceClassification(cfg)
    mask = torch.ones(a.batch, a.block, dtype=torch.long)
    return model, lambda m, x: m(input_ids=x, attention_mask=mask).logits


def train(a):
    torch.manual_seed(1)
    if a.bert:
        model, forward = bert_model(a)
    else:
        model = GPT(a, checkpoint=a.mode == "checkpoint")
        forward = lambda m, x: m(x)  # noqa: E731
    step_model = torch.compile(model) if a.mode == "compile" else model
    opt = torch.optim.AdamW(model.parameters())
    x = torch.randint(0, a.vocab, (a.batch, a.block))
    y = torch.randint(0, 2, (a.batch,)) if a.bert else torch.randint(0, a.vocab, (a.batch, a.block))
    times, peak = [], 0
    for s in range(a.warmup + a.steps):
        reset_hwm()
        before = rss_kib("VmRSS")
        t0 = time.perf_counter()
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=a.mode == "bf16"):
            logits = forward(step_model, x)
        loss = F.cross_entropy(logits.float().reshape(-1, logits.shape[-1]), y.view(-1))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        dt = time.perf_counter() - t0
        if s >= a.warmup:
            times.append(dt)
            peak = max(peak, rss_kib("VmHWM") - before)
    times.sort()
    med = times[len(times) // 2]
    return {"side": "torch", "kind": "train", "model": "bert" if a.bert else "gpt", "mode": a.mode, "step_s": med,
            "tokens_per_s": a.batch * a.block / med, "peak_rss_bytes": peak * 1024}


def generate(a):
    from transformers import GPT2Config, GPT2LMHeadModel
    cfg = GPT2Config(n_layer=a.layers, n_head=a.heads, n_embd=a.embd, n_positions=a.block, vocab_size=a.vocab)
    model = GPT2LMHeadModel(cfg).eval()
    ids = torch.ones(1, 1, dtype=torch.long)
    n = min(a.generate, a.block - 1)
    kw = dict(max_new_tokens=n, min_new_tokens=n, do_sample=False, pad_token_id=0)
    with torch.no_grad():
        model.generate(ids, **kw)
        t0 = time.perf_counter()
        out = model.generate(ids, **kw)
        s = time.perf_counter() - t0
    new = out.shape[1] - 1
    return {"side": "torch", "kind": "generate", "tokens": new, "seconds": s, "tokens_per_s": new / s}


def attention(a):
    q, k, v = (torch.randn(8, 6, 1024, 64, requires_grad=True) for _ in range(3))
    g = torch.randn(8, 6, 1024, 64)
    times = []
    for s in range(2 + a.steps):
        t0 = time.perf_counter()
        o = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        o.backward(g)
        dt = time.perf_counter() - t0
        if s >= 2:
            times.append(dt)
    times.sort()
    return {"side": "torch", "kind": "attention", "fwd_bwd_s": times[len(times) // 2]}


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--mode", default="eager", choices=["eager", "compile", "bf16", "checkpoint"])
    for k, v in dict(layers=6, heads=6, embd=384, block=256, vocab=256, batch=8, steps=10, warmup=2,
                     generate=0, threads=2).items():
        p.add_argument(f"--{k}", type=int, default=v)
    p.add_argument("--attention", action="store_true")
    p.add_argument("--bert", action="store_true")
    a = p.parse_args()
    torch.set_num_threads(a.threads)
    if a.mode == "compile":
        a.warmup = max(a.warmup, 3)  # compilation happens in the first steps
    r = attention(a) if a.attention else generate(a) if a.generate else train(a)
    r["torch"] = torch.__version__
    print(json.dumps(r))


if __name__ == "__main__":
    main()
