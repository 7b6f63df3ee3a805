import type { CutCount, ZipSubject } from '../../common/ipc-contract.js';
import { isRecord } from '../../common/is-record.js';
import { validLabel } from '../../common/label.js';
import { onCpuBackend } from '../../common/perf-campaign.js';
import { backendLabel } from '../jobs/backend-label.js';
import { isPerfZip } from './perf-zip.js';

/** The value at a dotted path of parsed JSON, undefined where any step is missing. */
function at(json: unknown, path: string): unknown {
  let v = json;
  for (const k of path.split('.')) v = isRecord(v) ? v[k] : undefined;
  return v;
}

const text = (v: unknown): string | null => (typeof v === 'string' && v !== '' ? v : null);
const time = (v: unknown): string | null => (typeof v === 'string' && !Number.isNaN(Date.parse(v)) ? v : null);

/** Where each field of `ZipSubject` is in a result ZIP's manifest.json and in a campaign ZIP's campaign.json. */
const PATHS = {
  result: { file: 'manifest.json', id: 'run.id', label: 'run.label', createdAt: 'run.createdAt', model: 'model', modelId: 'model.id', backend: 'backend.backend', device: 'backend.device' },
  campaign: { file: 'campaign.json', id: 'id', label: 'label', createdAt: 'createdAt', model: 'model', modelId: 'model.modelId', backend: 'backend', device: 'deviceLabel' },
} as const;

/**
 * Which run or campaign a ZIP's entries say they hold (see `ZipSubject`), read leniently for display: a field of the
 * wrong type is null, not a problem (the verifier names problems). Null when that JSON file is missing or unreadable.
 */
export function zipSubject(entries: ReadonlyMap<string, Buffer>): { readonly kind: 'result' | 'campaign'; readonly subject: ZipSubject } | null {
  const kind = isPerfZip(entries) ? 'campaign' : 'result';
  const p = PATHS[kind];
  let json: unknown;
  try {
    json = JSON.parse(entries.get(p.file)?.toString('utf8') ?? 'null');
  } catch {
    return null;
  }
  if (!isRecord(json)) return null;
  const weights = at(json, `${p.model}.weights`);
  const backend = text(at(json, p.backend));
  const device = text(at(json, p.device));
  const onCpu = backend !== null && onCpuBackend(backend);
  return {
    kind,
    subject: {
      id: text(at(json, p.id)),
      label: validLabel(at(json, p.label)),
      modelRepo: text(at(json, `${p.model}.repo`)),
      modelRevision: text(at(json, `${p.model}.revision`)),
      modelId: text(at(json, p.modelId)),
      weights: weights === 'int4' || weights === 'bf16' ? weights : null,
      backendLabel: onCpu ? backendLabel('cpu', '') : backend !== null && /^cuda$/i.test(backend) && device !== null ? backendLabel('cuda', device) : null,
      createdAt: time(at(json, p.createdAt)),
    },
  };
}

/**
 * A result ZIP's cut count as responses.jsonl's finish reasons and manifest.json's policy say it, read leniently for
 * display like `zipSubject` (the re-score does not vouch for them); null where a line or the cap cannot be read.
 */
export function zipCutCount(entries: ReadonlyMap<string, Buffer>): CutCount | null {
  let cut = 0;
  let of = 0;
  try {
    const maxNewTokens = at(JSON.parse(entries.get('manifest.json')?.toString('utf8') ?? 'null'), 'policy.maxNewTokens');
    if (typeof maxNewTokens !== 'number' || !Number.isSafeInteger(maxNewTokens) || maxNewTokens < 1) return null;
    const lines = entries.get('responses.jsonl')?.toString('utf8').split('\n').filter((l) => l.trim() !== '');
    if (lines === undefined) return null;
    for (const line of lines) {
      const reason = at(JSON.parse(line), 'finish_reason');
      if (reason !== 'stop' && reason !== 'length' && reason !== 'cancelled') return null;
      of += 1;
      if (reason === 'length') cut += 1;
    }
    return { cut, of, maxNewTokens };
  } catch {
    return null;
  }
}
