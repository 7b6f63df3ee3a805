import { requireNonEmpty } from '../kwargs-rules.js';
import { pyStrip } from '../python-compat.js';
import { explainedChecker } from '../types.js';
import type { CheckerDefinition } from '../types.js';

/** `combination:two_responses` (TwoResponsesChecker): two different answers separated by `******`. */
export const twoResponses: CheckerDefinition<Record<string, never>> = {
  schema: {},
  build() {
    return explainedChecker((value) => {
      const valid: string[] = [];
      const parts = value.split('******');
      for (let i = 0; i < parts.length; i++) {
        if (!pyStrip(parts[i]!)) {
          if (i !== 0 && i !== parts.length - 1) return { pass: false, detail: `part ${i + 1} between ****** dividers is empty` };
        } else {
          valid.push(parts[i]!);
        }
      }
      if (valid.length !== 2) return { pass: false, detail: `${valid.length} response${valid.length === 1 ? '' : 's'} between ****** dividers; needs 2` };
      return pyStrip(valid[0]!) !== pyStrip(valid[1]!)
        ? { pass: true, detail: 'two different responses between ****** dividers' }
        : { pass: false, detail: 'the two responses are the same' };
    });
  },
};

/** `combination:repeat_prompt` (RepeatPromptThenAnswer): the response starts with the prompt, ignoring case. */
export const repeatPrompt: CheckerDefinition<{ prompt_to_repeat: 'string' }> = {
  schema: { prompt_to_repeat: 'string' },
  build(args) {
    const prompt = pyStrip(requireNonEmpty('prompt_to_repeat', args.prompt_to_repeat)).toLowerCase();
    return explainedChecker((value) => {
      const text = pyStrip(value).toLowerCase();
      if (text.startsWith(prompt)) return { pass: true, detail: 'starts with the prompt' };
      let i = 0;
      while (i < text.length && i < prompt.length && text[i] === prompt[i]) i++;
      return { pass: false, detail: i === 0 ? 'does not start with the prompt' : `repeats the prompt's first ${i} of ${prompt.length} characters` };
    });
  },
};
