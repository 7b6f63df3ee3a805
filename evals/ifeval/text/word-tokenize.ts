import { PY_NOT_S, PY_S, PY_WORD_CHARS } from './punkt-python-chars.js';

// A port of NLTK 3.8 NLTKWordTokenizer.tokenize (nltk/tokenize/destructive.py) and word_tokenize
// (nltk/tokenize/__init__.py, preserve_line=False). Python's `\w`, `\s`, `\d` and `\b` are Unicode-aware, so they are
// spelled out here; `$` without MULTILINE also matches before a final "\n".

const W = `[${PY_WORD_CHARS}]`;
const B = `(?:(?<=${W})(?!${W})|(?<!${W})(?=${W}))`;
const END = '(?![\\s\\S])';

type Rule = readonly [RegExp, string];

// Python's IGNORECASE also maps i to U+0130/U+0131 and s to U+017F; a JavaScript `i` flag would instead case-fold
// the `\p{L}` class itself (U+0345 would become a word character), so case is spelled out per letter.
const CASE_EXTRA: Readonly<Record<string, string>> = { i: '\u0130\u0131', s: '\u017f' };
const ci = (literal: string): string =>
  literal.replace(/[a-z]/g, (ch) => `[${ch}${ch.toUpperCase()}${CASE_EXTRA[ch] ?? ''}]`);

const rule = (source: string, replacement: string): Rule => [new RegExp(source, 'gu'), replacement];

const STARTING_QUOTES: readonly Rule[] = [
  rule('([«“‘„]|`+)', ' $1 '),
  rule('^"', '``'),
  rule('(``)', ' $1 '),
  rule('([ (\\[{<])("|\'{2})', '$1 `` '),
  rule(`(')(?!${ci('re|ve|ll|m|t|s|d|n')})(${W})${B}`, '$1 $2'),
];

const ENDING_QUOTES: readonly Rule[] = [
  rule('([»”’])', ' $1 '),
  rule("''", " '' "),
  rule('"', " '' "),
  rule("([^' ])('[sS]|'[mM]|'[dD]|') ", '$1 $2 '),
  rule("([^' ])('ll|'LL|'re|'RE|'ve|'VE|n't|N'T) ", '$1 $2 '),
];

const PUNCTUATION: readonly Rule[] = [
  rule(`([^.])(\\.)([\\])}>"'»”’ ]*)${PY_S}*${END}`, '$1 $2 $3 '),
  rule('([:,])([^\\p{Nd}])', ' $1 $2'),
  rule(`([:,])(?=\\n?${END})`, ' $1 '),
  rule('\\.{2,}', ' $& '),
  rule('[;@#$%&]', ' $& '),
  rule(`([^.])(\\.)([\\])}>"']*)${PY_S}*${END}`, '$1 $2$3 '),
  rule('[?!]', ' $& '),
  rule("([^'])' ", "$1 ' "),
  rule('[*]', ' $& '),
];

const PARENS_BRACKETS = rule('[\\][(){}<>]', ' $& ');
const DOUBLE_DASHES = rule('--', ' -- ');

const CONTRACTIONS: readonly Rule[] = [
  rule(`${B}(${ci("can")})(${ci("not")})${B}`, ' $1 $2 '),
  rule(`${B}(${ci("d")})(${ci("'ye")})${B}`, ' $1 $2 '),
  rule(`${B}(${ci("gim")})(${ci("me")})${B}`, ' $1 $2 '),
  rule(`${B}(${ci("gon")})(${ci("na")})${B}`, ' $1 $2 '),
  rule(`${B}(${ci("got")})(${ci("ta")})${B}`, ' $1 $2 '),
  rule(`${B}(${ci("lem")})(${ci("me")})${B}`, ' $1 $2 '),
  rule(`${B}(${ci("more")})(${ci("'n")})${B}`, ' $1 $2 '),
  rule(`${B}(${ci("wan")})(${ci("na")})(?=${PY_S})`, ' $1 $2 '),
  rule(` (${ci("'t")})(${ci("is")})${B}`, ' $1 $2 '),
  rule(` (${ci("'t")})(${ci("was")})${B}`, ' $1 $2 '),
];

const TOKEN_RE = new RegExp(`${PY_NOT_S}+`, 'gu');

function apply(text: string, rules: readonly Rule[]): string {
  let out = text;
  for (const [re, replacement] of rules) out = out.replace(re, replacement);
  return out;
}

/** NLTKWordTokenizer().tokenize(sentence): the improved Treebank tokenizer on one sentence. */
export function treebankWordTokenize(sentence: string): string[] {
  let text = apply(sentence, STARTING_QUOTES);
  text = apply(text, PUNCTUATION);
  text = apply(text, [PARENS_BRACKETS, DOUBLE_DASHES]);
  text = apply(` ${text} `, ENDING_QUOTES);
  text = apply(text, CONTRACTIONS);
  return text.match(TOKEN_RE) ?? [];
}

/** `nltk.word_tokenize(text)`: Punkt sentences (given `sentTokenize`), then the Treebank tokenizer on each. */
export function wordTokenize(text: string, sentTokenize: (text: string) => string[]): string[] {
  return sentTokenize(text).flatMap(treebankWordTokenize);
}
