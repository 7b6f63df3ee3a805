/**
 * A performance campaign as a ZIP: manifest.json (format, every file's bytes and sha256), campaign.json (what ran,
 * on what, with which settings, and the aggregates) and requests.jsonl (one record a measured request). The verifier
 * checks the hashes, each record's shape and place in the settings, and recomputes every aggregate from the records.
 */
import { isRecord } from '../../common/is-record.js';
import {
  aggregateCampaign,
  onCpuBackend,
  PERF_FORMAT,
  requestRecordProblem,
  type PerfCampaign,
  type PerfCampaignDetail,
  type PerfConfigAggregate,
  type PerfRequestRecord,
} from '../../common/perf-campaign.js';
import { checkListedFiles, readZipEntries } from './verify-result-zip.js';
import { listedZipFiles, writeZipAtomically } from './zip-file.js';

export const PERF_FILES = ['campaign.json', 'requests.jsonl'] as const;

export interface PerfZipManifest {
  readonly format: typeof PERF_FORMAT;
  readonly campaignId: string;
  readonly appVersion: string;
  readonly files: readonly { readonly name: string; readonly bytes: number; readonly sha256: string }[];
}

/**
 * campaign.json: the campaign as stored, with its aggregates; its label only when it has one (so a campaign without one
 * exports the same bytes as before labels).
 */
export type PerfCampaignFile = Omit<PerfCampaign, 'imported' | 'label'> & {
  readonly label?: string;
  readonly aggregates: readonly PerfConfigAggregate[];
};

/** Writes the campaign's ZIP through a temp file and a rename; refuses one still running. */
export async function writePerfZip(c: PerfCampaignDetail, outPath: string, appVersion: string): Promise<{ path: string; bytes: number; sha256: string }> {
  if (c.status === 'running') throw new Error(`campaign ${c.id} is still running: export it once it has ended`);
  // Where an imported campaign came from is this machine's note, not part of the campaign.
  const { requests, aggregates, imported: _origin, label, ...campaign } = c;
  const file: PerfCampaignFile = { ...campaign, ...(label !== null ? { label } : {}), aggregates };
  const files = new Map<string, Buffer>([
    ['campaign.json', Buffer.from(`${JSON.stringify(file, null, 2)}\n`)],
    ['requests.jsonl', Buffer.from(requests.map((r) => `${JSON.stringify(r)}\n`).join(''))],
  ]);
  const manifest: PerfZipManifest = {
    format: PERF_FORMAT,
    campaignId: c.id,
    appVersion,
    files: listedZipFiles(files),
  };
  return writeZipAtomically(
    outPath,
    [['manifest.json', Buffer.from(`${JSON.stringify(manifest, null, 2)}\n`)], ...files],
    new Date(c.finishedAt ?? c.createdAt),
    'campaign ZIP',
  );
}

export interface PerfVerification {
  readonly verified: boolean;
  readonly problems: readonly string[];
  /** Recomputed from requests.jsonl; null when the records could not be read. */
  readonly aggregates: readonly PerfConfigAggregate[] | null;
  /** When the ZIP verified: campaign.json as parsed (its fields past the verifier's checks unread) and every record. */
  readonly read?: { readonly campaign: PerfCampaignFile; readonly requests: readonly PerfRequestRecord[] };
}

/** Equal as numbers (to 1e-9 relative, for JSON's round trip) or both null. */
function same(a: unknown, b: unknown): boolean {
  if (a === null || b === null) return a === b;
  if (typeof a !== 'number' || typeof b !== 'number') return false;
  return Math.abs(a - b) <= 1e-9 * Math.max(1, Math.abs(a), Math.abs(b));
}

/** Whether a ZIP's manifest.json says it is a campaign ZIP (so `horizon verify` can tell the kinds apart). */
export function isPerfZip(entries: ReadonlyMap<string, Buffer>): boolean {
  try {
    return (JSON.parse(entries.get('manifest.json')?.toString('utf8') ?? 'null') as { format?: unknown } | null)?.format === PERF_FORMAT;
  } catch {
    return false;
  }
}

/** Verifies a campaign ZIP: one precise line per problem. */
export async function verifyPerfZip(file: string, entries?: ReadonlyMap<string, Buffer>): Promise<PerfVerification> {
  const e = entries ?? (await readZipEntries(file));
  const problems: string[] = [];
  const fail = (p: string): PerfVerification => ({ verified: false, problems: [...problems, p], aggregates: null });
  let manifest: unknown;
  try {
    manifest = JSON.parse(e.get('manifest.json')?.toString('utf8') ?? '');
  } catch {
    return fail('manifest.json: missing or not JSON');
  }
  if (!isRecord(manifest) || manifest.format !== PERF_FORMAT) return fail(`manifest.json: format is not ${PERF_FORMAT}`);
  checkListedFiles(manifest.files, e, PERF_FILES, 'campaign ZIP', problems);
  let campaign: PerfCampaignFile;
  try {
    campaign = JSON.parse(e.get('campaign.json')?.toString('utf8') ?? '') as PerfCampaignFile;
  } catch {
    return fail('campaign.json: missing or not JSON');
  }
  if (!isRecord(campaign) || !Array.isArray(campaign.configs) || !isRecord(campaign.settings) || !Array.isArray(campaign.aggregates)) {
    return fail('campaign.json: not a campaign (configs, settings and aggregates)');
  }
  if (manifest.campaignId !== campaign.id) problems.push(`manifest.json: campaignId ${String(manifest.campaignId)}, campaign.json says ${String(campaign.id)}`);
  const requests: PerfRequestRecord[] = [];
  const lines = (e.get('requests.jsonl')?.toString('utf8') ?? '').split('\n');
  const { blocks, prompts, keys } = campaign.settings;
  const seen = new Set<string>();
  for (const [i, line] of lines.entries()) {
    if (line === '') continue;
    let r: unknown;
    try {
      r = JSON.parse(line);
    } catch {
      problems.push(`requests.jsonl line ${i + 1}: not JSON`);
      continue;
    }
    const shape = requestRecordProblem(r);
    if (shape) {
      problems.push(`requests.jsonl line ${i + 1}: ${shape}`);
      continue;
    }
    const rec = r as PerfRequestRecord;
    const where = `requests.jsonl line ${i + 1}`;
    if (rec.config >= campaign.configs.length) problems.push(`${where}: config ${rec.config}, but the campaign has ${campaign.configs.length}`);
    if (rec.block >= blocks) problems.push(`${where}: block ${rec.block}, but the campaign ran ${blocks}`);
    if (!keys.includes(rec.key)) problems.push(`${where}: key ${rec.key} is not one of the campaign's prompts`);
    if (rec.tokens > campaign.settings.maxNewTokens) problems.push(`${where}: ${rec.tokens} tokens, over the campaign's ${campaign.settings.maxNewTokens}`);
    const id = `${rec.config}/${rec.block}/${rec.key}`;
    if (seen.has(id)) problems.push(`${where}: config ${rec.config}, block ${rec.block}, key ${rec.key} measured twice`);
    seen.add(id);
    requests.push(rec);
  }
  if (keys.length !== prompts) problems.push(`campaign.json: ${keys.length} prompt keys for ${prompts} prompts`);
  if (campaign.status === 'completed' && requests.length !== campaign.configs.length * blocks * prompts) {
    problems.push(`requests.jsonl: ${requests.length} requests, but a completed campaign of ${campaign.configs.length} configurations measures ${campaign.configs.length * blocks * prompts}`);
  }
  const aggregates = aggregateCampaign(campaign.configs.length, requests, onCpuBackend(campaign.backend));
  for (const [i, fresh] of aggregates.entries()) {
    const stored = campaign.aggregates[i] as Record<string, unknown> | undefined;
    if (!isRecord(stored)) {
      problems.push(`campaign.json: no aggregate for configuration ${i + 1}`);
      continue;
    }
    for (const [k, v] of Object.entries(fresh)) {
      if (!same(stored[k], v)) problems.push(`campaign.json: ${campaign.configs[i]?.label ?? `configuration ${i + 1}`} ${k} is ${JSON.stringify(stored[k])}, the requests give ${JSON.stringify(v)}`);
    }
  }
  if (campaign.aggregates.length !== aggregates.length) problems.push(`campaign.json: ${campaign.aggregates.length} aggregates for ${aggregates.length} configurations`);
  const verified = problems.length === 0;
  return { verified, problems, aggregates, ...(verified ? { read: { campaign, requests } } : {}) };
}
