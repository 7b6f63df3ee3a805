import type {
  BackendChoice,
  BackendKind,
  DeviceProbe,
  ExpertCacheCounts,
  GenerationPolicy,
  PeakMemoryScope,
  PromptGeneration,
  WeightsKind,
} from '../../common/worker-protocol.js';

export interface EngineBatchResult {
  readonly items: readonly PromptGeneration[];
  /** Bytes; 0 on the CPU backend. */
  readonly peakMemoryBytes: number;
  /** What peakMemoryBytes measures (see PeakMemoryScope); null on the CPU backend. */
  readonly peakMemoryScope: PeakMemoryScope | null;
  /** Bytes; 0 on the CPU backend. */
  readonly h2dBytes: number;
  /** CUDA only: the expert cache's counts over the batch. */
  readonly expertCache?: ExpertCacheCounts | null;
}

/** A model loaded by an engine; `generate` streams each token through `onToken(itemIndex, tokenId)`. */
export interface EngineModel {
  readonly backend: BackendKind;
  readonly deviceLabel: string;
  readonly residency: string;
  readonly vocabSize: number;
  /** Tokens per sequence the model has KV room for. */
  readonly maxContext: number;
  /**
   * Generates every prompt, at most `policy.batch` at once (continuous batching); `onToken` streams each token,
   * and with the token that ends a prompt its finished result (as it will appear in the batch result).
   */
  generate(
    prompts: readonly (readonly number[])[],
    policy: GenerationPolicy,
    onToken: (itemIndex: number, tokenId: number, end?: PromptGeneration) => void,
    signal: AbortSignal,
  ): Promise<EngineBatchResult>;
  /** Empty while the model can run; otherwise the device error after which every request fails (the device can be
   * used again only from a new process). */
  fault(): string;
  /** The device memory the model holds now; null on the CPU. */
  deviceMemory(): { readonly device: number; readonly bytes: number } | null;
  dispose(): void;
}

/** What the worker needs from a runtime: the native addon in the app, a scripted stand-in in tests. */
export interface InferenceEngine {
  probe(): DeviceProbe;
  load(request: {
    modelDir: string;
    packedDir: string | null;
    weights: WeightsKind;
    backend: BackendChoice;
    maxContext?: number;
    maxSequences?: number;
    expertBudgetBytes?: number;
    cudaDevice?: number;
  }): Promise<EngineModel>;
}
