import type { PunktParameters } from './punkt-parameters.js';
import { PY_D, PY_NOT_S, PY_S, PY_WORD_NOT_DIGIT, pyFirstIsLower, pyFirstIsUpper, pyRstrip, pyStrip } from './punkt-python-chars.js';

// A port of NLTK 3.8 nltk/tokenize/punkt.py (PunktLanguageVars defaults, PunktSentenceTokenizer.tokenize with
// realign_boundaries=True). Offsets are UTF-16 indices; Python's are code points, which only renames positions.

const ORTHO_BEG_UC = 1 << 1;
const ORTHO_MID_UC = 1 << 2;
const ORTHO_UNK_UC = 1 << 3;
const ORTHO_BEG_LC = 1 << 4;
const ORTHO_MID_LC = 1 << 5;
const ORTHO_UNK_LC = 1 << 6;
const ORTHO_UC = ORTHO_BEG_UC + ORTHO_MID_UC + ORTHO_UNK_UC;
const ORTHO_LC = ORTHO_BEG_LC + ORTHO_MID_LC + ORTHO_UNK_LC;

const SENT_END_CHARS = new Set(['.', '?', '!']);
const PUNCTUATION = new Set([';', ':', ',', '.', '!', '?']);

const NON_WORD = `(?:[)";}\\]*:@'({\\[?!])`;
const MULTI_CHAR = `(?:-{2,}|\\.{2,}|(?:\\.${PY_S}){2,}\\.)`;
const WORD_START = '[^("`{\\[:;&#*@)}\\]\\-,]';

/** PunktLanguageVars._word_tokenizer_re: splits punctuation other than periods from words. */
export const PUNKT_WORD_RE = new RegExp(
  `${MULTI_CHAR}` +
    `|(?=${WORD_START})${PY_NOT_S}+?(?=${PY_S}|$|${NON_WORD}|${MULTI_CHAR}|,(?=$|${PY_S}|${NON_WORD}|${MULTI_CHAR}))` +
    `|${PY_NOT_S}`,
  'gu',
);

// Group 1 is after_tok, group 2 next_tok.
const PERIOD_CONTEXT_RE = new RegExp(`[.?!](?=(${NON_WORD}|${PY_S}+(${PY_NOT_S}+)))`, 'gu');
// Python's MULTILINE `$` matches before "\n" only (JavaScript's `m` flag would add "\r", U+2028, U+2029).
const BOUNDARY_REALIGNMENT_RE = new RegExp(`^["')\\]}]+?(?:${PY_S}+|(?=--)|(?=\\n)|$)`, 'u');
const NUMERIC_RE = new RegExp(`^-?[.,]?${PY_D}[${PY_D},.\\-]*\\.?$`, 'u');
const INITIAL_RE = new RegExp(`^${PY_WORD_NOT_DIGIT}\\.$`, 'u');
const ELLIPSIS_RE = /^\.\.+$/;
const ASCII_WHITESPACE = new Set([' ', '\t', '\n', '\r', '\x0b', '\x0c']);

type Token = {
  readonly tok: string;
  readonly type: string;
  readonly periodFinal: boolean;
  readonly linestart: boolean;
  readonly parastart: boolean;
  sentbreak: boolean;
  abbr: boolean;
  ellipsis: boolean;
};

function makeToken(tok: string, linestart: boolean, parastart: boolean): Token {
  const lower = tok.toLowerCase();
  return {
    tok,
    type: NUMERIC_RE.test(lower) ? '##number##' : lower,
    periodFinal: tok.endsWith('.'),
    linestart,
    parastart,
    sentbreak: false,
    abbr: false,
    ellipsis: false,
  };
}

function typeNoPeriod(t: Token): string {
  return t.type.length > 1 && t.type.endsWith('.') ? t.type.slice(0, -1) : t.type;
}

function typeNoSentperiod(t: Token): string {
  return t.sentbreak ? typeNoPeriod(t) : t.type;
}

/** PunktLanguageVars.word_tokenize: `re.findall` of the Punkt word regex. */
export function punktWordTokenize(line: string): string[] {
  return line.match(PUNKT_WORD_RE) ?? [];
}

type Slice = { start: number; stop: number };

/** NLTK's PunktSentenceTokenizer with given trained parameters. */
export class PunktSentenceTokenizer {
  constructor(private readonly params: PunktParameters) {}

  /** `tokenize(text)`: the sentences of `text`, realigned so closing quotes and brackets stay with their sentence. */
  tokenize(text: string): string[] {
    return this.spanTokenize(text).map(([s, e]) => text.slice(s, e));
  }

  /** `span_tokenize(text)`: [start, end) UTF-16 offsets of each sentence. */
  spanTokenize(text: string): Array<[number, number]> {
    return this.realignBoundaries(text, this.slicesFromText(text)).map((s) => [s.start, s.stop]);
  }

  private tokenizeWords(plaintext: string): Token[] {
    const out: Token[] = [];
    let parastart = false;
    for (const line of plaintext.split('\n')) {
      if (pyStrip(line) !== '') {
        const toks = punktWordTokenize(line);
        if (toks.length === 0) continue;
        toks.forEach((t, i) => out.push(makeToken(t, i === 0, i === 0 && parastart)));
        parastart = false;
      } else {
        parastart = true;
      }
    }
    return out;
  }

  private firstPassAnnotation(t: Token): void {
    const tok = t.tok;
    if (SENT_END_CHARS.has(tok)) {
      t.sentbreak = true;
    } else if (ELLIPSIS_RE.test(tok)) {
      t.ellipsis = true;
    } else if (t.periodFinal && !tok.endsWith('..')) {
      const base = tok.slice(0, -1).toLowerCase();
      if (this.params.abbrevTypes.has(base) || this.params.abbrevTypes.has(base.split('-').at(-1) as string)) {
        t.abbr = true;
      } else {
        t.sentbreak = true;
      }
    }
  }

  private ortho(type: string): number {
    return this.params.orthoContext.get(type) ?? 0;
  }

  private orthoHeuristic(t: Token): boolean | 'unknown' {
    if (PUNCTUATION.has(t.tok)) return false;
    const ctx = this.ortho(typeNoSentperiod(t));
    if (pyFirstIsUpper(t.tok) && ctx & ORTHO_LC && !(ctx & ORTHO_MID_UC)) return true;
    if (pyFirstIsLower(t.tok) && (ctx & ORTHO_UC || !(ctx & ORTHO_BEG_LC))) return false;
    return 'unknown';
  }

  private secondPassAnnotation(t1: Token, t2: Token): void {
    if (!t1.periodFinal) return;
    const typ = typeNoPeriod(t1);
    const nextTyp = typeNoSentperiod(t2);
    const isInitial = INITIAL_RE.test(t1.tok);

    if (this.params.collocations.has(`${typ}\t${nextTyp}`)) {
      t1.sentbreak = false;
      t1.abbr = true;
      return;
    }
    if ((t1.abbr || t1.ellipsis) && !isInitial) {
      if (this.orthoHeuristic(t2) === true) {
        t1.sentbreak = true;
        return;
      }
      if (pyFirstIsUpper(t2.tok) && this.params.sentStarters.has(nextTyp)) {
        t1.sentbreak = true;
        return;
      }
    }
    if (isInitial || typ === '##number##') {
      const isSentStarter = this.orthoHeuristic(t2);
      if (isSentStarter === false) {
        t1.sentbreak = false;
        t1.abbr = true;
        return;
      }
      if (isSentStarter === 'unknown' && isInitial && pyFirstIsUpper(t2.tok) && !(this.ortho(nextTyp) & ORTHO_LC)) {
        t1.sentbreak = false;
        t1.abbr = true;
      }
    }
  }

  /** Annotates in NLTK's streaming order: each pair sees the second token after the first pass only. */
  private annotateTokens(tokens: Token[]): Token[] {
    for (const t of tokens) this.firstPassAnnotation(t);
    for (let i = 0; i + 1 < tokens.length; i++) this.secondPassAnnotation(tokens[i] as Token, tokens[i + 1] as Token);
    return tokens;
  }

  private textContainsSentbreak(text: string): boolean {
    const tokens = this.annotateTokens(this.tokenizeWords(text));
    for (let i = 0; i + 1 < tokens.length; i++) if ((tokens[i] as Token).sentbreak) return true;
    return false;
  }

  private matchPotentialEndContexts(text: string): Array<{ match: RegExpMatchArray; context: string }> {
    const out: Array<{ match: RegExpMatchArray; context: string }> = [];
    let previous: Slice = { start: 0, stop: 0 };
    let previousMatch: RegExpMatchArray | undefined;
    const contextOf = (m: RegExpMatchArray, s: Slice): string => text.slice(s.start, s.stop) + m[0] + (m[1] ?? '');
    for (const match of text.matchAll(PERIOD_CONTEXT_RE)) {
      const mStart = match.index ?? 0;
      const before = text.slice(previous.stop, mStart);
      // NLTK's _get_last_whitespace_index returns 0 both for "none" and for index 0; the quirk is kept.
      let idx = 0;
      for (let i = before.length - 1; i >= 0; i--) {
        if (ASCII_WHITESPACE.has(before[i] as string)) {
          idx = i;
          break;
        }
      }
      const wordStart = idx ? idx + previous.stop + 1 : previous.start;
      const prevWord: Slice = { start: wordStart, stop: mStart };
      if (previousMatch && previous.stop <= prevWord.start) {
        out.push({ match: previousMatch, context: contextOf(previousMatch, previous) });
      }
      previousMatch = match;
      previous = prevWord;
    }
    if (previousMatch) out.push({ match: previousMatch, context: contextOf(previousMatch, previous) });
    return out;
  }

  private slicesFromText(text: string): Slice[] {
    const slices: Slice[] = [];
    let lastBreak = 0;
    for (const { match, context } of this.matchPotentialEndContexts(text)) {
      if (this.textContainsSentbreak(context)) {
        const end = (match.index ?? 0) + match[0].length;
        slices.push({ start: lastBreak, stop: end });
        const afterTok = match[1] ?? '';
        const nextTok = match[2];
        lastBreak = nextTok ? end + afterTok.length - nextTok.length : end;
      }
    }
    slices.push({ start: lastBreak, stop: pyRstrip(text).length });
    return slices;
  }

  private realignBoundaries(text: string, slices: Slice[]): Slice[] {
    const out: Slice[] = [];
    let realign = 0;
    for (let i = 0; i < slices.length; i++) {
      const s2 = slices[i + 1];
      const s1: Slice = { start: (slices[i] as Slice).start + realign, stop: (slices[i] as Slice).stop };
      const s1Text = s1.start < s1.stop ? text.slice(s1.start, s1.stop) : '';
      if (!s2) {
        if (s1Text) out.push(s1);
        continue;
      }
      const m = BOUNDARY_REALIGNMENT_RE.exec(s2.start < s2.stop ? text.slice(s2.start, s2.stop) : '');
      if (m) {
        out.push({ start: s1.start, stop: s2.start + pyRstrip(m[0]).length });
        realign = m[0].length;
      } else {
        realign = 0;
        if (s1Text) out.push(s1);
      }
    }
    return out;
  }
}
