import os from 'node:os';
import path from 'node:path';

import { describe, expect, it } from 'vitest';

import { dataLayout, defaultDataDir } from '../../../../electron/main/data-dir.js';

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
