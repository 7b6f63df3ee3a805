#!/usr/bin/env python3
"""Independent OLMoE check in NumPy, sharing no code with the TypeScript generator, reference or packer.

Commands:
  write  --out DIR [--seed N]              write a random OLMoE checkpoint with this script's own safetensors
                                           writer and PRNG (numpy), in a shape the TS generator never makes
  logits --model DIR --tokens 1,2 --out F  FP32 logits of every position, {"tokens": [...], "logits": [[...]]},
                                           a forward pass written from transformers' modeling_olmoe.py
  int4   --fixtures DIR                    re-derive test/fixtures/int4 golden bytes with a numpy qpacked-v2 packer

Needs python3 and numpy only (Debian: python3, python3-numpy).
"""
import argparse
import json
import os
import struct
import sys

import numpy as np


def bf16_bytes(x):
    b = np.asarray(x, dtype=np.float32).view(np.uint32).astype(np.uint64)
    r = ((b + 0x7FFF + ((b >> 16) & 1)) >> 16).astype(np.uint16)
    return r.astype('<u2').tobytes()


def write_safetensors(path, tensors):
    """tensors: list of (name, dtype string, shape, raw bytes)."""
    header = {"__metadata__": {"format": "pt"}}
    offset = 0
    for name, dtype, shape, data in tensors:
        header[name] = {"dtype": dtype, "shape": list(shape), "data_offsets": [offset, offset + len(data)]}
        offset += len(data)
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * ((8 - len(h) % 8) % 8)
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        f.write(struct.pack("<Q", len(h)))
        f.write(h)
        for _, _, _, data in tensors:
            f.write(data)
    os.replace(tmp, path)


def read_safetensors(path):
    with open(path, "rb") as f:
        raw = f.read()
    n = struct.unpack("<Q", raw[:8])[0]
    header = json.loads(raw[8:8 + n])
    base = 8 + n
    out = {}
    for name, v in header.items():
        if name == "__metadata__":
            continue
        s, e = v["data_offsets"]
        buf = raw[base + s:base + e]
        if v["dtype"] == "BF16":
            a = (np.frombuffer(buf, dtype="<u2").astype(np.uint32) << 16).view(np.float32)
        elif v["dtype"] == "F16":
            a = np.frombuffer(buf, dtype="<f2").astype(np.float32)
        elif v["dtype"] == "F32":
            a = np.frombuffer(buf, dtype="<f4").astype(np.float32)
        elif v["dtype"] == "U8":
            a = np.frombuffer(buf, dtype=np.uint8)
        else:
            raise SystemExit(f"{path}: unsupported dtype {v['dtype']} for {name}")
        out[name] = a.reshape(v["shape"])
    return out


def read_checkpoint(d):
    index = os.path.join(d, "model.safetensors.index.json")
    files = sorted(set(json.load(open(index))["weight_map"].values())) if os.path.exists(index) else ["model.safetensors"]
    w = {}
    for f in files:
        w.update(read_safetensors(os.path.join(d, f)))
    return w


LEVELS = np.array([-127, -100, -78, -61, -45, -32, -19, -8, 2, 12, 22, 35, 48, 64, 83, 109], dtype=np.float64)
CANDIDATES = [-136, -128, -120, -112, -104, 96, 104, 112, 120, 128]


def dequant_experts(w):
    """Turns qpacked-v2 qweight/scales pairs back into float32 `.weight` tensors: w' = LEVELS[u] * scale."""
    for name in [n for n in w if n.endswith(".qweight")]:
        base = name[: -len(".qweight")]
        q = w.pop(name)
        s = w.pop(base + ".scales").astype(np.float32)
        u = np.empty((q.shape[0], q.shape[1] * 2), dtype=np.int64)
        u[:, 0::2] = q & 0xF
        u[:, 1::2] = q >> 4
        g = u.shape[1] // s.shape[1]
        w[base + ".weight"] = LEVELS.astype(np.float32)[u] * np.repeat(s, g, axis=1)
    return w


def rms_norm(x, weight, eps):
    x = x.astype(np.float32)
    var = np.mean(x * x, axis=-1, keepdims=True, dtype=np.float32)
    return weight * (x / np.sqrt(var + np.float32(eps))).astype(np.float32)


def rotate_half(x):
    h = x.shape[-1] // 2
    return np.concatenate([-x[..., h:], x[..., :h]], axis=-1)


def softmax(x, axis=-1):
    x = x - np.max(x, axis=axis, keepdims=True)
    e = np.exp(x)
    return e / np.sum(e, axis=axis, keepdims=True)


def forward(cfg, w, tokens):
    H = cfg["hidden_size"]
    nh = cfg["num_attention_heads"]
    nkv = cfg.get("num_key_value_heads") or nh
    hd = H // nh
    eps = cfg["rms_norm_eps"]
    theta = cfg.get("rope_theta", 10000.0)
    T = len(tokens)
    x = w["model.embed_tokens.weight"][np.array(tokens)].astype(np.float32)
    inv_freq = (1.0 / (theta ** (np.arange(0, hd, 2, dtype=np.float32) / hd))).astype(np.float32)
    freqs = np.outer(np.arange(T, dtype=np.float32), inv_freq).astype(np.float32)
    emb = np.concatenate([freqs, freqs], axis=-1)
    cos, sin = np.cos(emb), np.sin(emb)
    mask = np.triu(np.full((T, T), -np.inf, dtype=np.float32), k=1)
    clip = cfg.get("clip_qkv")
    for l in range(cfg["num_hidden_layers"]):
        p = f"model.layers.{l}"
        h = rms_norm(x, w[f"{p}.input_layernorm.weight"], eps)
        q = rms_norm(h @ w[f"{p}.self_attn.q_proj.weight"].T, w[f"{p}.self_attn.q_norm.weight"], eps)
        k = rms_norm(h @ w[f"{p}.self_attn.k_proj.weight"].T, w[f"{p}.self_attn.k_norm.weight"], eps)
        v = h @ w[f"{p}.self_attn.v_proj.weight"].T
        if clip is not None:
            q, k, v = (np.clip(t, -clip, clip) for t in (q, k, v))
        q = q.reshape(T, nh, hd).transpose(1, 0, 2)
        k = k.reshape(T, nkv, hd).transpose(1, 0, 2)
        v = v.reshape(T, nkv, hd).transpose(1, 0, 2)
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        k = np.repeat(k, nh // nkv, axis=0)
        v = np.repeat(v, nh // nkv, axis=0)
        att = softmax(q @ k.transpose(0, 2, 1) / np.float32(np.sqrt(hd)) + mask)
        o = (att @ v).transpose(1, 0, 2).reshape(T, H)
        x = x + o @ w[f"{p}.self_attn.o_proj.weight"].T
        h = rms_norm(x, w[f"{p}.post_attention_layernorm.weight"], eps)
        probs = softmax(h @ w[f"{p}.mlp.gate.weight"].T)
        topk = cfg["num_experts_per_tok"]
        moe = np.zeros_like(x)
        for t in range(T):
            sel = np.argsort(-probs[t], kind="stable")[:topk]
            ws = probs[t, sel]
            if cfg.get("norm_topk_prob"):
                ws = ws / ws.sum()
            for e, we in zip(sel, ws):
                q_ = f"{p}.mlp.experts.{e}"
                g = h[t] @ w[f"{q_}.gate_proj.weight"].T
                u = h[t] @ w[f"{q_}.up_proj.weight"].T
                a = (g / (1 + np.exp(-g))) * u
                moe[t] += (a @ w[f"{q_}.down_proj.weight"].T) * we
        x = x + moe
    x = rms_norm(x, w["model.norm.weight"], eps)
    head = w["model.embed_tokens.weight"] if cfg.get("tie_word_embeddings") else w["lm_head.weight"]
    return x @ head.T


def cmd_write(args):
    rng = np.random.default_rng(args.seed)
    # Deliberately unlike the TS generator: 3 heads, GQA 3:1, 6 experts top-3 with renormalisation,
    # widths 48/24 (qpacked group size 8), 3 layers, 3 shards.
    cfg = {
        "architectures": ["OlmoeForCausalLM"], "model_type": "olmoe", "attention_bias": False,
        "attention_dropout": 0.0, "clip_qkv": None, "eos_token_id": 256, "pad_token_id": 257, "hidden_act": "silu",
        "hidden_size": 48, "initializer_range": 0.02, "intermediate_size": 24, "max_position_embeddings": 4096,
        "norm_topk_prob": True, "num_attention_heads": 3, "num_experts": 6, "num_experts_per_tok": 3,
        "num_hidden_layers": 3, "num_key_value_heads": 1, "output_router_logits": False, "rms_norm_eps": 1e-5,
        "rope_scaling": None, "rope_theta": 10000.0, "router_aux_loss_coef": 0.01, "tie_word_embeddings": False,
        "torch_dtype": "bfloat16", "use_cache": True, "vocab_size": 272,
    }
    H, I, E = cfg["hidden_size"], cfg["intermediate_size"], cfg["num_experts"]
    kv = H // cfg["num_attention_heads"] * cfg["num_key_value_heads"]

    def lin(o, i, base=0.8):
        return (rng.standard_normal((o, i)) * (base / np.sqrt(i))).astype(np.float32)

    def norm(n):
        return (1 + 0.1 * rng.standard_normal(n)).astype(np.float32)

    shards = [[("model.embed_tokens.weight", (0.5 * rng.standard_normal((cfg["vocab_size"], H))).astype(np.float32))], [], []]
    for l in range(cfg["num_hidden_layers"]):
        p = f"model.layers.{l}"
        t = [(f"{p}.input_layernorm.weight", norm(H)), (f"{p}.self_attn.q_proj.weight", lin(H, H)),
             (f"{p}.self_attn.k_proj.weight", lin(kv, H)), (f"{p}.self_attn.v_proj.weight", lin(kv, H)),
             (f"{p}.self_attn.o_proj.weight", lin(H, H)), (f"{p}.self_attn.q_norm.weight", norm(H)),
             (f"{p}.self_attn.k_norm.weight", norm(kv)), (f"{p}.post_attention_layernorm.weight", norm(H)),
             (f"{p}.mlp.gate.weight", lin(E, H, 2.4))]
        for e in range(E):
            q = f"{p}.mlp.experts.{e}"
            t += [(f"{q}.gate_proj.weight", lin(I, H)), (f"{q}.up_proj.weight", lin(I, H)), (f"{q}.down_proj.weight", lin(H, I))]
        shards[l].extend(t)
    shards[2] += [("model.norm.weight", norm(H)), ("lm_head.weight", lin(cfg["vocab_size"], H, 1.6))]
    os.makedirs(args.out, exist_ok=True)
    weight_map, total = {}, 0
    for i, tensors in enumerate(shards):
        fname = f"model-{i + 1:05d}-of-{len(shards):05d}.safetensors"
        entries = [(n, "BF16", a.shape, bf16_bytes(a)) for n, a in tensors]
        write_safetensors(os.path.join(args.out, fname), entries)
        for n, _, _, data in entries:
            weight_map[n] = fname
            total += len(data)
    dump = lambda name, obj: json.dump(obj, open(os.path.join(args.out, name), "w"), indent=2)
    dump("config.json", cfg)
    dump("model.safetensors.index.json", {"metadata": {"total_size": total}, "weight_map": dict(sorted(weight_map.items()))})
    # A byte-level tokenizer with no merges: 256 byte tokens, then the two special tokens.
    bs = list(range(33, 127)) + list(range(161, 173)) + list(range(174, 256))
    cs, extra = [], 0
    for b in range(256):
        if b in bs:
            cs.append(chr(b))
        else:
            cs.append(chr(256 + extra))
            extra += 1
    bl = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": True}
    special = lambda i, c: {"id": i, "content": c, "single_word": False, "lstrip": False, "rstrip": False, "normalized": False, "special": True}
    dump("tokenizer.json", {
        "version": "1.0", "truncation": None, "padding": None,
        "added_tokens": [special(256, "<|endoftext|>"), special(257, "<|padding|>")],
        "normalizer": None, "pre_tokenizer": bl, "post_processor": bl, "decoder": bl,
        "model": {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": None,
                  "end_of_word_suffix": None, "fuse_unk": False, "byte_fallback": False,
                  "vocab": {c: i for i, c in enumerate(cs)}, "merges": []},
    })
    dump("tokenizer_config.json", {"add_bos_token": False, "add_eos_token": False, "bos_token": "<|endoftext|>",
                                   "eos_token": "<|endoftext|>", "pad_token": "<|padding|>", "model_max_length": 4096})
    dump("special_tokens_map.json", {"bos_token": "<|endoftext|>", "eos_token": "<|endoftext|>", "pad_token": "<|padding|>"})
    dump("generation_config.json", {"eos_token_id": 256, "pad_token_id": 257})
    return 0


def cmd_logits(args):
    cfg = json.load(open(os.path.join(args.model, "config.json")))
    w = dequant_experts(read_checkpoint(args.model))
    tokens = [int(t) for t in args.tokens.split(",")]
    logits = forward(cfg, w, tokens)
    tmp = args.out + ".tmp"
    with open(tmp, "w") as f:
        json.dump({"tokens": tokens, "logits": [[float(v) for v in row] for row in logits]}, f)
    os.replace(tmp, args.out)
    return 0


def quantize_q4(w, group):
    """qpacked-v2 with numpy, written from the spec: sums in index order (a loop over columns, not np.sum)."""
    rows, cols = w.shape
    x = w.reshape(-1, group).astype(np.float64)
    n = x.shape[0]
    mids = (LEVELS[1:] + LEVELS[:-1]) / 2

    def code(t):
        return (mids[None, None, :] < t[..., None]).sum(-1)

    m = x[np.arange(n), np.argmax(np.abs(x), axis=1)]  # argmax: the first index of the largest |x|
    best_err = np.full(n, np.inf)
    best_bits = np.zeros(n, dtype=np.float16)
    best_codes = np.full((n, group), 8, dtype=np.int64)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        for c in CANDIDATES:
            d0 = m / c
            k = LEVELS[code(x / d0[:, None])]
            num = np.zeros(n)
            den = np.zeros(n)
            for j in range(group):
                num = num + k[:, j] * x[:, j]
                den = den + k[:, j] * k[:, j]
            h = np.where(den > 0, num / den, d0).astype(np.float32).astype(np.float16)
            dh = h.astype(np.float64)
            v = np.where(dh[:, None] == 0, 8, code(x / dh[:, None]))
            err = np.zeros(n)
            for j in range(group):
                diff = LEVELS[v[:, j]] * dh - x[:, j]
                err = err + diff * diff
            take = (m != 0) & np.isfinite(dh) & (err < best_err)
            best_err = np.where(take, err, best_err)
            best_bits = np.where(take, h, best_bits)
            best_codes = np.where(take[:, None], v, best_codes)
    u = best_codes.reshape(rows, cols).astype(np.uint8)
    return (u[:, 0::2] | (u[:, 1::2] << 4)).astype(np.uint8), best_bits.reshape(rows, cols // group)


def cmd_int4(args):
    cases = json.load(open(os.path.join(args.fixtures, "cases.json")))["cases"]
    bad = 0
    for c in cases:
        raw = np.fromfile(os.path.join(args.fixtures, c["input"]), dtype="<u2")
        w = (raw.astype(np.uint32) << 16).view(np.float32).reshape(c["rows"], c["cols"])
        qweight, scales = quantize_q4(w, c["groupSize"])
        ok_q = qweight.tobytes() == open(os.path.join(args.fixtures, c["qweight"]), "rb").read()
        ok_s = scales.astype("<f2").tobytes() == open(os.path.join(args.fixtures, c["scales"]), "rb").read()
        print(f"{c['name']}: qweight {'ok' if ok_q else 'DIFFERS'}, scales {'ok' if ok_s else 'DIFFERS'}")
        bad += (not ok_q) + (not ok_s)
    return 1 if bad else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    w = sub.add_parser("write")
    w.add_argument("--out", required=True)
    w.add_argument("--seed", type=int, default=0)
    lg = sub.add_parser("logits")
    lg.add_argument("--model", required=True)
    lg.add_argument("--tokens", required=True)
    lg.add_argument("--out", required=True)
    i4 = sub.add_parser("int4")
    i4.add_argument("--fixtures", required=True)
    args = ap.parse_args()
    return {"write": cmd_write, "logits": cmd_logits, "int4": cmd_int4}[args.cmd](args)


if __name__ == "__main__":
    sys.exit(main())
