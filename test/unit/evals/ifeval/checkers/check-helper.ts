import { buildChecker } from '../../../../../evals/ifeval/registry.js';
import type { TextTools } from '../../../../../evals/ifeval/text/text-tools.js';
import type { InstructionId } from '../../../../../evals/ifeval/types.js';
import { fakeTextTools } from '../fake-text-tools.js';

/** Builds the registered checker for `id` with `kwargs` and runs it on `response` (fake text tools by default). */
export function check(id: InstructionId, kwargs: Record<string, unknown>, response: string, tools: TextTools = fakeTextTools()): boolean {
  return buildChecker(id, kwargs).check(response, tools);
}
