import type { TextTools } from './text/text-tools.js';

/** The 25 instruction ids of IFEval, as `instructions_registry.INSTRUCTION_DICT` spells them. */
export const INSTRUCTION_IDS = [
  'keywords:existence',
  'keywords:frequency',
  'keywords:forbidden_words',
  'keywords:letter_frequency',
  'language:response_language',
  'length_constraints:number_sentences',
  'length_constraints:number_paragraphs',
  'length_constraints:number_words',
  'length_constraints:nth_paragraph_first_word',
  'detectable_content:number_placeholders',
  'detectable_content:postscript',
  'detectable_format:number_bullet_lists',
  'detectable_format:constrained_response',
  'detectable_format:number_highlighted_sections',
  'detectable_format:multiple_sections',
  'detectable_format:json_format',
  'detectable_format:title',
  'combination:two_responses',
  'combination:repeat_prompt',
  'startend:end_checker',
  'change_case:capital_word_frequency',
  'change_case:english_capital',
  'change_case:english_lowercase',
  'punctuation:no_comma',
  'startend:quotation',
] as const;

export type InstructionId = (typeof INSTRUCTION_IDS)[number];

/** The reference's `_COMPARISON_RELATION`. */
export type Relation = 'less than' | 'at least';

/** The JSON type a kwarg must have; `relation` is one of the two Relation strings. */
export type KwargType = 'int' | 'string' | 'string[]' | 'relation';

/** Every key a checker accepts, all required (the reference would draw a random value for a missing one). */
export type KwargsSchema = Readonly<Record<string, KwargType>>;

type ArgOf<T extends KwargType> = T extends 'int'
  ? number
  : T extends 'string'
    ? string
    : T extends 'string[]'
      ? readonly string[]
      : Relation;

/** The validated kwargs a schema describes. */
export type ArgsOf<S extends KwargsSchema> = { readonly [K in keyof S]: ArgOf<S[K]> };

/** What a checker found in a response: its verdict, and in words what decided it ("212 words; needs at least 300"). */
export interface CheckFinding {
  readonly pass: boolean;
  readonly detail: string;
}

/** One instruction's strict and loose verdicts, each with what decided it. */
export interface InstructionFindings {
  readonly strict: CheckFinding;
  /** The strict finding when strict passes or no variant passes; else the first passing variant's. */
  readonly loose: CheckFinding;
  /** The loose variant that passed where the response itself failed (a LOOSE_VARIANT_NAMES entry), else null. */
  readonly looseVariant: string | null;
}

/** One instruction, built from its kwargs, ready to check responses. */
export interface Checker {
  /** `check_following(response)`: whether the response follows the instruction. */
  check(response: string, tools: TextTools): boolean;
  /** The verdict `check` gives, with what decided it. */
  explain(response: string, tools: TextTools): CheckFinding;
}

/**
 * A checker whose verdict comes from its finding, so that the two cannot disagree. Scoring builds a few short
 * strings more per check; the 541 responses' scoring does not notice (`npm run bench -- --only ifeval-score`).
 */
export function explainedChecker(explain: (response: string, tools: TextTools) => CheckFinding): Checker {
  return { explain, check: (response, tools) => explain(response, tools).pass };
}

/** A count against its threshold, in words: "12 words; needs at least 300" (`plural` loses its "s" for a count of 1). */
export function countFinding(pass: boolean, count: number, plural: string, relation: Relation | 'exactly', threshold: number): CheckFinding {
  const what = count === 1 && plural.endsWith('s') ? plural.slice(0, -1) : plural;
  return { pass, detail: `${count} ${what}; needs ${relation === 'exactly' && threshold === 0 ? 'none' : `${relation} ${threshold}`}` };
}

/** Strings quoted for a finding, at most `max` of them: `"a", "b" and 3 more`. */
export function quoteList(items: readonly string[], max = 3): string {
  const shown = items.slice(0, max).map((s) => JSON.stringify(s));
  return items.length > max ? `${shown.join(', ')} and ${items.length - max} more` : shown.join(', ');
}

/** A registered instruction: its kwargs schema and the equivalent of `build_description(**kwargs)`. */
export interface CheckerDefinition<S extends KwargsSchema = KwargsSchema> {
  /** Keys and JSON types of the kwargs; unknown keys are rejected. */
  readonly schema: S;
  /** Builds the checker; throws KwargsError for values the reference would reject or replace with random ones. */
  build(args: ArgsOf<S>): Checker;
}

/** Raised for kwargs that do not fit an instruction's schema or constraints. */
export class KwargsError extends Error {
  override name = 'KwargsError';
}

/** One row of input_data.jsonl. */
export interface PromptRecord {
  /** The dataset's integer key (unique). */
  readonly key: number;
  readonly prompt: string;
  readonly instruction_id_list: readonly InstructionId[];
  /** One kwargs object per instruction, null-valued keys already removed. */
  readonly kwargs: readonly Readonly<Record<string, unknown>>[];
}

/** One row of eval_results_{strict,loose}.jsonl, in the reference's key order. */
export interface EvalResultRow {
  readonly follow_all_instructions: boolean;
  readonly follow_instruction_list: readonly boolean[];
  readonly instruction_id_list: readonly InstructionId[];
  readonly prompt: string;
  readonly response: string;
}

/** Accuracy counts for one instruction id. */
export interface InstructionIdStats {
  readonly id: InstructionId;
  /** How many times the id appears among the scored prompts. */
  readonly total: number;
  readonly strictFollowed: number;
  readonly looseFollowed: number;
  /** strictFollowed / total, in [0, 1]. */
  readonly strictAccuracy: number;
  /** looseFollowed / total, in [0, 1]. */
  readonly looseAccuracy: number;
}

/** Accuracy counts for one instruction category such as `keywords`. */
export interface CategoryStats {
  readonly category: string;
  readonly total: number;
  readonly strictFollowed: number;
  readonly looseFollowed: number;
  /** strictFollowed / total, in [0, 1]. */
  readonly strictAccuracy: number;
  /** looseFollowed / total, in [0, 1]. */
  readonly looseAccuracy: number;
}

/** Everything `summary.json` holds. */
export interface ScoreSummary {
  /** Prompts scored (those with a response). */
  readonly promptsScored: number;
  /** Instructions among the scored prompts. */
  readonly instructionsScored: number;
  readonly promptLevelStrictAccuracy: number;
  readonly promptLevelLooseAccuracy: number;
  readonly instructionLevelStrictAccuracy: number;
  readonly instructionLevelLooseAccuracy: number;
  readonly promptsFollowedStrict: number;
  readonly promptsFollowedLoose: number;
  readonly instructionsFollowedStrict: number;
  readonly instructionsFollowedLoose: number;
  /** Per instruction id, sorted by id; ids that never appear are left out. */
  readonly perInstruction: readonly InstructionIdStats[];
  /** Per category (the id before ":", the reference's "tier0" report), sorted by category. */
  readonly perCategory: readonly CategoryStats[];
  /** Prompts of the dataset with no response, by key, with their prompt text; not scored. */
  readonly missing: readonly { readonly key: number; readonly prompt: string }[];
  /** Response rows whose prompt is not in the dataset (ignored, as the reference ignores them). */
  readonly unmatchedResponsePrompts: readonly string[];
}

/** The result of scoring a set of responses. */
export interface ScoreReport {
  readonly strict: readonly EvalResultRow[];
  readonly loose: readonly EvalResultRow[];
  /** The key of each scored prompt, parallel to `strict` and `loose`. */
  readonly keys: readonly number[];
  /** What decided each verdict of each scored prompt, parallel to `keys`, in instruction order. */
  readonly findings: readonly (readonly InstructionFindings[])[];
  readonly summary: ScoreSummary;
}
