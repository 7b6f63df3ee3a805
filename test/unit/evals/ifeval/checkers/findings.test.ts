// What each checker says decided its verdict (Checker.explain), shown beside the verdict in a response's detail.
// Every instruction id has a passing and a failing row; the counts in the expected texts were made by hand.
// To add a case: append [id, kwargs, response, expected pass, expected detail].
import { describe, expect, it } from 'vitest';

import { buildChecker } from '../../../../../evals/ifeval/registry.js';
import { explainPrompt } from '../../../../../evals/ifeval/score.js';
import { INSTRUCTION_IDS } from '../../../../../evals/ifeval/types.js';
import type { InstructionId } from '../../../../../evals/ifeval/types.js';
import { fakeTextTools } from '../fake-text-tools.js';

type Row = [InstructionId, Record<string, unknown>, string, boolean, string];

const ROWS: Row[] = [
  ['keywords:existence', { keywords: ['tea', 'cake'] }, 'Tea and CAKE.', true, 'every keyword found ("tea", "cake")'],
  ['keywords:existence', { keywords: ['tea', 'cake', 'jam'] }, 'Tea only.', false, 'missing "cake", "jam"'],
  ['keywords:frequency', { keyword: 'go', frequency: 2, relation: 'at least' }, 'Go, go, GO!', true, '"go" appears 3 times; needs at least 2'],
  ['keywords:frequency', { keyword: 'go', frequency: 1, relation: 'less than' }, 'go', false, '"go" appears 1 time; needs less than 1'],
  ['keywords:forbidden_words', { forbidden_words: ['red', 'blue'] }, 'A green sky.', true, 'none of the forbidden words'],
  ['keywords:forbidden_words', { forbidden_words: ['red', 'blue', 'red'] }, 'Blue and RED.', false, 'contains "red", "blue"'],
  ['keywords:letter_frequency', { letter: 'A', let_frequency: 2, let_relation: 'at least' }, 'banana', true, '"a" appears 3 times; needs at least 2'],
  ['keywords:letter_frequency', { letter: 'z', let_frequency: 1, let_relation: 'at least' }, 'banana', false, '"z" appears 0 times; needs at least 1'],
  ['language:response_language', { language: 'en' }, 'Hello there.', true, 'detected English (en)'],
  ['language:response_language', { language: 'de' }, 'Hello there.', false, 'detected English (en); needs German (de)'],
  ['language:response_language', { language: 'de' }, '1234', true, 'no language detectable (counts as followed)'],
  ['length_constraints:number_sentences', { num_sentences: 3, relation: 'less than' }, 'One. Two!', true, '2 sentences; needs less than 3'],
  ['length_constraints:number_sentences', { num_sentences: 3, relation: 'at least' }, 'One.', false, '1 sentence; needs at least 3'],
  ['length_constraints:number_paragraphs', { num_paragraphs: 2 }, 'a\n***\nb', true, '2 paragraphs; needs exactly 2'],
  ['length_constraints:number_paragraphs', { num_paragraphs: 3 }, 'a\n***\n***\nb', false, 'paragraph 2 between *** dividers is empty'],
  ['length_constraints:number_words', { num_words: 3, relation: 'at least' }, 'one two, three', true, '3 words; needs at least 3'],
  ['length_constraints:number_words', { num_words: 2, relation: 'less than' }, 'snake_case word', false, '2 words; needs less than 2'],
  [
    'length_constraints:nth_paragraph_first_word',
    { num_paragraphs: 2, nth_paragraph: 2, first_word: 'Then' },
    'First.\n\n"Then, more.',
    true,
    '2 paragraphs (needs 2); paragraph 2 starts with "then" (needs "then")',
  ],
  [
    'length_constraints:nth_paragraph_first_word',
    { num_paragraphs: 3, nth_paragraph: 3, first_word: 'end' },
    'First.\n\nSecond.',
    false,
    '2 paragraphs (needs 3); no paragraph 3',
  ],
  [
    'length_constraints:nth_paragraph_first_word',
    { num_paragraphs: 2, nth_paragraph: 2, first_word: 'end' },
    'First.\n\n \n\nEnd.',
    false,
    '2 paragraphs (needs 2); piece 2 of the split on blank lines is blank',
  ],
  ['detectable_content:number_placeholders', { num_placeholders: 2 }, 'Dear [name], at [address].', true, '2 bracketed placeholders; needs at least 2'],
  ['detectable_content:number_placeholders', { num_placeholders: 2 }, 'Dear [name].', false, '1 bracketed placeholder; needs at least 2'],
  ['detectable_content:postscript', { postscript_marker: 'P.S.' }, 'Hi.\nP.S. Bye.', true, 'a line with "P.S."'],
  ['detectable_content:postscript', { postscript_marker: 'P.P.S' }, 'Hi.\nP.S. Bye.', false, 'no line with "P.P.S"'],
  ['detectable_format:number_bullet_lists', { num_bullets: 2 }, '* one\n- two', true, '2 bullet points; needs exactly 2'],
  ['detectable_format:number_bullet_lists', { num_bullets: 2 }, '* one\n**bold**', false, '1 bullet point; needs exactly 2'],
  ['detectable_format:constrained_response', {}, 'Well. My answer is no.', true, 'contains "My answer is no."'],
  [
    'detectable_format:constrained_response',
    {},
    'My answer is nope.',
    false,
    'contains none of "My answer is yes.", "My answer is no.", "My answer is maybe."',
  ],
  ['detectable_format:number_highlighted_sections', { num_highlights: 2 }, '*one* and **two**', true, '2 highlighted sections; needs at least 2'],
  ['detectable_format:number_highlighted_sections', { num_highlights: 1 }, '** ** and * *', false, '0 highlighted sections; needs at least 1'],
  ['detectable_format:multiple_sections', { section_spliter: 'Section', num_sections: 2 }, 'Section 1\na\nSection 2\nb', true, '2 "Section N" headers; needs at least 2'],
  ['detectable_format:multiple_sections', { section_spliter: 'Section', num_sections: 2 }, 'Section one\na', false, '0 "Section N" headers; needs at least 2'],
  ['detectable_format:json_format', {}, '```json\n{"a": 1}\n```', true, 'parses as JSON'],
  ['detectable_format:json_format', {}, '{a: 1}', false, 'does not parse as JSON (code fences set aside)'],
  ['detectable_format:title', {}, '<< >>\n<<My Title>>\ntext', true, 'title <<My Title>>'],
  ['detectable_format:title', {}, '<< >> no title', false, 'no <<title>>'],
  ['combination:two_responses', {}, 'Yes.\n******\nNo.', true, 'two different responses between ****** dividers'],
  ['combination:two_responses', {}, 'Yes.\n******\n Yes. ', false, 'the two responses are the same'],
  ['combination:two_responses', {}, 'A\n******\nB\n******\nC', false, '3 responses between ****** dividers; needs 2'],
  ['combination:two_responses', {}, 'A\n******\n \n******\nC', false, 'part 2 between ****** dividers is empty'],
  ['combination:repeat_prompt', { prompt_to_repeat: 'Say hi.' }, ' say HI. Hi!', true, 'starts with the prompt'],
  ['combination:repeat_prompt', { prompt_to_repeat: 'Say hi.' }, 'Say ho.', false, "repeats the prompt's first 5 of 7 characters"],
  ['combination:repeat_prompt', { prompt_to_repeat: 'Say hi.' }, 'Hi.', false, 'does not start with the prompt'],
  ['startend:end_checker', { end_phrase: 'The End' }, '"A long story, and then the end."', false, 'ends with "…hen the end."; needs "the end"'],
  ['startend:end_checker', { end_phrase: 'The End' }, 'Fin', false, 'ends with "fin"; needs "the end"'],
  ['startend:end_checker', { end_phrase: 'The End' }, ' "Story. THE END" ', true, 'ends with "the end"'],
  ['startend:quotation', {}, ' "quoted" ', true, 'wrapped in double quotation marks'],
  ['startend:quotation', {}, '"open', false, 'no double quotation mark at its end'],
  ['startend:quotation', {}, 'none', false, 'no double quotation mark at its start and end'],
  ['startend:quotation', {}, '"', false, 'a lone quotation mark'],
  ['change_case:capital_word_frequency', { capital_frequency: 2, capital_relation: 'at least' }, 'NASA and ESA, OK.', true, '3 all-capital words; needs at least 2'],
  ['change_case:capital_word_frequency', { capital_frequency: 1, capital_relation: 'less than' }, 'The USA.', false, '1 all-capital word; needs less than 1'],
  ['change_case:english_capital', {}, 'ALL CAPS, 2 TIMES.', true, 'all capitals; detected English (en)'],
  ['change_case:english_capital', {}, 'ALMOST aLL', false, 'has lowercase letters (first: "a")'],
  ['change_case:english_capital', {}, '123 !', false, 'no letters'],
  ['change_case:english_lowercase', {}, 'all lower, ok.', true, 'all lowercase; detected English (en)'],
  ['change_case:english_lowercase', {}, 'nearly all lower, Ok.', false, 'has capital letters (first: "O")'],
  ['punctuation:no_comma', {}, 'No commas here.', true, '0 commas; needs none'],
  ['punctuation:no_comma', {}, 'One, two, three.', false, '2 commas; needs none'],
];

describe('Checker.explain', () => {
  it.each(ROWS)('%s %j on %j -> %s, %j', (id, kwargs, response, pass, detail) => {
    const checker = buildChecker(id, kwargs);
    const tools = fakeTextTools();
    expect(checker.explain(response, tools)).toEqual({ pass, detail });
    expect(checker.check(response, tools)).toBe(pass);
  });

  it('has a passing and a failing row for every instruction id', () => {
    for (const id of INSTRUCTION_IDS) {
      expect(ROWS.some((r) => r[0] === id && r[3]), `${id} passing`).toBe(true);
      expect(ROWS.some((r) => r[0] === id && !r[3]), `${id} failing`).toBe(true);
    }
  });

  it('gives the language the fake detector reports, only once the case test passes', () => {
    const tools = fakeTextTools('fr');
    expect(buildChecker('change_case:english_lowercase', {}).explain('tout en minuscules', tools)).toEqual({
      pass: false,
      detail: 'all lowercase; detected French (fr); needs English (en)',
    });
    expect(buildChecker('change_case:english_lowercase', {}).explain('Pas tout', tools).pass).toBe(false);
    expect(tools.detected).toEqual(['tout en minuscules']);
  });
});

describe('explainPrompt', () => {
  const record = {
    key: 7,
    prompt: 'p',
    instruction_id_list: ['startend:quotation', 'punctuation:no_comma', 'keywords:existence'] as InstructionId[],
    kwargs: [{}, {}, { keywords: ['zebra'] }],
  };

  it('gives the strict finding and, for a loose-only pass, the first variant that passed', () => {
    const [quotation, comma, keyword] = explainPrompt(record, 'Sure, here:\n"quoted answer"', fakeTextTools());
    expect(quotation).toEqual({
      strict: { pass: false, detail: 'no double quotation mark at its start' },
      loose: { pass: true, detail: 'wrapped in double quotation marks' },
      looseVariant: 'without its first line',
    });
    expect(comma).toEqual({
      strict: { pass: false, detail: '1 comma; needs none' },
      loose: { pass: true, detail: '0 commas; needs none' },
      looseVariant: 'without its first line',
    });
    expect(keyword).toEqual({
      strict: { pass: false, detail: 'missing "zebra"' },
      loose: { pass: false, detail: 'missing "zebra"' },
      looseVariant: null,
    });
  });

  it('names the variant without asterisks', () => {
    const [quotation] = explainPrompt(record, '*"quoted"*', fakeTextTools());
    expect(quotation!.looseVariant).toBe('without *');
  });

  it('says an empty response is empty, whatever a blank text would satisfy', () => {
    for (const f of explainPrompt(record, ' \n ', fakeTextTools())) {
      expect(f).toEqual({ strict: { pass: false, detail: 'the response is empty' }, loose: { pass: false, detail: 'the response is empty' }, looseVariant: null });
    }
  });
});
