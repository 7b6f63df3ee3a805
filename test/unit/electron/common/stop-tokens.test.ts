import { describe, expect, it } from 'vitest';

import { stopTokenIds, tokenContent, tokenizerJsonIdOf } from '../../../../electron/common/stop-tokens.js';

const tokenizerJson = {
  added_tokens: [{ id: 50279, content: '<|endoftext|>' }, { id: 7, content: '<|padding|>' }],
  model: { vocab: { hello: 3, '</s>': 2 } },
};

describe('stopTokenIds', () => {
  it.each([
    ['eos_token as a string, found in added_tokens', { tokenizerConfig: { eos_token: '<|endoftext|>' } }, [50279]],
    ['eos_token as an object', { tokenizerConfig: { eos_token: { content: '<|endoftext|>' } } }, [50279]],
    ['eos_token found only in the vocab', { tokenizerConfig: { eos_token: '</s>' } }, [2]],
    ['unknown eos_token text, config id', { tokenizerConfig: { eos_token: '<nope>' }, config: { eos_token_id: 9 } }, [9]],
    [
      'all three, deduplicated in order',
      { tokenizerConfig: { eos_token: '<|endoftext|>' }, config: { eos_token_id: 50279 }, generationConfig: { eos_token_id: [1, 50279, 4] } },
      [50279, 1, 4],
    ],
    ['non-integer ids are ignored', { config: { eos_token_id: [1.5, '3', 8] } }, [8]],
  ])('%s', (_name, src, expected) => {
    expect(stopTokenIds('/m', src, tokenizerJsonIdOf(tokenizerJson))).toEqual(expected);
  });

  it('names the model folder when there is no EOS id at all', () => {
    expect(() => stopTokenIds('/models/x', { config: { eos_token_id: null } }, () => undefined)).toThrow(
      '/models/x: no EOS token id in config.json, generation_config.json or tokenizer_config.json',
    );
  });

  it('reads token text from strings and added-token objects only', () => {
    expect(tokenContent('a')).toBe('a');
    expect(tokenContent({ content: 'b', lstrip: false })).toBe('b');
    expect(tokenContent({ content: 3 })).toBeUndefined();
    expect(tokenContent(null)).toBeUndefined();
  });
});
