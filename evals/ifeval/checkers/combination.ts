import { requireNonEmpty } from '../kwargs-rules.js';
import { pyStrip } from '../python-compat.js';
import type { CheckerDefinition } from '../types.js';

/** `combination:two_responses` (TwoResponsesChecker): two different answers separated by `******`. */
export const twoResponses: CheckerDefinition<Record<string, never>> = {
  schema: {},
  build() {
    return {
      check: (value) => {
        const valid: string[] = [];
        const parts = value.split('******');
        for (let i = 0; i < parts.length; i++) {
          if (!pyStrip(parts[i]!)) {
            if (i !== 0 && i !== parts.length - 1) return false;
          } else {
            valid.push(parts[i]!);
          }
        }
        return valid.length === 2 && pyStrip(valid[0]!) !== pyStrip(valid[1]!);
      },
    };
  },
};

/** `combination:repeat_prompt` (RepeatPromptThenAnswer): the response starts with the prompt, ignoring case. */
export const repeatPrompt: CheckerDefinition<{ prompt_to_repeat: 'string' }> = {
  schema: { prompt_to_repeat: 'string' },
  build(args) {
    const prompt = pyStrip(requireNonEmpty('prompt_to_repeat', args.prompt_to_repeat)).toLowerCase();
    return { check: (value) => pyStrip(value).toLowerCase().startsWith(prompt) };
  },
};
