#!/usr/bin/python3
"""The PyTorch side of tests/test_parity_torch.cpp, in two steps.

1. /usr/bin/python3 torch_parity.py --state-dicts FOLDER
   PyTorch first: builds every module of FROM_TORCH (nn.MultiheadAttention ... nn.Transformer)
   with a fixed seed and writes its state_dict to FOLDER/<case>.npz exactly as a user would
   (np.savez of {k: v.detach().double().numpy()}), and the case's cfg, inputs, masks and outputs
   to FOLDER/from_torch.npz. attnlab then loads each state_dict by name, runs the inputs and
   exports its weights to FOLDER/<case>.export.npz.

2. /usr/bin/python3 torch_parity.py in.npz out.npz [FOLDER]
   in.npz holds one group of arrays per case of ours, keyed "<case>/<kind>/<name>":
     param/<name>      our module's weights, under our hierarchical names (PyTorch's names)
     input/<name>      differentiable inputs
     data/<name>       masks, lengths, targets, optimizer gradients (not differentiable)
     cfg/<name>        0-d numbers: sizes and options
     upstream/<name>   dL/d(output <name>) for every differentiable output
   (plus our own output/, param_grad/, input_grad/ arrays, which this script does not read).
   The case's first word names its family ("GRU packed" -> GRU). For each case this script
   builds the same computation in PyTorch (float64), runs forward and backward, and writes
     <case>/output/<name>, <case>/param_grad/<our name>, <case>/input_grad/<name>
   to out.npz. With FOLDER, it also loads every export of step 1 with
   load_state_dict(strict=True), runs the inputs again and writes <case>/reloaded/<name>.

Exit status 3 means PyTorch (or numpy) could not be imported.
"""
import math
import os
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


# ---------------------------------------------------------------- our names are PyTorch's

def bind(module, params):
    """Load our weights into a torch module by name: our modules carry PyTorch's names and
    layouts, so the arrays go straight into load_state_dict(strict=True) (every torch parameter
    set from ours, none left over). Returns name -> torch parameter, for the gradients."""
    module.load_state_dict({n: torch.from_numpy(v) for n, v in params.items()}, strict=True)
    tp = dict(module.named_parameters())
    return {n: tp[n] for n in params}


def leaves(params):
    """Our weights as torch leaves, for the families written as formulas."""
    return {n: torch.tensor(v, requires_grad=True) for n, v in params.items()}


# ---------------------------------------------------------------- families

def masked_softmax(s, key_mask):
    """Softmax over the keys; key_mask (B, Lk) True = a real key (every query has one)."""
    if key_mask is not None:
        s = s.masked_fill(~torch.from_numpy(key_mask)[:, None, :], float("-inf"))
    return torch.softmax(s, dim=-1)


def fam_linear(c, X):
    cfg = c["cfg"]
    m = torch.nn.Linear(int(cfg["in"]), int(cfg["out"]), bias=bool(cfg["bias"]))
    links = bind(m, c.get("param", {}))
    return {"output": m(X["x"])}, links


def fam_layernorm(c, X):
    cfg = c["cfg"]
    m = torch.nn.LayerNorm(int(cfg["dim"]), eps=float(cfg["eps"]))
    links = bind(m, c.get("param", {}))
    return {"output": m(X["x"])}, links


def fam_gru(c, X):
    cfg, data = c["cfg"], c.get("data", {})
    m = torch.nn.GRU(int(cfg["input_size"]), int(cfg["hidden_size"]),
                     num_layers=int(cfg["num_layers"]), bidirectional=bool(cfg["bidirectional"]),
                     batch_first=True)
    links = bind(m, c.get("param", {}))
    x, h0 = X["x"], X.get("h0")
    if "lengths" in data:
        packed = pack_padded_sequence(x, torch.from_numpy(data["lengths"]), batch_first=True,
                                      enforce_sorted=False)
        out, h = m(packed, h0)
        out, _ = pad_packed_sequence(out, batch_first=True, total_length=x.shape[1])
    else:
        out, h = m(x, h0)
    return {"output": out, "state": h}, links


def luong_score(score, p, q, k):
    """The score of every query q (B, Lq, dq) against every key k (B, Lk, dk), by its formula,
    with the score's weights p under their names in the score ("w_q.weight"):
    additive v . tanh(W_q q + b_q + W_k k + b_k) + b_v; dot q.k; scaled dot q.k / sqrt(d);
    general q^T W k (W (dq, dk)); concat v . tanh(W [q; k]) on every (i, j) pair."""
    if score == "additive":
        pq = F.linear(q, p["w_q.weight"], p.get("w_q.bias"))
        pk = F.linear(k, p["w_k.weight"], p.get("w_k.bias"))
        return F.linear(torch.tanh(pq.unsqueeze(2) + pk.unsqueeze(1)), p["v.weight"],
                        p.get("v.bias")).squeeze(-1)
    if score in ("dot", "scaled dot"):
        s = q @ k.transpose(1, 2)
        return s / math.sqrt(q.shape[-1]) if score == "scaled dot" else s
    if score == "general":
        return torch.einsum("bid,de,bje->bij", q, p["w.weight"], k)
    if score == "concat":
        B, Lq, Lk = q.shape[0], q.shape[1], k.shape[1]
        pairs = torch.cat([q.unsqueeze(2).expand(B, Lq, Lk, q.shape[2]),
                           k.unsqueeze(1).expand(B, Lq, Lk, k.shape[2])], dim=-1)
        return F.linear(torch.tanh(F.linear(pairs, p["w.weight"])), p["v.weight"]).squeeze(-1)
    raise ValueError("unknown score " + score)


def score_name(case):
    """The score a case names second: "Attention scaled dot masked" -> "scaled dot"."""
    words = case.split()
    return "scaled dot" if words[1] == "scaled" else words[1]


def fam_attention(c, X):
    """Attention <score> ...: the score by its formula (luong_score), then the masked softmax and
    the weighted sum."""
    p = leaves({n[len("score."):]: v for n, v in c.get("param", {}).items()})
    q, k, v = X["query"], X["keys"], X["values"]
    step = q.dim() == 2
    if step:
        q = q.unsqueeze(1)
    s = luong_score(score_name(c["case"]), p, q, k)
    w = masked_softmax(s, c.get("data", {}).get("key_mask"))
    ctx = w @ v
    if step:
        ctx, w = ctx.squeeze(1), w.squeeze(1)
    # Our links are named as our parameters, "score.w_q.weight".
    return {"output": ctx, "weights": w}, {"score." + n: t for n, t in p.items()}


def padding_mask(data, key):
    """Ours: True = a real token; torch's key_padding_mask: True = ignore."""
    return ~torch.from_numpy(data[key]) if key in data else None


def causal_mask(lq, lk):
    return torch.triu(torch.ones(lq, lk, dtype=torch.bool), diagonal=1)  # True = may not attend


def layer_kwargs(cfg):
    return dict(d_model=int(cfg["d_model"]), nhead=int(cfg["heads"]),
                dim_feedforward=int(cfg["d_ff"]), dropout=0.0,
                activation="gelu" if bool(cfg["gelu"]) else "relu",
                layer_norm_eps=float(cfg["eps"]), batch_first=True,
                norm_first=bool(cfg["norm_first"]))


def torch_module(kind, cfg):
    """The torch.nn module of a case, from its cfg: dropout 0, batch_first."""
    if kind == "MultiheadAttention":
        return torch.nn.MultiheadAttention(int(cfg["d_model"]), int(cfg["heads"]), dropout=0.0,
                                           bias=bool(cfg.get("bias", 1)), batch_first=True)
    k = layer_kwargs(cfg)
    norm = (torch.nn.LayerNorm(k["d_model"], eps=k["layer_norm_eps"])
            if bool(cfg.get("final_norm", 0)) else None)
    if kind == "TransformerEncoderLayer":
        return torch.nn.TransformerEncoderLayer(**k)
    if kind == "TransformerDecoderLayer":
        return torch.nn.TransformerDecoderLayer(**k)
    if kind == "TransformerEncoder":
        return torch.nn.TransformerEncoder(torch.nn.TransformerEncoderLayer(**k),
                                           int(cfg["num_layers"]), norm=norm,
                                           enable_nested_tensor=False)
    if kind == "TransformerDecoder":
        return torch.nn.TransformerDecoder(torch.nn.TransformerDecoderLayer(**k),
                                           int(cfg["num_layers"]), norm=norm)
    if kind == "Transformer":
        return torch.nn.Transformer(num_encoder_layers=int(cfg["encoder_layers"]),
                                    num_decoder_layers=int(cfg["decoder_layers"]), **k)
    raise ValueError("unknown module " + kind)


def run_module(kind, m, cfg, X, data):
    """One forward of a torch module on a case's inputs and masks (ours: True = a real token).
    Decoders are causal; self-attention and encoders when cfg says so. Run with autograd on and
    parameters that require a gradient, so PyTorch's inference fast path (which returns zeros at
    padded positions) stays off."""
    causal = bool(cfg.get("causal", 0))
    if kind == "MultiheadAttention":
        q, k, v = (X["x"],) * 3 if "x" in X else (X["query"], X["key"], X["value"])
        out, w = m(q, k, v, key_padding_mask=padding_mask(data, "key_padding_mask"),
                   attn_mask=causal_mask(q.shape[1], k.shape[1]) if causal else None,
                   need_weights=True, average_attn_weights=False)
        return {"output": out, "weights": w}
    if kind in ("TransformerEncoderLayer", "TransformerEncoder"):
        x = X["x"]
        mask = causal_mask(x.shape[1], x.shape[1]) if causal else None
        pad = padding_mask(data, "key_padding_mask")
        if kind == "TransformerEncoder":
            return {"output": m(x, mask=mask, src_key_padding_mask=pad)}
        return {"output": m(x, src_mask=mask, src_key_padding_mask=pad)}
    if kind in ("TransformerDecoderLayer", "TransformerDecoder"):
        x, memory = X["x"], X["memory"]
        return {"output": m(x, memory, tgt_mask=causal_mask(x.shape[1], x.shape[1]),
                            tgt_key_padding_mask=padding_mask(data, "target_mask"),
                            memory_key_padding_mask=padding_mask(data, "memory_mask"))}
    if kind == "Transformer":
        src, tgt = X["src"], X["tgt"]
        return {"output": m(src, tgt, tgt_mask=causal_mask(tgt.shape[1], tgt.shape[1]),
                            src_key_padding_mask=padding_mask(data, "src_mask"),
                            tgt_key_padding_mask=padding_mask(data, "tgt_mask"),
                            memory_key_padding_mask=padding_mask(data, "src_mask"))}
    raise ValueError("unknown module " + kind)


# Our module families made from our weights, and the torch module each one is.
OUR_MODULES = {"MultiHeadAttention": "MultiheadAttention",
               "EncoderLayer": "TransformerEncoderLayer",
               "DecoderLayer": "TransformerDecoderLayer"}


def fam_module(c, X):
    kind = OUR_MODULES[c["case"].split()[0]]
    m = torch_module(kind, c["cfg"])
    links = bind(m, c.get("param", {}))
    return run_module(kind, m, c["cfg"], X, c.get("data", {})), links


def fam_shaw(c, X):
    """Shaw et al.: e_ij = q_i . (k_j + w[clip(j - i, -K, K) + K]) / sqrt(d_k). torch's
    nn.MultiheadAttention with our weights makes q.k; the position term, from torch's own q and
    the table, goes in as a float attn_mask (B*h, L, L), which torch adds after its scaling."""
    cfg, params = c["cfg"], c["param"]
    d, h, K = int(cfg["d_model"]), int(cfg["heads"]), int(cfg["max_distance"])
    m = torch.nn.MultiheadAttention(d, h, dropout=0.0, bias=True, batch_first=True)
    links = bind(m, {n: v for n, v in params.items() if n != "key_table"})
    table = torch.tensor(params["key_table"], requires_grad=True)
    links["key_table"] = table
    x = X["x"]
    B, L, dk = x.shape[0], x.shape[1], d // h
    q = F.linear(x, m.in_proj_weight[:d], m.in_proj_bias[:d]).reshape(B, L, h, dk)
    pos = torch.arange(L)
    index = (pos[None, :] - pos[:, None]).clamp(-K, K) + K  # [i, j]
    term = torch.einsum("bihc,ijc->bhij", q, table[index]) / math.sqrt(dk)
    if bool(cfg["causal"]):
        term = term.masked_fill(causal_mask(L, L), float("-inf"))
    out, w = m(x, x, x, attn_mask=term.reshape(B * h, L, L), need_weights=True,
               average_attn_weights=False)
    return {"output": out, "weights": w}, links


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
    for n, p in zip(names, params):  # ours keyed by parameter name: "exp_avg/w"
        st = opt.state.get(p, {})
        for buf in ("exp_avg", "exp_avg_sq"):
            if buf in st:
                out["%s/%s" % (buf, n)] = st[buf]
    return out, {}


# ---------------------------------------------------------------- the later lessons' variants
#
# Each written from its paper's formula with torch ops, not from our code: the point is a second,
# independent computation of the same definition.

def fam_grouped_query(c, X):
    """Grouped-query attention (Ainslie et al. 2023; multi-query attention, Shazeer 2019, is
    kv_heads = 1): h query heads, g key/value heads, query heads [i h/g, (i + 1) h/g) reading
    key/value head i. torch 1.13 has no grouped-query attention (nn.MultiheadAttention projects
    the keys and values to all h heads, and F.scaled_dot_product_attention came in 2.0), so the
    reference is the definition: q projected to h heads, k and v to g heads of d_k (the rows of
    in_proj_weight after W_q: W_k then W_v, g d_k each), each key/value head repeated for its h/g
    query heads (repeat_interleave over the heads axis), per head softmax(q k^T / sqrt(d_k)) v
    over the allowed keys, the heads side by side, out_proj."""
    cfg, data = c["cfg"], c.get("data", {})
    p = leaves(c["param"])
    d, h, g = int(cfg["d_model"]), int(cfg["heads"]), int(cfg["kv_heads"])
    dk = d // h
    query, key, value = (X["x"],) * 3 if "x" in X else (X["query"], X["key"], X["value"])
    rows = [d, g * dk, g * dk]
    wq, wk, wv = p["in_proj_weight"].split(rows)
    bq, bk, bv = p["in_proj_bias"].split(rows) if "in_proj_bias" in p else (None,) * 3

    def heads(x, n):  # (B, L, n d_k) -> (B, n, L, d_k)
        return x.reshape(x.shape[0], x.shape[1], n, dk).transpose(1, 2)

    q = heads(F.linear(query, wq, bq), h)
    k = heads(F.linear(key, wk, bk), g).repeat_interleave(h // g, dim=1)
    v = heads(F.linear(value, wv, bv), g).repeat_interleave(h // g, dim=1)
    B, Lq, Lk = q.shape[0], q.shape[2], k.shape[2]
    allowed = torch.from_numpy(data["key_padding_mask"])[:, None, None, :]  # True = a real key
    if bool(cfg["causal"]):
        allowed = allowed & ~causal_mask(Lq, Lk)
    scores = (q @ k.transpose(-1, -2) / math.sqrt(dk)).masked_fill(~allowed, float("-inf"))
    w = torch.softmax(scores, dim=-1)
    merged = (w @ v).transpose(1, 2).reshape(B, Lq, d)
    out = F.linear(merged, p["out_proj.weight"], p.get("out_proj.bias"))
    return {"output": out, "weights": w}, p


def fam_repeat_heads(c, X):
    """repeat_heads(x, g, r): x's last axis is g heads of d; the output's head j is x's head j // r
    (each head r times in a row): repeat_interleave over an axis of heads."""
    g, r = int(c["cfg"]["heads"]), int(c["cfg"]["repeats"])
    x = X["x"]
    heads = x.reshape(*x.shape[:-1], g, x.shape[-1] // g)
    return {"output": heads.repeat_interleave(r, dim=-2).reshape(*x.shape[:-1], -1)}, {}


def local_attention(c, p, q, k, v, centres):
    """Luong, Pham and Manning 2015, section 3.2, local attention around centres p_t (B, Lq): the
    score's softmax over the real keys s with |s - p_t| <= D, times the Gaussian
    exp(-(s - p_t)^2 / (2 sigma^2)), sigma = D / 2; the context is the weighted sum of the
    values. The window is a comparison (no gradient); p_t learns through the Gaussian alone."""
    D = float(c["cfg"]["half_window"])
    real = torch.from_numpy(c["data"]["key_mask"])[:, None, :]
    s = torch.arange(k.shape[1], dtype=torch.float64)[None, None, :]
    offset = s - centres[:, :, None]
    window = real & (offset.abs() <= D)
    score = luong_score(score_name(c["case"]), {n[len("score."):]: t for n, t in p.items()
                                                if n.startswith("score.")}, q, k)
    a = torch.softmax(score.masked_fill(~window, float("-inf")), dim=-1)
    return a * torch.exp(-offset ** 2 / (2 * (D / 2) ** 2))


def local_result(weights, v, centres, step):
    out = {"output": weights @ v, "weights": weights, "positions": centres}
    return {n: t.squeeze(1) for n, t in out.items()} if step else out


def fam_local_p(c, X):
    """Local-p (predictive alignment): p_t = S sigmoid(v_p^T tanh(W_p h_t)) in the paper;
    our LocalPAttention documents (S - 1) sigmoid(...), so that p_t is a position 0 .. S - 1 that
    exists, S the real length of the row. Then local_attention around p_t."""
    p = leaves(c["param"])
    q, k, v = X["query"], X["keys"], X["values"]
    step = q.dim() == 2
    if step:
        q = q.unsqueeze(1)
    S = torch.from_numpy(c["data"]["key_mask"]).sum(1).double()[:, None]
    centres = (S - 1) * torch.sigmoid(F.linear(torch.tanh(F.linear(q, p["predict.weight"])),
                                               p["v.weight"])).squeeze(-1)
    return local_result(local_attention(c, p, q, k, v, centres), v, centres, step), p


def fam_local_m(c, X):
    """Local-m (monotonic alignment): p_t = t, the decoder's step (first_step + i), clipped to
    S - 1 of the row, a constant. The paper's local-m has the window alone; ours keeps local-p's
    Gaussian (nn/attention/local_m.hpp says why), so the reference does too."""
    p = leaves(c["param"])
    q, k, v = X["query"], X["keys"], X["values"]
    step = q.dim() == 2
    if step:
        q = q.unsqueeze(1)
    S = torch.from_numpy(c["data"]["key_mask"]).sum(1)[:, None]
    t = int(c["cfg"]["first_step"]) + torch.arange(q.shape[1])[None, :]
    centres = torch.minimum(t, S - 1).double()
    return local_result(local_attention(c, p, q, k, v, centres), v, centres, step), p


def fam_graph_attention(c, X):
    """Graph attention (Velickovic et al. 2018, section 2.1, without the nonlinearity sigma, which
    the module leaves to its caller): per head, z = W x; e_ij = LeakyReLU(a . [z_i || z_j]) for
    every pair (i, j), normalised by a softmax over j in N_i (the adjacency, self-loops included);
    h_i = sum_j alpha_ij z_j; the heads concatenated. Our a of a head is stored as its two halves,
    head<k>_a_query (the z_i half) and head<k>_a_key (the z_j half)."""
    cfg, p = c["cfg"], leaves(c["param"])
    x, adjacency = X["x"], torch.from_numpy(c["data"]["neighbourhoods"])
    N = x.shape[0]
    outs, alphas = [], []
    for head in range(int(cfg["heads"])):
        z = F.linear(x, p["head%d_project.weight" % head])
        a = torch.cat([p["head%d_a_query" % head], p["head%d_a_key" % head]]).squeeze(-1)
        F_ = z.shape[1]
        pairs = torch.cat([z[:, None, :].expand(N, N, F_), z[None, :, :].expand(N, N, F_)], -1)
        e = F.leaky_relu(pairs @ a, negative_slope=float(cfg["negative_slope"]))
        alpha = torch.softmax(e.masked_fill(~adjacency, float("-inf")), dim=1)
        outs.append(alpha @ z)
        alphas.append(alpha)
    return {"output": torch.cat(outs, dim=1), "weights": torch.stack(alphas)}, p


def fam_mean_aggregation(c, X):
    """The mean over a node's neighbourhood (a graph convolution, Kipf and Welling 2017, with the
    row normalisation D^-1 A in place of their symmetric D^-1/2 A D^-1/2), then a Linear layer."""
    p = leaves(c["param"])
    adjacency = torch.from_numpy(c["data"]["neighbourhoods"]).double()
    mean = (adjacency / adjacency.sum(1, keepdim=True)) @ X["x"]
    return {"output": F.linear(mean, p["project.weight"], p["project.bias"])}, p


def fam_sparse_attention(c, X):
    """Softmax attention over a sparse pattern, written out as a dense mask: query i sees key j when
    |i - j| <= window (Longformer's sliding window, Beltagy et al. 2020), or i or j is a global
    position (Longformer's global attention, BigBird's global tokens), or stride > 0 and
    |i - j| % stride == 0 (the Sparse Transformer's strided pattern, Child et al. 2019); causal
    keeps j <= i, and the case's allowed mask (padded keys) must allow it too. The leading dims are
    flattened to blocks, each with its own global positions.
    A row that sees no key: torch's softmax of a row of -inf is NaN, in the output and in every
    gradient it reaches; our op documents a zero row with zero gradient there. The reference gives
    such rows finite scores before the softmax and multiplies their weights by 0 after: zeros,
    and no gradient through them."""
    cfg, data = c["cfg"], c.get("data", {})
    q, k, v = X["q"], X["k"], X["v"]
    lead, (Lq, d), Lk = q.shape[:-2], q.shape[-2:], k.shape[-2]
    qb, kb, vb = q.reshape(-1, Lq, d), k.reshape(-1, Lk, d), v.reshape(-1, Lk, v.shape[-1])
    i, j = torch.arange(Lq)[:, None], torch.arange(Lk)[None, :]
    distance = (i - j).abs()
    flags = torch.from_numpy(data["global"])  # (blocks, min(Lq, Lk)): True = a global position
    global_q = torch.zeros(qb.shape[0], Lq, dtype=torch.bool)
    global_k = torch.zeros(qb.shape[0], Lk, dtype=torch.bool)
    global_q[:, :flags.shape[1]], global_k[:, :flags.shape[1]] = flags, flags
    sees = (distance <= int(cfg["window"]))[None] | global_q[:, :, None] | global_k[:, None, :]
    if int(cfg["stride"]) > 0:
        sees = sees | (distance % int(cfg["stride"]) == 0)[None]
    if bool(cfg["causal"]):
        sees = sees & (j <= i)[None]
    if "allowed" in data:
        sees = sees & torch.from_numpy(data["allowed"]).expand(*lead, Lq, Lk).reshape(-1, Lq, Lk)
    scale = float(cfg["scale"]) if "scale" in cfg else 1.0 / math.sqrt(d)
    scores = (scale * qb @ kb.transpose(1, 2)).masked_fill(~sees, float("-inf"))
    sees_any = sees.any(-1, keepdim=True)
    w = torch.softmax(scores.masked_fill(~sees_any, 0.0), dim=-1) * sees_any
    return {"output": (w @ vb).reshape(*lead, Lq, v.shape[-1])}, {}


def fam_log_of_chosen(c, X):
    """log p_s of the entry s drawn in each row, what REINFORCE (Williams 1992) weights by the
    reward: of probabilities given, the log of the gathered entry; of a softmax of logits, torch's
    own log-probability of a draw, Categorical(logits=...).log_prob(s)."""
    chosen = torch.from_numpy(c["data"]["chosen"])
    if "logits" in X:
        return {"log_p": torch.distributions.Categorical(logits=X["logits"]).log_prob(chosen)}, {}
    return {"log_p": torch.log(X["p"].gather(-1, chosen.unsqueeze(-1)).squeeze(-1))}, {}


def fam_doubly_stochastic(c, X):
    """Show, Attend and Tell's doubly stochastic regularisation (Xu et al. 2015, section 4.2.1),
    lambda sum_i (1 - sum_t alpha_ti)^2 per image, as our op defines it: tau in place of 1, no
    lambda (the caller's factor), t over the first lengths[b] steps only, the mean over the B
    images."""
    alpha, tau = X["weights"], float(c["cfg"]["tau"])
    B, L = alpha.shape[0], alpha.shape[1]
    counted = torch.arange(L)[None, :] < torch.from_numpy(c["data"]["lengths"])[:, None]
    per_patch = (alpha * counted[:, :, None]).sum(1)  # sum_t alpha_ti: (B, N)
    return {"penalty": ((tau - per_patch) ** 2).sum() / B}, {}


def sub(params, prefix):
    """The weights under prefix, renamed without it ("cell.weight_ih" -> "weight_ih")."""
    return {n[len(prefix):]: t for n, t in params.items() if n.startswith(prefix)}


def fam_captioner(c, X):
    """Show, Attend and Tell (Xu et al. 2015) on the patches of a Vision Transformer (Dosovitskiy
    et al. 2020), as nn/caption/captioner.hpp describes it:
      annotations a = LayerNorm(encoder(patches W_p^T + b_p + positions)), the p x p patches cut
        row-major over the grid, each flattened channel-major; the encoder torch's own pre-norm
        nn.TransformerEncoder without a final norm, or none;
      s_0 = tanh(W_init mean_i a_i + b_init) (the paper's start) or 0;
      word t: e_ti = v . tanh(W_q s_{t-1} + W_k a_i), alpha_t = softmax_i(e_t); soft reads
        z_t = sum_i alpha_ti a_i, hard the drawn patch z_t = a_{c_t} (the draws replayed);
        s_t = GRUCell([E y_{t-1}; z_t], s_{t-1}) (torch's nn.GRUCell);
        logits_t = W_o [s_t; z_t] + b_o.
    Hard also gives log alpha_{t, c_t} and the REINFORCE surrogate (Williams 1992; the paper's
    section 4.1, with a baseline b): CE(logits, targets) - mean_{b, t} (r_b - b) log alpha_{t, c_t}
    over the counted words, r_b = sum_t log softmax(logits_t)[y_bt] held constant."""
    cfg, data = c["cfg"], c["data"]
    p = leaves(c["param"])
    links = dict(p)
    images = X["images"]
    B, H, W = images.shape
    P = int(cfg["patch"])
    grid = images.reshape(B, 1, H // P, P, W // P, P)  # (B, C, rows, i, columns, j)
    patches = grid.permute(0, 2, 4, 1, 3, 5).reshape(B, -1, P * P)
    x = F.linear(patches, p["encoder.patch_embed.proj.weight"], p["encoder.patch_embed.proj.bias"])
    x = x + p["encoder.pos_embed.weight"][: x.shape[1]]
    if int(cfg["num_layers"]) > 0:
        encoder = torch_module("TransformerEncoder", dict(cfg, final_norm=0))
        bound = bind(encoder, sub(c["param"], "encoder.encoder."))
        links.update({"encoder.encoder." + n: t for n, t in bound.items()})
        x = encoder(x)
    a = F.layer_norm(x, x.shape[-1:], p["encoder.norm.weight"], p["encoder.norm.bias"],
                     eps=float(cfg["eps"]))
    cell = torch.nn.GRUCell(p["cell.weight_ih"].shape[1], p["cell.weight_hh"].shape[1])
    links.update({"cell." + n: t for n, t in bind(cell, sub(c["param"], "cell.")).items()})
    if bool(cfg["summary_init"]):
        s = torch.tanh(F.linear(a.mean(1), p["init.weight"], p["init.bias"]))
    else:
        s = torch.zeros(B, cell.hidden_size)
    words, rows = torch.from_numpy(data["words"]), torch.arange(B)
    hard = "choices" in data
    logits, weights, log_choice = [], [], []
    for t in range(words.shape[1]):
        e = luong_score("additive", sub(p, "score."), s.unsqueeze(1), a)
        alpha = torch.softmax(e, -1).squeeze(1)
        if hard:
            chosen = torch.from_numpy(data["choices"])[:, t]
            z = a[rows, chosen]
            log_choice.append(torch.log(alpha[rows, chosen]))
        else:
            z = (alpha.unsqueeze(1) @ a).squeeze(1)
        s = cell(torch.cat([F.embedding(words[:, t], p["embed.weight"]), z], -1), s)
        logits.append(F.linear(torch.cat([s, z], -1), p["out.weight"], p["out.bias"]))
        weights.append(alpha)
    out = {"logits": torch.stack(logits, 1), "weights": torch.stack(weights, 1)}
    if not hard:
        return out, links
    out["log_choice"] = torch.stack(log_choice, 1)
    targets = torch.from_numpy(data["targets"])
    L, V = targets.shape[1], out["logits"].shape[-1]
    counted = torch.arange(L)[None, :] < torch.from_numpy(data["word_counts"])[:, None]
    log_p = torch.log_softmax(out["logits"], -1).detach()
    reward = (log_p.gather(-1, targets.clamp(min=0).unsqueeze(-1)).squeeze(-1) * counted).sum(1)
    advantage = (reward - float(cfg["baseline"]))[:, None] * counted
    out["reinforce_loss"] = (F.cross_entropy(out["logits"].reshape(-1, V), targets.reshape(-1),
                                             ignore_index=-100)
                             - (advantage * out["log_choice"]).mean())
    out["mean_reward"] = reward.mean()
    return out, links


FAMILIES = {
    "Linear": fam_linear,
    "LayerNorm": fam_layernorm,
    "GRU": fam_gru,
    "Attention": fam_attention,
    "MultiHeadAttention": fam_module,
    "EncoderLayer": fam_module,
    "DecoderLayer": fam_module,
    "cross_entropy": fam_cross_entropy,
    "ShawRelativePosition": fam_shaw,
    "Adam": fam_optimizer,
    "AdamW": fam_optimizer,
    "GroupedQueryAttention": fam_grouped_query,
    "repeat_heads": fam_repeat_heads,
    "LocalPAttention": fam_local_p,
    "local_m_attention": fam_local_m,
    "GraphAttention": fam_graph_attention,
    "MeanAggregation": fam_mean_aggregation,
    "sparse_attention": fam_sparse_attention,
    "log_of_chosen": fam_log_of_chosen,
    "doubly_stochastic_penalty": fam_doubly_stochastic,
    "Captioner": fam_captioner,
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
    for n, p in links.items():
        g = p.grad if p.grad is not None else torch.zeros_like(p)
        res["%s/param_grad/%s" % (case, n)] = g.detach().numpy().copy()
    for n, x in X.items():
        g = x.grad if x.grad is not None else torch.zeros_like(x)
        res["%s/input_grad/%s" % (case, n)] = g.numpy().copy()
    return res


# ---------------------------------------------------------------- PyTorch first: state_dicts by name
#
# The other direction, the README's claim: PyTorch builds each module (a fixed seed), saves its
# state_dict as a user would, np.savez(path, **{k: v.detach().double().numpy()}), with an input
# and its output; attnlab loads that file by name, runs the input and exports its weights; then
# PyTorch loads the export with load_state_dict(strict=True) and runs the input again.

LAYER = dict(d_model=8, heads=2, d_ff=16, eps=1e-5)
FROM_TORCH = [  # (case, cfg); the first word names the torch.nn module
    ("nn.MultiheadAttention self causal key-padding", dict(self=1, causal=1, bias=1)),
    ("nn.MultiheadAttention cross key-padding", dict(self=0, causal=0, bias=1)),
    ("nn.MultiheadAttention self no-bias", dict(self=1, causal=0, bias=0)),
    ("nn.TransformerEncoderLayer post-norm relu", dict(norm_first=0, gelu=0, causal=0)),
    ("nn.TransformerEncoderLayer post-norm gelu causal", dict(norm_first=0, gelu=1, causal=1)),
    ("nn.TransformerEncoderLayer pre-norm relu causal", dict(norm_first=1, gelu=0, causal=1)),
    ("nn.TransformerEncoderLayer pre-norm gelu", dict(norm_first=1, gelu=1, causal=0)),
    ("nn.TransformerDecoderLayer post-norm relu", dict(norm_first=0, gelu=0)),
    ("nn.TransformerDecoderLayer pre-norm gelu", dict(norm_first=1, gelu=1)),
    ("nn.TransformerEncoder 2 post-norm layers", dict(norm_first=0, gelu=0, num_layers=2,
                                                      final_norm=0)),
    ("nn.TransformerEncoder 2 pre-norm layers final-norm", dict(norm_first=1, gelu=1, num_layers=2,
                                                                final_norm=1, causal=1)),
    ("nn.TransformerDecoder 2 post-norm layers final-norm", dict(norm_first=0, gelu=1,
                                                                 num_layers=2, final_norm=1)),
    ("nn.Transformer 2+2 post-norm relu", dict(norm_first=0, gelu=0, encoder_layers=2,
                                               decoder_layers=2)),
    ("nn.Transformer 1+2 pre-norm gelu", dict(norm_first=1, gelu=1, encoder_layers=1,
                                              decoder_layers=2)),
]


def slug(case):
    """The case's file name stem: "nn.Transformer 1+2 pre-norm gelu" -> nn.Transformer_1+2_..."""
    return case.replace(" ", "_")


def lengths_mask(lengths, L):
    """(B, L) True for positions < lengths[b]: the real tokens of a padded batch."""
    return np.arange(L)[None, :] < np.array(lengths)[:, None]


def example(kind, cfg):
    """Seeded inputs (B = 2, d_model wide) and masks; every query keeps at least one real key."""
    d = int(cfg["d_model"])
    r = lambda b, l: torch.randn(b, l, d)
    if kind == "MultiheadAttention" and bool(cfg["self"]):
        return {"x": r(2, 5)}, {"key_padding_mask": lengths_mask([5, 3], 5)}
    if kind == "MultiheadAttention":
        return ({"query": r(2, 3), "key": r(2, 4), "value": r(2, 4)},
                {"key_padding_mask": lengths_mask([4, 2], 4)})
    if kind in ("TransformerEncoderLayer", "TransformerEncoder"):
        return {"x": r(2, 5)}, {"key_padding_mask": lengths_mask([5, 3], 5)}
    if kind in ("TransformerDecoderLayer", "TransformerDecoder"):
        return ({"x": r(2, 4), "memory": r(2, 5)},
                {"target_mask": lengths_mask([4, 2], 4), "memory_mask": lengths_mask([3, 5], 5)})
    return ({"src": r(2, 5), "tgt": r(2, 4)},
            {"src_mask": lengths_mask([5, 3], 5), "tgt_mask": lengths_mask([4, 2], 4)})


def make_state_dicts(folder):
    """Writes <folder>/<slug>.npz (each module's state_dict) and <folder>/from_torch.npz
    ("<case>/cfg|input|data|output/<name>")."""
    io = {}
    for i, (case, extra) in enumerate(FROM_TORCH):
        kind = case.split()[0][len("nn."):]
        cfg = dict(LAYER, **extra)
        torch.manual_seed(100 + i)
        m = torch_module(kind, cfg)
        with torch.no_grad():  # no zero biases or unit gains that would hide a misplaced term
            for p in m.parameters():
                p.normal_(0.0, 0.5)
        m.eval()
        X, data = example(kind, cfg)
        outs = run_module(kind, m, cfg, X, data)
        np.savez(os.path.join(folder, slug(case) + ".npz"),
                 **{k: v.detach().double().numpy() for k, v in m.state_dict().items()})
        for n, v in cfg.items():
            io["%s/cfg/%s" % (case, n)] = np.array(float(v))
        for n, v in X.items():
            io["%s/input/%s" % (case, n)] = v.numpy()
        for n, v in data.items():
            io["%s/data/%s" % (case, n)] = v
        for n, v in outs.items():
            io["%s/output/%s" % (case, n)] = v.detach().numpy()
    np.savez(os.path.join(folder, "from_torch.npz"), **io)
    print("torch_parity.py: %d modules built by torch %s, state_dicts in %s"
          % (len(FROM_TORCH), torch.__version__, folder))


def reload_exports(folder):
    """The way back: each case's <slug>.export.npz (attnlab's save_checkpoint) loaded with
    load_state_dict(strict=True); it must hold exactly the state_dict attnlab loaded, bit for
    bit; the input runs again -> "<case>/reloaded/<name>". A case that fails is reported and left
    out (the C++ side then names it)."""
    res = {}
    for case, c in load_cases(os.path.join(folder, "from_torch.npz")).items():
        kind = case.split()[0][len("nn."):]
        try:
            m = torch_module(kind, c["cfg"])
            exported = np.load(os.path.join(folder, slug(case) + ".export.npz"))
            m.load_state_dict({k: torch.from_numpy(exported[k]) for k in exported.files},
                              strict=True)
            original = np.load(os.path.join(folder, slug(case) + ".npz"))
            changed = [k for k in original.files if not np.array_equal(original[k], exported[k])]
            if changed:
                raise ValueError("exported values differ from the state_dict loaded: %s" % changed)
            m.eval()
            X = {n: torch.from_numpy(v) for n, v in c["input"].items()}
            outs = run_module(kind, m, c["cfg"], X, c.get("data", {}))
        except Exception as e:  # noqa: BLE001 -- reported, and the C++ side fails the case
            print("torch_parity.py: %s: %s: %s" % (case, type(e).__name__, e))
            continue
        for n, o in outs.items():
            res["%s/reloaded/%s" % (case, n)] = o.detach().numpy().copy()
    return res


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--state-dicts":
        make_state_dicts(sys.argv[2])
        return 0
    if len(sys.argv) not in (3, 4):
        sys.stderr.write("usage: torch_parity.py in.npz out.npz [state_dict_folder]\n"
                         "       torch_parity.py --state-dicts state_dict_folder\n")
        return 2
    t0 = time.time()
    result = {}
    for case, c in load_cases(sys.argv[1]).items():
        result.update(run_case(case, c))
    if len(sys.argv) == 4:
        result.update(reload_exports(sys.argv[3]))
    np.savez(sys.argv[2], **result)
    print("torch_parity.py: torch %s, %d arrays, %.2f s after import"
          % (torch.__version__, len(result), time.time() - t0))
    return 0


if __name__ == "__main__":
    sys.exit(main())
