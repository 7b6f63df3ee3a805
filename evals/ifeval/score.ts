import { buildChecker } from './registry.js';
import { pyStrip } from './python-compat.js';
import { summarize } from './summary.js';
import type { TextTools } from './text/text-tools.js';
import type { CheckFinding, Checker, EvalResultRow, InstructionFindings, PromptRecord, ScoreReport } from './types.js';

export type { InstructionFindings } from './types.js';

/**
 * The 8 responses loose scoring tries (evaluation_lib.test_instruction_following_loose): the response, without
 * `*`, without its first line, last line or both (stripped), and those three without `*`.
 */
export function looseVariants(response: string): string[] {
  const lines = response.split('\n');
  const removeFirst = pyStrip(lines.slice(1).join('\n'));
  const removeLast = pyStrip(lines.slice(0, -1).join('\n'));
  const removeBoth = pyStrip(lines.slice(1, -1).join('\n'));
  const noStar = (s: string): string => s.replaceAll('*', '');
  return [
    response,
    noStar(response),
    removeFirst,
    removeLast,
    removeBoth,
    noStar(removeFirst),
    noStar(removeLast),
    noStar(removeBoth),
  ];
}

/** What each of looseVariants' texts is, in its order. */
export const LOOSE_VARIANT_NAMES = [
  'the response',
  'without *',
  'without its first line',
  'without its last line',
  'without its first and last lines',
  'without its first line and *',
  'without its last line and *',
  'without its first and last lines and *',
] as const;

/** The checkers of one prompt, in instruction order; throws KwargsError for kwargs that do not fit. */
export function buildCheckers(record: PromptRecord): Checker[] {
  return record.instruction_id_list.map((id, i) => buildChecker(id, record.kwargs[i] ?? {}));
}

const EMPTY: CheckFinding = { pass: false, detail: 'the response is empty' };

function finding(checker: Checker, response: string, tools: TextTools): CheckFinding {
  // An empty or all-whitespace response never follows an instruction (`response.strip() and ...`).
  return pyStrip(response) === '' ? EMPTY : checker.explain(response, tools);
}

/** Strict and loose verdicts per instruction of one prompt, each with what decided it. */
export function explainPrompt(record: PromptRecord, response: string, tools: TextTools): InstructionFindings[] {
  const checkers = buildCheckers(record);
  // Checkers are pure, so a variant equal to one already tried (no `*` to drop, a one-line response) cannot change a
  // verdict: each distinct text is checked once, the response itself by the strict pass.
  const variants = looseVariants(response);
  const others = variants
    .map((text, i) => ({ text, name: LOOSE_VARIANT_NAMES[i]! }))
    .filter((v, i) => v.text !== response && variants.indexOf(v.text) === i);
  return checkers.map((c) => {
    const strict = finding(c, response, tools);
    if (strict.pass) return { strict, loose: strict, looseVariant: null };
    for (const v of others) {
      const loose = finding(c, v.text, tools);
      if (loose.pass) return { strict, loose, looseVariant: v.name };
    }
    return { strict, loose: strict, looseVariant: null };
  });
}

/** Strict and loose verdicts per instruction of one prompt. */
export function scorePrompt(
  record: PromptRecord,
  response: string,
  tools: TextTools,
): { strict: boolean[]; loose: boolean[] } {
  const findings = explainPrompt(record, response, tools);
  return { strict: findings.map((f) => f.strict.pass), loose: findings.map((f) => f.loose.pass) };
}

function row(record: PromptRecord, response: string, verdicts: boolean[]): EvalResultRow {
  return {
    follow_all_instructions: verdicts.every(Boolean),
    follow_instruction_list: verdicts,
    instruction_id_list: record.instruction_id_list,
    prompt: record.prompt,
    response,
  };
}

/**
 * Scores every prompt that has a response (matched by prompt text, as the reference does) and lists the others as
 * missing. Pure: the caller loads the dataset, the responses and the text tools.
 */
export function scoreResponses(
  records: readonly PromptRecord[],
  responses: ReadonlyMap<string, string>,
  tools: TextTools,
): ScoreReport {
  const strict: EvalResultRow[] = [];
  const loose: EvalResultRow[] = [];
  const keys: number[] = [];
  const findings: InstructionFindings[][] = [];
  const missing: { key: number; prompt: string }[] = [];
  for (const record of records) {
    const response = responses.get(record.prompt);
    if (response === undefined) {
      missing.push({ key: record.key, prompt: record.prompt });
      continue;
    }
    const explained = explainPrompt(record, response, tools);
    strict.push(row(record, response, explained.map((f) => f.strict.pass)));
    loose.push(row(record, response, explained.map((f) => f.loose.pass)));
    keys.push(record.key);
    findings.push(explained);
  }
  const known = new Set(records.map((r) => r.prompt));
  const unmatched = [...responses.keys()].filter((p) => !known.has(p));
  return { strict, loose, keys, findings, summary: summarize(strict, loose, missing, unmatched) };
}
