import { describe, expect, it } from 'vitest';

import { defaultGroupSize, parseOlmoeConfig } from '../../../../../electron/main/prep/olmoe-config.js';
import { RateMeter } from '../../../../../electron/main/prep/prep-events.js';

const OLMOE = { architectures: ['OlmoeForCausalLM'], model_type: 'olmoe', hidden_size: 2048, intermediate_size: 1024, num_experts: 64, num_hidden_layers: 16 };

describe('parseOlmoeConfig', () => {
  it('accepts the OLMoE-1B-7B config and picks group size 128', () => {
    const cfg = parseOlmoeConfig(JSON.stringify(OLMOE), 'config.json');
    expect(cfg).toEqual({ hiddenSize: 2048, intermediateSize: 1024, numExperts: 64, numHiddenLayers: 16 });
    expect(defaultGroupSize(cfg)).toBe(128);
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
    [2048, 1024, 128],
    [192, 64, 64],
  ])('hidden %i, intermediate %i gives group size %i', (hiddenSize, intermediateSize, g) => {
    expect(defaultGroupSize({ hiddenSize, intermediateSize, numExperts: 1, numHiddenLayers: 1 })).toBe(g);
  });

  it('fails when no group size divides the widths', () => {
    expect(() => defaultGroupSize({ hiddenSize: 36, intermediateSize: 20, numExperts: 1, numHiddenLayers: 1 })).toThrow(/no INT4 group size/);
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
