import { explainPrompt } from '../../../evals/ifeval/score.js';
import { isInstructionId } from '../../../evals/ifeval/registry.js';
import type { TextTools } from '../../../evals/ifeval/text/text-tools.js';
import type { InstructionId } from '../../../evals/ifeval/types.js';
import type { InstructionVerdict } from '../../common/ipc-contract.js';
import type { StoredResponse } from '../db/response-repo.js';

/**
 * A stored response's verdicts, each with what the scorer finds in the response now. A finding is given only where
 * it has the stored verdicts, strict and loose: a run scored by another version of the scorer keeps its verdicts,
 * and a finding that contradicts them would mislead. Null findings without text tools (the eval assets are
 * missing) or for instructions this scorer cannot build.
 */
export function verdictsWithFindings(r: StoredResponse, tools: TextTools | null, onlyId?: string): InstructionVerdict[] {
  const plain = r.verdicts.map((v) => ({ ...v, finding: null, looseFinding: null }));
  // With onlyId, the other instructions are not explained (a page of rows under an instruction filter).
  const picked = r.verdicts.flatMap((v, i) => (onlyId === undefined || v.instructionId === onlyId ? [i] : []));
  const ids = picked.map((i) => r.verdicts[i]!.instructionId);
  if (tools === null || picked.length === 0 || !ids.every(isInstructionId)) return plain;
  let findings;
  try {
    const record = { key: r.key, prompt: r.prompt, instruction_id_list: ids as InstructionId[], kwargs: picked.map((i) => r.verdicts[i]!.kwargs) };
    findings = explainPrompt(record, r.response, tools);
  } catch {
    // Kwargs this version rejects (a run imported from another scorer): its verdicts are shown without findings.
    return plain;
  }
  return r.verdicts.map((v, i) => {
    const at = picked.indexOf(i);
    const f = findings[at];
    if (f === undefined || f.strict.pass !== v.strict || f.loose.pass !== v.loose) return plain[i]!;
    return {
      ...v,
      finding: f.strict.detail,
      looseFinding: f.looseVariant === null ? null : { variant: f.looseVariant, detail: f.loose.detail },
    };
  });
}
