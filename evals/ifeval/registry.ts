/**
 * The 25 IFEval instructions, keyed by the dataset's ids (`instructions_registry.INSTRUCTION_DICT`).
 * To add one: add its id to INSTRUCTION_IDS in types.ts, write its CheckerDefinition in the checkers/ file of its
 * category (schema + a build that returns explainedChecker(...): its verdict with what decided it), list it here, and
 * give it a table in test/unit/evals/ifeval/checkers/ and rows in findings.test.ts.
 */
import { constrainedResponse, jsonFormat, multipleSections, numberBulletLists, numberHighlightedSections, title } from './checkers/detectable-format.js';
import { capitalWordFrequency, englishCapital, englishLowercase } from './checkers/change-case.js';
import { repeatPrompt, twoResponses } from './checkers/combination.js';
import { numberPlaceholders, postscript } from './checkers/detectable-content.js';
import { existence, forbiddenWords, frequency, letterFrequency } from './checkers/keywords.js';
import { responseLanguage } from './checkers/language.js';
import { nthParagraphFirstWord, numberParagraphs, numberSentences, numberWords } from './checkers/length-constraints.js';
import { noComma } from './checkers/punctuation.js';
import { endChecker, quotation } from './checkers/startend.js';
import { INSTRUCTION_IDS, KwargsError } from './types.js';
import type { Checker, CheckerDefinition, InstructionId, KwargsSchema } from './types.js';

/** Instruction id → checker definition, one entry per id of INSTRUCTION_IDS. */
export const INSTRUCTIONS: { readonly [I in InstructionId]: CheckerDefinition<KwargsSchema> } = {
  'keywords:existence': existence,
  'keywords:frequency': frequency,
  'keywords:forbidden_words': forbiddenWords,
  'keywords:letter_frequency': letterFrequency,
  'language:response_language': responseLanguage,
  'length_constraints:number_sentences': numberSentences,
  'length_constraints:number_paragraphs': numberParagraphs,
  'length_constraints:number_words': numberWords,
  'length_constraints:nth_paragraph_first_word': nthParagraphFirstWord,
  'detectable_content:number_placeholders': numberPlaceholders,
  'detectable_content:postscript': postscript,
  'detectable_format:number_bullet_lists': numberBulletLists,
  'detectable_format:constrained_response': constrainedResponse,
  'detectable_format:number_highlighted_sections': numberHighlightedSections,
  'detectable_format:multiple_sections': multipleSections,
  'detectable_format:json_format': jsonFormat,
  'detectable_format:title': title,
  'combination:two_responses': twoResponses,
  'combination:repeat_prompt': repeatPrompt,
  'startend:end_checker': endChecker,
  'change_case:capital_word_frequency': capitalWordFrequency,
  'change_case:english_capital': englishCapital,
  'change_case:english_lowercase': englishLowercase,
  'punctuation:no_comma': noComma,
  'startend:quotation': quotation,
};

const ID_SET: ReadonlySet<string> = new Set(INSTRUCTION_IDS);

/** Whether `id` is one of the 25 registered instruction ids. */
export function isInstructionId(id: unknown): id is InstructionId {
  return typeof id === 'string' && ID_SET.has(id);
}

function typeName(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  return typeof v;
}

/**
 * Checks kwargs against the instruction's schema and builds its checker. Null-valued keys are dropped first, as
 * lm-evaluation-harness does for the Hugging Face copy of the data (which lists every kwarg of every instruction).
 * Throws KwargsError naming the instruction and the problem.
 */
export function buildChecker(id: InstructionId, kwargs: Readonly<Record<string, unknown>>): Checker {
  const def = INSTRUCTIONS[id];
  const fail = (msg: string): never => {
    throw new KwargsError(`${id}: ${msg}`);
  };
  const args: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(kwargs)) {
    if (value === null) continue;
    const type = Object.hasOwn(def.schema, key) ? def.schema[key] : undefined;
    if (type === undefined) fail(`unknown kwarg '${key}' (accepted: ${Object.keys(def.schema).join(', ') || 'none'})`);
    const ok =
      type === 'int'
        ? Number.isSafeInteger(value)
        : type === 'string'
          ? typeof value === 'string'
          : type === 'string[]'
            ? Array.isArray(value) && value.every((v) => typeof v === 'string')
            : value === 'less than' || value === 'at least';
    if (!ok) {
      const wanted = type === 'relation' ? `"less than" or "at least"` : type === 'string[]' ? 'a list of strings' : `${type === 'int' ? 'an integer' : 'a string'}`;
      fail(`kwarg '${key}' must be ${wanted}, got ${typeName(value)} ${JSON.stringify(value)}`);
    }
    args[key] = value;
  }
  for (const key of Object.keys(def.schema)) if (!(key in args)) fail(`missing kwarg '${key}'`);
  try {
    return def.build(args as never);
  } catch (e) {
    if (e instanceof KwargsError) return fail(e.message);
    throw e;
  }
}
