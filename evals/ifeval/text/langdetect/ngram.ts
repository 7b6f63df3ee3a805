import { unicodeBlock } from './unicode-block.js';

// A port of langdetect 1.0.9 langdetect/utils/ngram.py. Characters are code points (Python str items).

/** messages.properties keys of the CJK classes, in NGram.CJK_CLASS order (later classes win on overlap). */
const KANJI_KEYS = [
  '1_0', '1_2', '1_4', '1_8', '1_11', '1_12', '1_13', '1_14', '1_16', '1_18', '1_22', '1_27', '1_29', '1_31', '1_35',
  '2_0', '2_1', '2_4', '2_9', '2_10', '2_11', '2_12', '2_13', '2_15', '2_16', '2_18', '2_21', '2_22', '2_23', '2_28',
  '2_29', '2_30', '2_31', '2_32', '2_35', '2_36', '2_37', '2_38', '3_1', '3_2', '3_3', '3_4', '3_5', '3_8', '3_9',
  '3_11', '3_12', '3_13', '3_15', '3_16', '3_18', '3_19', '3_22', '3_23', '3_27', '3_29', '3_30', '3_31', '3_32',
  '3_35', '3_36', '3_37', '3_38', '4_0', '4_9', '4_10', '4_16', '4_17', '4_18', '4_22', '4_24', '4_28', '4_34', '4_39',
  '5_10', '5_11', '5_12', '5_13', '5_14', '5_18', '5_26', '5_29', '5_34', '5_39', '6_0', '6_3', '6_9', '6_10', '6_11',
  '6_12', '6_16', '6_18', '6_20', '6_21', '6_22', '6_23', '6_25', '6_28', '6_29', '6_30', '6_32', '6_34', '6_35',
  '6_37', '6_39', '7_0', '7_3', '7_6', '7_7', '7_9', '7_11', '7_12', '7_13', '7_16', '7_18', '7_19', '7_20', '7_21',
  '7_23', '7_25', '7_28', '7_29', '7_32', '7_33', '7_35', '7_37',
].map((k) => `NGram.KANJI_${k}`);

const VI_DMARK_KEYS = ['0300', '0301', '0303', '0309', '0323'].map((k) => `NORMALIZED_VI_CHARS_${k}`);

function classEscape(chars: string): string {
  return chars.replace(/[\\\][^-]/g, '\\$&');
}

const UPPER_RE = /^\p{Uppercase}$/u;
const upperCache = new Map<string, boolean>();

/** Python's str.isupper() for one code point. */
export function isUpperChar(ch: string): boolean {
  let upper = upperCache.get(ch);
  if (upper === undefined) {
    upper = UPPER_RE.test(ch);
    upperCache.set(ch, upper);
  }
  return upper;
}

/** The normalisation tables langdetect builds from messages.properties. */
export class NGramNormalizer {
  private readonly latin1Excluded: ReadonlySet<string>;
  private readonly cjkMap = new Map<string, string>();
  private readonly viRe: RegExp;
  private readonly viAlphabet: string[];
  private readonly viDmarks: string[];
  private readonly viNormalized: string[][];

  constructor(messages: Readonly<Record<string, string>>) {
    const get = (key: string): string => {
      const v = messages[key];
      if (v === undefined) throw new Error(`langdetect messages.properties: missing key ${key}`);
      return v;
    };
    this.latin1Excluded = new Set(Array.from(get('NGram.LATIN1_EXCLUDE')));
    for (const key of KANJI_KEYS) {
      const chars = Array.from(get(key));
      const representative = chars[0] as string;
      for (const ch of chars) this.cjkMap.set(ch, representative);
    }
    const toNormalize = get('TO_NORMALIZE_VI_CHARS');
    const dmarks = get('DMARK_CLASS');
    this.viAlphabet = Array.from(toNormalize);
    this.viDmarks = Array.from(dmarks);
    this.viNormalized = VI_DMARK_KEYS.map((k) => Array.from(get(k)));
    this.viRe = new RegExp(`([${classEscape(toNormalize)}])([${classEscape(dmarks)}])`, 'gu');
  }

  /** NGram.normalize(ch) for one code point. */
  normalize(ch: string): string {
    const cp = ch.codePointAt(0) as number;
    switch (unicodeBlock(cp)) {
      case 'BASIC_LATIN':
        return cp < 0x41 || (cp > 0x5a && cp < 0x61) || cp > 0x7a ? ' ' : ch;
      case 'LATIN_1_SUPPLEMENT':
        return this.latin1Excluded.has(ch) ? ' ' : ch;
      case 'LATIN_EXTENDED_B':
        // Romanian: comma below => cedilla.
        if (cp === 0x0219) return '\u015f';
        if (cp === 0x021b) return '\u0163';
        return ch;
      case 'GENERAL_PUNCTUATION':
        return ' ';
      case 'ARABIC':
        return cp === 0x06cc ? '\u064a' : ch;
      case 'LATIN_EXTENDED_ADDITIONAL':
        return cp >= 0x1ea0 ? '\u1ec3' : ch;
      case 'HIRAGANA':
        return '\u3042';
      case 'KATAKANA':
        return '\u30a2';
      case 'BOPOMOFO':
      case 'BOPOMOFO_EXTENDED':
        return '\u3105';
      case 'CJK_UNIFIED_IDEOGRAPHS':
        return this.cjkMap.get(ch) ?? ch;
      case 'HANGUL_SYLLABLES':
        return '\uac00';
      case undefined:
        return ch;
      default:
        throw new Error(`ngram.ts: unhandled block for U+${cp.toString(16)}`);
    }
  }

  /** NGram.normalize_vi(text): a Latin letter + combining mark becomes the precomposed U+1Exx letter. */
  normalizeVi(text: string): string {
    return text.replace(this.viRe, (_m, alphabet: string, dmark: string) => {
      const row = this.viNormalized[this.viDmarks.indexOf(dmark)] as string[];
      return row[this.viAlphabet.indexOf(alphabet)] as string;
    });
  }
}

/** The rolling 1- to 3-gram buffer of langdetect's NGram class. */
export class NGram {
  static readonly N_GRAM = 3;
  /** The last characters, starting with " " after a word break. */
  grams: string[] = [' '];
  /** True inside a word of two or more upper-case letters in a row (such n-grams are skipped). */
  capitalword = false;

  constructor(private readonly normalizer: NGramNormalizer) {}

  /** NGram.add_char(ch). */
  addChar(rawCh: string): void {
    const ch = this.normalizer.normalize(rawCh);
    const lastChar = this.grams[this.grams.length - 1] as string;
    if (lastChar === ' ') {
      this.grams = [' '];
      this.capitalword = false;
      if (ch === ' ') return;
    } else if (this.grams.length >= NGram.N_GRAM) {
      this.grams.shift();
    }
    this.grams.push(ch);
    if (isUpperChar(ch)) {
      if (isUpperChar(lastChar)) this.capitalword = true;
    } else {
      this.capitalword = false;
    }
  }
}
