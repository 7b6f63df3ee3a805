import type { CategoryStats, EvalResultRow, InstructionId, InstructionIdStats, ScoreSummary } from './types.js';

function ratio(n: number, d: number): number {
  return d === 0 ? 0 : n / d;
}

type Tally = { total: number; strict: number; loose: number };

/** The counts and accuracies shared by the per-id and per-category tables. */
function tallyStats(e: Tally): Omit<CategoryStats, 'category'> {
  return {
    total: e.total,
    strictFollowed: e.strict,
    looseFollowed: e.loose,
    strictAccuracy: ratio(e.strict, e.total),
    looseAccuracy: ratio(e.loose, e.total),
  };
}

/** Map entries sorted by key. */
function sortedEntries<K extends string>(m: ReadonlyMap<K, Tally>): [K, Tally][] {
  return [...m.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}

/** Prompt- and instruction-level accuracies (evaluation_lib.print_report) plus a per-id table; rows are parallel. */
export function summarize(
  strict: readonly EvalResultRow[],
  loose: readonly EvalResultRow[],
  missing: readonly { readonly key: number; readonly prompt: string }[] = [],
  unmatchedResponsePrompts: readonly string[] = [],
): ScoreSummary {
  if (strict.length !== loose.length) throw new Error(`summary: ${strict.length} strict rows but ${loose.length} loose rows`);
  const perId = new Map<InstructionId, Tally>();
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
  const perInstruction: InstructionIdStats[] = sortedEntries(perId).map(([id, e]) => ({ id, ...tallyStats(e) }));
  const categories = new Map<string, Tally>();
  for (const p of perInstruction) {
    const category = p.id.split(':')[0]!;
    const entry = categories.get(category) ?? { total: 0, strict: 0, loose: 0 };
    entry.total += p.total;
    entry.strict += p.strictFollowed;
    entry.loose += p.looseFollowed;
    categories.set(category, entry);
  }
  const perCategory: CategoryStats[] = sortedEntries(categories).map(([category, e]) => ({ category, ...tallyStats(e) }));
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
