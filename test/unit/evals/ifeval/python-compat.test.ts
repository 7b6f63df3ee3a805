// Expected values were produced with CPython 3.11 (re.findall(r"\w+", s), str.isupper/islower/strip/split).
// To add a case: run the expression in Python and append [input, python_result].
import { describe, expect, it } from 'vitest';

import {
  pyFindAll,
  pyIsJson,
  pyIsLower,
  pyIsUpper,
  pySearch,
  pySplit,
  pySplitWhitespace,
  pyStrip,
  pyWordTokens,
  translatePyPattern,
} from '../../../../evals/ifeval/python-compat.js';

describe('pyWordTokens (re \\w+)', () => {
  it.each([
    ['naïve café', ['naïve', 'café']],
    ['nai\u0308ve', ['nai', 've']],
    ['½ ٣ x²', ['½', '٣', 'x²']],
    ['snake_case-word', ['snake_case', 'word']],
    ['日本語 テキスト', ['日本語', 'テキスト']],
    ['क्षत्रिय', ['क', 'षत', 'र', 'य']],
    ['Ⅻ test', ['Ⅻ', 'test']],
    ['\u200dab', ['ab']],
  ])('%j', (s, expected) => {
    expect(pyWordTokens(s)).toEqual(expected);
  });
});

describe('pyIsUpper / pyIsLower', () => {
  it.each([
    ['ABC DEF', true, false],
    ['ABC def', false, false],
    ['ǅ', false, false],
    ['Ⅻ', true, false],
    ['ª', false, true],
    ['123', false, false],
    ['ABCª', false, false],
    ['ǈA', false, false],
    ['ⓐ', false, true],
    ['ⒶB', true, false],
    ['ÀÉ', true, false],
    ['ᵃ', false, true],
    // Unicode 14 (CPython 3.11) properties, which newer ICU versions changed.
    ['\u0295', false, true],
    ['\u10fc', false, false],
  ])('%j', (s, upper, lower) => {
    expect([pyIsUpper(s), pyIsLower(s)]).toEqual([upper, lower]);
  });
});

describe('whitespace', () => {
  it('strips and splits on Python whitespace, not JavaScript whitespace', () => {
    expect(pyStrip(' \x1c a \x85')).toBe('a');
    expect(pyStrip('\ufeffa')).toBe('\ufeffa');
    expect(pySplitWhitespace('a\x1cb\u3000c\ufeffd')).toEqual(['a', 'b', 'c\ufeffd']);
    expect(pyStrip('**x**', '*')).toBe('x');
    expect(pyStrip('\u{1F600}a\u{1F600}', '\u{1F600}')).toBe('a');
    expect(pyStrip('\u2000\u200a x\u3000')).toBe('x');
  });
});

describe('regex translation', () => {
  it('gives . ^ $ Python meanings (no \\r, \\u2028 line breaks; MULTILINE only at \\n)', () => {
    expect(pyFindAll('^a.*$', 'ab\rc\nad', { multiline: true })).toEqual(['ab\rc', 'ad']);
    expect(pySearch('a$', 'xa\n')).toBe(true);
    expect(pySearch('^b', 'a\nb')).toBe(false);
    expect(pySearch('^b', 'a\nb', { multiline: true })).toBe(true);
  });

  it('uses Unicode \\d \\s \\b', () => {
    expect(pySplit('\\s?Section\\s?\\d+\\s?', 'Section ٣ x Section 2 y')).toEqual(['', 'x', 'y']);
    expect(pySearch('\\bcaf\\b', 'café')).toBe(false);
    expect(pySearch('a\\sb', 'a\x1cb')).toBe(true);
    expect(pySearch('a\\sb', 'a\ufeffb')).toBe(false);
  });

  it('escapes text that JavaScript would read as syntax and keeps Python quantifiers', () => {
    expect(pySearch("it's {x}", "IT'S {X}", { ignoreCase: true })).toBe(true);
    expect(pySearch('a{,2}b', 'aab')).toBe(true);
    expect(translatePyPattern('(?P<n>a)')).toBe('(?<n>a)');
    expect(() => translatePyPattern('(?i)a')).toThrow(/unsupported/);
  });
});

describe('pyIsJson (json.loads)', () => {
  it.each([
    ['{"a": [1, 2.5e3, null, true]}', true],
    ['[NaN, -Infinity, Infinity]', true],
    ['{"a": NaN}', true],
    ['"NaN"', true],
    ['1NaN', false],
    ['[-NaN]', false],
    ["{'a': 1}", false],
    ['{"a": 1,}', false],
    ['', false],
  ])('%j -> %s', (s, expected) => {
    expect(pyIsJson(s)).toBe(expected);
  });
});
