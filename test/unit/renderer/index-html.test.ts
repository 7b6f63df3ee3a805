import { readFileSync } from 'node:fs';
import path from 'node:path';

import { describe, expect, it } from 'vitest';

import { contentSecurityPolicy, RENDERER_META_CSP } from '../../../electron/main/serve/content-security-policy.js';

const html = readFileSync(path.resolve(import.meta.dirname, '..', '..', '..', 'renderer', 'index.html'), 'utf8');

describe('renderer/index.html', () => {
  it('carries the strict CSP, which the servers narrow', () => {
    const meta = /http-equiv="Content-Security-Policy"\s+content="([^"]+)"/.exec(html);
    expect(meta?.[1]).toBe(RENDERER_META_CSP);
    expect(RENDERER_META_CSP).toMatch(/default-src 'self'/);
    expect(RENDERER_META_CSP).not.toMatch(/unsafe-(inline|eval)/);
    // The Electron window's header: no connection beyond its own files.
    expect(contentSecurityPolicy()).toMatch(/connect-src 'self'; /);
  });

  it('has no inline script', () => {
    expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
  });
});
