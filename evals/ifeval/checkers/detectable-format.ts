import { requireNonNegative, requireRegex } from '../kwargs-rules.js';
import { pyFindAll, pyIsJson, pyLStrip, pyRStrip, pySplit, pyStrip } from '../python-compat.js';
import { countFinding, explainedChecker, quoteList } from '../types.js';
import type { CheckerDefinition } from '../types.js';

const MULTILINE = { multiline: true } as const;

/** `detectable_format:number_bullet_lists` (BulletListChecker): exactly N lines starting with `*` or `-`. */
export const numberBulletLists: CheckerDefinition<{ num_bullets: 'int' }> = {
  schema: { num_bullets: 'int' },
  build(args) {
    const expected = requireNonNegative('num_bullets', args.num_bullets);
    return explainedChecker((value) => {
      const n = pyFindAll('^\\s*\\*[^\\*].*$', value, MULTILINE).length + pyFindAll('^\\s*-.*$', value, MULTILINE).length;
      return countFinding(n === expected, n, 'bullet points', 'exactly', expected);
    });
  },
};

const CONSTRAINED_RESPONSE_OPTIONS = ['My answer is yes.', 'My answer is no.', 'My answer is maybe.'];

/** `detectable_format:constrained_response` (ConstrainedResponseChecker): contains one of the three answers. */
export const constrainedResponse: CheckerDefinition<Record<string, never>> = {
  schema: {},
  build() {
    return explainedChecker((value) => {
      const v = pyStrip(value);
      const option = CONSTRAINED_RESPONSE_OPTIONS.find((o) => v.includes(o));
      return option !== undefined
        ? { pass: true, detail: `contains ${JSON.stringify(option)}` }
        : { pass: false, detail: `contains none of ${quoteList(CONSTRAINED_RESPONSE_OPTIONS)}` };
    });
  },
};

/** `detectable_format:number_highlighted_sections` (HighlightSectionChecker): at least N `*x*` or `**x**` spans. */
export const numberHighlightedSections: CheckerDefinition<{ num_highlights: 'int' }> = {
  schema: { num_highlights: 'int' },
  build(args) {
    const min = requireNonNegative('num_highlights', args.num_highlights);
    return explainedChecker((value) => {
      let n = 0;
      for (const h of pyFindAll('\\*[^\\n\\*]*\\*', value)) if (pyStrip(pyStrip(h, '*'))) n++;
      for (const h of pyFindAll('\\*\\*[^\\n\\*]*\\*\\*', value)) if (pyStrip(h.slice(2, -2))) n++;
      return countFinding(n >= min, n, 'highlighted sections', 'at least', min);
    });
  },
};

/** `detectable_format:multiple_sections` (SectionChecker): at least N splits on "<spliter> <number>". */
export const multipleSections: CheckerDefinition<{ section_spliter: 'string'; num_sections: 'int' }> = {
  schema: { section_spliter: 'string', num_sections: 'int' },
  build(args) {
    const pattern = requireRegex('section_spliter', `\\s?${pyStrip(args.section_spliter)}\\s?\\d+\\s?`);
    const min = requireNonNegative('num_sections', args.num_sections);
    const name = JSON.stringify(`${pyStrip(args.section_spliter)} N`);
    return explainedChecker((value) => {
      const n = pySplit(pattern, value).length - 1;
      return countFinding(n >= min, n, `${name} headers`, 'at least', min);
    });
  },
};

function removePrefix(s: string, prefix: string): string {
  return s.startsWith(prefix) ? s.slice(prefix.length) : s;
}

/** `detectable_format:json_format` (JsonFormat): the response, without code fences, parses with `json.loads`. */
export const jsonFormat: CheckerDefinition<Record<string, never>> = {
  schema: {},
  build() {
    return explainedChecker((value) => {
      let v = pyStrip(value);
      for (const fence of ['```json', '```Json', '```JSON', '```']) v = removePrefix(v, fence);
      if (v.endsWith('```')) v = v.slice(0, -3);
      return pyIsJson(pyStrip(v))
        ? { pass: true, detail: 'parses as JSON' }
        : { pass: false, detail: 'does not parse as JSON (code fences set aside)' };
    });
  },
};

/** `detectable_format:title` (TitleChecker): a non-blank `<<title>>` on one line. */
export const title: CheckerDefinition<Record<string, never>> = {
  schema: {},
  build() {
    return explainedChecker((value) => {
      const found = pyFindAll('<<[^\\n]+>>', value).find((t) => pyStrip(pyRStrip(pyLStrip(t, '<'), '>')) !== '');
      return found !== undefined ? { pass: true, detail: `title ${found}` } : { pass: false, detail: 'no <<title>>' };
    });
  },
};
