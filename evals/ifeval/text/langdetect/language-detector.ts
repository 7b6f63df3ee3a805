import { LangDetectError } from '../text-tools.js';
import type { LangdetectData } from './langdetect-data.js';
import { NGram, NGramNormalizer } from './ngram.js';
import { PythonRandom } from './python-random.js';

// A port of langdetect 1.0.9 (detector_factory.py + detector.py) with DetectorFactory.seed fixed, so each detect()
// reseeds random.Random with it and returns what Python returns. Characters are code points (Python str items).

const ALPHA_DEFAULT = 0.5;
const ALPHA_WIDTH = 0.05;
const ITERATION_LIMIT = 1000;
const PROB_THRESHOLD = 0.1;
const CONV_THRESHOLD = 0.99999;
const BASE_FREQ = 10000;
const N_TRIAL = 7;
const MAX_TEXT_LENGTH = 10000;

const URL_RE = /https?:\/\/[-_.?&~;+=/#0-9A-Za-z]{1,2076}/g;
const MAIL_RE = /[-_.0-9A-Za-z]{1,64}@[-_0-9A-Za-z]{1,255}[-_.0-9A-Za-z]{1,255}/g;

/** A word's non-zero per-language probabilities, by ascending language index (the other languages have 0.0). */
type WordProbs = { readonly idx: number[]; readonly p: number[] };

/** A language and its probability, as langdetect's Language. */
export type LanguageProbability = { readonly lang: string; readonly prob: number };

/** langdetect's DetectorFactory (profiles loaded) + Detector, deterministic through a fixed seed. */
export class LanguageDetector {
  /** Language codes in profile order (the index order of every probability vector). */
  readonly langlist: readonly string[];
  private readonly wordLangProbMap = new Map<string, WordProbs>();
  private readonly normalizer: NGramNormalizer;
  private readonly random = new PythonRandom(0);

  constructor(
    data: LangdetectData,
    private readonly seed = 0,
  ) {
    this.normalizer = new NGramNormalizer(data.messages);
    const langs: string[] = [];
    data.profiles.forEach((profile, index) => {
      if (langs.includes(profile.name)) throw new Error(`${data.source}: duplicate language profile ${profile.name}`);
      langs.push(profile.name);
      for (const [word, count] of Object.entries(profile.freq)) {
        let probs = this.wordLangProbMap.get(word);
        if (!probs) {
          probs = { idx: [], p: [] };
          this.wordLangProbMap.set(word, probs);
        }
        const length = Array.from(word).length;
        if (length >= 1 && length <= 3) {
          probs.idx.push(index);
          probs.p.push((1.0 * count) / (profile.n_words[length - 1] as number));
        }
      }
    });
    this.langlist = langs;
  }

  /** `langdetect.detect(text)`: the most probable language, or "unknown" when none passes 0.1. */
  detect(text: string): string {
    return this.getProbabilities(text)[0]?.lang ?? 'unknown';
  }

  /** `detect_langs(text)`: languages with probability above 0.1, most probable first; throws LangDetectError without features. */
  getProbabilities(text: string): LanguageProbability[] {
    const langprob = this.detectBlock(this.cleaningText(this.append(text)));
    const result = this.langlist
      .map((lang, i) => ({ lang, prob: langprob[i] as number }))
      .filter((l) => l.prob > PROB_THRESHOLD);
    // Array.prototype.sort is stable, as Python's list.sort(reverse=True) is for equal probabilities.
    return result.sort((a, b) => b.prob - a.prob);
  }

  private append(raw: string): string[] {
    const text = Array.from(this.normalizer.normalizeVi(raw.replace(URL_RE, ' ').replace(MAIL_RE, ' ')));
    const out: string[] = [];
    let pre = '';
    const n = Math.min(text.length, MAX_TEXT_LENGTH);
    for (let i = 0; i < n; i++) {
      const ch = text[i] as string;
      if (ch !== ' ' || pre !== ' ') out.push(ch);
      pre = ch;
    }
    return out;
  }

  /** Drops Latin letters from mostly non-Latin text (langdetect's cleaning_text). */
  private cleaningText(text: string[]): string[] {
    let latinCount = 0;
    let nonLatinCount = 0;
    for (const ch of text) {
      const cp = ch.codePointAt(0) as number;
      if (cp >= 0x41 && cp <= 0x7a) latinCount++;
      // Python compares unicode_block(ch) (an int) with the string 'Latin Extended Additional', which is always
      // unequal, so every character from U+0300 up counts as non-Latin.
      else if (cp >= 0x300) nonLatinCount++;
    }
    if (latinCount * 2 >= nonLatinCount) return text;
    return text.filter((ch) => {
      const cp = ch.codePointAt(0) as number;
      return cp < 0x41 || cp > 0x7a;
    });
  }

  private extractNgrams(text: string[]): string[] {
    const result: string[] = [];
    const ngram = new NGram(this.normalizer);
    for (const ch of text) {
      ngram.addChar(ch);
      if (ngram.capitalword) continue;
      const g = ngram.grams;
      const last = g.length - 1;
      // The 1-, 2- and 3-grams ending here (NGram.N_GRAM is 3); a 1-gram " " is never a feature.
      const w1 = g[last] as string;
      if (w1 !== ' ' && this.wordLangProbMap.has(w1)) result.push(w1);
      if (last < 1) continue;
      const w2 = (g[last - 1] as string) + w1;
      if (this.wordLangProbMap.has(w2)) result.push(w2);
      if (last < 2) continue;
      const w3 = (g[last - 2] as string) + w2;
      if (this.wordLangProbMap.has(w3)) result.push(w3);
    }
    return result;
  }

  private detectBlock(text: string[]): Float64Array {
    const ngrams = this.extractNgrams(text);
    if (ngrams.length === 0) throw new LangDetectError('No features in text.');
    const langsize = this.langlist.length;
    const langprob = new Float64Array(langsize);
    this.random.seed(this.seed);
    for (let t = 0; t < N_TRIAL; t++) {
      const prob = new Float64Array(langsize).fill(1.0 / langsize);
      const alpha = ALPHA_DEFAULT + this.random.gauss(0.0, 1.0) * ALPHA_WIDTH;
      for (let i = 0; ; i++) {
        this.updateLangProb(prob, this.random.choice(ngrams), alpha);
        if (i % 5 === 0 && (normalizeProb(prob) > CONV_THRESHOLD || i >= ITERATION_LIMIT)) break;
      }
      for (let j = 0; j < langsize; j++) langprob[j] = (langprob[j] as number) + (prob[j] as number) / N_TRIAL;
    }
    return langprob;
  }

  private updateLangProb(prob: Float64Array, word: string, alpha: number): void {
    const langProbMap = this.wordLangProbMap.get(word);
    if (!langProbMap) return;
    const weight = alpha / BASE_FREQ;
    const { idx, p } = langProbMap;
    let k = 0;
    for (let i = 0; i < prob.length; i++) {
      // Python multiplies by weight + 0.0 for languages without the word, which is exactly weight.
      if (idx[k] === i) prob[i] = (prob[i] as number) * (weight + (p[k++] as number));
      else prob[i] = (prob[i] as number) * weight;
    }
  }
}

/** Normalises in place (left-to-right sum, as Python 3.11's sum()) and returns the largest probability. */
function normalizeProb(prob: Float64Array): number {
  let sump = 0;
  for (const p of prob) sump += p;
  let maxp = 0.0;
  for (let i = 0; i < prob.length; i++) {
    const p = (prob[i] as number) / sump;
    if (maxp < p) maxp = p;
    prob[i] = p;
  }
  return maxp;
}
