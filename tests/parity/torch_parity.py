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
