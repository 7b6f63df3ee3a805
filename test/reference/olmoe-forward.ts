/**
 * FP32 reference forward pass of OlmoeForCausalLM, written from transformers' modeling_olmoe.py (eager attention):
 * pre-norm blocks; q_norm/k_norm RMSNorm over the whole q/k projection; rotate-half RoPE; causal softmax attention
 * with GQA; router softmax in fp32, top-k, renormalised only when norm_topk_prob; SwiGLU experts; final norm; lm_head.
 * Values are stored as float32 (sums run in float64). Test-only; slow is fine.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import { dequantizeQ4, EXPERT_WEIGHT, f16BitsToF32, f32ToF16Bits, packTensorsReference, tensorToFloat32 } from './qpacked.js';
import type { RawTensor } from './safetensors.js';
import { readCheckpoint } from './safetensors.js';

/** The config.json fields the forward pass reads. */
export type ForwardConfig = {
  readonly hidden_size: number;
  readonly intermediate_size: number;
  readonly num_hidden_layers: number;
  readonly num_attention_heads: number;
  readonly num_key_value_heads?: number;
  readonly num_experts: number;
  readonly num_experts_per_tok: number;
  readonly norm_topk_prob: boolean;
  readonly vocab_size: number;
  readonly rms_norm_eps: number;
  readonly rope_theta?: number;
  readonly clip_qkv?: number | null;
  readonly tie_word_embeddings?: boolean;
};

/** Float32 weights by HF name; routed experts of a qpacked model are dequantised on demand. */
export type WeightSource = (name: string) => Float32Array;

/** A WeightSource over raw tensors (BF16/F16/F32, or qpacked qweight + scales for expert weights). */
export function weightSource(tensors: ReadonlyMap<string, RawTensor>): WeightSource {
  const cache = new Map<string, Float32Array>();
  return (name) => {
    const hit = cache.get(name);
    if (hit) return hit;
    let values: Float32Array;
    const raw = tensors.get(name);
    const m = EXPERT_WEIGHT.exec(name);
    if (raw) values = tensorToFloat32(raw);
    else if (m && tensors.has(`${m[1]}.qweight`)) {
      const q = tensors.get(`${m[1]}.qweight`)!;
      const s = tensors.get(`${m[1]}.scales`);
      if (!s) throw new Error(`reference: ${m[1]}.scales missing`);
      values = dequantizeQ4(q.bytes, s.bytes, q.shape[0]!, q.shape[1]! * 2);
    } else throw new Error(`reference: tensor ${name} missing`);
    cache.set(name, values);
    return values;
  };
}

function rmsNorm(x: Float32Array, weight: Float32Array, eps: number): Float32Array {
  let ss = 0;
  for (let i = 0; i < x.length; i++) ss += x[i]! * x[i]!;
  const inv = 1 / Math.sqrt(Math.fround(ss / x.length) + eps);
  const out = new Float32Array(x.length);
  for (let i = 0; i < x.length; i++) out[i] = weight[i]! * Math.fround(x[i]! * inv);
  return out;
}

/** y = W x for row-major W [out, in]. */
function matVec(w: Float32Array, x: Float32Array, out: number): Float32Array {
  const n = x.length;
  if (w.length !== out * n) throw new Error(`reference: weight of ${w.length} values is not [${out}, ${n}]`);
  const y = new Float32Array(out);
  for (let r = 0; r < out; r++) {
    let s = 0;
    const base = r * n;
    for (let c = 0; c < n; c++) s += w[base + c]! * x[c]!;
    y[r] = s;
  }
  return y;
}

function softmaxInPlace(v: Float64Array | Float32Array): void {
  let max = -Infinity;
  for (const x of v) max = Math.max(max, x);
  let sum = 0;
  for (let i = 0; i < v.length; i++) {
    v[i] = Math.exp(v[i]! - max);
    sum += v[i]!;
  }
  for (let i = 0; i < v.length; i++) v[i] = v[i]! / sum;
}

/** Routing of one token in one layer: expert ids (best first) and their weights. */
export type Routing = { readonly experts: number[]; readonly weights: number[] };

/** Logits for every position (each a Float32Array of vocab_size), plus the routing chosen per layer and token. */
/**
 * The runtime's 8-bit expert activations (qpacked-v2 at group 32): per block of 32, d = max|x| / 127 and x becomes
 * round-half-even(x * (127 / max|x|)) * d.
 */
export function q8RoundTrip(x: Float32Array): Float32Array {
  const out = new Float32Array(x.length);
  for (let b = 0; b < x.length; b += 32) {
    let amax = 0;
    for (let c = b; c < b + 32; c++) amax = Math.max(amax, Math.abs(x[c]!));
    const d = Math.fround(amax / 127);
    const inv = amax > 0 ? Math.fround(127 / amax) : 0;
    for (let c = b; c < b + 32; c++) {
      const t = Math.fround(x[c]! * inv);
      let r = Math.round(t);
      if (r - t === 0.5 && r % 2 !== 0) r -= 1; // ties to even, as the runtime's nearbyint
      out[c] = r * d;
    }
  }
  return out;
}

export type ForwardOptions = {
  /** Round the routed experts' inputs as the runtime's 8-bit activation kernels do (INT4 at group 32). */
  readonly q8ExpertActivations?: boolean;
  /** Round the routed experts' inputs with this instead (another scheme's activations); wins over q8ExpertActivations. */
  readonly expertInputs?: (x: Float32Array) => Float32Array;
  /** Round keys and values to FP16 as the runtime's KV caches store them. */
  readonly fp16KvCache?: boolean;
};

export function olmoeForward(
  config: ForwardConfig,
  weights: WeightSource,
  tokens: readonly number[],
  options: ForwardOptions = {},
): { logits: Float32Array[]; routing: Routing[][] } {
  const q8 = options.expertInputs ?? (options.q8ExpertActivations === true ? q8RoundTrip : (x: Float32Array) => x);
  const kv = options.fp16KvCache === true ? (x: Float32Array) => x.map((v) => f16BitsToF32(f32ToF16Bits(v))) : (x: Float32Array) => x;
  const h = config.hidden_size;
  const nH = config.num_attention_heads;
  const nKv = config.num_key_value_heads ?? nH;
  const hd = h / nH;
  const eps = config.rms_norm_eps;
  const theta = config.rope_theta ?? 10000;
  const T = tokens.length;
  const embed = weights('model.embed_tokens.weight');
  let xs = tokens.map((t) => {
    if (!Number.isInteger(t) || t < 0 || t >= config.vocab_size) throw new Error(`reference: token ${t} out of range`);
    return embed.slice(t * h, (t + 1) * h);
  });
  const invFreq = Array.from({ length: hd / 2 }, (_, i) => Math.fround(1 / Math.fround(theta ** Math.fround((2 * i) / hd))));
  const rope = (v: Float32Array, heads: number, pos: number): void => {
    for (let head = 0; head < heads; head++) {
      const o = head * hd;
      for (let i = 0; i < hd / 2; i++) {
        const angle = Math.fround(pos * invFreq[i]!);
        const c = Math.fround(Math.cos(angle));
        const s = Math.fround(Math.sin(angle));
        const a = v[o + i]!;
        const b = v[o + i + hd / 2]!;
        v[o + i] = a * c - b * s;
        v[o + i + hd / 2] = b * c + a * s;
      }
    }
  };
  const clip = (v: Float32Array): void => {
    const lim = config.clip_qkv;
    if (lim == null) return;
    for (let i = 0; i < v.length; i++) v[i] = Math.min(lim, Math.max(-lim, v[i]!));
  };
  const routing: Routing[][] = [];
  for (let l = 0; l < config.num_hidden_layers; l++) {
    const p = `model.layers.${l}`;
    const wq = weights(`${p}.self_attn.q_proj.weight`);
    const wk = weights(`${p}.self_attn.k_proj.weight`);
    const wv = weights(`${p}.self_attn.v_proj.weight`);
    const wo = weights(`${p}.self_attn.o_proj.weight`);
    const qs: Float32Array[] = [];
    const ks: Float32Array[] = [];
    const vs: Float32Array[] = [];
    for (let t = 0; t < T; t++) {
      const hn = rmsNorm(xs[t]!, weights(`${p}.input_layernorm.weight`), eps);
      const q = rmsNorm(matVec(wq, hn, nH * hd), weights(`${p}.self_attn.q_norm.weight`), eps);
      const k = rmsNorm(matVec(wk, hn, nKv * hd), weights(`${p}.self_attn.k_norm.weight`), eps);
      const v = matVec(wv, hn, nKv * hd);
      clip(q);
      clip(k);
      clip(v);
      rope(q, nH, t);
      rope(k, nKv, t);
      qs.push(q);
      ks.push(kv(k));
      vs.push(kv(v));
    }
    const layerRouting: Routing[] = [];
    xs = xs.map((x, t) => {
      const attn = new Float32Array(nH * hd);
      for (let head = 0; head < nH; head++) {
        const kvHead = Math.floor(head / (nH / nKv));
        const scores = new Float32Array(t + 1);
        for (let s = 0; s <= t; s++) {
          let dot = 0;
          for (let i = 0; i < hd; i++) dot += qs[t]![head * hd + i]! * ks[s]![kvHead * hd + i]!;
          scores[s] = dot / Math.sqrt(hd);
        }
        softmaxInPlace(scores);
        for (let i = 0; i < hd; i++) {
          let acc = 0;
          for (let s = 0; s <= t; s++) acc += scores[s]! * vs[s]![kvHead * hd + i]!;
          attn[head * hd + i] = acc;
        }
      }
      const o = matVec(wo, attn, h);
      const x1 = new Float32Array(h);
      for (let i = 0; i < h; i++) x1[i] = x[i]! + o[i]!;

      const hn = rmsNorm(x1, weights(`${p}.post_attention_layernorm.weight`), eps);
      const probs = matVec(weights(`${p}.mlp.gate.weight`), hn, config.num_experts);
      softmaxInPlace(probs);
      // Highest probability first, the lower expert id on an exact tie.
      const order = Array.from(probs.keys()).sort((a, b) => probs[b]! - probs[a]! || a - b);
      const experts = order.slice(0, config.num_experts_per_tok);
      let ws = experts.map((e) => probs[e]!);
      if (config.norm_topk_prob) {
        const sum = ws.reduce((a, b) => a + b, 0);
        ws = ws.map((w) => Math.fround(w / sum));
      }
      layerRouting.push({ experts, weights: ws });
      const moe = new Float64Array(h);
      const hq = q8(hn);
      experts.forEach((e, k) => {
        const q = `${p}.mlp.experts.${e}`;
        const g = matVec(weights(`${q}.gate_proj.weight`), hq, config.intermediate_size);
        const u = matVec(weights(`${q}.up_proj.weight`), hq, config.intermediate_size);
        const act = new Float32Array(config.intermediate_size);
        for (let i = 0; i < act.length; i++) act[i] = Math.fround(g[i]! / (1 + Math.exp(-g[i]!))) * u[i]!;
        const d = matVec(weights(`${q}.down_proj.weight`), q8(act), h);
        for (let i = 0; i < h; i++) moe[i]! += Math.fround(d[i]! * ws[k]!);
      });
      const x2 = new Float32Array(h);
      for (let i = 0; i < h; i++) x2[i] = x1[i]! + moe[i]!;
      return x2;
    });
    routing.push(layerRouting);
  }
  const head = weights(config.tie_word_embeddings ? 'model.embed_tokens.weight' : 'lm_head.weight');
  const logits = xs.map((x) => matVec(head, rmsNorm(x, weights('model.norm.weight'), eps), config.vocab_size));
  return { logits, routing };
}

/** Reference logits of a checkpoint folder: 'bf16' as stored, 'int4' after packing it with the TS qpacked packer. */
export function referenceLogits(
  dir: string,
  tokens: readonly number[],
  mode: 'bf16' | 'int4',
  groupSize?: number,
): { logits: Float32Array[]; routing: Routing[][] } {
  const config = JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8')) as ForwardConfig;
  const { tensors } = readCheckpoint(dir);
  if (mode === 'bf16') return olmoeForward(config, weightSource(tensors), tokens);
  const packed = packTensorsReference(tensors, groupSize);
  return olmoeForward(config, weightSource(packed.tensors), tokens, { q8ExpertActivations: packed.groupSize === 32 });
}
