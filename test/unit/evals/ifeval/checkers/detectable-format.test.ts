// Rows from instructions_test.py (number_bullet_lists, constrained_response, number_highlights, section_checker,
// title_checker) plus json_format cases. To add a case: append a row.
import { describe, expect, it } from 'vitest';

import { check } from './check-helper.js';

const BULLET_1 = `
  A Markdown bullet point is a way of formatting text to create a list. To
  create a bullet point, start each line with an asterisk (*). For example:
  * This is a bullet point.
  *(no space required)Another bullet point.
  * (no newline ending required)Another bullet point.
  markdown bullet points are often used to create to-do lists or to list items
  in a step-by-step guide.`;
const BULLET_2 = `
  Check that inline asterisk (*), *, will not be counted. Only * that starts a
  bullet list will be counted:
    * This is a bullet point.
    * Another bullet point.
    . dot is not counted`;
const BULLET_3 = `
  Here are three bullets starting with asterisk:
  * I am a large language model, also known as a conversational AI.
  * I am trained on a massive amount of text data, and I am able to communicate.
  * I am still under development, but I am learning new things every day.`;
const BULLET_4 = `
  Here are three markdown bullets:
  - I am a large language model, also known as a conversational AI.
  - I am trained on a massive amount of text data, and I am able to communicate.
  -I am still under development, but I am learning new things every day.`;
const BULLET_5 = `
  Paragraph 1
  ***
  Paragraph 2
  ***
  Paragraph 3
  * only one bullet point
  `;

describe('detectable_format:number_bullet_lists', () => {
  it.each([
    [BULLET_1, 3, true],
    [BULLET_2, 2, true],
    [BULLET_3, 3, true],
    [BULLET_4, 3, true],
    [BULLET_5, 1, true],
    [BULLET_3, 2, false],
    // A bullet needs only one character after `*`, and none after `-`.
    ['*a\n-', 2, true],
  ])('%#: %s bullets -> %s', (response, num_bullets, expected) => {
    expect(check('detectable_format:number_bullet_lists', { num_bullets }, response)).toBe(expected);
  });
});

describe('detectable_format:constrained_response', () => {
  it.each([
    ['\n My answer is no.\n', true],
    ['My answer is no.   ', true],
    [
      '\n  My answer is no. I am still under development and I am always learning and\n  improving. I am not the best chatbot in the world, but I am striving to be\n  the best that I can be.',
      true,
    ],
    ['My answer is probably.', false],
  ])('%j -> %s', (response, expected) => {
    expect(check('detectable_format:constrained_response', {}, response)).toBe(expected);
  });
});

describe('detectable_format:number_highlighted_sections', () => {
  const h1 = `
  To highlight text with Markdown, you can use the * character before and after
  the text you want to highlight. For example, if you want to highlight the
  word \`hello\`, you would type:*hello*, You can also use the ** character to
  create bold text. For example, if you want to bold the word \`hello\`, you
  would type: **hello** `;
  const h2 = `
  Sure, here are the numerical methods for solving partial differential
  equations highlighted with Markdown:
  *Finite difference methods
  *Finite element methods*
  *Boundary element methods
  *Monte Carlo methods
  I hope this helps!`;
  const h3 = `
  There is allowed to be *two different* highlighted *sections in the same*
  line. **This is also true** for **double markdown highlights.**
  `;
  it.each([
    [h1, 2, true],
    [h2, 2, false],
    [h3, 4, true],
    ['** ** * *', 1, false],
    // `\*[^\n\*]*\*` first takes the empty `**`, so "**bold**" is one highlight, not two.
    ['**bold**', 2, false],
    ['**bold**', 1, true],
    // The double pattern takes the empty `****` first, so the trailing "x**" is no double highlight.
    ['****x**', 1, false],
    ['**x**', 1, true],
  ])('%#: at least %s -> %s', (response, num_highlights, expected) => {
    expect(check('detectable_format:number_highlighted_sections', { num_highlights }, response)).toBe(expected);
  });
});

describe('detectable_format:multiple_sections', () => {
  const s1 = `
  Your response must have multiple sections. Mark the beginning of each section
  with "Section X", such as:
  Section 1
  [content of section 1]
  Section 2
  [content of section 2]`;
  const s2 = `SECTION 1
  [content of section 1]
  SECTION 2
  [content of section 2]`;
  it.each([
    [s1, 'Section', 3, false],
    [s2, 'SECTION', 2, true],
    [s2, 'Section', 1, false],
    ['Day 1 walk Day 2 rest Day 3 go', ' Day ', 3, true],
    // At most one whitespace character between the splitter and the number (`\s?`).
    ['Section  1 a Section  2 b', 'Section', 1, false],
  ])('%#: %j x%s -> %s', (response, section_spliter, num_sections, expected) => {
    expect(check('detectable_format:multiple_sections', { section_spliter, num_sections }, response)).toBe(expected);
  });
});

describe('detectable_format:json_format', () => {
  it.each([
    ['{"a": 1}', true],
    ['```json\n{"a": [1, 2]}\n```', true],
    ['```JSON\n[NaN]\n```', true],
    ['  ```\n"text"\n```  ', true],
    ['Here is JSON: {"a": 1}', false],
    ['```json\n{"a": 1,}\n```', false],
    // Only the three backticks come off the end; the text left is stripped of Python whitespace, which JSON lacks.
    ['[1]```', true],
    ['```\f[1]\f```', true],
  ])('%j -> %s', (response, expected) => {
    expect(check('detectable_format:json_format', {}, response)).toBe(expected);
  });
});

describe('detectable_format:title', () => {
  it.each([
    ['\n  <<Song of Joy>>\n  La la la. Happy song.\n  ', true],
    ['\n  Is it fine for title to be at the end?\n  <<This is the title>>\n  ', true],
    ['\n  << >>\n  There is no title.\n  ', false],
    ['\n  <<This is not a title.\n  This is a paragraph.>>\n  ', false],
  ])('%j -> %s', (response, expected) => {
    expect(check('detectable_format:title', {}, response)).toBe(expected);
  });
});
