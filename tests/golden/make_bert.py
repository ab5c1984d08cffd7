"""A BERT in torch, written out (nn.Linear weights, Hugging Face's BertFor* state-dict names), for
tests/nn/test_bert_golden.cpp: for each head (sequence classification and masked language model)
the initial weights, one batch's logits and every gradient, and the losses of 100 AdamW steps on
fixed padded batches.

Run by hand with Debian's torch (never the python first on PATH):
    /usr/bin/python3 tests/golden/make_bert.py
Writes tests/golden/data/bert.safetensors: per head H (classify, mlm) "H.init.<name>",
"H.batch.<s>.x" (int64 [B, T], padded with PAD) and "H.batch.<s>.y", "H.step0.logits",
"H.step0.grad.<name>", "H.losses" ([steps], f64). Metadata: "config" (JSON), "optimizer" (JSON),
"torch", and "H.thread_spread": the largest difference of a loss between torch run with 1 thread
and with 2 (the spread torch shows against itself).
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
# vocab: 60 ordinary ids, then [PAD] 60, [CLS] 61, [SEP] 62, [MASK] 63 (Ingot's layout)
CONFIG = dict(n_layer=2, n_head=2, n_embd=32, intermediate=64, block_size=16, vocab_size=64, pad_id=60,
              classes=3, eps=1e-12)
ORDINARY, CLS, SEP, MASK = 60, 61, 62, 63
OPT = dict(lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.01)
STEPS, BATCH, T = 100, 4, 16


class Layer(nn.Module):
    def __init__(self, c):
        super().__init__()
        d, i = c["n_embd"], c["intermediate"]
        self.n_head = c["n_head"]
        self.attention = nn.Module()
        self.attention.self = nn.Module()
        self.attention.self.query = nn.Linear(d, d)
        self.attention.self.key = nn.Linear(d, d)
        self.attention.self.value = nn.Linear(d, d)
        self.attention.output = nn.Module()
        self.attention.output.dense = nn.Linear(d, d)
        self.attention.output.LayerNorm = nn.LayerNorm(d, eps=c["eps"])
        self.intermediate = nn.Module()
        self.intermediate.dense = nn.Linear(d, i)
        self.output = nn.Module()
        self.output.dense = nn.Linear(i, d)
        self.output.LayerNorm = nn.LayerNorm(d, eps=c["eps"])

    def forward(self, x, mask):
        b, t, c = x.shape
        h = self.n_head
        s = self.attention.self
        q, k, v = (z(x).view(b, t, h, c // h).transpose(1, 2) for z in (s.query, s.key, s.value))
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(c // h))
        att = att.masked_fill(~mask, float("-inf")).softmax(-1)
        y = (att @ v).transpose(1, 2).contiguous().view(b, t, c)
        a = self.attention.output.LayerNorm(self.attention.output.dense(y) + x)
        return self.output.LayerNorm(self.output.dense(F.gelu(self.intermediate.dense(a))) + a)


class Bert(nn.Module):
    def __init__(self, c, head):
        super().__init__()
        d = c["n_embd"]
        self.head, self.pad = head, c["pad_id"]
        self.bert = nn.Module()
        e = self.bert.embeddings = nn.Module()
        e.word_embeddings = nn.Embedding(c["vocab_size"], d)
        e.position_embeddings = nn.Embedding(c["block_size"], d)
        e.token_type_embeddings = nn.Embedding(2, d)
        e.LayerNorm = nn.LayerNorm(d, eps=c["eps"])
        self.bert.encoder = nn.Module()
        self.bert.encoder.layer = nn.ModuleList([Layer(c) for _ in range(c["n_layer"])])
        if head == "classify":
            self.bert.pooler = nn.Module()
            self.bert.pooler.dense = nn.Linear(d, d)
            self.classifier = nn.Linear(d, c["classes"])
        else:
            self.cls = nn.Module()
            p = self.cls.predictions = nn.Module()
            p.bias = nn.Parameter(torch.zeros(c["vocab_size"]))
            p.transform = nn.Module()
            p.transform.dense = nn.Linear(d, d)
            p.transform.LayerNorm = nn.LayerNorm(d, eps=c["eps"])
        gen = torch.Generator().manual_seed(13)
        for name, p in self.named_parameters():  # BERT's initialisation
            with torch.no_grad():
                if "LayerNorm." in name:
                    continue
                if name.endswith("bias"):
                    p.zero_()
                else:
                    p.copy_(torch.randn(p.shape, generator=gen) * 0.02)

    def forward(self, ids):
        e = self.bert.embeddings
        t = ids.shape[1]
        x = e.word_embeddings(ids) + e.position_embeddings.weight[:t] + e.token_type_embeddings.weight[0]
        x = e.LayerNorm(x)
        mask = (ids != self.pad)[:, None, None, :]
        for layer in self.bert.encoder.layer:
            x = layer(x, mask)
        if self.head == "classify":
            return self.classifier(torch.tanh(self.bert.pooler.dense(x[:, 0])))
        p = self.cls.predictions
        h = p.transform.LayerNorm(F.gelu(p.transform.dense(x)))
        return h @ e.word_embeddings.weight.t() + p.bias


def run(head, threads, init, batches):
    torch.set_num_threads(threads)
    model = Bert(CONFIG, head)
    model.load_state_dict(init)
    opt = torch.optim.AdamW(model.parameters(), foreach=False, **OPT)
    losses, step0 = [], {}
    for s, (x, y) in enumerate(batches):
        logits = model(x)
        loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), y.reshape(-1))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        if s == 0:
            step0["logits"] = logits.detach().clone()
            for name, p in model.named_parameters():
                step0[f"grad.{name}"] = p.grad.detach().clone()
        opt.step()
        losses.append(loss.item())
    return losses, step0


def make_batches(head, gen):
    """Padded sequences [CLS] tokens [SEP] of random lengths; the class is the first token
    modulo 3 (classify), or 15% of the tokens masked 80/10/10 with -100 elsewhere (mlm)."""
    batches = []
    for _ in range(STEPS):
        x = torch.full((BATCH, T), CONFIG["pad_id"], dtype=torch.int64)
        y = torch.full((BATCH,) if head == "classify" else (BATCH, T), -100, dtype=torch.int64)
        for i in range(BATCH):
            n = int(torch.randint(3, T - 1, (1,), generator=gen))
            start = torch.randint(0, ORDINARY, (1,), generator=gen)
            step = torch.randint(1, 4, (1,), generator=gen)
            tokens = (start + step * torch.arange(n)) % ORDINARY  # a learnable pattern
            x[i, 0], x[i, 1:n + 1], x[i, n + 1] = CLS, tokens, SEP
            if head == "classify":
                y[i] = int(start) % 3
                continue
            chosen = torch.rand(n, generator=gen) < 0.15
            chosen[0] = True  # at least one target per row
            for j in torch.nonzero(chosen).flatten().tolist():
                y[i, j + 1] = x[i, j + 1]
                u = float(torch.rand(1, generator=gen))
                if u < 0.8:
                    x[i, j + 1] = MASK
                elif u < 0.9:
                    x[i, j + 1] = int(torch.randint(0, ORDINARY, (1,), generator=gen))
        batches.append((x, y))
    return batches


def main():
    tensors, meta = {}, {"config": json.dumps(CONFIG), "optimizer": json.dumps(OPT), "torch": torch.__version__}
    for head in ("classify", "mlm"):
        init = {k: v.detach().clone() for k, v in Bert(CONFIG, head).state_dict().items()}
        batches = make_batches(head, torch.Generator().manual_seed(5))
        losses, step0 = run(head, 1, init, batches)
        losses2, _ = run(head, 2, init, batches)
        spread = max(abs(a - b) for a, b in zip(losses, losses2))
        tensors.update({f"{head}.init.{k}": v for k, v in init.items()})
        for s, (x, y) in enumerate(batches):
            tensors[f"{head}.batch.{s}.x"] = x
            tensors[f"{head}.batch.{s}.y"] = y
        for k, v in step0.items():
            tensors[f"{head}.step0.{k}"] = v
        tensors[f"{head}.losses"] = torch.tensor(losses, dtype=torch.float64)
        meta[f"{head}.thread_spread"] = repr(spread)
        first, last = sum(losses[:10]) / 10, sum(losses[-10:]) / 10
        print(f"{head}: mean loss of the first 10 steps {first:.4f}, of the last 10 {last:.4f}; torch 1 vs 2 "
              f"threads differ by up to {spread:.3g}")
    st_io.save_file(tensors, os.path.join(OUT, "bert.safetensors"), metadata=meta)


if __name__ == "__main__":
    main()
