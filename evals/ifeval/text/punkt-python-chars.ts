// Python's `re` (str patterns) and str methods use Unicode classes that differ from JavaScript's: `\s` is
// str.isspace() (adds \x1c-\x1f and \x85, lacks \ufeff), `\d` is any decimal digit (Nd), `\w` is alphanumeric or "_"
// (no combining marks), and `$` also matches before a final "\n". These fragments rebuild Python's meaning for
// patterns compiled with the `u` flag.

/** Python `\s` as a character-class body (str.isspace()). */
export const PY_SPACE_CHARS = '\\t\\n\\v\\f\\r\\x1c-\\x1f \\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000';
/** Python `\s`. */
export const PY_S = `[${PY_SPACE_CHARS}]`;
/** Python `\S`. */
export const PY_NOT_S = `[^${PY_SPACE_CHARS}]`;
/** Python `\d` (Unicode decimal digits). */
export const PY_D = '\\p{Nd}';
/** Python `\w` as a character-class body. */
export const PY_WORD_CHARS = '\\p{L}\\p{N}_';
/** Python `[^\W\d]`: a word character that is not a decimal digit. */
export const PY_WORD_NOT_DIGIT = '[\\p{L}\\p{Nl}\\p{No}_]';

const SPACE_RE = new RegExp(PY_S, 'u');
const UPPER_RE = /^\p{Uppercase}/u;
const LOWER_RE = /^\p{Lowercase}/u;

/** str.isspace() for one character. */
export function pyIsSpace(ch: string): boolean {
  return SPACE_RE.test(ch);
}

/** str.isupper() of the first code point of `s` (false for an empty string). */
export function pyFirstIsUpper(s: string): boolean {
  return UPPER_RE.test(s);
}

/** str.islower() of the first code point of `s` (false for an empty string). */
export function pyFirstIsLower(s: string): boolean {
  return LOWER_RE.test(s);
}

/** str.strip() with Python's notion of whitespace. */
export function pyStrip(s: string): string {
  return pyRstrip(pyLstrip(s));
}

/** str.lstrip() with Python's notion of whitespace. */
export function pyLstrip(s: string): string {
  let start = 0;
  while (start < s.length && pyIsSpace(s[start] as string)) start++;
  return s.slice(start);
}

/** str.rstrip() with Python's notion of whitespace. */
export function pyRstrip(s: string): string {
  let end = s.length;
  while (end > 0 && pyIsSpace(s[end - 1] as string)) end--;
  return s.slice(0, end);
}
