/**
 * The limits and defaults of a run's settings, one definition for every place that checks or fills them: the IPC
 * validators, the Run page's store, `horizon eval`, run creation, and (for what any generation may ask) the worker
 * protocol. The native runtime takes the values it is given.
 */

/** Prompts of a run: the first N of the IFEval set. */
export const RUN_PROMPTS = { min: 1, max: 541 } as const;

/**
 * Prompts generated together. The automatic choice stops at 64, the most the CUDA backend replays as one decode graph
 * (larger measured no faster with the CUDA-core expert kernels); a run may ask for up to 256, whose decode steps
 * launch without a graph, to measure the tensor-core kernels at larger batches. The CPU backend takes 16: its INT4
 * kernels share each unpack of the weights among the tokens an expert gets in a step, so more sequences read fewer
 * bytes a token (the full-size OLMoE on two cores decoded 55 / 62 / 66-80 tok/s at 8 / 16 / 32), and at 16 OLMoE's
 * KV cache (128 KB a token) stays under 3.6 GB of host memory even if every sequence held IFEval's longest prompt
 * and 1,280 new tokens. A GPU run that cannot be sized, or whose weights leave no room for even one sequence (partial
 * residency), takes gpuFallback.
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
