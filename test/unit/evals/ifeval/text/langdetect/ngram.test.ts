// Expected values come from Python langdetect 1.0.9's NGram.normalize / normalize_vi (Debian python3-langdetect).
import { createHash } from 'node:crypto';

import { beforeAll, describe, expect, it } from 'vitest';

import { loadLangdetectData } from '../../../../../../evals/ifeval/node/load-text-tools.js';
import { NGram, NGramNormalizer } from '../../../../../../evals/ifeval/text/langdetect/ngram.js';

let normalizer: NGramNormalizer;

beforeAll(async () => {
  normalizer = new NGramNormalizer((await loadLangdetectData()).messages);
});

describe('NGramNormalizer', () => {
  it.each<[string, string]>([
    ['a', 'a'],
    ['Z', 'Z'],
    ['1', ' '],
    [' ', ' '],
    ['!', ' '],
    ['\u00a0', ' '],
    ['«', ' '],
    ['é', 'é'],
    ['ș', 'ş'],
    ['ț', 'ţ'],
    ['’', ' '],
    ['ی', 'ي'],
    ['Ḁ', 'Ḁ'],
    ['Ạ', 'ể'],
    ['ỹ', 'ể'],
    ['ぁ', 'あ'],
    ['カ', 'ア'],
    ['ㄆ', 'ㄅ'],
    ['ㆠ', 'ㄅ'],
    ['一', '一'],
    ['佼', '佼'],
    ['椴', '佼'],
    ['瀧', '瀧'],
    ['각', '가'],
    ['а', 'а'],
    ['ß', 'ß'],
    ['\u007f', ' '],
    ['\u0080', '\u0080'],
    ['\u00ff', '\u00ff'],
    ['\u0180', '\u0180'],
    ['\u0218', '\u0218'],
    ['\u024f', '\u024f'],
    ['\u0600', '\u0600'],
    ['\u06ff', '\u06ff'],
    ['\u1e00', '\u1e00'],
    ['\u1e9f', '\u1e9f'],
    ['\u1eff', 'ể'],
    ['\u1f00', '\u1f00'],
    ['\u2000', ' '],
    ['\u206f', ' '],
    ['\u2070', '\u2070'],
    ['\u3040', 'あ'],
    ['\u309f', 'あ'],
    ['\u30a0', 'ア'],
    ['\u30ff', 'ア'],
    ['\u3100', 'ㄅ'],
    ['\u312f', 'ㄅ'],
    ['\u3130', '\u3130'],
    ['\u31a0', 'ㄅ'],
    ['\u31bf', 'ㄅ'],
    ['\u31c0', '\u31c0'],
    ['\u4e00', '\u4e00'],
    ['\u9fff', '\u9fff'],
    ['\uac00', '가'],
    ['\ud7af', '가'],
    ['\ud7b0', '\ud7b0'],
  ])('normalize(%j) = %j', (ch, expected) => {
    expect(normalizer.normalize(ch)).toBe(expected);
  });

  it.each<[string, string]>([
    ['Vie\u0323\u0302t Nam', 'Viẹ\u0302t Nam'],
    ['to\u0301i ye\u0302u', 'tói ye\u0302u'],
    ['A\u0300 a\u0301 e\u0303 O\u0309 u\u0323', 'À á ẽ Ỏ ụ'],
  ])('normalizeVi(%j) = %j', (text, expected) => {
    expect(normalizer.normalizeVi(text)).toBe(expected);
  });

  it('normalizes every code point as Python does (sha256 of all outputs, U+0000..U+10FFFF without surrogates)', () => {
    // Python: sha256(''.join(NGram.normalize(chr(c)) for c in range(0x110000) if not 0xd800 <= c <= 0xdfff).encode()).
    const out: string[] = [];
    for (let cp = 0; cp < 0x110000; cp++) if (cp < 0xd800 || cp > 0xdfff) out.push(normalizer.normalize(String.fromCodePoint(cp)));
    expect(createHash('sha256').update(out.join(''), 'utf8').digest('hex')).toBe('667136567bda3dc342acd9da9152397a756e0e2f4f5c27a177dc450823894a92');
  });

  it('rejects messages without a needed key', () => {
    expect(() => new NGramNormalizer({})).toThrow(/missing key NGram.LATIN1_EXCLUDE/);
  });
});

describe('NGram', () => {
  it('keeps at most 3 characters, restarts at spaces and flags runs of capitals', () => {
    const ngram = new NGram(normalizer);
    const seen: Array<[string, boolean]> = [];
    for (const ch of 'ab cdE FGh') {
      ngram.addChar(ch);
      seen.push([ngram.grams.join(''), ngram.capitalword]);
    }
    expect(seen).toEqual([
      [' a', false],
      [' ab', false],
      ['ab ', false],
      [' c', false],
      [' cd', false],
      ['cdE', false],
      ['dE ', false],
      [' F', false],
      [' FG', true],
      ['FGh', false],
    ]);
  });

  it('tests capitals after normalisation, with Python\'s isupper (Other_Uppercase counts, titlecase does not)', () => {
    const ngram = new NGram(normalizer);
    const seen: Array<[string, boolean]> = [];
    for (const ch of 'ẠẠ ⅫⅫ ǅǅ') {
      ngram.addChar(ch);
      seen.push([ngram.grams.join(''), ngram.capitalword]);
    }
    expect(seen).toEqual([
      [' ể', false],
      [' ểể', false],
      ['ểể ', false],
      [' Ⅻ', false],
      [' ⅫⅫ', true],
      ['ⅫⅫ ', false],
      [' ǅ', false],
      [' ǅǅ', false],
    ]);
  });
});
