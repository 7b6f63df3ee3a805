import { createHash } from 'node:crypto';
import { mkdir, readFile, readdir, writeFile } from 'node:fs/promises';
import path from 'node:path';

const sha256 = (b: Buffer | string) => createHash('sha256').update(b).digest('hex');

export const FAKE_SHARD = 'model-qpacked-00001-of-00001.safetensors';

/** Every file of `dir` (not recursing) as a manifest entry. */
export async function fileList(dir: string): Promise<{ path: string; size: number; sha256: string }[]> {
  const out = [];
  for (const e of (await readdir(dir, { withFileTypes: true })).sort((a, b) => (a.name < b.name ? -1 : 1))) {
    if (!e.isFile()) continue;
    const b = await readFile(path.join(dir, e.name));
    out.push({ path: e.name, size: b.length, sha256: sha256(b) });
  }
  return out;
}

/**
 * A packed folder as the packer leaves it, without real weights: one shard (any bytes) and horizon-manifest.json
 * written last, listing it with its size and sha256.
 */
export async function writeFakePack(dir: string, groupSize = 32, shard: Buffer | string = 'packed'): Promise<void> {
  await mkdir(dir, { recursive: true });
  await writeFile(path.join(dir, FAKE_SHARD), shard);
  const outputs = await fileList(dir);
  const manifest = {
    format: 'qpacked-v2', group_size: groupSize, codebook: 'hq4nl', tool: 'horizon-runmap', tool_version: '0.1.0',
    source: { repo: null, revision: null, files: [] }, outputs, created_at: '2026-01-01T00:00:00.000Z',
  };
  await writeFile(path.join(dir, 'horizon-manifest.json'), JSON.stringify(manifest));
}

/**
 * prepared.json over a model folder's source/ and int4-gN/ as they are (each file's size and sha256), as preparation
 * writes it last.
 */
export async function writePreparedManifest(modelDir: string, o: { repo: string; commit: string; hubUrl?: string; groupSize?: number }): Promise<void> {
  const packDir = `int4-g${o.groupSize ?? 32}`;
  const manifest = {
    format: 'horizon-prepared-v1', repo: o.repo, revision: 'main', commit: o.commit, hubUrl: o.hubUrl ?? 'http://localhost',
    source: { dir: 'source', files: await fileList(path.join(modelDir, 'source')) },
    pack: { dir: packDir, format: 'qpacked-v2', groupSize: o.groupSize ?? 32, files: await fileList(path.join(modelDir, packDir)) },
    tool: 'horizon-runmap', toolVersion: '0.1.0', createdAt: '2026-01-01T00:00:00.000Z',
  };
  await writeFile(path.join(modelDir, 'prepared.json'), JSON.stringify(manifest));
}
