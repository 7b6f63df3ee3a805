import type { CategoryStats, EvalResultRow, InstructionId, InstructionIdStats, ScoreSummary } from './types.js';

function ratio(n: number, d: number): number {
  return d === 0 ? 0 : n / d;
}

/** Prompt- and instruction-level accuracies (evaluation_lib.print_report) plus a per-id table; rows are parallel. */
export function summarize(
  strict: readonly EvalResultRow[],
  loose: readonly EvalResultRow[],
  missing: readonly { readonly key: number; readonly prompt: string }[] = [],
  unmatchedResponsePrompts: readonly string[] = [],
): ScoreSummary {
  if (strict.length !== loose.length) throw new Error(`summary: ${strict.length} strict rows but ${loose.length} loose rows`);
  const perId = new Map<InstructionId, { total: number; strict: number; loose: number }>();
  let instructions = 0;
  let strictInstr = 0;
  let looseInstr = 0;
  let strictPrompts = 0;
  let loosePrompts = 0;
  strict.forEach((s, i) => {
    const l = loose[i]!;
    if (s.follow_instruction_list.every(Boolean)) strictPrompts++;
    if (l.follow_instruction_list.every(Boolean)) loosePrompts++;
    s.instruction_id_list.forEach((id, j) => {
      const entry = perId.get(id) ?? { total: 0, strict: 0, loose: 0 };
      entry.total++;
      instructions++;
      if (s.follow_instruction_list[j]) {
        entry.strict++;
        strictInstr++;
      }
      if (l.follow_instruction_list[j]) {
        entry.loose++;
        looseInstr++;
      }
      perId.set(id, entry);
    });
  });
  const perInstruction: InstructionIdStats[] = [...perId.entries()]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([id, e]) => ({
      id,
      total: e.total,
      strictFollowed: e.strict,
      looseFollowed: e.loose,
      strictAccuracy: ratio(e.strict, e.total),
      looseAccuracy: ratio(e.loose, e.total),
    }));
  const categories = new Map<string, { total: number; strict: number; loose: number }>();
  for (const p of perInstruction) {
    const category = p.id.split(':')[0]!;
    const entry = categories.get(category) ?? { total: 0, strict: 0, loose: 0 };
    entry.total += p.total;
    entry.strict += p.strictFollowed;
    entry.loose += p.looseFollowed;
    categories.set(category, entry);
  }
  const perCategory: CategoryStats[] = [...categories.entries()]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([category, e]) => ({
      category,
      total: e.total,
      strictFollowed: e.strict,
      looseFollowed: e.loose,
      strictAccuracy: ratio(e.strict, e.total),
      looseAccuracy: ratio(e.loose, e.total),
    }));
  return {
    promptsScored: strict.length,
    instructionsScored: instructions,
    promptLevelStrictAccuracy: ratio(strictPrompts, strict.length),
    promptLevelLooseAccuracy: ratio(loosePrompts, strict.length),
    instructionLevelStrictAccuracy: ratio(strictInstr, instructions),
    instructionLevelLooseAccuracy: ratio(looseInstr, instructions),
    promptsFollowedStrict: strictPrompts,
    promptsFollowedLoose: loosePrompts,
    instructionsFollowedStrict: strictInstr,
    instructionsFollowedLoose: looseInstr,
    perInstruction,
    perCategory,
    missing: missing.map((m) => ({ key: m.key, prompt: m.prompt })),
    unmatchedResponsePrompts: [...unmatchedResponsePrompts],
  };
}
