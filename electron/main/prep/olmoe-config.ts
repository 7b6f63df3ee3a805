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

/** The qpacked-v2 default group size: 32 when it divides every expert input width, else the largest of 16, 8 that does. */
export function defaultGroupSize(config: OlmoeConfig): number {
  for (const g of [32, 16, 8]) if (config.hiddenSize % g === 0 && config.intermediateSize % g === 0) return g;
  throw new PrepError('MODEL_INVALID', `config.json: no INT4 group size (32, 16, 8) divides hidden_size ${config.hiddenSize} and intermediate_size ${config.intermediateSize}`);
}

const EXPERT_WEIGHT = /^model\.layers\.(\d+)\.mlp\.experts\.(\d+)\.(gate|up|down)_proj\.weight$/;
const ROUTER_WEIGHT = /^model\.layers\.(\d+)\.mlp\.gate\.weight$/;
const PROJECTIONS = ['gate', 'up', 'down'] as const;

const describeConfig = (c: OlmoeConfig): string =>
  `config.json (hidden_size ${c.hiddenSize}, intermediate_size ${c.intermediateSize}, num_experts ${c.numExperts}, num_hidden_layers ${c.numHiddenLayers})`;

/**
 * Checks one shard's routed-expert and router tensors against config.json: gate/up_proj [intermediate, hidden],
 * down_proj [hidden, intermediate], router [experts, hidden], layer and expert indexes in range. `label` names the
 * shard in errors. Returns the expert tensor names the shard holds.
 */
export function checkMoeTensorShapes(config: OlmoeConfig, shapes: Readonly<Record<string, readonly number[]>>, label: string): string[] {
  const { hiddenSize: h, intermediateSize: i } = config;
  const experts: string[] = [];
  for (const [name, shape] of Object.entries(shapes)) {
    const expert = EXPERT_WEIGHT.exec(name);
    const router = expert ? null : ROUTER_WEIGHT.exec(name);
    if (!expert && !router) continue;
    const layer = Number((expert ?? router)![1]);
    if (layer >= config.numHiddenLayers || (expert && Number(expert[2]) >= config.numExperts)) {
      throw new PrepError('MODEL_INVALID', `${label}: tensor '${name}' is beyond the layers or experts of ${describeConfig(config)}`);
    }
    const want = expert ? (expert[3] === 'down' ? [h, i] : [i, h]) : [config.numExperts, h];
    if (shape.length !== 2 || shape[0] !== want[0] || shape[1] !== want[1]) {
      throw new PrepError('MODEL_INVALID', `${label}: tensor '${name}' has shape [${shape.join(', ')}] but ${describeConfig(config)} needs [${want.join(', ')}]`);
    }
    if (expert) experts.push(name);
  }
  return experts;
}

/** Fails naming the first routed-expert tensor that config.json calls for and no shard holds. */
export function checkAllExpertTensors(config: OlmoeConfig, found: ReadonlySet<string>, label: string): void {
  for (let l = 0; l < config.numHiddenLayers; l++) {
    for (let e = 0; e < config.numExperts; e++) {
      for (const p of PROJECTIONS) {
        const name = `model.layers.${l}.mlp.experts.${e}.${p}_proj.weight`;
        if (!found.has(name)) throw new PrepError('MODEL_INVALID', `${label}: no shard holds '${name}', which ${describeConfig(config)} calls for`);
      }
    }
  }
}
