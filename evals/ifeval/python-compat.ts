/**
 * Python 3 `str` and `re` semantics the IFEval reference relies on, for JavaScript strings.
 * Python's `\s`, `\w`, `\d`, `\b`, `.`, `^`/`$` (MULTILINE), `str.strip()`, `str.split()`, `isupper()` and
 * `islower()` differ from their JavaScript namesakes; the checkers use these helpers instead of the JS built-ins.
 */

// Py_UNICODE_ISSPACE, checked against Python 3.11 (`str.isspace()` and `re` `\s` agree): unlike JS it includes
// U+001C..U+001F and U+0085 and excludes U+FEFF.
const WS_CLASS_BODY = '\\t\\n\\v\\f\\r\\x1c-\\x1f \\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000';
// Python `\w` on str = `str.isalnum()` or "_"; over all code points this equals categories L* and N* (Unicode 14).
const WORD_CLASS_BODY = '\\p{L}\\p{N}_';
const WS_RE = new RegExp(`[${WS_CLASS_BODY}]`, 'u');
const WS_RUN_RE = new RegExp(`[${WS_CLASS_BODY}]+`, 'u');
const WORD_RUN_RE = new RegExp(`[${WORD_CLASS_BODY}]+`, 'gu');
const UPPER_RE = /\p{Uppercase}/u;
// Python 3.11 has Unicode 14 case properties; Node's ICU is newer. These are the only assigned code points whose
// Lowercase property differs (checked over all of Unicode 14 against CPython 3.11 str.islower()).
const LOWER_RE = /(?!\u{10FC}|[\u{A7F2}-\u{A7F4}]|\u{AB69})\p{Lowercase}|\u{0295}/u;
const TITLE_RE = /\p{Lt}/u;

/** Whether `ch` (one code point) is whitespace for Python (`str.isspace()`). */
export function pyIsSpace(ch: string): boolean {
  return WS_RE.test(ch);
}

// Every Python whitespace character is in the BMP, so whitespace can be tested per UTF-16 code unit.
const WS_UNITS: ReadonlySet<number> = new Set(
  [9, 10, 11, 12, 13, 0x1c, 0x1d, 0x1e, 0x1f, 0x20, 0x85, 0xa0, 0x1680, 0x2028, 0x2029, 0x202f, 0x205f, 0x3000].concat(
    Array.from({ length: 11 }, (_, i) => 0x2000 + i),
  ),
);

/** A per-code-unit test for the characters to strip, or undefined when `chars` holds astral characters. */
function unitStripSet(chars: string | undefined): ReadonlySet<number> | undefined {
  if (chars === undefined) return WS_UNITS;
  const units = new Set<number>();
  for (let i = 0; i < chars.length; i++) {
    const u = chars.charCodeAt(i);
    if (u >= 0xd800 && u <= 0xdfff) return undefined;
    units.add(u);
  }
  return units;
}

/** `s.lstrip(chars)`; without `chars`, strips Python whitespace. */
export function pyLStrip(s: string, chars?: string): string {
  const units = unitStripSet(chars);
  if (units) {
    let i = 0;
    while (i < s.length && units.has(s.charCodeAt(i))) i++;
    return i === 0 ? s : s.slice(i);
  }
  const set = new Set(Array.from(chars!));
  const cps = Array.from(s);
  let i = 0;
  while (i < cps.length && set.has(cps[i]!)) i++;
  return cps.slice(i).join('');
}

/** `s.rstrip(chars)`; without `chars`, strips Python whitespace. */
export function pyRStrip(s: string, chars?: string): string {
  const units = unitStripSet(chars);
  if (units) {
    let j = s.length;
    while (j > 0 && units.has(s.charCodeAt(j - 1))) j--;
    return j === s.length ? s : s.slice(0, j);
  }
  const set = new Set(Array.from(chars!));
  const cps = Array.from(s);
  let j = cps.length;
  while (j > 0 && set.has(cps[j - 1]!)) j--;
  return cps.slice(0, j).join('');
}

/** `s.strip(chars)`; without `chars`, strips Python whitespace. */
export function pyStrip(s: string, chars?: string): string {
  return pyRStrip(pyLStrip(s, chars), chars);
}

/** `s.split()` with no separator: runs of Python whitespace separate, empty strings are dropped. */
export function pySplitWhitespace(s: string): string[] {
  return s.split(WS_RUN_RE).filter((part) => part.length > 0);
}

/** `s.isupper()`: no lowercase or titlecase character and at least one uppercase one. */
export function pyIsUpper(s: string): boolean {
  let cased = false;
  for (const ch of s) {
    if (LOWER_RE.test(ch) || TITLE_RE.test(ch)) return false;
    if (!cased && UPPER_RE.test(ch)) cased = true;
  }
  return cased;
}

/** `s.islower()`: no uppercase or titlecase character and at least one lowercase one. */
export function pyIsLower(s: string): boolean {
  let cased = false;
  for (const ch of s) {
    if (UPPER_RE.test(ch) || TITLE_RE.test(ch)) return false;
    if (!cased && LOWER_RE.test(ch)) cased = true;
  }
  return cased;
}

/** `re.findall(r"\w+", s)` with Python's Unicode `\w`. */
export function pyWordTokens(s: string): string[] {
  return s.match(WORD_RUN_RE) ?? [];
}

/** Python `re` flags the reference uses. */
export interface PyReFlags {
  readonly ignoreCase?: boolean;
  readonly multiline?: boolean;
  readonly dotAll?: boolean;
}

const JS_SYNTAX_CHARS = new Set(Array.from('^$\\.*+?()[]{}|/'));
// Under JavaScript's `i` flag a class is matched after case folding, and U+0345 (a combining mark, not a word
// character for Python) folds to a Greek letter; Python's `\w` ignores case, so that one mark is kept out by hand.
const wordChar = (ignoreCase: boolean): string =>
  ignoreCase ? `(?:(?!\\u0345)[${WORD_CLASS_BODY}])` : `[${WORD_CLASS_BODY}]`;
// Python's IGNORECASE makes i, I, U+0130 and U+0131 one letter; JavaScript's case folding links neither of the
// Turkish two to i/I.
const DOTTED_I_FAMILY = 'iI\u0130\u0131';
const IN_DOTTED_I_FAMILY = /[iI\u0130\u0131]/u;
const DOTTED_I_CODES = [0x49, 0x69, 0x130, 0x131];

/** `raw` with its `\xhh`, `\uhhhh` and `\Uhhhhhhhh` escapes replaced by the characters they stand for. */
function decodeHexEscapes(raw: string): string {
  return raw.replace(/\\(?:x([0-9a-fA-F]{2})|u([0-9a-fA-F]{4})|U([0-9a-fA-F]{8})|[\s\S])/gu, (m, x?: string, u?: string, U?: string) => {
    const hex = x ?? u ?? U;
    return hex === undefined ? m : String.fromCodePoint(parseInt(hex, 16));
  });
}

/** Whether a Python class body (between the brackets) names one of the four letters, itself or inside a range. */
function classHasDottedI(rawBody: string): boolean {
  const raw = decodeHexEscapes(rawBody);
  if (IN_DOTTED_I_FAMILY.test(raw)) return true;
  for (const m of raw.matchAll(/([^\\])-([^\\\]])/gu)) {
    const lo = m[1]!.codePointAt(0)!;
    const hi = m[2]!.codePointAt(0)!;
    if (DOTTED_I_CODES.some((c) => c >= lo && c <= hi)) return true;
  }
  return false;
}

function escapeOutsideClass(kind: string, ignoreCase: boolean): string | undefined {
  const w = wordChar(ignoreCase);
  switch (kind) {
    case 'd':
      return '\\p{Nd}';
    case 'D':
      return '\\P{Nd}';
    case 'w':
      return w;
    case 'W':
      return `(?:(?!${w})[\\s\\S])`;
    case 's':
      return `[${WS_CLASS_BODY}]`;
    case 'S':
      return `[^${WS_CLASS_BODY}]`;
    case 'b':
      return `(?:(?<=${w})(?!${w})|(?<!${w})(?=${w}))`;
    case 'B':
      return `(?:(?<=${w})(?=${w})|(?<!${w})(?!${w}))`;
    case 'A':
      return '(?<![\\s\\S])';
    case 'Z':
      return '(?![\\s\\S])';
    default:
      return undefined;
  }
}

function escapeInsideClass(kind: string): string | undefined {
  switch (kind) {
    case 'd':
      return '\\p{Nd}';
    case 'w':
      return WORD_CLASS_BODY;
    case 's':
      return WS_CLASS_BODY;
    default:
      return undefined;
  }
}

/** A character escape common to both languages (`\n`, `\t`, `\x41`, `\u00e9`), or a literal escaped char. */
function plainEscape(pattern: string, i: number): { out: string; next: number } {
  const ch = pattern[i]!;
  if ('nrtfv0'.includes(ch)) return { out: `\\${ch}`, next: i + 1 };
  if (ch === 'x') return { out: `\\x${pattern.slice(i + 1, i + 3)}`, next: i + 3 };
  if (ch === 'u') return { out: `\\u${pattern.slice(i + 1, i + 5)}`, next: i + 5 };
  if (ch === 'U') return { out: `\\u{${pattern.slice(i + 1, i + 9).replace(/^0+(?=.)/, '')}}`, next: i + 9 };
  if (/[A-Za-z1-9]/.test(ch)) throw new Error(`python-compat: unsupported regex escape \\${ch} in ${JSON.stringify(pattern)}`);
  const cp = String.fromCodePoint(pattern.codePointAt(i)!);
  return { out: JS_SYNTAX_CHARS.has(cp) || cp === '-' ? `\\${cp}` : cp, next: i + cp.length };
}

/**
 * Translates a Python `re` pattern (the subset IFEval uses, plus user text from kwargs treated the way Python
 * would) into an equivalent JavaScript pattern for the `u` flag. Throws on constructs it does not support.
 */
export function translatePyPattern(pattern: string, flags: PyReFlags = {}): string {
  let out = '';
  let i = 0;
  while (i < pattern.length) {
    const ch = pattern[i]!;
    if (ch === '\\') {
      const kind = pattern[i + 1];
      if (kind === undefined) throw new Error(`python-compat: pattern ends with a backslash: ${JSON.stringify(pattern)}`);
      const special = escapeOutsideClass(kind, flags.ignoreCase === true);
      if (special !== undefined) {
        out += special;
        i += 2;
        continue;
      }
      const plain = plainEscape(pattern, i + 1);
      const dottedI = flags.ignoreCase === true && IN_DOTTED_I_FAMILY.test(decodeHexEscapes(pattern.slice(i, plain.next)));
      out += dottedI ? `[${DOTTED_I_FAMILY}]` : plain.out;
      i = plain.next;
      continue;
    }
    if (ch === '[') {
      let j = i + 1;
      let body = '';
      if (pattern[j] === '^') {
        body += '^';
        j++;
      }
      // A "]" right after "[" or "[^" is a literal in Python.
      if (pattern[j] === ']') {
        body += '\\]';
        j++;
      }
      while (j < pattern.length && pattern[j] !== ']') {
        const c = pattern[j]!;
        if (c === '\\') {
          const kind = pattern[j + 1];
          if (kind === undefined) break;
          const special = escapeInsideClass(kind);
          if (special !== undefined) {
            body += special;
            j += 2;
            continue;
          }
          if (kind === 'b') {
            body += '\\x08';
            j += 2;
            continue;
          }
          const plain = plainEscape(pattern, j + 1);
          body += plain.out;
          j = plain.next;
          continue;
        }
        body += c === '[' || c === '/' ? `\\${c}` : c;
        j++;
      }
      if (j >= pattern.length) throw new Error(`python-compat: unterminated character set in ${JSON.stringify(pattern)}`);
      if (flags.ignoreCase && classHasDottedI(pattern.slice(i + 1, j))) {
        out += body.startsWith('^') ? `(?:(?![${DOTTED_I_FAMILY}])[${body}])` : `(?:[${body}]|[${DOTTED_I_FAMILY}])`;
      } else {
        out += `[${body}]`;
      }
      i = j + 1;
      continue;
    }
    if (ch === '.') {
      out += flags.dotAll ? '[\\s\\S]' : '[^\\n]';
      i++;
      continue;
    }
    if (ch === '^') {
      out += flags.multiline ? '(?<![^\\n])' : '(?<![\\s\\S])';
      i++;
      continue;
    }
    if (ch === '$') {
      out += flags.multiline ? '(?![^\\n])' : '(?=\\n?(?![\\s\\S]))';
      i++;
      continue;
    }
    if (ch === '{') {
      const m = /^\{(\d*)(,(\d*))?\}/.exec(pattern.slice(i));
      if (m && m[0] !== '{}') {
        out += m[2] === undefined ? `{${m[1]}}` : `{${m[1] || '0'},${m[3]}}`;
        i += m[0].length;
      } else {
        out += '\\{';
        i++;
      }
      continue;
    }
    if (ch === '}' || ch === ']' || ch === '/') {
      out += `\\${ch}`;
      i++;
      continue;
    }
    if (ch === '(') {
      if (pattern.startsWith('(?P<', i)) {
        out += '(?<';
        i += 4;
        continue;
      }
      if (pattern[i + 1] === '?' && !/^\(\?(?::|=|!|<=|<!)/.test(pattern.slice(i))) {
        throw new Error(`python-compat: unsupported group syntax in ${JSON.stringify(pattern)}`);
      }
      out += ch;
      i++;
      continue;
    }
    const cp = String.fromCodePoint(pattern.codePointAt(i)!);
    out += flags.ignoreCase && IN_DOTTED_I_FAMILY.test(cp) ? `[${DOTTED_I_FAMILY}]` : cp;
    i += cp.length;
  }
  return out;
}

const regexCache = new Map<string, RegExp>();

/** A global, Unicode JS RegExp equivalent to `re.compile(pattern, flags)`; cached. Use with matchAll/split/replace. */
export function pyRegex(pattern: string, flags: PyReFlags = {}): RegExp {
  const key = `${flags.ignoreCase ? 'i' : ''}${flags.multiline ? 'm' : ''}${flags.dotAll ? 's' : ''}\u0000${pattern}`;
  let re = regexCache.get(key);
  if (!re) {
    re = new RegExp(translatePyPattern(pattern, flags), flags.ignoreCase ? 'giu' : 'gu');
    regexCache.set(key, re);
  }
  re.lastIndex = 0;
  return re;
}

// V8 can report an empty match between the two halves of a surrogate pair (a lookaround at that position sees no
// character), a position Python strings do not have: `\Z`, `$` or `\B` would match once more per astral character.
function isEmptyMatchInsidePair(s: string, m: RegExpMatchArray): boolean {
  const i = m.index!;
  if (m[0] !== '' || i === 0 || i >= s.length) return false;
  const before = s.charCodeAt(i - 1);
  const after = s.charCodeAt(i);
  return before >= 0xd800 && before <= 0xdbff && after >= 0xdc00 && after <= 0xdfff;
}

/** `re.search(pattern, s, flags) is not None`. */
export function pySearch(pattern: string, s: string, flags: PyReFlags = {}): boolean {
  for (const m of s.matchAll(pyRegex(pattern, flags))) if (!isEmptyMatchInsidePair(s, m)) return true;
  return false;
}

/** `re.findall(pattern, s, flags)` for a pattern without groups: the matched substrings. */
export function pyFindAll(pattern: string, s: string, flags: PyReFlags = {}): string[] {
  const out: string[] = [];
  for (const m of s.matchAll(pyRegex(pattern, flags))) if (!isEmptyMatchInsidePair(s, m)) out.push(m[0]);
  return out;
}

/** `re.split(pattern, s, flags)` for a pattern without groups that cannot match the empty string. */
export function pySplit(pattern: string, s: string, flags: PyReFlags = {}): string[] {
  return s.split(pyRegex(pattern, flags));
}

/** Python `len(s)`: the number of code points. */
export function pyLen(s: string): number {
  let n = 0;
  for (const _ of s) n++;
  return n;
}

const JSON_CONSTANT_RE = /"(?:[^"\\]|\\.)*"|(-?)(NaN|Infinity)|[^"NI-]+|[\s\S]/gu;

/**
 * Whether `json.loads(s)` succeeds: JSON.parse plus Python's NaN, Infinity and -Infinity literals (a constant
 * is swapped for null only where a JSON value can start, so `1NaN` still fails; null, not a number, so a fraction
 * or exponent after it fails too, as `NaN.5` does in Python).
 */
export function pyIsJson(s: string): boolean {
  try {
    JSON.parse(s);
    return true;
  } catch {
    if (!/NaN|Infinity/.test(s)) return false;
  }
  let out = '';
  let prev = '';
  for (const m of s.matchAll(JSON_CONSTANT_RE)) {
    const token = m[0];
    if (m[2] !== undefined && (m[1] === '' || m[2] === 'Infinity') && (prev === '' || '[,:'.includes(prev))) {
      out += 'null';
      prev = 'l';
      continue;
    }
    out += token;
    const trimmed = token.replace(/[ \t\n\r]+$/u, '');
    if (trimmed) prev = trimmed[trimmed.length - 1]!;
  }
  try {
    JSON.parse(out);
    return true;
  } catch {
    return false;
  }
}
