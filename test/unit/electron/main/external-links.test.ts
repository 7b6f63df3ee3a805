import { describe, expect, it } from 'vitest';

import { isExternalLinkAllowed } from '../../../../electron/main/external-links.js';

describe('isExternalLinkAllowed', () => {
  it.each([
    ['https://huggingface.co/allenai/OLMoE-1B-7B-0924-Instruct', true],
    ['https://huggingface.co/settings/tokens', true],
    ['https://hf.co/allenai', true],
    ['http://huggingface.co/x', false],
    ['https://huggingface.co.evil.example/x', false],
    ['https://evil.example/?https://huggingface.co', false],
    ['https://user:pw@huggingface.co/x', false],
    ['https://huggingface.co:8443/x', false],
    ['file:///etc/passwd', false],
    ['javascript:alert(1)', false],
    ['not a url', false],
  ])('%s -> %s', (url, allowed) => {
    expect(isExternalLinkAllowed(url)).toBe(allowed);
  });
});
