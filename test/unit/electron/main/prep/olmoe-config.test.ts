import { describe, expect, it } from 'vitest';

import { checkAllExpertTensors, checkMoeTensorShapes, defaultGroupSize, parseOlmoeConfig } from '../../../../../electron/main/prep/olmoe-config.js';
import { PrepError } from '../../../../../electron/main/prep/prep-error.js';
import { RateMeter } from '../../../../../electron/main/prep/prep-events.js';

const OLMOE = { architectures: ['OlmoeForCausalLM'], model_type: 'olmoe', hidden_size: 2048, intermediate_size: 1024, num_experts: 64, num_hidden_layers: 16 };

describe('parseOlmoeConfig', () => {
  it('accepts the OLMoE-1B-7B config and picks group size 32', () => {
    const cfg = parseOlmoeConfig(JSON.stringify(OLMOE), 'config.json');
    expect(cfg).toEqual({ hiddenSize: 2048, intermediateSize: 1024, numExperts: 64, numHiddenLayers: 16 });
    expect(defaultGroupSize(cfg)).toBe(32);
  });

  it.each([
    [{ ...OLMOE, model_type: 'mixtral', architectures: ['MixtralForCausalLM'] }, /config\.json: not an OLMoE architecture \(model_type 'mixtral', architectures \[MixtralForCausalLM\]\)/],
    [{ ...OLMOE, hidden_size: 0 }, /'hidden_size' must be a positive integer/],
  ])('rejects %j', (json, text) => {
    expect(() => parseOlmoeConfig(JSON.stringify(json), 'config.json')).toThrow(text);
  });

  it('rejects text that is not JSON', () => {
    expect(() => parseOlmoeConfig('{', 'config.json')).toThrow(/config\.json: not valid JSON/);
  });

  it.each([
    [64, 32, 32],
    [96, 48, 16],
    [2048, 1024, 32],
    [192, 64, 32],
    [48, 24, 8],
  ])('hidden %i, intermediate %i gives group size %i', (hiddenSize, intermediateSize, g) => {
    expect(defaultGroupSize({ hiddenSize, intermediateSize, numExperts: 1, numHiddenLayers: 1 })).toBe(g);
  });

  it('fails when no group size divides the widths', () => {
    expect(() => defaultGroupSize({ hiddenSize: 36, intermediateSize: 20, numExperts: 1, numHiddenLayers: 1 })).toThrow(/no INT4 group size/);
  });
});

describe('checkMoeTensorShapes', () => {
  const cfg = { hiddenSize: 64, intermediateSize: 32, numExperts: 8, numHiddenLayers: 2 };
  const x = (l: number, e: number, p: string): string => `model.layers.${l}.mlp.experts.${e}.${p}_proj.weight`;

  it('returns the expert tensors and ignores the others', () => {
    const shapes = { [x(0, 7, 'gate')]: [32, 64], [x(1, 0, 'down')]: [64, 32], 'model.layers.0.mlp.gate.weight': [8, 64], 'model.norm.weight': [64] };
    expect(checkMoeTensorShapes(cfg, shapes, 's.safetensors')).toEqual([x(0, 7, 'gate'), x(1, 0, 'down')]);
  });

  it.each([
    [x(0, 0, 'gate'), [64, 64], /s\.safetensors: tensor 'model\.layers\.0\.mlp\.experts\.0\.gate_proj\.weight' has shape \[64, 64\] but config\.json \(hidden_size 64, intermediate_size 32, num_experts 8, num_hidden_layers 2\) needs \[32, 64\]/],
    [x(0, 0, 'up'), [32, 64, 1], /has shape \[32, 64, 1\] .* needs \[32, 64\]/],
    [x(1, 3, 'down'), [32, 64], /'model\.layers\.1\.mlp\.experts\.3\.down_proj\.weight' has shape \[32, 64\] .* needs \[64, 32\]/],
    ['model.layers.1.mlp.gate.weight', [16, 64], /'model\.layers\.1\.mlp\.gate\.weight' has shape \[16, 64\] .* needs \[8, 64\]/],
    [x(0, 8, 'gate'), [32, 64], /'model\.layers\.0\.mlp\.experts\.8\.gate_proj\.weight' is beyond the layers or experts of config\.json/],
    [x(2, 0, 'gate'), [32, 64], /'model\.layers\.2\.mlp\.experts\.0\.gate_proj\.weight' is beyond the layers or experts/],
  ])('rejects %s with shape %j', (name, shape, text) => {
    const e = (() => {
      try {
        checkMoeTensorShapes(cfg, { [name]: shape }, 's.safetensors');
      } catch (error) {
        return error;
      }
      return undefined;
    })();
    expect(e).toBeInstanceOf(PrepError);
    expect((e as PrepError).code).toBe('MODEL_INVALID');
    expect((e as PrepError).message).toMatch(text);
  });

  it('names the first expert tensor no shard holds', () => {
    const all = new Set<string>();
    for (let l = 0; l < 2; l++) for (let e = 0; e < 8; e++) for (const p of ['gate', 'up', 'down']) all.add(x(l, e, p));
    expect(() => checkAllExpertTensors(cfg, all, 'o/m@abc')).not.toThrow();
    all.delete(x(1, 5, 'up'));
    expect(() => checkAllExpertTensors(cfg, all, 'o/m@abc')).toThrow(/o\/m@abc: no shard holds 'model\.layers\.1\.mlp\.experts\.5\.up_proj\.weight', which config\.json \(.*num_experts 8, num_hidden_layers 2\) calls for/);
  });
});

describe('RateMeter', () => {
  it('gives a rate over the window and an ETA', () => {
    let now = 0;
    const meter = new RateMeter(5000, () => now);
    expect(meter.sample(0, 1000)).toEqual({ bytesPerSec: 0, etaSec: null });
    now = 2000;
    expect(meter.sample(200, 1000)).toEqual({ bytesPerSec: 100, etaSec: 8 });
    now = 10_000;
    expect(meter.sample(600, 1000).bytesPerSec).toBeCloseTo(50, 5);
  });
});
