import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { checkRegularFile } from '../../../../electron/node/regular-file.js';

describe('checkRegularFile', () => {
  let dir: string;
  let file: string;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'horizon-regular-'));
    file = path.join(dir, 'ten.txt');
    await writeFile(file, '0123456789');
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it('gives the stats of a regular file up to the size it may hold', async () => {
    expect((await checkRegularFile(file)).size).toBe(10);
    expect((await checkRegularFile(file, 10)).size).toBe(10);
  });

  it('refuses a larger file with EFBIG, naming both sizes', async () => {
    await expect(checkRegularFile(file, 9)).rejects.toMatchObject({ code: 'EFBIG', message: `${file}: 10 bytes, more than the 9 it may hold` });
  });

  it('refuses a folder or a device with ENOTREGULAR', async () => {
    await expect(checkRegularFile(dir)).rejects.toMatchObject({ code: 'ENOTREGULAR', message: `${dir}: not a regular file` });
    if (process.platform !== 'win32') await expect(checkRegularFile('/dev/null')).rejects.toMatchObject({ code: 'ENOTREGULAR' });
  });

  it("keeps fs's code for a missing file", async () => {
    await expect(checkRegularFile(path.join(dir, 'missing'))).rejects.toMatchObject({ code: 'ENOENT' });
  });
});
