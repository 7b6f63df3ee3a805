import type Database from 'better-sqlite3';

import { parsePromptRecords } from '../../../evals/ifeval/dataset.js';
import type { TextTools } from '../../../evals/ifeval/text/text-tools.js';
import type { ZipOrigin } from '../../common/ipc-contract.js';
import { isRecord } from '../../common/is-record.js';
import type { FinishReason } from '../../common/worker-protocol.js';
import type { ResponseRepo, StoredResponse } from '../db/response-repo.js';
import type { ImportedRun, RunPolicy, RunRecord, RunRepo } from '../db/run-repo.js';
import {
  brief,
  Fields,
  ImportError,
  isNonEmpty,
  isOptionalLabel,
  isPositive,
  isRunId,
  isString,
  isTime,
  notVerified,
  oneOf,
  OPTIONAL_LABEL,
  readZipToImport,
  refuseProblems,
  RUN_ID,
  storeOnce,
} from './import-fields.js';
import { isPerfZip } from './perf-zip.js';
import { isCount, isSha256, verifyResultZip } from './verify-result-zip.js';
import type { VerifyResultZipOptions } from './verify-result-zip.js';

export interface ImportResultZipOptions {
  readonly runs: RunRepo;
  readonly responses: ResponseRepo;
  /** The connection both repos use: the run, its figures and its responses are stored in one transaction. */
  readonly db: Database.Database;
  readonly tools: TextTools;
  readonly verifyOptions?: VerifyResultZipOptions;
  /** The ZIP as readZipToImport read it, when the caller has (to tell the kinds apart): it is not read again. */
  readonly read?: { readonly entries: ReadonlyMap<string, Buffer>; readonly origin: ZipOrigin };
}

/** What an import stored. */
export interface ImportedResult {
  readonly run: RunRecord;
  readonly responses: number;
  /** Checks the verifier could not make (see verifyResultZip); the import went ahead without them. */
  readonly unchecked: readonly string[];
}

const FINISHED = ['completed', 'cancelled', 'failed'] as const;
// ZIPs written before the backend names were unified say 'CPU' / 'CUDA'.
const BACKENDS = ['cpu', 'cuda', 'pending', 'CPU', 'CUDA'] as const;
const FINISH_REASONS: readonly FinishReason[] = ['stop', 'length', 'cancelled'];
const isRate = (v: unknown): v is number | null => v === null || (typeof v === 'number' && Number.isFinite(v));

/** manifest.json's policy, field by field; undefined when any field is wrong (each is noted in `f`). */
function readPolicy(f: Fields, manifest: unknown): RunPolicy | undefined {
  const optionalCount = (v: unknown): v is number | null | undefined => v === undefined || v === null || isCount(v);
  const policy = {
    decoding: f.get(manifest, 'policy.decoding', (v): v is 'greedy' => v === 'greedy', 'greedy'),
    maxNewTokens: f.get(manifest, 'policy.maxNewTokens', isPositive, 'a count of at least 1'),
    batch: f.get(manifest, 'policy.batch', isPositive, 'a count of at least 1'),
    stopTokenIds: f.get(manifest, 'policy.stopTokenIds', (v): v is number[] => Array.isArray(v) && v.every(isCount), 'a list of token ids'),
    limit: f.get(manifest, 'policy.limit', (v): v is number | null => v === null || isPositive(v), 'a count of at least 1 or null'),
    chatTemplate: f.get(manifest, 'policy.chatTemplate', oneOf(['tokenizer_config.json', 'chat_template.jinja'] as const), 'tokenizer_config.json or chat_template.jinja'),
    requestedBackend: f.get(manifest, 'policy.requestedBackend', oneOf(['auto', 'cpu', 'cuda'] as const), 'auto, cpu or cuda'),
    expertBudgetBytes: f.get(manifest, 'policy.expertBudgetBytes', optionalCount, 'a count, null or absent'),
    cudaDevice: f.get(manifest, 'policy.cudaDevice', optionalCount, 'a count, null or absent'),
  };
  const { expertBudgetBytes, cudaDevice, ...required } = policy;
  if (Object.values(required).some((v) => v === undefined)) return undefined;
  return {
    ...(required as { [K in keyof typeof required]: Exclude<(typeof required)[K], undefined> }),
    ...(expertBudgetBytes !== undefined ? { expertBudgetBytes } : {}),
    ...(cudaDevice !== undefined ? { cudaDevice } : {}),
  };
}

/**
 * Imports a result ZIP into the database as a finished run, after it verifies as `horizon verify` would have it: every
 * hash, then the re-scored verdicts. The run keeps its id, times, status, model, device and figures as the ZIP
 * recorded them, and where it came from (the ZIP's path and sha256); its verdicts are the re-scored ones, which the
 * verification found equal to the ZIP's. Refused, with every problem named: a ZIP that does not verify, a campaign
 * ZIP, a manifest whose run the database cannot hold, and a run whose id is stored already.
 */
export async function importResultZip(file: string, opts: ImportResultZipOptions, now = new Date().toISOString()): Promise<ImportedResult> {
  const { entries, origin } = opts.read ?? (await readZipToImport(file, now));
  if (isPerfZip(entries)) throw new ImportError(file, 'other-kind', 'is a performance campaign ZIP, not a result ZIP');
  const verification = await verifyResultZip(file, opts.tools, { ...opts.verifyOptions, entries });
  if (!verification.verified || !verification.responses) throw notVerified(file, verification.problems);

  const f = new Fields('manifest.json');
  const manifest: unknown = JSON.parse(entries.get('manifest.json')!.toString('utf8'));
  const id = f.get(manifest, 'run.id', isRunId, RUN_ID);
  const status = f.get(manifest, 'run.status', oneOf(FINISHED), 'completed, cancelled or failed');
  const createdAt = f.get(manifest, 'run.createdAt', isTime, 'an ISO-8601 time');
  const finishedAt = f.get(manifest, 'run.finishedAt', (v): v is string | null => v === null || isTime(v), 'an ISO-8601 time or null');
  const total = f.get(manifest, 'run.total', isCount, 'a count');
  const label = f.get(manifest, 'run.label', isOptionalLabel, OPTIONAL_LABEL);
  const datasetSha256 = f.get(manifest, 'run.datasetSha256', isSha256, 'a sha256');
  const modelId = f.get(manifest, 'model.id', isNonEmpty, 'a model id');
  const modelRepo = f.get(manifest, 'model.repo', isString, 'a string');
  const modelRevision = f.get(manifest, 'model.revision', isString, 'a string');
  const weights = f.get(manifest, 'model.weights', oneOf(['int4', 'bf16'] as const), 'int4 or bf16');
  const manifestSha256 = f.get(manifest, 'model.manifestSha256', isString, 'a string');
  const appVersion = f.get(manifest, 'appVersion', isString, 'a string');
  const backend = f.get(manifest, 'backend.backend', oneOf(BACKENDS), 'cpu, cuda or pending');
  const deviceLabel = f.get(manifest, 'backend.device', isString, 'a string');
  const residency = f.get(manifest, 'backend.residency', isString, 'a string');
  const policy = readPolicy(f, manifest);
  const modelManifest = isRecord(manifest) && isRecord(manifest.model) ? manifest.model.manifest : undefined;

  const perf = new Fields('performance.json');
  let performance: unknown;
  try {
    performance = JSON.parse(entries.get('performance.json')!.toString('utf8'));
  } catch (e) {
    perf.problems.push(`performance.json is not JSON (${(e as Error).message})`);
  }
  const nullableCount = (v: unknown): v is number | null => v === null || isCount(v);
  const batches = perf.get(performance, 'batches', isCount, 'a count');
  const generatedTokens = perf.get(performance, 'generated_tokens', isCount, 'a count');
  const wallSeconds = perf.get(performance, 'wall_seconds', (v): v is number => typeof v === 'number' && Number.isFinite(v) && v >= 0, 'seconds');
  // Earlier builds named these peak_vram_bytes / peak_vram_scope, and the first of them recorded no scope (unknown).
  const legacy = isRecord(performance) && !('peak_memory_bytes' in performance) && 'peak_vram_bytes' in performance;
  const peakMemoryBytes = perf.get(performance, legacy ? 'peak_vram_bytes' : 'peak_memory_bytes', nullableCount, 'a count or null');
  const peakMemoryScope = perf.get(
    performance,
    legacy ? 'peak_vram_scope' : 'peak_memory_scope',
    (v): v is 'process' | 'device' | null | undefined => v === null || v === 'process' || v === 'device' || (legacy && v === undefined),
    'process, device or null',
  );
  const h2dBytes = perf.get(performance, 'h2d_bytes', nullableCount, 'a count or null');

  // The verifier held each line to its key, prompt and response; the timings are the import's to check.
  const lines = new Map<number, { tokens: number; finishReason: FinishReason; ttftMs: number | null; decodeTokensPerSecond: number | null }>();
  const lineProblems: string[] = [];
  entries
    .get('responses.jsonl')!
    .toString('utf8')
    .split('\n')
    .forEach((text, i) => {
      if (text.trim() === '') return;
      const r = JSON.parse(text) as Record<string, unknown>;
      const timings = isRecord(r.timings) ? r.timings : {};
      const at = `responses.jsonl line ${i + 1}`;
      if (!isCount(r.tokens)) lineProblems.push(`${at}: tokens is ${brief(r.tokens)}, not a count`);
      else if (!oneOf(FINISH_REASONS)(r.finish_reason)) lineProblems.push(`${at}: finish_reason is ${brief(r.finish_reason)}, not stop, length or cancelled`);
      else if (!isRate(timings.ttft_ms) || !isRate(timings.decode_tokens_per_second)) lineProblems.push(`${at}: timings are not numbers or null`);
      else {
        lines.set(r.key as number, {
          tokens: r.tokens,
          finishReason: r.finish_reason,
          ttftMs: timings.ttft_ms as number | null,
          decodeTokensPerSecond: timings.decode_tokens_per_second as number | null,
        });
      }
    });

  refuseProblems(file, [...f.problems, ...perf.problems, ...lineProblems], 'run');

  const records = parsePromptRecords(entries.get('input_data.jsonl')!.toString('utf8'), 'input_data.jsonl');
  const position = new Map(records.map((r, i) => [r.key, { index: i, record: r }]));
  const stored: StoredResponse[] = verification.responses.map((r) => {
    const { index, record } = position.get(r.key)!;
    const line = lines.get(r.key)!;
    return {
      key: r.key,
      position: index,
      prompt: r.prompt,
      response: r.response,
      ...line,
      verdicts: r.verdicts.map((v, j) => ({ instructionId: v.instructionId, kwargs: record.kwargs[j] ?? {}, strict: v.strict, loose: v.loose })),
    };
  });
  const run: ImportedRun = {
    id: id!,
    modelId: modelId!,
    modelRepo: modelRepo!,
    modelRevision: modelRevision!,
    // The model is on the machine that made the run; an imported run is never loaded here.
    modelDir: '',
    packedDir: null,
    weights: weights!,
    manifestSha256: manifestSha256!,
    manifestJson: typeof modelManifest === 'string' ? modelManifest : JSON.stringify(modelManifest ?? null),
    backend: backend!.toLowerCase() as ImportedRun['backend'],
    deviceLabel: deviceLabel!,
    residency: residency!,
    policy: policy!,
    appVersion: appVersion!,
    datasetSha256: datasetSha256!,
    total: total!,
    status: status!,
    createdAt: createdAt!,
    finishedAt: finishedAt!,
    imported: origin,
    label: label ?? null,
    // The check it carried, verbatim, so that its re-export holds the same quality.json.
    qualityJson: verification.quality ? entries.get('quality.json')!.toString('utf8') : null,
    figures: {
      batches: batches!,
      generatedTokens: generatedTokens!,
      wallMs: wallSeconds! * 1000,
      peakMemoryBytes: peakMemoryBytes ?? 0,
      peakMemoryScope: peakMemoryScope ?? null,
      h2dBytes: h2dBytes ?? 0,
    },
  };
  const record = storeOnce(opts.db, file, { what: 'run', id: run.id, here: 'made on this machine' }, () => opts.runs.get(run.id), () => {
    opts.runs.createImported(run);
    // Stored as finished when the run did: the ZIP keeps no time for each response.
    opts.responses.insertResponses(run.id, stored, { generatedTokens: 0 }, finishedAt ?? createdAt!);
    return opts.runs.require(run.id);
  });
  return { run: record, responses: stored.length, unchecked: verification.unchecked };
}
