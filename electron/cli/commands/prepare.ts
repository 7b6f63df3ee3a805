import { assertNever } from '../../common/result.js';
import { defaultDataDir } from '../../main/data-dir.js';
import { listPreparedModels } from '../../main/prep/list-prepared-models.js';
import { qualitySummary } from '../../common/quality-summary.js';
import { readPackQuality } from '../../main/prep/quality-report.js';
import { DEFAULT_MODEL_REPO, DEFAULT_MODEL_REVISION } from '../../common/ipc-contract.js';
import { prepareModel } from '../../main/prep/prepare-model.js';
import { PrepError } from '../../main/prep/prep-error.js';
import type { PrepEvent } from '../../main/prep/prep-events.js';
import { abortOnSignals, dataDirOption, intOption, parseCommandArgs, usageError } from '../command-args.js';

export const summary = 'download, verify and INT4-pack a model (--model REPO[@REV] [--data-dir D] [--hub-url U] [--token T] [--no-pack])';

const USAGE = `usage: horizon prepare [--model REPO[@REV]] [--data-dir DIR] [--hub-url URL] [--token T] [--no-pack]
                       [--group-size G] [--verify] [--no-hf-cache] [--json]
       horizon prepare --list [--data-dir DIR] [--verify] [--json]
  --model        default ${DEFAULT_MODEL_REPO}@${DEFAULT_MODEL_REVISION}
  --data-dir     data folder (also --dir; default $HORIZON_DATA_DIR or the platform app-data folder)
  --hub-url      the Hugging Face Hub endpoint (default $HF_ENDPOINT, else https://huggingface.co)
  --group-size   INT4 group size (default 32, else 16 or 8: the largest dividing every expert width)
  --token        Hub access token for gated or private repos (default $HF_TOKEN)
  --no-pack      download and verify only; skip the INT4 pack
  --verify       re-hash files already present instead of trusting their sizes
  --no-hf-cache  do not reuse files from the huggingface_hub cache
  --json         print every event as a JSON line
  --list         list the prepared models and whether each verifies (ready), with the INT4 quality check when run`;

function formatBytes(n: number): string {
  if (n >= 1e9) return `${(n / 1e9).toFixed(2)} GB`;
  if (n >= 1e6) return `${(n / 1e6).toFixed(1)} MB`;
  if (n >= 1e3) return `${(n / 1e3).toFixed(1)} kB`;
  return `${n} B`;
}

function formatEta(sec: number | null): string {
  if (sec === null || !Number.isFinite(sec)) return '--';
  const s = Math.round(sec);
  return s >= 3600 ? `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m` : s >= 60 ? `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s` : `${s}s`;
}

/** One human-readable line per event (progress lines are rate-limited by the caller). */
export function formatPrepEvent(e: PrepEvent): string {
  switch (e.type) {
    case 'phase':
      return `[${e.phase}] ${e.message}`;
    case 'resolved':
      return `resolved ${e.repo} to commit ${e.commit}: ${e.files.length} files, ${formatBytes(e.totalBytes)}`;
    case 'progress': {
      const pct = e.totalBytes > 0 ? ((100 * e.doneBytes) / e.totalBytes).toFixed(1) : '0.0';
      return `${e.phase.padEnd(8)} ${pct.padStart(5)}%  ${formatBytes(e.doneBytes)} / ${formatBytes(e.totalBytes)}  ${formatBytes(e.bytesPerSec)}/s  ETA ${formatEta(e.etaSec)}${e.files ? `  ${e.files.join(', ')}` : e.file ? `  ${e.file}` : ''}`;
    }
    case 'file':
      return `ok ${e.path} (${formatBytes(e.size)}, ${e.source === 'download' ? 'downloaded' : e.source === 'hf-cache' ? 'from the HF cache' : 'already present'}) sha256 ${e.sha256}`;
    case 'retry':
      return `retry ${e.file} (attempt ${e.attempt}, in ${e.delayMs} ms): ${e.reason}`;
    case 'warning':
      return `warning: ${e.message}`;
    case 'done':
      return `ready: ${e.packedDir ?? e.modelDir} (manifest ${e.manifestPath})`;
    default:
      throw assertNever(e);
  }
}

export async function run(args: string[]): Promise<number> {
  const parsed = parseCommandArgs('prepare', USAGE, args, {
    model: { type: 'string' },
    'data-dir': { type: 'string' },
    dir: { type: 'string' },
    'hub-url': { type: 'string' },
    token: { type: 'string' },
    'no-pack': { type: 'boolean' },
    'group-size': { type: 'string' },
    verify: { type: 'boolean' },
    'no-hf-cache': { type: 'boolean' },
    json: { type: 'boolean' },
    list: { type: 'boolean' },
  });
  if (typeof parsed === 'number') return parsed;
  const { values } = parsed;
  let dataDir: string;
  const hubUrl = values['hub-url'] ?? (process.env.HF_ENDPOINT || undefined);
  try {
    dataDir = dataDirOption(values, defaultDataDir);
    if (hubUrl !== undefined && !/^https?:\/\/[^/]/.test(hubUrl)) {
      throw new Error(`${values['hub-url'] !== undefined ? '--hub-url' : 'HF_ENDPOINT'} must be an http(s) URL, got '${hubUrl}'`);
    }
  } catch (e) {
    return usageError('prepare', USAGE, (e as Error).message);
  }
  if (values.list) {
    const models = await listPreparedModels(dataDir, { verify: values.verify === true });
    const qualities = await Promise.all(models.map((m) => (m.packedDir ? readPackQuality(m.modelDir, m.packedDir) : null)));
    if (values.json) {
      for (const [i, m] of models.entries()) console.log(JSON.stringify({ type: 'model', ...m, quality: qualities[i] }));
      return models.every((m) => m.ready) ? 0 : 1;
    }
    for (const [i, m] of models.entries()) {
      console.log(`${m.ready ? 'ready    ' : 'not ready'} ${m.repo}@${m.commit} ${m.packedDir ?? m.sourceDir}${m.ready ? '' : ` (${m.problems.join('; ')})`}`);
      const q = qualities[i];
      if (q) console.log(`          ${qualitySummary(q)}`);
    }
    if (models.length === 0) console.log('no prepared models');
    return models.every((m) => m.ready) ? 0 : 1;
  }
  if (values.model !== undefined && values.model.trim() === '') return usageError('prepare', USAGE, '--model must be REPO or REPO@REV, not empty');
  const [repo, revision] = values.model
    ? ((at) => (at < 0 ? [values.model!, 'main'] : [values.model!.slice(0, at), values.model!.slice(at + 1)]))(values.model.indexOf('@'))
    : [DEFAULT_MODEL_REPO, DEFAULT_MODEL_REVISION];
  let groupSize: number | undefined;
  try {
    groupSize = intOption('group-size', values['group-size'], 2);
  } catch (e) {
    return usageError('prepare', USAGE, (e as Error).message);
  }
  if (groupSize !== undefined && groupSize % 2 !== 0) return usageError('prepare', USAGE, `--group-size must be even, got ${groupSize}`);
  const token = values.token ?? process.env.HF_TOKEN;
  const cancel = abortOnSignals(['SIGINT', 'SIGTERM']);
  let lastProgress = 0;
  try {
    const result = await prepareModel({
      repo,
      revision,
      dataDir,
      signal: cancel.signal,
      pack: !values['no-pack'],
      verify: values.verify === true,
      ...(values['no-hf-cache'] ? { hfCacheDir: null } : {}),
      ...(hubUrl ? { hubUrl } : {}),
      ...(token ? { token } : {}),
      ...(groupSize !== undefined ? { groupSize } : {}),
      onEvent: (e) => {
        if (values.json) return console.log(JSON.stringify(e));
        if (e.type === 'progress') {
          const now = Date.now();
          if (now - lastProgress < 1000 && e.doneBytes < e.totalBytes) return;
          lastProgress = now;
        }
        console.log(formatPrepEvent(e));
      },
    });
    if (!values.json) console.log(`prepared ${repo}@${result.commit} in ${result.modelDir}`);
    return 0;
  } catch (error) {
    if (error instanceof PrepError) {
      const hint =
        error.code === 'CANCELLED'
          ? ' (run the same command again to resume)'
          : error.code === 'PERMISSION' && /needs an access token$/.test(error.message)
            ? ' (--token or HF_TOKEN)'
            : '';
      console.error(`horizon prepare: ${error.message}${hint}`);
      return error.code === 'CANCELLED' ? 130 : 1;
    }
    throw error;
  } finally {
    cancel.dispose();
  }
}
