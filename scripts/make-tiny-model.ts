/**
 * Writes a seeded random OLMoE checkpoint in Hugging Face layout (config, 2 BF16 safetensors shards + index,
 * byte-level BPE tokenizer, chat template). Usage: npx tsx scripts/make-tiny-model.ts --out DIR [--seed N] [--full]
 * [--layers N] [--tail-df DF]. --full writes OLMoE-1B-7B shapes, streamed tensor by tensor; --tail-df draws the weight
 * matrices from a Student-t distribution (heavy tails).
 */
import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { endianness } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';

import { encodeBf16 } from './lib/bf16.js';
import { buildByteLevelTokenizer } from './lib/byte-level-bpe.js';
import { shardedTensorSpecs } from './lib/olmoe-tensors.js';
import type { OlmoeConfig, TensorSpec } from './lib/olmoe-tensors.js';
import { fillFromLevels, hashString, normalLevels, Prng, studentLevels } from './lib/prng.js';
import { tensorByteLength, writeSafetensorsFile } from './lib/safetensors-writer.js';
import type { TensorSource } from './lib/safetensors-writer.js';

/** The chat template of OLMoE-1B-7B-0924-Instruct, verbatim from its tokenizer_config.json. */
export const OLMOE_CHAT_TEMPLATE =
  "{{ bos_token }}{% for message in messages %}\n{% if message['role'] == 'system' %}\n{{ '<|system|>\\n' + message['content'] }}\n{% elif message['role'] == 'user' %}\n{{ '<|user|>\\n' + message['content'] }}\n{% elif message['role'] == 'assistant' %}\n{{ '<|assistant|>\\n'  + message['content'] + eos_token }}\n{% endif %}\n{% if loop.last and add_generation_prompt %}\n{{ '<|assistant|>' }}\n{% endif %}\n{% endfor %}";

export type TinyModelOptions = {
  /** PRNG seed; the same seed and options give the same bytes. */
  readonly seed?: number;
  /** Full OLMoE-1B-7B shapes (hidden 2048, 64 experts, vocab 50304). */
  readonly full?: boolean;
  /** Number of decoder layers (default 2 tiny, 16 full). */
  readonly layers?: number;
  /**
   * Degrees of freedom of a Student-t distribution for the weight matrices (heavy tails, as trained weights have;
   * e.g. 4); norms keep their normal spread. Default: normal weights.
   */
  readonly tailDf?: number;
  /** Overrides for the tiny shapes, e.g. { num_key_value_heads: 2 } for GQA. */
  readonly config?: Partial<OlmoeConfig>;
};

export type TinyModel = {
  readonly dir: string;
  readonly config: OlmoeConfig & Record<string, unknown>;
  /** Real tokenizer entries (ids below this are valid tokens; the vocabulary is padded above it). */
  readonly tokenizerSize: number;
  readonly eosTokenId: number;
  readonly padTokenId: number;
  /** Every file written, relative to `dir`. */
  readonly files: readonly string[];
};

const CHUNK_ELEMENTS = 1 << 20;

function writeJson(path: string, value: unknown): void {
  const tmp = `${path}.tmp-${process.pid}`;
  writeFileSync(tmp, `${JSON.stringify(value, null, 2)}\n`);
  renameSync(tmp, path);
}

function randomBf16Source(spec: TensorSpec, seed: number, tailDf?: number): TensorSource {
  return {
    name: spec.name,
    dtype: 'BF16',
    shape: spec.shape,
    write: (sink) => {
      const rng = new Prng(hashString(`${seed}:${spec.name}`));
      // BF16 bits of all 65536 levels, so streaming billions of weights is one table lookup each.
      const levelBytes = new Uint8Array(2 * 65536);
      const heavy = tailDf !== undefined && spec.mean === 0;
      encodeBf16(heavy ? studentLevels(spec.std, tailDf, spec.mean) : normalLevels(spec.std, spec.mean), levelBytes);
      const levels = new Uint16Array(65536);
      for (let i = 0; i < levels.length; i++) levels[i] = levelBytes[2 * i]! | (levelBytes[2 * i + 1]! << 8);
      let left = spec.shape.reduce((a, b) => a * b, 1);
      while (left > 0) {
        const n = Math.min(left, CHUNK_ELEMENTS);
        const values = new Uint16Array(n);
        fillFromLevels(rng, levels, values);
        sink(LITTLE_ENDIAN ? new Uint8Array(values.buffer) : swapBytes(values));
        left -= n;
      }
    },
  };
}

const LITTLE_ENDIAN = endianness() === 'LE';

function swapBytes(values: Uint16Array): Uint8Array {
  const out = new Uint8Array(values.length * 2);
  for (let i = 0; i < values.length; i++) {
    out[2 * i] = values[i]! & 0xff;
    out[2 * i + 1] = values[i]! >> 8;
  }
  return out;
}

/** Writes the checkpoint into `dir` (created if needed) and returns what was written. */
export async function makeTinyModel(dir: string, opts: TinyModelOptions = {}): Promise<TinyModel> {
  const seed = opts.seed ?? 0;
  const full = opts.full ?? false;
  const tokenizer = buildByteLevelTokenizer();
  const eos = tokenizer.specialIds['<|endoftext|>'];
  const pad = tokenizer.specialIds['<|padding|>'];
  const shapes: OlmoeConfig = {
    hidden_size: full ? 2048 : 64,
    intermediate_size: full ? 1024 : 32,
    num_hidden_layers: opts.layers ?? (full ? 16 : 2),
    num_attention_heads: full ? 16 : 4,
    num_key_value_heads: full ? 16 : 4,
    num_experts: full ? 64 : 8,
    num_experts_per_tok: full ? 8 : 2,
    norm_topk_prob: false,
    vocab_size: full ? 50304 : Math.ceil(tokenizer.size / 64) * 64 + 64,
    rms_norm_eps: 1e-5,
    rope_theta: 10000.0,
    clip_qkv: null,
    tie_word_embeddings: false,
    ...opts.config,
  };
  if (shapes.vocab_size <= tokenizer.size) {
    throw new Error(`make-tiny-model: vocab_size ${shapes.vocab_size} must exceed the tokenizer's ${tokenizer.size} tokens`);
  }
  const config = {
    architectures: ['OlmoeForCausalLM'],
    attention_bias: false,
    attention_dropout: 0.0,
    clip_qkv: shapes.clip_qkv,
    eos_token_id: eos,
    hidden_act: 'silu',
    hidden_size: shapes.hidden_size,
    initializer_range: 0.02,
    intermediate_size: shapes.intermediate_size,
    max_position_embeddings: 4096,
    model_type: 'olmoe',
    norm_topk_prob: shapes.norm_topk_prob,
    num_attention_heads: shapes.num_attention_heads,
    num_experts: shapes.num_experts,
    num_experts_per_tok: shapes.num_experts_per_tok,
    num_hidden_layers: shapes.num_hidden_layers,
    num_key_value_heads: shapes.num_key_value_heads,
    output_router_logits: false,
    pad_token_id: pad,
    rms_norm_eps: shapes.rms_norm_eps,
    rope_scaling: null,
    rope_theta: shapes.rope_theta,
    router_aux_loss_coef: 0.01,
    tie_word_embeddings: shapes.tie_word_embeddings,
    torch_dtype: 'bfloat16',
    transformers_version: '4.45.0.dev0',
    use_cache: true,
    vocab_size: shapes.vocab_size,
  };
  mkdirSync(dir, { recursive: true });
  const files: string[] = [];
  const put = (name: string, value: unknown): void => {
    writeJson(join(dir, name), value);
    files.push(name);
  };
  put('config.json', config);

  const shards = shardedTensorSpecs(shapes, 2);
  const weightMap: Record<string, string> = {};
  let totalSize = 0;
  shards.forEach((specs, i) => {
    const name = `model-${String(i + 1).padStart(5, '0')}-of-${String(shards.length).padStart(5, '0')}.safetensors`;
    writeSafetensorsFile(join(dir, name), specs.map((s) => randomBf16Source(s, seed, opts.tailDf)));
    files.push(name);
    for (const s of specs) {
      weightMap[s.name] = name;
      totalSize += tensorByteLength('BF16', s.shape);
    }
  });
  const sortedMap = Object.fromEntries(Object.entries(weightMap).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  put('model.safetensors.index.json', { metadata: { total_size: totalSize }, weight_map: sortedMap });

  put('tokenizer.json', tokenizer.json);
  const special = (content: string) => ({
    content,
    lstrip: false,
    normalized: false,
    rstrip: false,
    single_word: false,
    special: true,
  });
  put('tokenizer_config.json', {
    add_bos_token: false,
    add_eos_token: false,
    added_tokens_decoder: { [eos]: special('<|endoftext|>'), [pad]: special('<|padding|>') },
    bos_token: '<|endoftext|>',
    chat_template: OLMOE_CHAT_TEMPLATE,
    clean_up_tokenization_spaces: true,
    eos_token: '<|endoftext|>',
    model_max_length: 4096,
    pad_token: '<|padding|>',
    tokenizer_class: 'GPTNeoXTokenizer',
    unk_token: '<|endoftext|>',
  });
  put('special_tokens_map.json', {
    bos_token: special('<|endoftext|>'),
    eos_token: special('<|endoftext|>'),
    pad_token: special('<|padding|>'),
    unk_token: special('<|endoftext|>'),
  });
  put('generation_config.json', { eos_token_id: eos, pad_token_id: pad, transformers_version: '4.45.0.dev0' });
  return { dir, config: { ...shapes, ...config }, tokenizerSize: tokenizer.size, eosTokenId: eos, padTokenId: pad, files };
}

async function cli(argv: string[]): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: {
      out: { type: 'string' },
      seed: { type: 'string' },
      full: { type: 'boolean' },
      layers: { type: 'string' },
      'tail-df': { type: 'string' },
    },
  });
  if (!values.out) {
    console.error('usage: make-tiny-model --out DIR [--seed N] [--full] [--layers N] [--tail-df DF]');
    return 2;
  }
  const int = (name: string, s: string | undefined): number | undefined => {
    if (s === undefined) return undefined;
    if (!/^\d+$/.test(s)) throw new Error(`make-tiny-model: --${name} must be a non-negative integer, got '${s}'`);
    return Number(s);
  };
  const layers = int('layers', values.layers);
  const started = Date.now();
  const model = await makeTinyModel(resolve(values.out), {
    seed: int('seed', values.seed) ?? 0,
    full: values.full ?? false,
    ...(layers === undefined ? {} : { layers }),
    ...(values['tail-df'] === undefined ? {} : { tailDf: Number(values['tail-df']) }),
  });
  console.log(`wrote ${model.files.length} files to ${model.dir} in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  return 0;
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  cli(process.argv.slice(2)).then(
    (code) => (process.exitCode = code),
    (err: unknown) => {
      console.error(err instanceof Error ? err.message : String(err));
      process.exitCode = 1;
    },
  );
}
