import type Database from 'better-sqlite3';

import type { ZipOrigin } from '../../common/ipc-contract.js';
import { isRecord } from '../../common/is-record.js';
import type { PerfCampaign, PerfCampaignDetail } from '../../common/perf-campaign.js';
import type { PerfRepo } from '../db/perf-repo.js';
import {
  Fields,
  ImportError,
  isNonEmpty,
  isOptionalLabel,
  isPositive,
  isCampaignId,
  isString,
  isTime,
  notVerified,
  oneOf,
  OPTIONAL_LABEL,
  readZipToImport,
  refuseProblems,
  CAMPAIGN_ID,
  storeOnce,
} from './import-fields.js';
import { isPerfZip, verifyPerfZip } from './perf-zip.js';
import { isCount } from './verify-result-zip.js';

export interface ImportPerfZipOptions {
  readonly perf: PerfRepo;
  /** The connection `perf` uses: the duplicate check and the insert hold one write lock. */
  readonly db: Database.Database;
  /** The ZIP as readZipToImport read it, when the caller has (to tell the kinds apart): it is not read again. */
  readonly read?: { readonly entries: ReadonlyMap<string, Buffer>; readonly origin: ZipOrigin };
}

type Config = PerfCampaign['configs'][number];

const isConfig = (v: unknown): v is Config =>
  isRecord(v) &&
  typeof v.label === 'string' &&
  (v.expertBudgetBytes === null || isCount(v.expertBudgetBytes)) &&
  (v.residency === null || typeof v.residency === 'string');

/**
 * Imports a campaign ZIP (`horizon perf`, the Performance page's export) as an ended campaign, after it verifies as
 * `horizon verify` would have it: every hash, each request's shape and place, every aggregate recomputed. The campaign
 * keeps its id, times, status, model, device, settings and requests as the ZIP recorded them, and where it came from.
 * Refused, with every problem named: a ZIP that does not verify, a result ZIP, a campaign the database cannot hold
 * (a field the verifier does not read), and a campaign whose id is stored already.
 */
export async function importPerfZip(file: string, opts: ImportPerfZipOptions, now = new Date().toISOString()): Promise<PerfCampaignDetail> {
  const { entries, origin } = opts.read ?? (await readZipToImport(file, now));
  if (!isPerfZip(entries)) throw new ImportError(file, 'other-kind', 'is not a performance campaign ZIP');
  const verification = await verifyPerfZip(file, entries);
  if (!verification.read) throw notVerified(file, verification.problems);
  const json: unknown = verification.read.campaign;
  const f = new Fields('campaign.json');
  const id = f.get(json, 'id', isCampaignId, CAMPAIGN_ID);
  const label = f.get(json, 'label', isOptionalLabel, OPTIONAL_LABEL);
  const createdAt = f.get(json, 'createdAt', isTime, 'an ISO-8601 time');
  const finishedAt = f.get(json, 'finishedAt', (v): v is string | null => v === null || isTime(v), 'an ISO-8601 time or null');
  const status = f.get(json, 'status', oneOf(['completed', 'failed', 'cancelled'] as const), 'completed, failed or cancelled');
  const error = f.get(json, 'error', (v): v is string | null => v === null || typeof v === 'string', 'a string or null');
  const model = {
    modelId: f.get(json, 'model.modelId', isNonEmpty, 'a model id'),
    repo: f.get(json, 'model.repo', isString, 'a string'),
    revision: f.get(json, 'model.revision', isString, 'a string'),
    weights: f.get(json, 'model.weights', oneOf(['int4', 'bf16'] as const), 'int4 or bf16'),
    manifestSha256: f.get(json, 'model.manifestSha256', isString, 'a string'),
  };
  // ZIPs written before the backend names were unified say 'CPU' / 'CUDA'.
  const backend = f.get(json, 'backend', oneOf(['cpu', 'cuda', 'pending', 'CPU', 'CUDA'] as const), 'cpu, cuda or pending');
  const deviceLabel = f.get(json, 'deviceLabel', isString, 'a string');
  const peakMemoryScope = f.get(json, 'peakMemoryScope', (v): v is 'process' | 'device' | null => v === null || v === 'process' || v === 'device', 'process, device or null');
  const settings = {
    prompts: f.get(json, 'settings.prompts', isPositive, 'a count of at least 1'),
    blocks: f.get(json, 'settings.blocks', isPositive, 'a count of at least 1'),
    maxNewTokens: f.get(json, 'settings.maxNewTokens', isPositive, 'a count of at least 1'),
    warmupTokens: f.get(json, 'settings.warmupTokens', isCount, 'a count'),
    keys: f.get(json, 'settings.keys', (v): v is number[] => Array.isArray(v) && v.every(isCount), 'a list of prompt keys'),
  };
  const configs = f.get(json, 'configs', (v): v is Config[] => Array.isArray(v) && v.length > 0 && v.every(isConfig), 'a list of configurations (label, expertBudgetBytes, residency)');
  refuseProblems(file, f.problems, 'campaign');

  const { requests } = verification.read;
  const campaign = {
    id: id!,
    createdAt: createdAt!,
    finishedAt: finishedAt!,
    status: status!,
    error: error!,
    model: model as { [K in keyof typeof model]: Exclude<(typeof model)[K], undefined> },
    backend: backend!.toLowerCase() as PerfCampaign['backend'],
    deviceLabel: deviceLabel!,
    peakMemoryScope: peakMemoryScope!,
    settings: settings as { [K in keyof typeof settings]: Exclude<(typeof settings)[K], undefined> },
    configs: configs!,
    imported: origin,
    label: label ?? null,
  };
  storeOnce(opts.db, file, { what: 'campaign', id: campaign.id, here: 'measured on this machine' }, () => opts.perf.get(campaign.id), () =>
    opts.perf.createImported(campaign, requests),
  );
  return opts.perf.get(campaign.id)!;
}
