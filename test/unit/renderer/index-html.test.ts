import { readFileSync } from 'node:fs';
import path from 'node:path';

import { describe, expect, it } from 'vitest';

import { CONTENT_SECURITY_POLICY } from '../../../electron/main/serve/content-security-policy.js';

const html = readFileSync(path.resolve(import.meta.dirname, '..', '..', '..', 'renderer', 'index.html'), 'utf8');

describe('renderer/index.html', () => {
  it('carries the same strict CSP the servers send', () => {
    const meta = /http-equiv="Content-Security-Policy"\s+content="([^"]+)"/.exec(html);
    expect(meta?.[1]).toBe(CONTENT_SECURITY_POLICY);
    expect(CONTENT_SECURITY_POLICY).toMatch(/default-src 'self'/);
    expect(CONTENT_SECURITY_POLICY).not.toMatch(/unsafe-(inline|eval)/);
  });

  it('has no inline script', () => {
    expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
  });
});
