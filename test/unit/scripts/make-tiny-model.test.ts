import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { Template } from '@huggingface/jinja';
import { Tokenizer } from '@huggingface/tokenizers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { shardedTensorSpecs } from '../../../scripts/lib/olmoe-tensors.js';
import type { OlmoeConfig } from '../../../scripts/lib/olmoe-tensors.js';
import { makeTinyModel } from '../../../scripts/make-tiny-model.js';
import type { TinyModel } from '../../../scripts/make-tiny-model.js';
import { tensorToFloat32 } from '../../reference/qpacked.js';
import { readCheckpoint, readSafetensors } from '../../reference/safetensors.js';

const OLMOE_CONFIG_KEYS = [
  'architectures', 'model_type', 'attention_bias', 'clip_qkv', 'eos_token_id', 'pad_token_id', 'hidden_act',
  'hidden_size', 'intermediate_size', 'max_position_embeddings', 'norm_topk_prob', 'num_attention_heads',
  'num_experts', 'num_experts_per_tok', 'num_hidden_layers', 'num_key_value_heads', 'rms_norm_eps', 'rope_scaling',
  'rope_theta', 'tie_word_embeddings', 'torch_dtype', 'vocab_size',
];

let root: string;
let model: TinyModel;

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'tiny-model-test-'));
  model = await makeTinyModel(join(root, 'a'), { seed: 3 });
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

const readJson = (name: string): Record<string, unknown> =>
  JSON.parse(readFileSync(join(model.dir, name), 'utf8')) as Record<string, unknown>;

describe('makeTinyModel', () => {
  it('writes every HF file, well under 10 MB', () => {
    const files = readdirSync(model.dir).sort();
    expect(files).toEqual([
      'config.json', 'generation_config.json', 'model-00001-of-00002.safetensors', 'model-00002-of-00002.safetensors',
      'model.safetensors.index.json', 'special_tokens_map.json', 'tokenizer.json', 'tokenizer_config.json',
    ]);
    const total = files.reduce((a, f) => a + statSync(join(model.dir, f)).size, 0);
    expect(total).toBeLessThan(10 * 1024 * 1024);
  });

  it('writes an OLMoE config with small shapes and a padded vocabulary', () => {
    const config = readJson('config.json');
    for (const key of OLMOE_CONFIG_KEYS) expect(config, key).toHaveProperty(key);
    expect(config).toMatchObject({
      architectures: ['OlmoeForCausalLM'], model_type: 'olmoe', torch_dtype: 'bfloat16', hidden_size: 64,
      intermediate_size: 32, num_hidden_layers: 2, num_attention_heads: 4, num_experts: 8, num_experts_per_tok: 2,
      norm_topk_prob: false, tie_word_embeddings: false, eos_token_id: model.eosTokenId, pad_token_id: model.padTokenId,
    });
    expect(config.vocab_size as number).toBeGreaterThan(model.tokenizerSize);
  });

  it('is deterministic per seed and differs across seeds', async () => {
    const again = await makeTinyModel(join(root, 'b'), { seed: 3 });
    const other = await makeTinyModel(join(root, 'c'), { seed: 4 });
    for (const f of model.files) {
      expect(readFileSync(join(again.dir, f)).equals(readFileSync(join(model.dir, f))), f).toBe(true);
    }
    const shard = 'model-00002-of-00002.safetensors';
    expect(readFileSync(join(other.dir, shard)).equals(readFileSync(join(model.dir, shard)))).toBe(false);
    expect(readFileSync(join(other.dir, 'config.json'), 'utf8')).toBe(readFileSync(join(model.dir, 'config.json'), 'utf8'));
  });

  it('shards BF16 tensors with an index that maps every tensor to its file', () => {
    const index = readJson('model.safetensors.index.json') as { metadata: { total_size: number }; weight_map: Record<string, string> };
    const shards = new Set(Object.values(index.weight_map));
    expect([...shards].sort()).toEqual(['model-00001-of-00002.safetensors', 'model-00002-of-00002.safetensors']);
    let bytes = 0;
    for (const shard of shards) {
      const { tensors, metadata } = readSafetensors(join(model.dir, shard));
      expect(metadata).toEqual({ format: 'pt' });
      for (const [name, t] of tensors) {
        expect(index.weight_map[name]).toBe(shard);
        expect(t.dtype).toBe('BF16');
        bytes += t.bytes.length;
      }
    }
    expect(index.metadata.total_size).toBe(bytes);
    const { tensors } = readCheckpoint(model.dir);
    expect(tensors.size).toBe(Object.keys(index.weight_map).length);
    expect(tensors.get('model.embed_tokens.weight')!.shape).toEqual([model.config.vocab_size, 64]);
    expect(tensors.get('model.layers.1.mlp.experts.7.down_proj.weight')!.shape).toEqual([64, 32]);
    expect(tensors.get('model.layers.0.mlp.gate.weight')!.shape).toEqual([8, 64]);
    expect(tensors.get('model.layers.0.self_attn.k_norm.weight')!.shape).toEqual([64]);
  });

  it('draws weights at the intended scales', () => {
    const { tensors } = readCheckpoint(model.dir);
    const stats = (name: string) => {
      const v = tensorToFloat32(tensors.get(name)!);
      const mean = v.reduce((a, b) => a + b, 0) / v.length;
      return { mean, std: Math.sqrt(v.reduce((a, b) => a + (b - mean) ** 2, 0) / v.length) };
    };
    expect(stats('model.embed_tokens.weight').std).toBeCloseTo(0.5, 1);
    expect(stats('model.layers.0.self_attn.q_proj.weight').std).toBeCloseTo(0.1, 1);
    expect(stats('model.norm.weight').mean).toBeCloseTo(1, 1);
  });

  it('writes a byte-level BPE tokenizer that loads and round-trips', () => {
    const tokenizer = new Tokenizer(readJson('tokenizer.json'), readJson('tokenizer_config.json'));
    expect(model.tokenizerSize).toBeGreaterThan(256 + 24);
    for (const text of ['The quick brown fox jumps over the lazy dog.', 'héllo 世界 🙂\n\n  tabs\tand  spaces ']) {
      const ids = tokenizer.encode(text, { add_special_tokens: false }).ids;
      expect(tokenizer.decode(ids)).toBe(text);
      expect(ids.every((id: number) => id < model.tokenizerSize)).toBe(true);
    }
    expect(tokenizer.encode(' the', { add_special_tokens: false }).ids).toHaveLength(1);
    const special = tokenizer.encode('<|endoftext|>hi<|padding|>', { add_special_tokens: false }).ids;
    expect(special[0]).toBe(model.eosTokenId);
    expect(special.at(-1)).toBe(model.padTokenId);
  });

  it('writes the OLMoE-Instruct chat template and token settings', () => {
    const config = readJson('tokenizer_config.json');
    expect(config).toMatchObject({ add_bos_token: false, bos_token: '<|endoftext|>', eos_token: '<|endoftext|>' });
    const rendered = new Template(config.chat_template as string).render({
      messages: [{ role: 'user', content: 'Hi there' }],
      add_generation_prompt: true,
      bos_token: config.bos_token,
      eos_token: config.eos_token,
    });
    expect(rendered).toBe('<|endoftext|><|user|>\nHi there\n<|assistant|>\n');
    expect(readJson('generation_config.json')).toMatchObject({ eos_token_id: model.eosTokenId });
    expect(readJson('special_tokens_map.json')).toHaveProperty('eos_token.content', '<|endoftext|>');
  });

  it('supports GQA and layer-count overrides', async () => {
    const gqa = await makeTinyModel(join(root, 'gqa'), { seed: 1, layers: 1, config: { num_key_value_heads: 2 } });
    const { tensors } = readCheckpoint(gqa.dir);
    expect(tensors.get('model.layers.0.self_attn.k_proj.weight')!.shape).toEqual([32, 64]);
    expect(tensors.get('model.layers.0.self_attn.k_norm.weight')!.shape).toEqual([32]);
    expect(tensors.has('model.layers.1.input_layernorm.weight')).toBe(false);
  });

  it('runs as a CLI with --out, --seed and --layers, and rejects bad numbers', () => {
    const script = join(import.meta.dirname, '..', '..', '..', 'scripts', 'make-tiny-model.ts');
    const out = join(root, 'cli');
    execFileSync(process.execPath, ['--import', 'tsx', script, '--out', out, '--seed', '3', '--layers', '1'], { stdio: 'pipe' });
    const config = JSON.parse(readFileSync(join(out, 'config.json'), 'utf8')) as { num_hidden_layers: number };
    expect(config.num_hidden_layers).toBe(1);
    expect(() =>
      execFileSync(process.execPath, ['--import', 'tsx', script, '--out', out, '--seed', 'x'], { stdio: 'pipe' }),
    ).toThrow(/--seed must be a non-negative integer/);
  });

  it('lays out the full OLMoE-1B-7B shapes for --full', () => {
    const full: OlmoeConfig = {
      hidden_size: 2048, intermediate_size: 1024, num_hidden_layers: 16, num_attention_heads: 16, num_key_value_heads: 16,
      num_experts: 64, num_experts_per_tok: 8, norm_topk_prob: false, vocab_size: 50304, rms_norm_eps: 1e-5,
      rope_theta: 10000, clip_qkv: null, tie_word_embeddings: false,
    };
    const specs = shardedTensorSpecs(full).flat();
    const params = specs.reduce((a, s) => a + s.shape.reduce((x, y) => x * y, 1), 0);
    expect(params).toBe(6_919_161_856);
    const shape = (name: string) => specs.find((s) => s.name === name)?.shape;
    expect(shape('model.layers.15.mlp.experts.63.gate_proj.weight')).toEqual([1024, 2048]);
    expect(shape('model.layers.0.mlp.experts.0.down_proj.weight')).toEqual([2048, 1024]);
    expect(shape('lm_head.weight')).toEqual([50304, 2048]);
    expect(shape('model.layers.3.self_attn.q_norm.weight')).toEqual([2048]);
  });
});
