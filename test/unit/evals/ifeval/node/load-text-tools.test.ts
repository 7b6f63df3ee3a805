import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { loadLangdetectData, loadTextTools } from '../../../../../evals/ifeval/node/load-text-tools.js';
import { LanguageDetector } from '../../../../../evals/ifeval/text/langdetect/language-detector.js';
import { LangDetectError } from '../../../../../evals/ifeval/text/text-tools.js';
import { PUNKT_DIR } from '../text/golden/golden.js';

let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'load-text-tools-'));
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('loadTextTools', () => {
  it('returns working sentTokenize, wordTokenize and detectLanguage', async () => {
    const tools = await loadTextTools({ punktDir: PUNKT_DIR });
    expect(tools.sentTokenize('I met Dr. Smith. However, he left.')).toEqual(['I met Dr. Smith.', 'However, he left.']);
    expect(tools.wordTokenize("I can't. Go!")).toEqual(['I', 'ca', "n't", '.', 'Go', '!']);
    expect(tools.detectLanguage('Der schnelle braune Fuchs springt über den faulen Hund.')).toBe('de');
    expect(() => tools.detectLanguage('1234 ...')).toThrow(LangDetectError);
  });

  it('names the missing Punkt file', async () => {
    await expect(loadTextTools({ punktDir: dir })).rejects.toThrow(/abbrev_types\.txt: cannot read the Punkt parameter file/);
  });

  it('names a missing or corrupt langdetect data file', async () => {
    const missing = path.join(dir, 'none.json.gz');
    await expect(loadTextTools({ punktDir: PUNKT_DIR, langdetectDataFile: missing })).rejects.toThrow(
      /none\.json\.gz: cannot load langdetect data/,
    );
    const corrupt = path.join(dir, 'corrupt.json.gz');
    await writeFile(corrupt, 'not gzip');
    await expect(loadLangdetectData(undefined, corrupt)).rejects.toThrow(/corrupt\.json\.gz: cannot load langdetect data/);
  });

  it('reads profiles from profilesDir when given', async () => {
    const bundled = await loadLangdetectData();
    const profilesDir = path.join(dir, 'profiles');
    await mkdir(profilesDir);
    for (const name of ['fr', 'en']) {
      await writeFile(path.join(profilesDir, name), JSON.stringify(bundled.profiles.find((p) => p.name === name)));
    }
    const data = await loadLangdetectData(profilesDir);
    expect(data.profiles.map((p) => p.name)).toEqual(['en', 'fr']);
    const tools = await loadTextTools({ punktDir: PUNKT_DIR, profilesDir });
    expect(tools.detectLanguage('Le renard brun saute par-dessus le chien paresseux.')).toBe('fr');
    expect(new LanguageDetector(data).langlist).toEqual(['en', 'fr']);
  });

  it('names a malformed profile file', async () => {
    const bad = path.join(dir, 'bad');
    await mkdir(bad);
    await writeFile(path.join(bad, 'xx'), JSON.stringify({ name: 'xx', freq: {} }));
    await writeFile(path.join(bad, 'yy'), JSON.stringify({ name: 'yy', freq: {}, n_words: [1, 1, 1] }));
    await expect(loadLangdetectData(bad)).rejects.toThrow(/bad\/xx: n_words must be 3 numbers/);
  });
});
