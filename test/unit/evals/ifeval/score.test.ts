// Strict/loose scoring, accuracies and the reference output format. Expected strings come from CPython 3.11
// running the reference's own expressions (json.dumps, the loose-variant construction).
import { describe, expect, it } from 'vitest';

import { formatEvalResultRow } from '../../../../evals/ifeval/eval-results.js';
import { looseVariants, scorePrompt, scoreResponses } from '../../../../evals/ifeval/score.js';
import { summarize } from '../../../../evals/ifeval/summary.js';
import type { EvalResultRow, PromptRecord } from '../../../../evals/ifeval/types.js';
import { fakeTextTools } from './fake-text-tools.js';

const tools = fakeTextTools();

const record = (key: number, prompt: string, ids: PromptRecord['instruction_id_list'], kwargs: PromptRecord['kwargs']): PromptRecord => ({
  key,
  prompt,
  instruction_id_list: ids,
  kwargs,
});

describe('looseVariants', () => {
  it('builds the 8 variants in the reference order', () => {
    expect(looseVariants('* a\nb *x*\n c\n')).toEqual([
      '* a\nb *x*\n c\n',
      ' a\nb x\n c\n',
      'b *x*\n c',
      '* a\nb *x*\n c',
      'b *x*\n c',
      'b x\n c',
      ' a\nb x\n c',
      'b x\n c',
    ]);
  });
});

describe('scorePrompt', () => {
  const quoted = record(1, 'p', ['startend:quotation', 'punctuation:no_comma'], [{}, {}]);

  it('loose passes when a variant without the first line passes', () => {
    expect(scorePrompt(quoted, 'Sure, here it is:\n"quoted answer"', tools)).toEqual({
      strict: [false, false],
      loose: [true, true],
    });
  });

  it('fails every instruction of an empty or blank response, even ones a blank text would satisfy', () => {
    expect(scorePrompt(quoted, ' \n\x85 ', tools)).toEqual({ strict: [false, false], loose: [false, false] });
  });
});

describe('scoreResponses', () => {
  const records = [
    record(10, 'no commas please', ['punctuation:no_comma'], [{}]),
    record(11, 'title and no commas', ['detectable_format:title', 'punctuation:no_comma'], [{}, {}]),
    record(12, 'never answered', ['punctuation:no_comma'], [{}]),
  ];
  const responses = new Map([
    ['no commas please', 'None here'],
    ['title and no commas', '**<<Title>>**\nA, B'],
    ['a prompt not in the dataset', 'x'],
  ]);
  const report = scoreResponses(records, responses, tools);

  it('scores prompts with a response, lists missing ones and unmatched responses', () => {
    expect(report.keys).toEqual([10, 11]);
    expect(report.strict.map((r) => r.follow_instruction_list)).toEqual([[true], [true, false]]);
    expect(report.loose.map((r) => r.follow_instruction_list)).toEqual([[true], [true, true]]);
    // evaluation_lib: follow_all_instructions=all(is_following_list).
    expect(report.strict.map((r) => r.follow_all_instructions)).toEqual([true, false]);
    expect(report.loose.map((r) => r.follow_all_instructions)).toEqual([true, true]);
    expect(report.summary.missing).toEqual([{ key: 12, prompt: 'never answered' }]);
    expect(report.summary.unmatchedResponsePrompts).toEqual(['a prompt not in the dataset']);
  });

  it('computes prompt- and instruction-level accuracies and the per-id table', () => {
    const s = report.summary;
    expect([s.promptsScored, s.instructionsScored]).toEqual([2, 3]);
    expect([s.promptLevelStrictAccuracy, s.promptLevelLooseAccuracy]).toEqual([0.5, 1]);
    expect([s.instructionLevelStrictAccuracy, s.instructionLevelLooseAccuracy]).toEqual([2 / 3, 1]);
    expect(s.perInstruction).toEqual([
      { id: 'detectable_format:title', total: 1, strictFollowed: 1, looseFollowed: 1, strictAccuracy: 1, looseAccuracy: 1 },
      { id: 'punctuation:no_comma', total: 2, strictFollowed: 1, looseFollowed: 2, strictAccuracy: 0.5, looseAccuracy: 1 },
    ]);
    expect(s.perCategory.map((c) => [c.category, c.total, c.strictFollowed, c.looseFollowed])).toEqual([
      ['detectable_format', 1, 1, 1],
      ['punctuation', 2, 1, 2],
    ]);
  });
});

describe('summarize', () => {
  const resultRow = (list: boolean[]): EvalResultRow => ({
    follow_all_instructions: list.every(Boolean),
    follow_instruction_list: list,
    instruction_id_list: ['punctuation:no_comma', 'startend:quotation'],
    prompt: 'p',
    response: 'r',
  });

  it('counts a prompt only when all of its instructions are followed, strict and loose alike (print_report)', () => {
    const s = summarize([resultRow([false, false])], [resultRow([true, false])]);
    expect([s.promptsFollowedStrict, s.promptsFollowedLoose]).toEqual([0, 0]);
    expect([s.instructionsFollowedStrict, s.instructionsFollowedLoose]).toEqual([0, 1]);
    expect(s.instructionLevelLooseAccuracy).toBe(0.5);
  });
});

describe('formatEvalResultRow', () => {
  it('matches json.dumps with sorted keys and ASCII escapes', () => {
    expect(
      formatEvalResultRow({
        follow_all_instructions: false,
        follow_instruction_list: [true, false],
        instruction_id_list: ['punctuation:no_comma', 'detectable_format:title'],
        prompt: 'Say "hi"\\ \u00e9\t\x7f',
        response: 'caf\u00e9 \u{1F600}\n\r\b\f\x01 ~',
      }),
    ).toBe(
      '{"follow_all_instructions": false, "follow_instruction_list": [true, false], "instruction_id_list": ["punctuation:no_comma", "detectable_format:title"], "prompt": "Say \\"hi\\"\\\\ \\u00e9\\t\\u007f", "response": "caf\\u00e9 \\ud83d\\ude00\\n\\r\\b\\f\\u0001 ~"}',
    );
  });
});
