/**
 * Two runs compared over the prompts both scored: which verdicts changed (regressions first) and the paired
 * statistics at prompt and instruction level, strict and loose. Used by RunsService.compare and `horizon compare` (stored runs or
 * verified result ZIPs).
 */
import type { ComparedPrompt, PairedComparison } from '../../common/ipc-contract.js';
import { pairedByInstructionType, pairedLevel } from '../../common/paired-stats.js';
import type { PairedInstruction, PairedVerdict } from '../../common/paired-stats.js';

const PREVIEW = 200;

/** What a comparison reads of a response: a stored run's rows and a verified result ZIP's re-scored ones alike. */
export interface ComparableResponse {
  readonly key: number;
  readonly prompt: string;
  readonly response: string;
  readonly strictPass: boolean;
  readonly loosePass: boolean;
  readonly verdicts: readonly { readonly instructionId: string; readonly strict: boolean; readonly loose: boolean }[];
}

/** The first characters of a prompt or response for lists. */
export const preview = (s: string): string => (s.length > PREVIEW ? `${s.slice(0, PREVIEW)}…` : s);

export function compareResponses(
  responsesA: readonly ComparableResponse[],
  responsesB: readonly ComparableResponse[],
): { changed: ComparedPrompt[]; stats: PairedComparison } {
  const bByKey = new Map(responsesB.map((r) => [r.key, r]));
  const promptStrict: PairedVerdict[] = [];
  const promptLoose: PairedVerdict[] = [];
  const instructionStrict: PairedVerdict[] = [];
  const instructionLoose: PairedVerdict[] = [];
  const instructions: PairedInstruction[] = [];
  const changed: ComparedPrompt[] = [];
  let identicalResponses = 0;
  let instructionMismatches = 0;
  for (const ra of responsesA) {
    const rb = bByKey.get(ra.key);
    if (!rb) continue;
    promptStrict.push({ a: ra.strictPass, b: rb.strictPass, cluster: ra.key });
    promptLoose.push({ a: ra.loosePass, b: rb.loosePass, cluster: ra.key });
    if (ra.response === rb.response) identicalResponses++;
    // The same prompt has the same instruction list in both runs; a run scored from another dataset version may not.
    const sameInstructions =
      ra.verdicts.length === rb.verdicts.length && ra.verdicts.every((v, i) => v.instructionId === rb.verdicts[i]!.instructionId);
    if (sameInstructions) {
      ra.verdicts.forEach((v, i) => {
        instructionStrict.push({ a: v.strict, b: rb.verdicts[i]!.strict, cluster: ra.key });
        instructionLoose.push({ a: v.loose, b: rb.verdicts[i]!.loose, cluster: ra.key });
        instructions.push({ instructionId: v.instructionId, a: v, b: rb.verdicts[i]! });
      });
    } else {
      instructionMismatches++;
    }
    if (ra.strictPass !== rb.strictPass || ra.loosePass !== rb.loosePass) {
      changed.push({
        key: ra.key,
        promptPreview: preview(ra.prompt),
        a: { strict: ra.strictPass, loose: ra.loosePass },
        b: { strict: rb.strictPass, loose: rb.loosePass },
      });
    }
  }
  // Regressions (A passed strict, B does not) first, then loose-only regressions, then improvements; by key within.
  const rank = (c: ComparedPrompt) => (c.a.strict && !c.b.strict ? 0 : c.a.loose && !c.b.loose ? 1 : 2);
  changed.sort((x, y) => rank(x) - rank(y) || x.key - y.key);
  return {
    changed,
    stats: {
      common: promptStrict.length,
      promptStrict: pairedLevel(promptStrict),
      promptLoose: pairedLevel(promptLoose),
      instructionStrict: pairedLevel(instructionStrict),
      instructionLoose: pairedLevel(instructionLoose),
      identicalResponses,
      instructionMismatches,
      byInstructionType: pairedByInstructionType(instructions),
    },
  };
}
