#!/usr/bin/python3
"""The PyTorch side of tests/test_parity_torch.cpp.

usage: /usr/bin/python3 torch_parity.py in.npz out.npz

in.npz holds one group of arrays per case, keyed "<case>/<kind>/<name>":
  param/<name>      our module's weights, under our hierarchical names
  input/<name>      differentiable inputs
  data/<name>       masks, lengths, targets, optimizer gradients (not differentiable)
  cfg/<name>        0-d numbers: sizes and options
  upstream/<name>   dL/d(output <name>) for every differentiable output
(plus our own output/, param_grad/, input_grad/ arrays, which this script does not read).
The case's first word names its family ("GRU packed" -> GRU). For each case this script builds
the same computation in PyTorch (float64), runs forward and backward, and writes
  <case>/output/<name>, <case>/param_grad/<our name>, <case>/input_grad/<name>
to out.npz. Exit status 3 means PyTorch (or numpy) could not be imported.
"""
import math
import sys
import time

try:
    import numpy as np
    import torch
    import torch.nn.functional as F
    from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence
except ImportError as e:
    sys.stderr.write(
        "torch_parity.py: %s cannot import torch or numpy (%s); "
        "install them with: apt-get install python3-torch\n" % (sys.executable, e))
    sys.exit(3)

torch.set_default_dtype(torch.float64)
torch.set_num_threads(1)


def load_cases(path):
    z = np.load(path)
    cases = {}
    for key in z.files:  # file order = the order the C++ side added them
        case, kind, name = key.split("/", 2)
        cases.setdefault(case, {}).setdefault(kind, {})[name] = z[key]
    return cases


# ---------------------------------------------------------------- our names -> torch's parameters

def bind(module, params, translate):
    """Copy our weights into a torch module. translate(our name) -> (torch name, slice or None).
    Every entry of every torch parameter must be set from ours (no leftover torch init)."""
    tp = dict(module.named_parameters())
    covered = {n: 0 for n in tp}
    links = {}
    with torch.no_grad():
        for name, value in params.items():
            tname, sl = translate(name)
            if tname not in tp:
                raise KeyError("our parameter %s maps to %s, which torch's %s does not have"
                               % (name, tname, type(module).__name__))
            target = tp[tname] if sl is None else tp[tname][sl]
            if tuple(target.shape) != value.shape:
                raise ValueError("%s %s vs torch %s %s" % (name, value.shape, tname,
                                                          tuple(target.shape)))
            target.copy_(torch.from_numpy(value))
            covered[tname] += value.size
            links[name] = (tp[tname], sl)
    unset = [n for n, c in covered.items() if c != tp[n].numel()]
    if unset:
        raise ValueError("torch parameters not (fully) set from ours: %s" % unset)
    return links


def leaves(params):
    """Our weights as torch leaves, for the families written as formulas."""
    return {n: (torch.tensor(v, requires_grad=True), None) for n, v in params.items()}


def mha_translate(ours, theirs):
    """MultiHeadAttention "<ours>w_q.weight" -> nn.MultiheadAttention "<theirs>in_proj_weight"[0:d]."""
    def translate(name):
        rest = name[len(ours):]
        proj, kind = rest.split(".")
        if proj == "w_o":
            return theirs + "out_proj." + kind, None
        i = "qkv".index(proj[-1])
        return theirs + "in_proj_" + kind, ("qkv", i)
    return translate


def resolve_slices(module, translate):
    """Turn ("qkv", i) markers into row slices of the packed in-projection."""
    def tr(name):
        tname, sl = translate(name)
        if sl is not None:
            d = dict(module.named_parameters())[tname].shape[0] // 3
            sl = slice(sl[1] * d, (sl[1] + 1) * d)
        return tname, sl
    return tr


def layer_translate(module):
    """EncoderLayer / DecoderLayer names -> torch.nn.Transformer{Encoder,Decoder}Layer names."""
    def translate(name):
        for ours, theirs in (("self_attn.", "self_attn."), ("cross_attn.", "multihead_attn.")):
            if name.startswith(ours):
                return mha_translate(ours, theirs)(name)
        if name.startswith("ff."):
            return name[3:], None  # ff.linear1.weight -> linear1.weight
        return name, None          # norm1.weight ...
    return resolve_slices(module, translate)


# ---------------------------------------------------------------- families

def masked_softmax(s, key_mask):
    """Softmax over the keys; key_mask (B, Lk) True = a real key (every query has one)."""
    if key_mask is not None:
        s = s.masked_fill(~torch.from_numpy(key_mask)[:, None, :], float("-inf"))
    return torch.softmax(s, dim=-1)


def fam_linear(c, X):
    cfg = c["cfg"]
    m = torch.nn.Linear(int(cfg["in"]), int(cfg["out"]), bias=bool(cfg["bias"]))
    links = bind(m, c.get("param", {}), lambda n: (n, None))
    return {"output": m(X["x"])}, links


def fam_layernorm(c, X):
    cfg = c["cfg"]
    m = torch.nn.LayerNorm(int(cfg["dim"]), eps=float(cfg["eps"]))
    links = bind(m, c.get("param", {}), lambda n: (n, None))
    return {"output": m(X["x"])}, links


def fam_gru(c, X):
    cfg, data = c["cfg"], c.get("data", {})
    m = torch.nn.GRU(int(cfg["input_size"]), int(cfg["hidden_size"]),
                     num_layers=int(cfg["num_layers"]), bidirectional=bool(cfg["bidirectional"]),
                     batch_first=True)
    links = bind(m, c.get("param", {}), lambda n: (n, None))
    x, h0 = X["x"], X.get("h0")
    if "lengths" in data:
        packed = pack_padded_sequence(x, torch.from_numpy(data["lengths"]), batch_first=True,
                                      enforce_sorted=False)
        out, h = m(packed, h0)
        out, _ = pad_packed_sequence(out, batch_first=True, total_length=x.shape[1])
    else:
        out, h = m(x, h0)
    return {"output": out, "state": h}, links


def fam_attention(c, X):
    """Attention <score> ...: the score by its formula, then the masked softmax and the weighted sum.
    additive v . tanh(W_q q + b_q + W_k k + b_k) + b_v; dot q.k; scaled dot q.k / sqrt(d);
    general q^T W k (W (dq, dk)); concat v . tanh(W [q; k]) on every (i, j) pair."""
    links = leaves({n[len("score."):]: v for n, v in c.get("param", {}).items()})
    p = {n: t for n, (t, _) in links.items()}
    q, k, v = X["query"], X["keys"], X["values"]
    words = c["case"].split()
    score = "scaled dot" if words[1] == "scaled" else words[1]
    step = q.dim() == 2
    if step:
        q = q.unsqueeze(1)
    if score == "additive":
        pq = F.linear(q, p["w_q.weight"], p.get("w_q.bias"))
        pk = F.linear(k, p["w_k.weight"], p.get("w_k.bias"))
        s = F.linear(torch.tanh(pq.unsqueeze(2) + pk.unsqueeze(1)), p["v.weight"],
                     p.get("v.bias")).squeeze(-1)
    elif score in ("dot", "scaled dot"):
        s = q @ k.transpose(1, 2)
        if score == "scaled dot":
            s = s / math.sqrt(q.shape[-1])
    elif score == "general":
        s = torch.einsum("bid,de,bje->bij", q, p["w.weight"], k)
    elif score == "concat":
        B, Lq, Lk = q.shape[0], q.shape[1], k.shape[1]
        pairs = torch.cat([q.unsqueeze(2).expand(B, Lq, Lk, q.shape[2]),
                           k.unsqueeze(1).expand(B, Lq, Lk, k.shape[2])], dim=-1)
        s = F.linear(torch.tanh(F.linear(pairs, p["w.weight"])), p["v.weight"]).squeeze(-1)
    else:
        raise ValueError("unknown score " + score)
    w = masked_softmax(s, c.get("data", {}).get("key_mask"))
    ctx = w @ v
    if step:
        ctx, w = ctx.squeeze(1), w.squeeze(1)
    # Our links are named as our parameters, "score.w_q.weight".
    return {"output": ctx, "weights": w}, {"score." + n: l for n, l in links.items()}


def padding_mask(data, key):
    """Ours: True = a real token; torch's key_padding_mask: True = ignore."""
    return ~torch.from_numpy(data[key]) if key in data else None


def causal_mask(lq, lk):
    return torch.triu(torch.ones(lq, lk, dtype=torch.bool), diagonal=1)  # True = may not attend


def fam_mha(c, X):
    cfg, data = c["cfg"], c.get("data", {})
    m = torch.nn.MultiheadAttention(int(cfg["d_model"]), int(cfg["heads"]), dropout=0.0,
                                    bias=True, batch_first=True)
    links = bind(m, c.get("param", {}), resolve_slices(m, mha_translate("", "")))
    if "x" in X:
        q = k = v = X["x"]
    else:
        q, k, v = X["query"], X["key"], X["value"]
    attn_mask = causal_mask(q.shape[1], k.shape[1]) if bool(cfg["causal"]) else None
    out, w = m(q, k, v, key_padding_mask=padding_mask(data, "key_padding_mask"),
               attn_mask=attn_mask, need_weights=True, average_attn_weights=False)
    return {"output": out, "weights": w}, links


def layer_kwargs(cfg):
    return dict(d_model=int(cfg["d_model"]), nhead=int(cfg["heads"]),
                dim_feedforward=int(cfg["d_ff"]), dropout=0.0,
                activation="gelu" if bool(cfg["gelu"]) else "relu",
                layer_norm_eps=float(cfg["eps"]), batch_first=True,
                norm_first=bool(cfg["norm_first"]))


def fam_encoder_layer(c, X):
    cfg, data = c["cfg"], c.get("data", {})
    m = torch.nn.TransformerEncoderLayer(**layer_kwargs(cfg))
    links = bind(m, c.get("param", {}), layer_translate(m))
    y = m(X["x"], src_key_padding_mask=padding_mask(data, "key_padding_mask"))
    return {"output": y}, links


def fam_decoder_layer(c, X):
    cfg, data = c["cfg"], c.get("data", {})
    m = torch.nn.TransformerDecoderLayer(**layer_kwargs(cfg))
    links = bind(m, c.get("param", {}), layer_translate(m))
    x, memory = X["x"], X["memory"]
    y = m(x, memory, tgt_mask=causal_mask(x.shape[1], x.shape[1]),
          tgt_key_padding_mask=padding_mask(data, "target_mask"),
          memory_key_padding_mask=padding_mask(data, "memory_mask"))
    return {"output": y}, links


def fam_cross_entropy(c, X):
    cfg = c["cfg"]
    logits = X["logits"]
    C = logits.shape[-1]
    loss = F.cross_entropy(logits.reshape(-1, C), torch.from_numpy(c["data"]["targets"]).reshape(-1),
                           ignore_index=int(cfg["ignore_index"]),
                           label_smoothing=float(cfg["label_smoothing"]),
                           reduction="sum" if bool(cfg["sum"]) else "mean")
    return {"loss": loss}, {}


def fam_optimizer(c, X):
    """Several steps of Adam / AdamW from the same values and gradients; a gradient array absent
    for some step means that parameter had no gradient then (torch skips it, like ours)."""
    cfg, data = c["cfg"], c.get("data", {})
    names = list(c.get("param", {}).keys())
    params = [torch.nn.Parameter(torch.tensor(c.get("param", {})[n])) for n in names]
    kind = {"Adam": torch.optim.Adam, "AdamW": torch.optim.AdamW}[c["case"].split()[0]]
    opt = kind(params, lr=float(cfg["lr"]), betas=(float(cfg["beta1"]), float(cfg["beta2"])),
               eps=float(cfg["eps"]), weight_decay=float(cfg["weight_decay"]))
    for s in range(int(cfg["steps"])):
        for n, p in zip(names, params):
            g = data.get("grad%d.%s" % (s, n))
            p.grad = None if g is None else torch.tensor(g)
        opt.step()
    out = {n: p.detach() for n, p in zip(names, params)}
    for i, p in enumerate(params):
        st = opt.state.get(p, {})
        for buf in ("exp_avg", "exp_avg_sq"):
            if buf in st:
                out["%s.%d" % (buf, i)] = st[buf]
    return out, {}


FAMILIES = {
    "Linear": fam_linear,
    "LayerNorm": fam_layernorm,
    "GRU": fam_gru,
    "Attention": fam_attention,
    "MultiHeadAttention": fam_mha,
    "EncoderLayer": fam_encoder_layer,
    "DecoderLayer": fam_decoder_layer,
    "cross_entropy": fam_cross_entropy,
    "Adam": fam_optimizer,
    "AdamW": fam_optimizer,
}


def run_case(case, c):
    c["case"] = case
    X = {n: torch.tensor(v, requires_grad=True) for n, v in c.get("input", {}).items()}
    outs, links = FAMILIES[case.split()[0]](c, X)
    up = c.get("upstream", {})
    pairs = [(outs[n], torch.from_numpy(g)) for n, g in up.items()]
    if pairs:
        torch.autograd.backward([o for o, _ in pairs], [g for _, g in pairs])
    res = {}
    for n, o in outs.items():
        res["%s/output/%s" % (case, n)] = o.detach().numpy().copy()
    for n, (p, sl) in links.items():
        g = p.grad if p.grad is not None else torch.zeros_like(p)
        res["%s/param_grad/%s" % (case, n)] = (g if sl is None else g[sl]).detach().numpy().copy()
    for n, x in X.items():
        g = x.grad if x.grad is not None else torch.zeros_like(x)
        res["%s/input_grad/%s" % (case, n)] = g.numpy().copy()
    return res


def main():
    if len(sys.argv) != 3:
        sys.stderr.write("usage: torch_parity.py in.npz out.npz\n")
        return 2
    t0 = time.time()
    result = {}
    for case, c in load_cases(sys.argv[1]).items():
        result.update(run_case(case, c))
    np.savez(sys.argv[2], **result)
    print("torch_parity.py: torch %s, %d arrays, %.2f s after import"
          % (torch.__version__, len(result), time.time() - t0))
    return 0


if __name__ == "__main__":
    sys.exit(main())
