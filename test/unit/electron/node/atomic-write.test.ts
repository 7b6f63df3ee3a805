import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';

import { renameDurably, renameRetrying, syncFile, writeFileAtomic } from '../../../../electron/node/atomic-write.js';

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'horizon-atomic-'));
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));
afterEach(() => {
  vi.restoreAllMocks();
});

describe('atomic writes', () => {
  it('creates the folder, replaces the old content and leaves no temporary file', async () => {
    const file = path.join(root, 'a', 'b', 'prepared.json');
    await writeFileAtomic(file, 'first');
    await writeFileAtomic(file, new Uint8Array([115, 101, 99, 111, 110, 100]));
    expect(fs.readFileSync(file, 'utf8')).toBe('second');
    expect(fs.readdirSync(path.dirname(file))).toEqual(['prepared.json']);
  });

  it('renames a flushed file into place', async () => {
    const tmp = path.join(root, 'x.zip.tmp');
    fs.writeFileSync(tmp, 'zip bytes');
    await syncFile(tmp);
    await renameDurably(tmp, path.join(root, 'x.zip'));
    expect(fs.readFileSync(path.join(root, 'x.zip'), 'utf8')).toBe('zip bytes');
    expect(fs.existsSync(tmp)).toBe(false);
  });

  it('removes its temporary file when the write fails', async () => {
    const file = path.join(root, 'taken');
    fs.mkdirSync(path.join(file, 'a folder in the way'), { recursive: true });
    await expect(writeFileAtomic(file, 'data')).rejects.toThrow(/E(ISDIR|NOTEMPTY|EXIST|PERM)/);
    expect(fs.readdirSync(root).filter((n) => n.startsWith('taken'))).toEqual(['taken']);
  });

  it('lets two writes of one file at once both succeed, leaving one of them whole', async () => {
    const file = path.join(root, 'twice', 'input_data.jsonl');
    const long = 'A'.repeat(200_000);
    const short = 'B'.repeat(10);
    for (let i = 0; i < 5; i++) {
      await Promise.all([writeFileAtomic(file, long), writeFileAtomic(file, short)]);
      expect([long, short]).toContain(fs.readFileSync(file, 'utf8'));
    }
    expect(fs.readdirSync(path.dirname(file))).toEqual(['input_data.jsonl']);
  });

  it('names its temporary file <file>.<random>.tmp-<pid>, which a sweep of dead processes\' files recognises', async () => {
    const file = path.join(root, 'named', 'prepared.json');
    const names: string[] = [];
    const open = fs.promises.open;
    vi.spyOn(fs.promises, 'open').mockImplementation((p, ...rest) => {
      names.push(path.basename(String(p)));
      return open(p, ...rest);
    });
    await writeFileAtomic(file, 'x');
    expect(names[0]).toMatch(new RegExp(`^prepared\\.json\\.[0-9a-f]{8}\\.tmp-${process.pid}$`));
  });

  it('reports a missing temporary file as an error', async () => {
    await expect(renameDurably(path.join(root, 'missing.tmp'), path.join(root, 'y'))).rejects.toThrow(/ENOENT/);
  });

  describe('on Windows, where another process briefly holding a file makes a rename fail', () => {
    const heldOpen = (code: string): NodeJS.ErrnoException => Object.assign(new Error(`${code}: operation not permitted, rename`), { code });

    for (const code of ['EPERM', 'EACCES', 'EBUSY']) {
      it(`retries a rename answered ${code} until it succeeds`, async () => {
        const tmp = path.join(root, `held-${code}.tmp`);
        const dest = path.join(root, `held-${code}.zip`);
        fs.writeFileSync(tmp, 'new');
        fs.writeFileSync(dest, 'old');
        const rename = fs.promises.rename;
        let failures = 0;
        vi.spyOn(fs.promises, 'rename').mockImplementation(async (from, to) => {
          if (failures++ < 3) throw heldOpen(code);
          return rename(from, to);
        });
        await renameDurably(tmp, dest, { platform: 'win32' });
        expect(failures).toBe(4);
        expect(fs.readFileSync(dest, 'utf8')).toBe('new');
        expect(fs.existsSync(tmp)).toBe(false);
      });
    }

    it('gives up after its retry window, with the last error', async () => {
      const spy = vi.spyOn(fs.promises, 'rename').mockRejectedValue(heldOpen('EBUSY'));
      const started = Date.now();
      await expect(renameRetrying(path.join(root, 'e.tmp'), path.join(root, 'e.zip'), { platform: 'win32', retryMs: 200 })).rejects.toThrow(/EBUSY/);
      expect(Date.now() - started).toBeLessThan(2000);
      expect(spy.mock.calls.length).toBeGreaterThan(1);
    });

    it('does not retry an error that is not about a held file, nor a folder in the way', async () => {
      const spy = vi.spyOn(fs.promises, 'rename').mockRejectedValue(Object.assign(new Error('ENOENT'), { code: 'ENOENT' }));
      await expect(renameRetrying(path.join(root, 'b.tmp'), path.join(root, 'b'), { platform: 'win32' })).rejects.toThrow(/ENOENT/);
      expect(spy).toHaveBeenCalledTimes(1);
      spy.mockRejectedValue(heldOpen('EPERM'));
      spy.mockClear();
      const folder = path.join(root, 'a-folder');
      fs.mkdirSync(folder, { recursive: true });
      await expect(renameRetrying(path.join(root, 'c.tmp'), folder, { platform: 'win32' })).rejects.toThrow(/EPERM/);
      expect(spy).toHaveBeenCalledTimes(1);
    });

    it('leaves EPERM final at once on other systems, where it is a permission error', async () => {
      const spy = vi.spyOn(fs.promises, 'rename').mockRejectedValue(heldOpen('EPERM'));
      await expect(renameRetrying(path.join(root, 'd.tmp'), path.join(root, 'd'), { platform: 'linux' })).rejects.toThrow(/EPERM/);
      expect(spy).toHaveBeenCalledTimes(1);
    });

    it('retries the atomic write\'s own rename too', async () => {
      const file = path.join(root, 'win', 'prepared.json');
      const rename = fs.promises.rename;
      let failures = 0;
      vi.spyOn(fs.promises, 'rename').mockImplementation(async (from, to) => {
        if (failures++ < 2) throw heldOpen('EACCES');
        return rename(from, to);
      });
      vi.spyOn(process, 'platform', 'get').mockReturnValue('win32');
      await writeFileAtomic(file, 'x');
      expect(fs.readFileSync(file, 'utf8')).toBe('x');
      expect(fs.readdirSync(path.dirname(file))).toEqual(['prepared.json']);
    });
  });
});
