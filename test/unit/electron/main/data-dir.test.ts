import fs, { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';

import { dataLayout, defaultDataDir, lockDataDir } from '../../../../electron/main/data-dir.js';

describe('defaultDataDir', () => {
  it('prefers HORIZON_DATA_DIR on every platform', () => {
    expect(defaultDataDir({ HORIZON_DATA_DIR: '/srv/horizon', XDG_DATA_HOME: '/x' }, 'linux')).toBe('/srv/horizon');
    expect(defaultDataDir({ HORIZON_DATA_DIR: '/srv/horizon' }, 'win32')).toBe('/srv/horizon');
  });

  it('uses XDG_DATA_HOME, else ~/.local/share, on Linux', () => {
    expect(defaultDataDir({ XDG_DATA_HOME: '/data/xdg' }, 'linux')).toBe('/data/xdg/horizon-runmap');
    expect(defaultDataDir({}, 'linux')).toBe(path.join(os.homedir(), '.local', 'share', 'horizon-runmap'));
    expect(defaultDataDir({ XDG_DATA_HOME: 'relative/ignored' }, 'linux')).toBe(path.join(os.homedir(), '.local', 'share', 'horizon-runmap'));
  });

  it('uses %APPDATA%\\Horizon RunMap on Windows', () => {
    expect(defaultDataDir({ APPDATA: 'C:\\Users\\me\\AppData\\Roaming' }, 'win32')).toBe('C:\\Users\\me\\AppData\\Roaming\\Horizon RunMap');
  });
});

describe('dataLayout', () => {
  it('names model, pack and asset folders as documented', () => {
    const model = dataLayout.modelDir('/d', 'allenai/OLMoE-1B-7B-0924-Instruct', 'abc');
    expect(model).toBe('/d/models/allenai--OLMoE-1B-7B-0924-Instruct/abc');
    expect(dataLayout.sourceDir(model)).toBe(`${model}/source`);
    expect(dataLayout.packedDir(model, 128)).toBe(`${model}/int4-g128`);
    expect(dataLayout.preparedManifest(model)).toBe(`${model}/prepared.json`);
    expect(dataLayout.ifevalDir('/d')).toBe('/d/assets/ifeval');
    expect(dataLayout.punktDir('/d')).toBe('/d/assets/nltk/punkt_english');
    expect(dataLayout.database('/d')).toBe('/d/runmap.sqlite');
    expect(dataLayout.exportsDir('/d')).toBe('/d/exports');
  });
});

describe('lockDataDir', () => {
  const root = mkdtempSync(path.join(os.tmpdir(), 'horizon-data-dir-'));
  afterAll(() => rmSync(root, { recursive: true, force: true }));
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it('names the lock file to delete when its pid is a live process that may not be ours', () => {
    const dir = path.join(root, 'busy');
    mkdirSync(dir);
    const lock = path.join(dir, '.runmap.lock');
    writeFileSync(lock, String(process.ppid));
    expect(() => lockDataDir(dir)).toThrow(
      `${dir} is in use by process ${process.ppid} (the Horizon RunMap app, horizon serve or horizon eval); close it first ` +
        `(if process ${process.ppid} is none of these, delete ${lock})`,
    );
    expect(readFileSync(lock, 'utf8')).toBe(String(process.ppid));
  });

  it('names the data folder and the problem when it cannot be written (a read-only medium)', () => {
    const dir = path.join(root, 'read-only');
    mkdirSync(dir);
    const write = fs.writeFileSync;
    vi.spyOn(fs, 'writeFileSync').mockImplementation((file, data, options) => {
      if (String(file).startsWith(dir)) throw Object.assign(new Error(`EROFS: read-only file system, open '${String(file)}'`), { code: 'EROFS' });
      write(file, data, options);
    });
    expect(() => lockDataDir(dir)).toThrow(
      `${dir}: cannot use this data folder (it is on a read-only medium, EROFS); choose a writable one with --data-dir or HORIZON_DATA_DIR`,
    );
  });
});
