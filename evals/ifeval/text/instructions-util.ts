import { pyRegex, pyStrip, pyWordTokens } from '../python-compat.js';
import type { TextTools } from './text-tools.js';

/** ISO 639-1 codes the reference accepts for `language:response_language` (`instructions_util.LANGUAGE_CODES`). */
export const LANGUAGE_CODES: Readonly<Record<string, string>> = {
  en: 'English',
  es: 'Spanish',
  pt: 'Portuguese',
  ar: 'Arabic',
  hi: 'Hindi',
  fr: 'French',
  ru: 'Russian',
  de: 'German',
  ja: 'Japanese',
  it: 'Italian',
  bn: 'Bengali',
  uk: 'Ukrainian',
  th: 'Thai',
  ur: 'Urdu',
  ta: 'Tamil',
  te: 'Telugu',
  bg: 'Bulgarian',
  ko: 'Korean',
  pl: 'Polish',
  he: 'Hebrew',
  fa: 'Persian',
  vi: 'Vietnamese',
  ne: 'Nepali',
  sw: 'Swahili',
  kn: 'Kannada',
  mr: 'Marathi',
  gu: 'Gujarati',
  pa: 'Punjabi',
  ml: 'Malayalam',
  fi: 'Finnish',
};

const ALPHABETS = '([A-Za-z])';
const PREFIXES = '(Mr|St|Mrs|Ms|Dr)[.]';
const SUFFIXES = '(Inc|Ltd|Jr|Sr|Co)';
const STARTERS = '(Mr|Mrs|Ms|Dr|Prof|Capt|Cpt|Lt|He\\s|She\\s|It\\s|They\\s|Their\\s|Our\\s|We\\s|But\\s|However\\s|That\\s|This\\s|Wherever)';
const ACRONYMS = '([A-Z][.][A-Z][.](?:[A-Z][.])?)';
const WEBSITES = '[.](com|net|org|io|gov|edu|me)';
const DIGITS = '([0-9])';
const MULTIPLE_DOTS = '\\.{2,}';

function sub(pattern: string, replacement: string, text: string): string {
  return text.replace(pyRegex(pattern), replacement);
}

/** `instructions_util.split_into_sentences`: the reference's regex sentence splitter (used by no registered checker). */
export function splitIntoSentences(input: string): string[] {
  let text = ` ${input}  `;
  text = text.replaceAll('\n', ' ');
  text = sub(PREFIXES, '$1<prd>', text);
  text = sub(WEBSITES, '<prd>$1', text);
  text = sub(`${DIGITS}[.]${DIGITS}`, '$1<prd>$2', text);
  text = text.replace(pyRegex(MULTIPLE_DOTS), (m) => '<prd>'.repeat(m.length) + '<stop>');
  if (text.includes('Ph.D')) text = text.replaceAll('Ph.D.', 'Ph<prd>D<prd>');
  text = sub(`\\s${ALPHABETS}[.] `, ' $1<prd> ', text);
  text = sub(`${ACRONYMS} ${STARTERS}`, '$1<stop> $2', text);
  text = sub(`${ALPHABETS}[.]${ALPHABETS}[.]${ALPHABETS}[.]`, '$1<prd>$2<prd>$3<prd>', text);
  text = sub(`${ALPHABETS}[.]${ALPHABETS}[.]`, '$1<prd>$2<prd>', text);
  text = sub(` ${SUFFIXES}[.] ${STARTERS}`, ' $1<stop> $2', text);
  text = sub(` ${SUFFIXES}[.]`, ' $1<prd>', text);
  text = sub(` ${ALPHABETS}[.]`, ' $1<prd>', text);
  if (text.includes('\u201d')) text = text.replaceAll('.\u201d', '\u201d.');
  if (text.includes('"')) text = text.replaceAll('."', '".');
  if (text.includes('!')) text = text.replaceAll('!"', '"!');
  if (text.includes('?')) text = text.replaceAll('?"', '"?');
  text = text.replaceAll('.', '.<stop>');
  text = text.replaceAll('?', '?<stop>');
  text = text.replaceAll('!', '!<stop>');
  text = text.replaceAll('<prd>', '.');
  let sentences = text.split('<stop>').map((s) => pyStrip(s));
  if (sentences.length > 0 && !sentences[sentences.length - 1]) sentences = sentences.slice(0, -1);
  return sentences;
}

/** `instructions_util.count_words`: the number of `\w+` tokens, with Python's Unicode `\w`. */
export function countWords(text: string): number {
  return pyWordTokens(text).length;
}

/** `instructions_util.count_sentences`: the number of Punkt English sentences. */
export function countSentences(text: string, tools: TextTools): number {
  return tools.sentTokenize(text).length;
}
