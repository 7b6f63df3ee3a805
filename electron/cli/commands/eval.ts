import { accessSync, constants, mkdirSync } from 'node:fs';
import path from 'node:path';

import { dataLayout, defaultDataDir, INTERRUPTED_RUN, lockDataDir } from '../../main/data-dir.js';
import { cannotOpenDatabase, openDatabase } from '../../main/db/open-database.js';
import { ResponseRepo } from '../../main/db/response-repo.js';
import type { RunFigureTotals } from '../../main/db/response-repo.js';
import { RunRepo } from '../../main/db/run-repo.js';
import { writeResultZip } from '../../main/export/write-result-zip.js';
import { loadEvalInputs } from '../../main/jobs/eval-inputs.js';
import { DEFAULT_MAX_NEW_TOKENS, executeEvalRun, newRunId } from '../../main/jobs/eval-run.js';
import { startEvalRun } from '../../main/jobs/run-start.js';
import { resolveModelSource, resumeProblem } from '../../main/jobs/model-source.js';
import { formatAccuracies, formatIntervals, runAccuracies, runIntervals } from '../../main/jobs/run-accuracies.js';
import { WorkerClient, forkSpawner } from '../../main/worker-client.js';
import type { RunBackend, RunProgress } from '../../common/ipc-contract.js';
import { readLabel } from '../../common/label.js';
import { RUN_BATCH, RUN_MAX_NEW_TOKENS, RUN_PROMPTS } from '../../common/run-settings.js';
import { toolVersion } from '../../node/app-root.js';
import { abortOnSignals, dataDirOption, intOption, parseCommandArgs, usageError, whenStdoutCloses } from '../command-args.js';
import { parseCudaDevice } from '../cuda-device.js';
import { parseExpertBudget } from '../expert-budget.js';

export const summary = 'run IFEval headless on a prepared model, store it in the database and write a result ZIP';

const USAGE = `usage: horizon eval --model DIR [--weights int4|bf16] [--backend auto|cpu|cuda] [--limit N] [--batch N]
                   [--max-new-tokens N] [--expert-budget GiB] [--device N] [--label TEXT] [--db FILE] [--data-dir DIR]
                   [--out RESULT.zip] [--verify] [--resume RUN_ID]
  --model           a prepared model folder (prepared.json) or a checkpoint folder (config.json, int4-gN/ for int4)
  --verify          hash every model file against its manifest (default: only files whose size or mtime changed
                    since they last verified; sizes and structure are always checked)
  --weights         int4 (default) or bf16
  --backend         auto (default: CUDA when a device is found, else the CPU), cpu or cuda
  --limit           first N of the 541 prompts (default all)
  --batch           prompts generated together (default: the most whose KV cache fits beside the model, in the GPU's
                    memory up to 64, in the host's on the CPU up to 16, 32 for INT4 with VNNI; at most 256)
  --max-new-tokens  generation cap per response (default ${DEFAULT_MAX_NEW_TOKENS})
  --expert-budget   cuda: GiB of device memory for resident experts (default: as much as fits after the KV cache)
  --device          cuda: device index, as \`horizon devices\` lists them (default the first)
  --label           the run's label, one line of at most 80 characters (horizon label changes it later)
  --db              SQLite file (default <data dir>/runmap.sqlite)
  --data-dir        data folder (default $HORIZON_DATA_DIR or the platform app-data folder)
  --out             result ZIP (default <data dir>/exports/<run id>.zip)
  --resume          continue a cancelled or failed run, skipping stored responses (with --db, --data-dir, --out, --verify:
                    the model and settings are the run's)`;

/** Rounded before it is split, so that no part rounds up to a whole next unit ("1m60s", "1h60m"). */
function fmtSeconds(s: number | null): string {
  if (s === null) return 'estimating';
  const whole = Math.round(s);
  if (whole >= 3600) {
    const minutes = Math.round(whole / 60);
    return `${Math.floor(minutes / 60)}h${minutes % 60}m`;
  }
  return whole >= 60 ? `${Math.floor(whole / 60)}m${whole % 60}s` : `${whole}s`;
}

/**
 * One progress line: this session's speed, the whole run's generating time (earlier sessions included, as the
 * figures line and performance.json count it) and the time left.
 */
export function formatProgress(p: RunProgress): string {
  const speed = p.tokensPerSecond === null ? '— tok/s' : `${p.tokensPerSecond.toFixed(1)} tok/s`;
  return `  [${p.done}/${p.total}] ${speed}, elapsed ${fmtSeconds(p.elapsedSeconds)}, ETA ${fmtSeconds(p.etaSeconds)}`;
}

/** One line of a run's figures; GPU memory with what it measures. */
export function formatFigures(f: RunFigureTotals, backend: RunBackend): string {
  const seconds = f.wallMs / 1000;
  const parts = [`${f.generatedTokens} tokens in ${seconds.toFixed(1)} s (${seconds > 0 ? (f.generatedTokens / seconds).toFixed(1) : '—'} tok/s overall)`];
  if (f.meanTtftMs !== null) parts.push(`mean TTFT ${f.meanTtftMs.toFixed(0)} ms`);
  if (f.meanDecodeTokensPerSecond !== null) parts.push(`mean decode ${f.meanDecodeTokensPerSecond.toFixed(1)} tok/s`);
  if (backend === 'cuda' && f.peakMemoryBytes > 0) {
    const scope = f.peakMemoryScope === 'process' ? 'this process' : f.peakMemoryScope === 'device' ? 'whole GPU, other processes included' : 'scope unknown';
    parts.push(`peak VRAM ${(f.peakMemoryBytes / 2 ** 30).toFixed(2)} GiB (${scope}), H2D ${(f.h2dBytes / 1e9).toFixed(2)} GB`);
  }
  if (backend === 'cuda' && f.expertCache) {
    const c = f.expertCache;
    parts.push(`expert cache ${c.hits} hits / ${c.misses} misses / ${c.evictions} evictions`);
  }
  return `figures: ${parts.join(', ')}`;
}

/** What a run is created with and a resume takes from the stored run. */
const RUN_SETTINGS = ['model', 'weights', 'backend', 'limit', 'batch', 'max-new-tokens', 'expert-budget', 'device', 'label'] as const;

export async function run(args: string[]): Promise<number> {
  const parsed = parseCommandArgs('eval', USAGE, args, {
    model: { type: 'string' },
    // No parseArgs defaults for these two: --resume must tell a flag the user gave from one it would have by default.
    weights: { type: 'string' },
    backend: { type: 'string' },
    limit: { type: 'string' },
    batch: { type: 'string' },
    'max-new-tokens': { type: 'string' },
    'expert-budget': { type: 'string' },
    device: { type: 'string' },
    label: { type: 'string' },
    db: { type: 'string' },
    'data-dir': { type: 'string' },
    out: { type: 'string' },
    resume: { type: 'string' },
    verify: { type: 'boolean' },
  });
  if (typeof parsed === 'number') return parsed;
  const { values } = parsed;
  if (values.resume !== undefined) {
    // A resumed run keeps the model and policy it was created with: a flag that would change them is refused, not
    // silently ignored.
    const fromRun = RUN_SETTINGS.filter((f) => values[f] !== undefined).map((f) => `--${f}`);
    if (fromRun.length) {
      return usageError('eval', USAGE, `${fromRun.join(', ')} cannot be combined with --resume (a resumed run keeps its own settings)`);
    }
  }
  const weights = values.weights ?? 'int4';
  const backend = values.backend ?? 'auto';
  if (weights !== 'int4' && weights !== 'bf16') return usageError('eval', USAGE, '--weights must be int4 or bf16');
  if (backend !== 'auto' && backend !== 'cpu' && backend !== 'cuda') return usageError('eval', USAGE, '--backend must be auto, cpu or cuda');
  if (!values.model && !values.resume) return usageError('eval', USAGE, '--model (or --resume RUN_ID) is required');
  for (const flag of ['device', 'expert-budget'] as const) {
    if (backend === 'cpu' && values[flag] !== undefined) return usageError('eval', USAGE, `--${flag} applies to the CUDA backend, not --backend cpu`);
  }
  const { label, problem: labelProblem } = readLabel(values.label ?? '');
  if (labelProblem) return usageError('eval', USAGE, `--label: ${labelProblem}`);
  let limit, batch, maxNewTokens, budget, cudaDevice;
  try {
    cudaDevice = parseCudaDevice(values.device);
    limit = intOption('limit', values.limit, RUN_PROMPTS.min, RUN_PROMPTS.max);
    batch = intOption('batch', values.batch, RUN_BATCH.min, RUN_BATCH.max);
    maxNewTokens = intOption('max-new-tokens', values['max-new-tokens'], RUN_MAX_NEW_TOKENS.min, RUN_MAX_NEW_TOKENS.max);
    budget = parseExpertBudget(values['expert-budget']);
    if (budget.expertSlots !== undefined) throw new Error('--expert-budget for eval is a size in GiB (slots are for logits/generate)');
  } catch (e) {
    console.error(`horizon eval: ${(e as Error).message}`);
    return 2;
  }
  // A model folder that cannot be run fails before anything is written to the data folder.
  const source = values.resume ? null : await resolveModelSource(values.model ?? '', weights, { verify: values.verify === true });
  const dataDir = dataDirOption(values, defaultDataDir);
  // The ZIP is written after the whole run: a folder it cannot go into is said now, not in an hour.
  if (values.out !== undefined) {
    const outDir = path.dirname(path.resolve(values.out));
    try {
      mkdirSync(outDir, { recursive: true });
      accessSync(outDir, constants.W_OK);
    } catch (e) {
      console.error(`horizon eval: --out ${values.out}: cannot write into ${outDir} (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
      return 1;
    }
  }
  const dbFile = path.resolve(values.db ?? dataLayout.database(dataDir));
  // A --db in another folder is locked there too: the app (or another eval) with that folder as its data folder
  // would otherwise write to the same database, and mark this live run interrupted.
  const unlocks: (() => void)[] = [];
  const unlock = () => {
    for (const u of unlocks.splice(0).reverse()) u();
  };
  try {
    unlocks.push(lockDataDir(dataDir));
    if (path.dirname(dbFile) !== dataDir) unlocks.push(lockDataDir(path.dirname(dbFile)));
  } catch (e) {
    unlock();
    console.error(`horizon eval: ${(e as Error).message}`);
    return 1;
  }
  let db: ReturnType<typeof openDatabase>;
  let inputs: Awaited<ReturnType<typeof loadEvalInputs>>;
  try {
    inputs = await loadEvalInputs(dataDir);
    for (const f of inputs.imported) console.log(`imported eval asset ${f}`);
    const opened = openDatabase(dbFile);
    try {
      // As the app does when it starts: a run still marked running was left so by a process that stopped (this one
      // holds the folder), and could be neither exported nor told apart from a live one until marked.
      new RunRepo(opened).failInterrupted(INTERRUPTED_RUN);
    } catch (e) {
      opened.close();
      throw cannotOpenDatabase(dbFile, e);
    }
    db = opened;
  } catch (e) {
    unlock();
    throw e;
  }
  let runIdForQuit: string | null = null;
  const worker = new WorkerClient(forkSpawner());
  worker.onLog((e) => console.error(`[worker ${e.level}] ${e.message}`));
  const cancel = abortOnSignals(['SIGINT', 'SIGTERM'], {
    onAbort: () => console.log('\ncancelling: finished responses are kept, the ones being generated are dropped (Ctrl-C again to quit now)…'),
    onRepeat: () => {
      // Quitting now: the run is left cancelled (resumable) rather than "running", and the data folder unlocked.
      try {
        if (runIdForQuit && db.open) new RunRepo(db).finish(runIdForQuit, 'cancelled');
      } finally {
        unlock();
        process.exit(130);
      }
    },
  });
  // Piped into a reader that stops early (`| head`): the run is cancelled as on Ctrl-C (resumable, exit 130).
  const undoStdoutWatch = whenStdoutCloses(() => {
    console.error('horizon eval: the output was closed; cancelling (finished responses are kept; --resume continues)');
    cancel.abort();
  });
  try {
    const runs = new RunRepo(db);
    const responses = new ResponseRepo(db);
    const deps = { runs, responses, runtime: worker, records: inputs.records, tools: inputs.tools };
    let runId: string;
    if (source === null) {
      runId = values.resume ?? '';
      const existing = runs.get(runId);
      if (!existing) throw new Error(`run ${runId} is not in ${dbFile}`);
      const problem = await resumeProblem(existing, inputs.datasetSha256, { verify: values.verify === true });
      if (problem?.code === 'COMPLETE') {
        const where = `${values['data-dir'] ? ` --data-dir ${dataDir}` : ''}${values.db ? ` --db ${dbFile}` : ''}`;
        throw new Error(`${problem.message}; export it with: npx horizon export ${runId}${where}`);
      }
      if (problem) throw new Error(problem.message);
      console.log(`resuming run ${runId}: ${responses.count(runId)}/${existing.total} responses stored`);
      runIdForQuit = runId;
    } else {
      runId = newRunId();
      runIdForQuit = runId;
      const created = await startEvalRun(deps, {
        runId,
        source,
        backend,
        ...(batch !== undefined ? { batch } : {}),
        ...(limit !== undefined ? { limit } : {}),
        ...(maxNewTokens !== undefined ? { maxNewTokens } : {}),
        ...(budget.expertBudget !== undefined ? { expertBudgetBytes: budget.expertBudget } : {}),
        ...(cudaDevice !== undefined ? { cudaDevice } : {}),
        ...(label !== null ? { label } : {}),
        appVersion: toolVersion(),
        datasetSha256: inputs.datasetSha256,
      }, (p) =>
        p.kind === 'no-such-device'
          ? `--device ${p.device}: no such CUDA device (there are: ${p.devices.map((d) => d.index).join(', ')}; see npx horizon devices)`
          : `no CUDA device for ${backend === 'cuda' ? '--backend cuda' : `--device ${cudaDevice}`}: ${p.note || 'none found'}`,
      );
      console.log(`run ${runId}: ${created.modelId}`);
      console.log(`  ${created.total} prompts, batch ${created.policy.batch}, max new tokens ${created.policy.maxNewTokens}, greedy, stop ids ${created.policy.stopTokenIds.join(',')}`);
    }
    console.log('  loading the model in the runtime worker…');
    const final = await executeEvalRun(deps, runId, {
      signal: cancel.signal,
      onLoaded: (i) => console.log(`  running on ${i.deviceLabel} (${i.backend}, ${i.residency})`),
      onProgress: (p) => {
        // A line per stored response of this session: before its first token (the model loading) there is no speed.
        if (p.partial || p.status !== 'running' || p.tokensPerSecond === null) return;
        console.log(formatProgress(p));
      },
      onResponse: (r) => {
        const text = r.response.replace(/\s+/g, ' ').slice(0, 80);
        console.log(`    key ${r.key}: ${r.strictPass ? 'pass' : 'fail'}/${r.loosePass ? 'pass' : 'fail'} (${r.tokens} tok, ${r.finishReason}) "${text}"`);
      },
    });
    runIdForQuit = null;
    const ended = `run ${runId} ${final.status}${final.error ? `: ${final.error}` : ''} (${responses.count(runId)}/${final.total} responses)`;
    if (final.status === 'failed') console.error(ended);
    else console.log(ended);
    const acc = runAccuracies(responses, runId);
    if (acc) console.log(formatAccuracies(acc));
    const intervals = runIntervals(responses, runId);
    if (intervals) console.log(formatIntervals(intervals));
    const f = responses.figures(runId);
    if (f.generatedTokens > 0) console.log(formatFigures(f, final.backend));
    if (acc && final.status === 'completed') {
      const out = path.resolve(values.out ?? path.join(dataLayout.exportsDir(dataDir), `${runId}.zip`));
      const zip = await writeResultZip({ runs, responses, inputDataText: inputs.inputDataText, tools: inputs.tools }, runId, out);
      console.log(`result ZIP ${zip.path} (${zip.bytes} bytes, sha256 ${zip.sha256})`);
      const where = `--data-dir ${dataDir}${values.db ? ` --db ${dbFile}` : ''}`;
      console.log(`read the failures: npx horizon show ${runId} --failed strict ${where} (--key K for one response)`);
    } else if (final.status !== 'completed') {
      console.log(`resume with: npx horizon eval --resume ${runId} --data-dir ${dataDir}${values.db ? ` --db ${dbFile}` : ''}`);
    }
    console.log(`database ${dbFile}`);
    return final.status === 'completed' ? 0 : final.status === 'cancelled' ? 130 : 1;
  } finally {
    worker.dispose();
    db.close();
    unlock();
    // Last: until here a second Ctrl-C must reach onRepeat, not Node's default (which would skip the unlock).
    cancel.dispose();
    undoStdoutWatch();
  }
}
