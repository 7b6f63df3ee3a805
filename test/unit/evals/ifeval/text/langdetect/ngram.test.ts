// Expected values come from Python langdetect 1.0.9's NGram.normalize / normalize_vi (Debian python3-langdetect).
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
});
