import { PrepError } from './prep-error.js';

/** The config.json fields the packer and runtime depend on. */
export type OlmoeConfig = {
  readonly hiddenSize: number;
  readonly intermediateSize: number;
  readonly numExperts: number;
  readonly numHiddenLayers: number;
};

/** Parses config.json text and checks it describes an OLMoE model; `label` names the file in errors. */
export function parseOlmoeConfig(text: string, label: string): OlmoeConfig {
  let json: Record<string, unknown>;
  try {
    json = JSON.parse(text) as Record<string, unknown>;
  } catch (error) {
    throw new PrepError('MODEL_INVALID', `${label}: not valid JSON (${(error as Error).message})`);
  }
  if (json === null || typeof json !== 'object' || Array.isArray(json)) throw new PrepError('MODEL_INVALID', `${label}: not a JSON object`);
  const archs = Array.isArray(json.architectures) ? json.architectures.map(String) : [];
  if (json.model_type !== 'olmoe' && !archs.includes('OlmoeForCausalLM')) {
    throw new PrepError(
      'MODEL_INVALID',
      `${label}: not an OLMoE architecture (model_type '${String(json.model_type)}', architectures [${archs.join(', ')}]); only OLMoE checkpoints can be prepared`,
    );
  }
  const int = (key: string): number => {
    const v = json[key];
    if (typeof v !== 'number' || !Number.isInteger(v) || v <= 0) throw new PrepError('MODEL_INVALID', `${label}: '${key}' must be a positive integer`);
    return v;
  };
  return {
    hiddenSize: int('hidden_size'),
    intermediateSize: int('intermediate_size'),
    numExperts: int('num_experts'),
    numHiddenLayers: int('num_hidden_layers'),
  };
}

/** The qpacked-v1 default group size: 128 when it divides every expert input width, else the largest of 64, 32, 16, 8 that does. */
export function defaultGroupSize(config: OlmoeConfig): number {
  for (const g of [128, 64, 32, 16, 8]) if (config.hiddenSize % g === 0 && config.intermediateSize % g === 0) return g;
  throw new PrepError('MODEL_INVALID', `config.json: no INT4 group size (128..8) divides hidden_size ${config.hiddenSize} and intermediate_size ${config.intermediateSize}`);
}
