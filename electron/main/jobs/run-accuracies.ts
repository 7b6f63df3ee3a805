import type { Accuracies } from '../../common/ipc-contract.js';
import type { PassCounts, ResponseRepo } from '../db/response-repo.js';

/** The four IFEval accuracies over a run's stored responses; null before the first response. */
export function runAccuracies(responses: ResponseRepo, runId: string): Accuracies | null {
  return accuraciesOf(responses.passCounts(runId));
}

/** The four IFEval accuracies from pass counts; null when no prompt is counted. */
export function accuraciesOf(c: PassCounts): Accuracies | null {
  if (c.prompts === 0) return null;
  return {
    promptStrict: c.promptsStrict / c.prompts,
    promptLoose: c.promptsLoose / c.prompts,
    instructionStrict: c.instructions === 0 ? 0 : c.instructionsStrict / c.instructions,
    instructionLoose: c.instructions === 0 ? 0 : c.instructionsLoose / c.instructions,
  };
}

/** Two lines: prompt-level and instruction-level accuracy, strict and loose, in percent. */
export function formatAccuracies(a: Accuracies): string {
  const pct = (x: number) => `${(x * 100).toFixed(2)}%`;
  return (
    `prompt-level:      strict ${pct(a.promptStrict)}  loose ${pct(a.promptLoose)}\n` +
    `instruction-level: strict ${pct(a.instructionStrict)}  loose ${pct(a.instructionLoose)}`
  );
}
