import path from 'node:path';

import { readLabel } from '../../common/label.js';
import { CAMPAIGN_ID_PREFIX, PERF_SETTINGS, campaignConfigs, parseBudgetList, ratiosToFullResidency, type PerfCampaignDetail } from '../../common/perf-campaign.js';
import { dataLayout, defaultDataDir, lockDataDir } from '../../main/data-dir.js';
import { cannotOpenDatabase, openDatabase } from '../../main/db/open-database.js';
import { PerfRepo } from '../../main/db/perf-repo.js';
import { writePerfZip } from '../../main/export/perf-zip.js';
import { loadEvalInputs } from '../../main/jobs/eval-inputs.js';
import { newRunId } from '../../main/jobs/eval-run.js';
import { resolveModelSource } from '../../main/jobs/model-source.js';
import { runPerfCampaign } from '../../main/jobs/perf-campaign.js';
import { WorkerClient, forkSpawner } from '../../main/worker-client.js';
import { toolVersion } from '../../node/app-root.js';
import { namedRun } from '../cli-text.js';
import { abortOnSignals, dataDirOption, parseCommandArgs, usageError } from '../command-args.js';
import { parseCudaDevice } from '../cuda-device.js';
import { openStoredRuns } from '../stored-runs.js';

export const summary = 'performance campaign: fixed IFEval prompts, greedy, EOS suppressed, per expert budget; stored and zipped';

const USAGE = `usage: horizon perf --model DIR [--weights int4|bf16] [--backend auto|cpu|cuda] [--expert-budget GiB,GiB,...]
                   [--device N] [--label TEXT] [--db FILE] [--data-dir DIR] [--out CAMPAIGN.zip] [--json] [--verify]
       horizon perf --list [--db FILE] [--data-dir DIR]
  The first ${PERF_SETTINGS.prompts} IFEval prompts, each generated alone, greedy with EOS suppressed, ${PERF_SETTINGS.maxNewTokens} new tokens, in
  ${PERF_SETTINGS.blocks} blocks, after a ${PERF_SETTINGS.warmupTokens}-token warm-up that no figure includes; for full residency and each expert budget
  (CUDA). Per configuration: pooled decode tok/s (first token excluded), TTFT and response time (p50), peak GPU
  memory, host-to-device bytes and expert cache hits/misses. Stored in the database; the ZIP (default
  <data dir>/exports/<id>.zip) is what 'horizon verify' checks.
  --list   list the stored campaigns (id, status, requests, model, device, start, label in quotes, where an
           imported one came from): the ids horizon show --campaign, compare, label --campaign and delete
           --campaign take
  --label  the campaign's label, one line of at most 80 characters (horizon label --campaign changes it later)
  --json   print the campaign (settings, configurations, aggregates and every request) as JSON instead of a table`;

function fmt(n: number | null, digits = 1): string {
  return n === null ? '—' : n.toFixed(digits);
}

/** The campaign as a table: one line a configuration. */
export function formatCampaign(c: PerfCampaignDetail): string {
  const onCpu = c.backend === 'cpu';
  const lines = [
    `campaign ${namedRun(c.id, c.label)} ${c.status}${c.error ? `: ${c.error}` : ''} — ${c.model.modelId} on ${c.deviceLabel}${c.deviceLabel === c.backend ? '' : ` (${c.backend})`}`,
    ...(c.imported ? [`  imported from ${c.imported.file} at ${c.imported.importedAt}`] : []),
    `  ${c.settings.prompts} prompts × ${c.settings.blocks} blocks, ${c.settings.maxNewTokens} new tokens, EOS suppressed, warm-up ${c.settings.warmupTokens} tokens excluded`,
    '  configuration          decode tok/s  TTFT p50 ms  response p50 ms  peak GPU memory  H2D GB   expert hits/misses',
  ];
  for (const [i, a] of c.aggregates.entries()) {
    const spec = c.configs[i]!;
    const mem = onCpu ? 'n/a on CPU' : a.peakMemoryBytes === null ? '—' : `${(a.peakMemoryBytes / 2 ** 30).toFixed(2)} GiB`;
    const h2d = onCpu ? 'n/a' : (a.h2dBytes / 1e9).toFixed(2);
    const cache = onCpu ? 'n/a' : `${a.expertHits}/${a.expertMisses}`;
    lines.push(
      `  ${spec.label.padEnd(22)} ${fmt(a.decodeTokensPerSecond).padStart(12)}  ${fmt(a.ttftMsP50, 0).padStart(11)}  ${fmt(a.responseMsP50, 0).padStart(15)}  ${mem.padStart(15)}  ${h2d.padStart(6)}   ${cache}`,
    );
  }
  const toFull = ratiosToFullResidency(c).flatMap((r, i) => {
    if (r === null) return [];
    const ci = r.decodeRatioCi95 === null ? '' : ` (95% CI ${r.decodeRatioCi95[0].toFixed(2)}-${r.decodeRatioCi95[1].toFixed(2)}x)`;
    return [`${c.configs[i]!.label} ${r.decodeRatio.toFixed(2)}x${ci}`];
  });
  if (toFull.length) lines.push(`  decode rate over full residency's: ${toFull.join('; ')}`);
  if (!onCpu && c.peakMemoryScope === 'device') lines.push('  peak GPU memory: the whole GPU, other processes included (no per-process figure on this driver)');
  return lines.join('\n');
}

/** One line a stored campaign, newest first. */
function listCampaigns(dbFile: string): number {
  const db = openStoredRuns('perf', dbFile);
  if (!db) return 1;
  try {
    const perf = new PerfRepo(db);
    const list = perf.list();
    if (list.length === 0) console.log(`no campaigns in ${dbFile}`);
    for (const c of list) {
      const requests = perf.requestCount(c.id);
      const label = c.label !== null ? `  ${JSON.stringify(c.label)}` : '';
      const origin = c.imported ? `  imported from ${c.imported.file}` : '';
      console.log(`${c.id}  ${c.status.padEnd(9)} ${requests} requests  ${c.model.modelId}  ${c.deviceLabel}  ${c.createdAt}${label}${origin}`);
    }
    return 0;
  } finally {
    db.close();
  }
}

export async function run(args: string[]): Promise<number> {
  const parsed = parseCommandArgs('perf', USAGE, args, {
    model: { type: 'string' },
    weights: { type: 'string' },
    backend: { type: 'string' },
    'expert-budget': { type: 'string' },
    device: { type: 'string' },
    db: { type: 'string' },
    'data-dir': { type: 'string' },
    out: { type: 'string' },
    json: { type: 'boolean' },
    verify: { type: 'boolean' },
    label: { type: 'string' },
    list: { type: 'boolean' },
  });
  if (typeof parsed === 'number') return parsed;
  const { values } = parsed;
  if (values.list) {
    const other = Object.keys(values).filter((k) => k !== 'list' && k !== 'db' && k !== 'data-dir');
    if (other.length) return usageError('perf', USAGE, `--list takes no ${other.map((k) => `--${k}`).join(', ')}`);
    return listCampaigns(path.resolve(values.db ?? dataLayout.database(dataDirOption(values, defaultDataDir))));
  }
  if (!values.model) return usageError('perf', USAGE, '--model is required');
  const weights = values.weights ?? 'int4';
  const backend = values.backend ?? 'auto';
  if (weights !== 'int4' && weights !== 'bf16') return usageError('perf', USAGE, '--weights must be int4 or bf16');
  if (backend !== 'auto' && backend !== 'cpu' && backend !== 'cuda') return usageError('perf', USAGE, '--backend must be auto, cpu or cuda');
  const { label, problem: labelProblem } = readLabel(values.label ?? '');
  if (labelProblem) return usageError('perf', USAGE, `--label: ${labelProblem}`);
  let budgets: number[];
  let cudaDevice: number | undefined;
  try {
    budgets = parseBudgetList(values['expert-budget'] ?? '');
    cudaDevice = parseCudaDevice(values.device);
  } catch (e) {
    return usageError('perf', USAGE, (e as Error).message);
  }
  if (backend === 'cpu' && (budgets.length > 0 || cudaDevice !== undefined)) {
    return usageError('perf', USAGE, '--expert-budget and --device apply to the CUDA backend, not --backend cpu');
  }
  const source = await resolveModelSource(values.model ?? '', weights, { verify: values.verify === true });
  const dataDir = dataDirOption(values, defaultDataDir);
  const dbFile = path.resolve(values.db ?? dataLayout.database(dataDir));
  const unlock = lockDataDir(dataDir);
  let db: ReturnType<typeof openDatabase>;
  try {
    db = openDatabase(dbFile);
  } catch (e) {
    unlock();
    throw cannotOpenDatabase(dbFile, e);
  }
  const worker = new WorkerClient(forkSpawner());
  worker.onLog((e) => console.error(`[worker ${e.level}] ${e.message}`));
  const cancel = abortOnSignals(['SIGINT', 'SIGTERM'], { onAbort: () => console.error('\ncancelling: the requests measured so far are kept') });
  try {
    const perf = new PerfRepo(db);
    const inputs = await loadEvalInputs(dataDir);
    const id = `${CAMPAIGN_ID_PREFIX}${newRunId()}`;
    if (!values.json) {
      console.log(`campaign ${id}: ${source.modelId}, ${campaignConfigs(budgets).map((c) => c.label).join(', ')}`);
    }
    let lastConfig = -1;
    const detail = await runPerfCampaign(
      { perf, runtime: worker, records: inputs.records },
      { id, source, budgetsBytes: budgets, backend, ...(cudaDevice !== undefined ? { cudaDevice } : {}), ...(label !== null ? { label } : {}) },
      {
        signal: cancel.signal,
        onProgress: (p) => {
          if (values.json || p.status !== 'running') return;
          if (p.config !== lastConfig || p.done % PERF_SETTINGS.prompts === 0) console.log(`  [${p.done}/${p.total}] ${p.message}`);
          lastConfig = p.config;
        },
      },
    );
    if (values.json) console.log(JSON.stringify(detail, null, 2));
    else console.log(formatCampaign(detail));
    if (detail.status !== 'running' && detail.requests.length > 0) {
      const zip = await writePerfZip(detail, path.resolve(values.out ?? path.join(dataLayout.exportsDir(dataDir), `${id}.zip`)), toolVersion());
      if (!values.json) console.log(`campaign ZIP ${zip.path} (${zip.bytes} bytes, sha256 ${zip.sha256})`);
    }
    return detail.status === 'completed' ? 0 : detail.status === 'cancelled' ? 130 : 1;
  } finally {
    worker.dispose();
    db.close();
    unlock();
    cancel.dispose();
  }
}
