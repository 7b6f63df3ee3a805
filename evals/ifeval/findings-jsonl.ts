import type { InstructionFindings, ScoreReport } from './types.js';

/** One instruction of a findings.jsonl line. */
export interface InstructionFindingsEntry {
  readonly id: string;
  readonly strict: { readonly follows: boolean; readonly finding: string };
  /** `variant`: the loose variant that passed where the response itself failed ("without its first line"), else null. */
  readonly loose: { readonly follows: boolean; readonly finding: string; readonly variant: string | null };
}

/** One line of findings.jsonl: what decided each verdict of one scored prompt, in instruction order. */
export interface FindingsLine {
  readonly key: number;
  readonly instructions: readonly InstructionFindingsEntry[];
}

/** The findings.jsonl line of prompt `key`, whose instructions `ids` got `findings` (explainPrompt's, same order). */
export function findingsLine(key: number, ids: readonly string[], findings: readonly InstructionFindings[]): FindingsLine {
  if (ids.length !== findings.length) throw new Error(`key ${key}: ${ids.length} instructions but ${findings.length} findings`);
  return {
    key,
    instructions: findings.map((f, i) => ({
      id: ids[i]!,
      strict: { follows: f.strict.pass, finding: f.strict.detail },
      loose: { follows: f.loose.pass, finding: f.loose.detail, variant: f.looseVariant },
    })),
  };
}

/** The findings.jsonl lines of a score report: one per scored prompt, in the report's order. */
export function reportFindingsLines(report: ScoreReport): FindingsLine[] {
  return report.keys.map((key, i) => findingsLine(key, report.strict[i]!.instruction_id_list, report.findings[i]!));
}

/** A whole findings.jsonl: one compact JSON line per prompt, newline-terminated. */
export function formatFindings(lines: readonly FindingsLine[]): string {
  return lines.map((l) => `${JSON.stringify(l)}\n`).join('');
}
