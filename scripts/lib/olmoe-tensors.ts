/** The tensor names, shapes and initial scales of an OlmoeForCausalLM checkpoint, in HF naming. */

/** The config.json fields this project reads (all OLMoE fields are written; these are the ones with meaning here). */
export type OlmoeConfig = {
  readonly hidden_size: number;
  readonly intermediate_size: number;
  readonly num_hidden_layers: number;
  readonly num_attention_heads: number;
  readonly num_key_value_heads: number;
  readonly num_experts: number;
  readonly num_experts_per_tok: number;
  readonly norm_topk_prob: boolean;
  readonly vocab_size: number;
  readonly rms_norm_eps: number;
  readonly rope_theta: number;
  readonly clip_qkv: number | null;
  readonly tie_word_embeddings: boolean;
};

/** A tensor's name, shape and how to initialise it: normal(mean, std). */
export type TensorSpec = { readonly name: string; readonly shape: readonly number[]; readonly mean: number; readonly std: number };

/** Tensors of one decoder layer, attention first, then router and experts in expert order. */
export function layerTensorSpecs(c: OlmoeConfig, layer: number): TensorSpec[] {
  const h = c.hidden_size;
  const headDim = h / c.num_attention_heads;
  const kv = c.num_key_value_heads * headDim;
  const p = `model.layers.${layer}`;
  // Std of a projection is base / sqrt(fan-in), so the tiny and the full model see activations of similar size.
  const lin = (name: string, out: number, inp: number, base: number): TensorSpec => ({
    name,
    shape: [out, inp],
    mean: 0,
    std: base / Math.sqrt(inp),
  });
  const norm = (name: string, n: number): TensorSpec => ({ name, shape: [n], mean: 1, std: 0.1 });
  const specs: TensorSpec[] = [
    norm(`${p}.input_layernorm.weight`, h),
    lin(`${p}.self_attn.q_proj.weight`, h, h, 0.8),
    lin(`${p}.self_attn.k_proj.weight`, kv, h, 0.8),
    lin(`${p}.self_attn.v_proj.weight`, kv, h, 0.8),
    lin(`${p}.self_attn.o_proj.weight`, h, h, 0.8),
    norm(`${p}.self_attn.q_norm.weight`, h),
    norm(`${p}.self_attn.k_norm.weight`, kv),
    norm(`${p}.post_attention_layernorm.weight`, h),
    lin(`${p}.mlp.gate.weight`, c.num_experts, h, 2.4),
  ];
  for (let e = 0; e < c.num_experts; e++) {
    const q = `${p}.mlp.experts.${e}`;
    specs.push(lin(`${q}.gate_proj.weight`, c.intermediate_size, h, 0.8));
    specs.push(lin(`${q}.up_proj.weight`, c.intermediate_size, h, 0.8));
    specs.push(lin(`${q}.down_proj.weight`, h, c.intermediate_size, 0.8));
  }
  return specs;
}

/** All tensors of the checkpoint split into shards: embeddings and the first half of the layers, then the rest. */
export function shardedTensorSpecs(c: OlmoeConfig, shards = 2): TensorSpec[][] {
  const out: TensorSpec[][] = Array.from({ length: shards }, () => []);
  out[0]!.push({ name: 'model.embed_tokens.weight', shape: [c.vocab_size, c.hidden_size], mean: 0, std: 0.5 });
  for (let l = 0; l < c.num_hidden_layers; l++) {
    const shard = Math.min(shards - 1, Math.floor((l * shards) / c.num_hidden_layers));
    out[shard]!.push(...layerTensorSpecs(c, l));
  }
  const last = out[shards - 1]!;
  last.push({ name: 'model.norm.weight', shape: [c.hidden_size], mean: 1, std: 0.1 });
  if (!c.tie_word_embeddings) {
    last.push({ name: 'lm_head.weight', shape: [c.vocab_size, c.hidden_size], mean: 0, std: 1.6 / Math.sqrt(c.hidden_size) });
  }
  return out;
}
