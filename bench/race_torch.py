"""PyTorch side of build/bin/bench_race: the same six models, one training step each.

Run by bench_race as a worker process (/usr/bin/python3 race_torch.py --model M --threads N)
and driven over stdin/stdout with the line protocol that the C++ worker speaks too:

    -> "ready <maxrss_kb>"          after torch is imported and the model and batch are built
    <- "run K"   -> "t <ms> ... <ms>"   K timed steps (forward, backward, Adam step)
    <- "quit"    -> "rss <maxrss_kb>"   peak resident set of this process, then exit

Each model mirrors bench/bench_race.cpp layer for layer (dropout 0 everywhere); the token ids
and images are random but of the same shapes.
"""
import argparse
import math
import resource
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F


def maxrss_kb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


class Bahdanau(nn.Module):
    """Bidirectional GRU encoder, GRU-cell decoder with additive attention, teacher forcing."""

    def __init__(self, vocab=40, hidden=64):
        super().__init__()
        H = hidden
        self.src_embed = nn.Embedding(vocab, H)
        self.tgt_embed = nn.Embedding(vocab, H)
        self.encoder = nn.GRU(H, H, batch_first=True, bidirectional=True)
        self.bridge = nn.Linear(2 * H, H)
        # AdditiveAttention(query H, key 2H, hidden H), no biases, as attnlab's.
        self.w_q = nn.Linear(H, H, bias=False)
        self.w_k = nn.Linear(2 * H, H, bias=False)
        self.v = nn.Linear(H, 1, bias=False)
        self.cell = nn.GRUCell(H + 2 * H, H)
        self.out = nn.Linear(H, vocab)

    def attend(self, h, k, keys):
        # s = v . tanh(W_q q + W_k k); w = softmax(s); ctx = w @ values  (values = keys)
        q = self.w_q(h.unsqueeze(1)).unsqueeze(2)      # (B, 1, 1, H)
        s = self.v(torch.tanh(q + k)).squeeze(-1)      # (B, 1, S)
        w = torch.softmax(s, dim=-1)
        return torch.bmm(w, keys).squeeze(1)           # (B, 2H)

    def forward(self, src, tgt_in, tgt_out):
        enc, hn = self.encoder(self.src_embed(src))    # (B, S, 2H), (2, B, H)
        h = torch.tanh(self.bridge(torch.cat([hn[0], hn[1]], -1)))
        emb = self.tgt_embed(tgt_in)
        # W_k k once per sequence, as attnlab's side reads its keys once (nn::Attention::memory).
        k = self.w_k(enc).unsqueeze(1)                 # (B, 1, S, H)
        hs = []
        for t in range(tgt_in.shape[1]):
            ctx = self.attend(h, k, enc)
            h = self.cell(torch.cat([emb[:, t], ctx], -1), h)
            hs.append(h)
        logits = self.out(torch.stack(hs, 1))
        return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), tgt_out.reshape(-1))


class Encoder(nn.Module):
    """Token embedding * sqrt(d), post-norm Transformer encoder (ReLU), per-token linear head."""

    def __init__(self, vocab, d, heads, layers, d_ff):
        super().__init__()
        self.d = d
        self.embed = nn.Embedding(vocab, d)
        layer = nn.TransformerEncoderLayer(d, heads, d_ff, dropout=0.0, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.head = nn.Linear(d, vocab)

    def forward(self, ids, targets):
        x = self.embed(ids) * math.sqrt(self.d)
        logits = self.head(self.encoder(x))
        return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))


class ViT(nn.Module):
    """Patch 4 on 28x28, class token, learned positions, pre-norm GELU encoder, final norm."""

    def __init__(self, d=64, heads=4, layers=4, mlp=128, patch=4, size=28, classes=10):
        super().__init__()
        self.patch, self.grid = patch, size // patch
        n = self.grid * self.grid
        self.proj = nn.Linear(patch * patch, d)
        self.cls_token = nn.Parameter(torch.zeros(1, 1, d))
        self.pos = nn.Parameter(torch.randn(1, n + 1, d) * 0.02)
        layer = nn.TransformerEncoderLayer(d, heads, mlp, dropout=0.0, activation="gelu",
                                           batch_first=True, norm_first=True, layer_norm_eps=1e-6)
        self.encoder = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.norm = nn.LayerNorm(d, eps=1e-6)
        self.head = nn.Linear(d, classes)

    def forward(self, images, labels):
        B, g, p = images.shape[0], self.grid, self.patch
        patches = images.reshape(B, g, p, g, p).permute(0, 1, 3, 2, 4).reshape(B, g * g, p * p)
        x = self.proj(patches)
        x = torch.cat([self.cls_token.expand(B, -1, -1), x], 1) + self.pos
        x = self.norm(self.encoder(x)[:, 0])
        return F.cross_entropy(self.head(x), labels)


class GPT(nn.Module):
    """Lesson 11's character GPT: token embedding * sqrt(d), pre-norm blocks of causal
    self-attention with rotary positions and a GELU feed-forward, final norm, output tied to the
    embedding (plus a bias). PyTorch 1.13 has no fused attention: the scores are formed,
    masked and softmaxed as a PyTorch user of that version would write them."""

    def __init__(self, vocab=108, d=128, heads=4, layers=4, d_ff=512, context=64):
        super().__init__()
        self.d, self.heads = d, heads
        self.embed = nn.Embedding(vocab, d)
        self.blocks = nn.ModuleList(GPTBlock(d, heads, d_ff) for _ in range(layers))
        self.norm = nn.LayerNorm(d)
        self.output_bias = nn.Parameter(torch.zeros(vocab))
        # Rotary angles: pair i of a head turns by p * 10000^(-2i/dh) at position p.
        dh = d // heads
        theta = 10000.0 ** (-torch.arange(0, dh, 2, dtype=torch.float32) / dh)
        angle = torch.arange(context, dtype=torch.float32)[:, None] * theta[None, :]
        self.register_buffer("cos", angle.cos(), persistent=False)
        self.register_buffer("sin", angle.sin(), persistent=False)
        self.register_buffer("hidden", torch.triu(torch.ones(context, context, dtype=torch.bool), 1),
                             persistent=False)

    def forward(self, ids, targets):
        L = ids.shape[1]
        x = self.embed(ids) * math.sqrt(self.d)
        for block in self.blocks:
            x = block(x, self.cos[:L], self.sin[:L], self.hidden[:L, :L])
        logits = F.linear(self.norm(x), self.embed.weight, self.output_bias)
        return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))


def rotate(x, cos, sin):
    """Turn each pair (x[2i], x[2i+1]) of the last axis by its position's angle."""
    even, odd = x[..., 0::2], x[..., 1::2]
    return torch.stack((even * cos - odd * sin, even * sin + odd * cos), -1).flatten(-2)


class GPTBlock(nn.Module):
    def __init__(self, d, heads, d_ff):
        super().__init__()
        self.heads = heads
        self.norm1, self.norm2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.qkv, self.out = nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.ff1, self.ff2 = nn.Linear(d, d_ff), nn.Linear(d_ff, d)

    def forward(self, x, cos, sin, hidden):
        B, L, d = x.shape
        q, k, v = self.qkv(self.norm1(x)).view(B, L, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
        q, k = rotate(q, cos, sin), rotate(k, cos, sin)
        s = (q @ k.transpose(-2, -1)) / math.sqrt(d // self.heads)
        w = torch.softmax(s.masked_fill(hidden, float("-inf")), -1)
        x = x + self.out((w @ v).transpose(1, 2).reshape(B, L, d))
        return x + self.ff2(F.gelu(self.ff1(self.norm2(x))))


def build(name):
    g = torch.Generator().manual_seed(0)
    if name == "bahdanau":
        B, S, T, V = 64, 25, 10, 40
        model = Bahdanau(V, 64)
        batch = (torch.randint(0, V, (B, S), generator=g), torch.randint(0, V, (B, T), generator=g),
                 torch.randint(0, V, (B, T), generator=g))
    elif name in ("transformer", "large"):
        d, h, n, ff, L, B, V = (64, 4, 2, 256, 32, 64, 100) if name == "transformer" else \
                               (512, 8, 2, 2048, 256, 8, 1000)
        model = Encoder(V, d, h, n, ff)
        batch = (torch.randint(0, V, (B, L), generator=g), torch.randint(0, V, (B, L), generator=g))
    elif name in ("vit", "vit11"):
        B = 128
        model = ViT() if name == "vit" else ViT(mlp=256, patch=7)  # vit11: lesson 16's model
        batch = (torch.rand(B, 28, 28, generator=g), torch.randint(0, 10, (B,), generator=g))
    elif name == "gpt":
        B, L, V = 64, 64, 108  # lesson 11's batch and context; the fortunes corpus's characters
        model = GPT(V)
        batch = (torch.randint(0, V, (B, L), generator=g), torch.randint(0, V, (B, L), generator=g))
    else:
        raise SystemExit(f"race_torch.py: unknown model {name!r}")
    return model, batch


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", required=True)
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    model, batch = build(args.model)
    model.train()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)

    def step():
        opt.zero_grad()
        loss = model(*batch)
        loss.backward()
        opt.step()

    print(f"ready {maxrss_kb()}", flush=True)
    for line in sys.stdin:
        cmd = line.split()
        if not cmd:
            continue
        if cmd[0] == "run":
            times = []
            for _ in range(int(cmd[1])):
                t0 = time.perf_counter()
                step()
                times.append((time.perf_counter() - t0) * 1e3)
            print("t " + " ".join(f"{t:.4f}" for t in times), flush=True)
        elif cmd[0] == "quit":
            print(f"rss {maxrss_kb()}", flush=True)
            return
        else:
            print(f"error unknown command {cmd[0]}", flush=True)


if __name__ == "__main__":
    main()
