// Expected values were produced with CPython 3.11 (re.findall(r"\w+", s), str.isupper/islower/strip/split).
// To add a case: run the expression in Python and append [input, python_result].
import { describe, expect, it } from 'vitest';

import {
  pyFindAll,
  pyIsJson,
  pyIsLower,
  pyIsUpper,
  pyLStrip,
  pyRStrip,
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
    expect(pySplitWhitespace(' a  b ')).toEqual(['a', 'b']);
    expect(pyStrip('**x**', '*')).toBe('x');
    expect(pyStrip('\u{1F600}a\u{1F600}', '\u{1F600}')).toBe('a');
    expect(pyStrip('\u2000\u200a x\u3000')).toBe('x');
    expect(pyStrip('\v\f\r a \r\f\v')).toBe('a');
    expect(pyLStrip('ab\u{1F600}', '\u{1F600}')).toBe('ab\u{1F600}');
    expect(pyRStrip('\u{1F600}', '\u{1F600}')).toBe('');
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
    expect(pySearch('x.\\d', 'xa\u0663')).toBe(true);
    expect(pySearch('^\\d', '\u0663')).toBe(true);
    expect(pySearch('a$\\Z', 'a')).toBe(true);
    // A quantifier after \W repeats the whole non-word character, lookahead included.
    expect(pySearch('a\\W*b', 'ab')).toBe(true);
    expect(pyFindAll('\\W+', 'a, b!')).toEqual([', ', '!']);
    expect(pyFindAll('\\W{2}', 'a, b!?')).toEqual([', ', '!?']);
  });

  it('escapes text that JavaScript would read as syntax and keeps Python quantifiers', () => {
    expect(pySearch("it's {x}", "IT'S {X}", { ignoreCase: true })).toBe(true);
    expect(pySearch('a{,2}b', 'aab')).toBe(true);
    expect(pySearch('2\\^3 \\+ 1', 'is 2^3 + 1')).toBe(true);
    expect(pySearch('\\x41\\u00e9!\\U0001F600', 'A\u00e9!\u{1F600}')).toBe(true);
    expect(pyFindAll('[^a]', 'a^[')).toEqual(['^', '[']);
    expect(pyFindAll('[\\d\\s]x', '1x \u0663x ax')).toEqual(['1x', '\u0663x']);
    expect(pyFindAll('[\\bx]', 'x\bb')).toEqual(['x', '\b']);
    expect(translatePyPattern('(?P<n>a)')).toBe('(?<n>a)');
    expect(() => translatePyPattern('(?i)a')).toThrow(/unsupported/);
  });
});

describe('empty matches and astral characters', () => {
  it('finds no empty match between the halves of a surrogate pair, a position Python strings lack', () => {
    expect(pySearch('\\A\\Z', '\u{1F600}')).toBe(false);
    expect(pyFindAll('\\Z', 'a\u{1F600}')).toEqual(['']);
    expect(pyFindAll('$', 'a\u{1F600}b')).toEqual(['']);
    expect(pyFindAll('^', 'a\n\u{1F600}b', { multiline: true })).toEqual(['', '']);
    expect(pyFindAll('\\B', '\u{1F600}')).toEqual(['', '']);
    expect(pyFindAll('(?:)', 'a\u{1F600}b')).toEqual(['', '', '', '']);
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
    ['["", NaN, "x"]', true],
    ["{'a': 1}", false],
    ['{"a": 1,}', false],
    ['', false],
    // A constant takes no fraction, exponent or digits after it (Python 3.11's json.loads on each).
    ['[NaN.5]', false],
    ['[Infinity.5]', false],
    ['[-Infinity.5]', false],
    ['[NaNe5]', false],
    ['[NaN5]', false],
    ['NaN.5', false],
    ['{"a": -InfinityE1}', false],
    ['NaN', true],
    ['-Infinity', true],
    ['[NaN ]', true],
    ['[Infinity,NaN]', true],
  ])('%j -> %s', (s, expected) => {
    expect(pyIsJson(s)).toBe(expected);
  });
});
