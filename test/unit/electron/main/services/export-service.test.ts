import { readFileSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';

import { migrate } from '../../../../../electron/main/db/open-database.js';
import type * as AtomicWrite from '../../../../../electron/node/atomic-write.js';
import type { EvalInputs } from '../../../../../electron/main/jobs/eval-inputs.js';
import { ExportService } from '../../../../../electron/main/services/export-service.js';
import { loadTextTools } from '../../../../../evals/ifeval/node/load-text-tools.js';
import { storeRun } from '../export/zip-fixtures.js';

// The disk fills up as the ZIP is flushed (with delayed allocation, fsync is where ENOSPC shows).
vi.mock('../../../../../electron/node/atomic-write.js', async (importOriginal) => ({
  ...(await importOriginal<typeof AtomicWrite>()),
  syncFile: () => Promise.reject(Object.assign(new Error('ENOSPC: no space left on device, fsync'), { code: 'ENOSPC' })),
}));

const shared = path.resolve(import.meta.dirname, '..', '..', '..', '..', '..', '..', 'shared');

describe('ExportService on a full disk', () => {
  let dir: string;
  let service: ExportService;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'horizon-export-full-'));
    const tools = await loadTextTools({ punktDir: path.join(shared, 'nltk', 'punkt_english') });
    const lines = readFileSync(path.join(shared, 'ifeval', 'input_data.jsonl'), 'utf8').split('\n').filter(Boolean);
    const inputDataText = `${lines.slice(0, 3).join('\n')}\n`;
    const db = new Database(':memory:');
    migrate(db);
    const { runs, responses } = storeRun(db, 'run-full', inputDataText, 3, ['One answer.', 'Two, answers.', 'THREE'], tools, 'completed');
    const inputs = { inputDataText } as EvalInputs;
    service = new ExportService({ runs, responses, db, dataDir: dir, inputs: () => Promise.resolve(inputs), emit: () => undefined });
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it('answers DISK_FULL naming the ZIP, keeps the old ZIP under the name and leaves no partial file', async () => {
    const out = path.join(dir, 'picked', 'result.zip');
    await mkdir(path.dirname(out));
    const old = Buffer.from('504b0506000000000000000000000000000000000000', 'hex');
    await writeFile(out, old);
    const r = await service.exportRun({ runId: 'run-full', path: out });
    expect(r).toEqual({
      ok: false,
      error: { code: 'DISK_FULL', message: `${out}: writing the result ZIP failed (ENOSPC: no space left on device, fsync)` },
    });
    expect(readFileSync(out).equals(old)).toBe(true);
    expect(await readdir(path.dirname(out))).toEqual(['result.zip']);
  });
});
