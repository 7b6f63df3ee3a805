/**
 * The limits and defaults of a run's settings, one definition for every place that checks or fills them: the IPC
 * validators, the Run page's store, `horizon eval`, run creation, and (for what any generation may ask) the worker
 * protocol. The native runtime takes the values it is given.
 */

/** Prompts of a run: the first N of the IFEval set. */
export const RUN_PROMPTS = { min: 1, max: 541 } as const;

/**
 * Prompts generated together. A run that asks for none is sized by the memory its KV cache would take
 * (main/jobs/auto-batch.ts). On a GPU the automatic choice stops at 64, the most the CUDA backend replays as one
 * decode graph (larger measured no faster with the CUDA-core expert kernels); a run may ask for up to 256, whose decode
 * steps launch without a graph, to measure the tensor-core kernels at larger batches. On the CPU it stops at 16 (32
 * for INT4 on the VNNI kernels), and takes fewer where the host's memory is short (the reasons beside CPU_PLAN).
 * cpuDefault is the CPU's batch when the model's config lacks the KV sizes; gpuFallback a GPU run's then, or when its
 * weights leave no room for even one sequence (partial residency).
 */
export const RUN_BATCH = { min: 1, max: 256, cpuDefault: 16, gpuFallback: 8 } as const;

/** Tokens a response may generate: 1280 holds IFEval's longest answers; a run may ask up to 4096. */
export const RUN_MAX_NEW_TOKENS = { min: 1, max: 4096, default: 1280 } as const;

/** GPU memory for resident experts, in MiB (0.25 to 1024 GiB). */
export const RUN_EXPERT_BUDGET_MIB = { min: 256, max: 1_048_576 } as const;

/**
 * What one generation request to the worker may ask, runs or not (`horizon generate` and `logits` reach further than
 * a run): the engine's own bounds.
 */
export const GENERATION_LIMITS = { maxNewTokens: 65_536, batch: 1024 } as const;
