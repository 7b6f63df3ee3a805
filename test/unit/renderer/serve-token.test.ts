import { describe, expect, it } from 'vitest';

import { SERVE_TOKEN_KEY, takeServeToken } from '../../../renderer/src/api.js';
import type { BrowserGlobals } from '../../../renderer/src/api.js';

/** A tab at `url` with its own sessionStorage (`storage: null` = storage disabled, every call throws). */
function tab(url: string, storage: Map<string, string> | null = new Map()) {
  const u = new URL(url);
  const replaced: string[] = [];
  const g: BrowserGlobals = {
    location: { hash: u.hash, origin: u.origin, pathname: u.pathname, search: u.search },
    history: { replaceState: (_d, _u, next) => replaced.push(String(next)) },
    sessionStorage: {
      getItem: (k) => {
        if (!storage) throw new Error('SecurityError');
        return storage.get(k) ?? null;
      },
      setItem: (k, v) => {
        if (!storage) throw new Error('SecurityError');
        storage.set(k, v);
      },
    },
  };
  return { g, replaced, storage };
}

describe('takeServeToken', () => {
  it('keeps the printed token in the tab and takes it out of the address bar, keeping the path and query', () => {
    const t = tab('http://127.0.0.1:4173/index.html?x=1#token=abc-_1');
    expect(takeServeToken(t.g)).toBe('abc-_1');
    expect(t.storage?.get(SERVE_TOKEN_KEY)).toBe('abc-_1');
    expect(t.replaced).toEqual(['/index.html?x=1']);
  });

  it('finds the token after a reload, with nothing in the address bar to take out', () => {
    const storage = new Map([[SERVE_TOKEN_KEY, 'kept']]);
    const t = tab('http://127.0.0.1:4173/', storage);
    expect(takeServeToken(t.g)).toBe('kept');
    expect(t.replaced).toEqual([]);
  });

  it('prefers a newly printed token (a restarted server) to the one kept', () => {
    const storage = new Map([[SERVE_TOKEN_KEY, 'old']]);
    const t = tab('http://127.0.0.1:4173/#token=new', storage);
    expect(takeServeToken(t.g)).toBe('new');
    expect(storage.get(SERVE_TOKEN_KEY)).toBe('new');
    expect(t.replaced).toEqual(['/']);
  });

  it('leaves the token in the address bar when storage is disabled, so a reload still has it', () => {
    const t = tab('http://127.0.0.1:4173/#token=abc', null);
    expect(takeServeToken(t.g)).toBe('abc');
    expect(t.replaced).toEqual([]);
    expect(takeServeToken(tab('http://127.0.0.1:4173/', null).g)).toBe('');
  });

  it('gives an empty token to a tab that has none', () => {
    const t = tab('http://127.0.0.1:4173/#other=1');
    expect(takeServeToken(t.g)).toBe('');
    expect(t.replaced).toEqual([]);
  });
});
