/**
 * Runs a performance campaign (electron/common/perf-campaign.ts) through the runtime worker: per configuration, load
 * the model with that expert budget, one excluded warm-up generation, then every prompt alone in each block, storing
 * each request's record as it finishes.
 */
import type { PromptRecord } from '../../../evals/ifeval/types.js';
import {
  campaignConfigs,
  PERF_SETTINGS,
  type PerfCampaign,
  type PerfCampaignDetail,
  type PerfRequestRecord,
  type PerfSettings,
} from '../../common/perf-campaign.js';
import type { PerfCampaignProgress } from '../../common/ipc-contract.js';
import type { PerfRepo } from '../db/perf-repo.js';
import { ensureModelLoaded, type RuntimeClient } from './eval-run.js';
import type { ModelSource } from './model-source.js';
import { runContextTokens } from './run-context.js';

export interface PerfCampaignRequest {
  readonly id: string;
  readonly source: ModelSource;
  /** Expert budgets in bytes, one configuration each after full residency (CUDA). */
  readonly budgetsBytes: readonly number[];
  readonly backend: 'auto' | 'cpu' | 'cuda';
  readonly cudaDevice?: number;
  /** The campaign's label (label.ts: normalized and valid); none when omitted. */
  readonly label?: string;
  /** The fixed campaign by default; tests run smaller ones. */
  readonly settings?: PerfSettings;
}

/** The progress the job reports is what the contract pushes to every UI. */
export type PerfProgress = PerfCampaignProgress;

export interface PerfCampaignHooks {
  readonly signal?: AbortSignal;
  readonly onProgress?: (p: PerfProgress) => void;
}

/** Runs the campaign to its end (completed, failed or cancelled) and returns it as stored. */
export async function runPerfCampaign(
  deps: { readonly perf: PerfRepo; readonly runtime: RuntimeClient; readonly records: readonly PromptRecord[] },
  req: PerfCampaignRequest,
  hooks: PerfCampaignHooks = {},
): Promise<PerfCampaignDetail> {
  const settings = req.settings ?? PERF_SETTINGS;
  const prompts = deps.records.slice(0, settings.prompts);
  if (prompts.length < settings.prompts) throw new Error(`the campaign needs ${settings.prompts} prompts; the dataset has ${prompts.length}`);
  const specs = campaignConfigs(req.backend === 'cpu' ? [] : req.budgetsBytes);
  let configs: PerfCampaign['configs'] = specs.map((c) => ({ ...c, residency: null }));
  deps.perf.create({
    id: req.id,
    createdAt: new Date().toISOString(),
    model: { modelId: req.source.modelId, repo: req.source.repo, revision: req.source.revision, weights: req.source.weights, manifestSha256: req.source.manifestSha256 },
    backend: 'pending',
    deviceLabel: 'loading the model…',
    peakMemoryScope: null,
    settings: { ...settings, keys: prompts.map((p) => p.key) },
    configs,
    label: req.label ?? null,
  });
  const total = specs.length * settings.blocks * prompts.length;
  let done = 0;
  let config = 0;
  const report = (status: PerfCampaign['status'], message: string, error?: string) =>
    hooks.onProgress?.({ campaignId: req.id, status, config, configs: specs.length, done, total, message, ...(error ? { error } : {}) });
  const end = (status: 'completed' | 'failed' | 'cancelled', error: string | null = null): PerfCampaignDetail => {
    deps.perf.finish(req.id, status, error);
    report(status, status === 'completed' ? 'campaign complete' : (error ?? status), error ?? undefined);
    return deps.perf.get(req.id)!;
  };
  const { runtime } = deps;
  try {
    const maxContext = await runContextTokens(req.source.modelDir, prompts.map((p) => p.prompt), settings.maxNewTokens);
    let encoded: readonly (readonly number[])[] | undefined;
    for (const [i, spec] of specs.entries()) {
      config = i;
      if (hooks.signal?.aborted) return end('cancelled');
      report('running', `loading the model for ${spec.label}`);
      if (runtime.state === 'crashed') {
        const restarted = await runtime.restart();
        if (!restarted.ok) return end('failed', `restarting the runtime worker failed: ${restarted.error.message}`);
      }
      const loaded = await ensureModelLoaded(runtime, req.source, {
        backend: req.backend,
        maxContext,
        maxSequences: 1,
        expertBudgetBytes: spec.expertBudgetBytes,
        cudaDevice: req.cudaDevice ?? null,
      });
      if (!loaded.ok) return end('failed', `${spec.label}: loading the model failed: ${loaded.error.code}: ${loaded.error.message}`);
      configs = configs.map((c, j) => (j === i ? { ...c, residency: loaded.value.residency } : c));
      deps.perf.updateDevice(req.id, { backend: loaded.value.backend, deviceLabel: loaded.value.deviceLabel, configs });
      if (!encoded) {
        const enc = await runtime.request({ type: 'encode-chat', prompts: prompts.map((p) => p.prompt) });
        if (!enc.ok) return end('failed', `tokenizing the prompts failed: ${enc.error.message}`);
        encoded = enc.value.map((e) => e.tokenIds);
      }
      const generate = (jobId: string, tokenIds: readonly number[], maxNewTokens: number) =>
        runtime.request({
          type: 'generate',
          jobId,
          items: [{ itemId: jobId, tokenIds }],
          // EOS suppressed: every request generates its whole budget, so requests compare like for like.
          policy: { decoding: 'greedy', maxNewTokens, stopTokenIds: [], batch: 1 },
        });
      report('running', `${spec.label}: warming up`);
      const warm = await generate(`${req.id}#${i}#warmup`, encoded[0]!, settings.warmupTokens);
      if (!warm.ok) return end('failed', `${spec.label}: the warm-up failed: ${warm.error.code}: ${warm.error.message}`);
      // What the peak memory measures is the device's; it is recorded with the configuration's first request.
      let scopeRecorded = false;
      for (let block = 0; block < settings.blocks; block++) {
        for (const [p, prompt] of prompts.entries()) {
          if (hooks.signal?.aborted) return end('cancelled');
          const gen = await generate(`${req.id}#${i}#${block}#${prompt.key}`, encoded[p]!, settings.maxNewTokens);
          if (!gen.ok) return end('failed', `${spec.label}, block ${block + 1}, prompt ${prompt.key}: ${gen.error.code}: ${gen.error.message}`);
          const item = gen.value.items[0];
          if (!item) return end('failed', `${spec.label}: the worker answered without the request's result`);
          if (gen.value.peakMemoryScope && !scopeRecorded) {
            deps.perf.updateDevice(req.id, { backend: loaded.value.backend, deviceLabel: loaded.value.deviceLabel, peakMemoryScope: gen.value.peakMemoryScope, configs });
            scopeRecorded = true;
          }
          const record: PerfRequestRecord = {
            config: i,
            block,
            key: prompt.key,
            promptTokens: encoded[p]!.length,
            tokens: item.tokenIds.length,
            ttftMs: item.ttftMs,
            decodeTokensPerSecond: item.decodeTokensPerSecond,
            responseMs: gen.value.wallMs,
            peakMemoryBytes: gen.value.peakMemoryBytes,
            h2dBytes: gen.value.h2dBytes,
            expertHits: gen.value.expertCache?.hits ?? 0,
            expertMisses: gen.value.expertCache?.misses ?? 0,
            expertEvictions: gen.value.expertCache?.evictions ?? 0,
          };
          deps.perf.addRequest(req.id, record);
          done += 1;
          report('running', `${spec.label}: block ${block + 1} of ${settings.blocks}, ${p + 1} of ${prompts.length} prompts`);
        }
      }
    }
    return end('completed');
  } catch (e) {
    return end('failed', (e as Error).message);
  }
}
