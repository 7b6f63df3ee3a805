/** The INT4-vs-BF16 quality report stored beside a prepared model, and its reading for the Models page. */
import { readFile } from 'node:fs/promises';
import path from 'node:path';

import type { Q4_0Agreement, StoredQualityReport } from '../../common/ipc-contract.js';
import { isRecord } from '../../common/is-record.js';
import { writeFileAtomic } from '../../node/atomic-write.js';
import { hashFile } from '../../node/file-hasher.js';
import { PACKED_MANIFEST } from './model-integrity.js';

export type { StoredQualityReport };

/** <model folder>/quality-<int4 folder name>.json: outside the INT4 folder, whose files its manifest lists. */
export function qualityReportFile(modelDir: string, int4Dir: string): string {
  return path.join(modelDir, `quality-${path.basename(int4Dir)}.json`);
}

export async function writeQualityReport(file: string, report: StoredQualityReport): Promise<void> {
  await writeFileAtomic(file, `${JSON.stringify(report, null, 2)}\n`);
}

/** The stored report, or null when there is none or it is not one this version wrote (it is then not shown). */
export async function readQualityReport(file: string): Promise<StoredQualityReport | null> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch {
    return null;
  }
  return parseQualityReport(text);
}

/** A report's text (a stored file, or a result ZIP's quality.json) read as a report; null when it is not one. */
export function parseQualityReport(text: string): StoredQualityReport | null {
  try {
    const r = JSON.parse(text) as Partial<StoredQualityReport>;
    const numbers = ['prompts', 'positions', 'top1Agreement', 'meanKl', 'p99Kl', 'meanAbsLogitDiff', 'promptsWithoutDivergence'] as const;
    if (r.format !== 'horizon-quality-v1' || !numbers.every((k) => typeof r[k] === 'number') || !Array.isArray(r.perPrompt)) return null;
    // Reports written before the Q4_0 comparison have none; one that is there must hold its four figures.
    const q = (r.q4_0 ?? null) as Record<string, unknown> | null;
    if (q === null) return { ...(r as StoredQualityReport), q4_0: null };
    if (!(['top1Agreement', 'meanKl', 'p99Kl', 'meanAbsLogitDiff'] as const).every((k) => typeof q[k] === 'number')) return null;
    const ci = q.meanKlRatioCi95;
    const pair = Array.isArray(ci) && ci.length === 2 && ci.every((v) => typeof v === 'number') ? (ci as [number, number]) : null;
    const count = (k: string) => (typeof q[k] === 'number' ? (q[k] as number) : null);
    return {
      ...(r as StoredQualityReport),
      q4_0: {
        ...(q as unknown as Q4_0Agreement),
        activations: q.activations === 'q8_0' ? 'q8_0' : 'float',
        meanKlRatioCi95: pair,
        promptsInt4Closer: count('promptsInt4Closer'),
        promptsQ4_0Closer: count('promptsQ4_0Closer'),
        signTestP: count('signTestP'),
      },
    };
  } catch {
    return null;
  }
}

/** The packed folder's manifest, whose hash ties a report to the pack it checked. */
export const packManifestFile = (packedDir: string): string => path.join(packedDir, PACKED_MANIFEST);

/** sha256 of the pack's manifest, or undefined where it has none (a folder packed by hand without one). */
export async function packManifestSha256(packedDir: string): Promise<string | undefined> {
  try {
    return (await hashFile(packManifestFile(packedDir))).sha256;
  } catch {
    return undefined;
  }
}

/**
 * The sha256 of pack `int4Dir`'s horizon-manifest.json as a run's model manifest recorded it (prepared.json's pack
 * files, or a local folder's listing); null where it records none.
 */
export function recordedPackManifestSha256(modelManifest: unknown, int4Dir: string): string | null {
  const find = (files: unknown, name: string) =>
    Array.isArray(files) ? files.find((f): f is { path: string; sha256: string } => isRecord(f) && f.path === name && typeof f.sha256 === 'string')?.sha256 ?? null : null;
  if (!isRecord(modelManifest)) return null;
  if (modelManifest.format === 'horizon-prepared-v1') {
    return isRecord(modelManifest.pack) && modelManifest.pack.dir === int4Dir ? find(modelManifest.pack.files, PACKED_MANIFEST) : null;
  }
  // A local folder: the pack is the folder itself or one inside it. Its dir is a path of the machine that made the
  // run, Windows' or POSIX.
  const folder = String(modelManifest.dir).split(/[\\/]/).pop();
  return find(modelManifest.files, `${int4Dir}/${PACKED_MANIFEST}`) ?? (folder === int4Dir ? find(modelManifest.files, PACKED_MANIFEST) : null);
}

/** The stored check of this pack: null when there is none, or when it checked a pack whose manifest has changed since. */
export async function readPackQuality(modelDir: string, packedDir: string): Promise<StoredQualityReport | null> {
  return (await readPackQualityText(modelDir, packedDir))?.report ?? null;
}

/** readPackQuality's report with the stored file's text (what a result ZIP carries as quality.json). */
export async function readPackQualityText(modelDir: string, packedDir: string): Promise<{ report: StoredQualityReport; text: string } | null> {
  let text: string;
  try {
    text = await readFile(qualityReportFile(modelDir, packedDir), 'utf8');
  } catch {
    return null;
  }
  const report = parseQualityReport(text);
  if (!report) return null;
  if (report.packManifestSha256 && (await packManifestSha256(packedDir)) !== report.packManifestSha256) return null;
  return { report, text };
}
