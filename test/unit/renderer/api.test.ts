import { describe, expect, it } from 'vitest';

import { createHttpTransport, createPreloadTransport, eventProtocols, tokenFromHash } from '../../../renderer/src/api.js';

describe('tokenFromHash', () => {
  it('reads the token from the fragment', () => {
    expect(tokenFromHash('#token=abc-_1')).toBe('abc-_1');
    expect(tokenFromHash('')).toBeNull();
  });
});

describe('createHttpTransport', () => {
  it('POSTs the payload with the bearer token and returns the Result', async () => {
    const seen: { url: string; init: RequestInit }[] = [];
    const fetchImpl = (async (url: string, init: RequestInit) => {
      seen.push({ url, init });
      return new Response(JSON.stringify({ ok: true, value: [] }), { status: 200 });
    }) as unknown as typeof fetch;
    const t = createHttpTransport({ origin: 'http://127.0.0.1:9', token: 'T', fetchImpl });
    expect(await t.invoke('runs:get', { runId: 'r1' })).toEqual({ ok: true, value: [] });
    expect(seen[0]?.url).toBe('http://127.0.0.1:9/api/runs/get');
    expect(seen[0]?.init.headers).toMatchObject({ authorization: 'Bearer T' });
    expect(seen[0]?.init.body).toBe('{"runId":"r1"}');
  });

  it('downloads an export with the token in a header, never in the URL, and says why one failed', async () => {
    const seen: { url: string; init?: RequestInit }[] = [];
    const saved: { name: string; text: string }[] = [];
    const fetchImpl = (async (url: string, init?: RequestInit) => {
      seen.push({ url, init });
      return url.endsWith('/gone.zip') ? new Response('not found', { status: 404 }) : new Response('PK-zip', { status: 200 });
    }) as unknown as typeof fetch;
    const t = createHttpTransport({
      origin: 'http://127.0.0.1:9',
      token: 'T',
      fetchImpl,
      saveBlob: (blob, name) => void blob.text().then((text) => saved.push({ name, text })),
    });
    expect(await t.download!('/data/exports/run 1.zip')).toEqual({ ok: true, value: undefined });
    expect(seen[0]?.url).toBe('http://127.0.0.1:9/files/run%201.zip');
    expect(seen[0]?.init?.headers).toEqual({ authorization: 'Bearer T' });
    await expect.poll(() => saved).toEqual([{ name: 'run 1.zip', text: 'PK-zip' }]);
    expect(await t.download!('C:\\data\\exports\\gone.zip')).toEqual({
      ok: false,
      error: { code: 'NOT_FOUND', message: "gone.zip: not in the data folder's exports/ any more (deleted since it was exported?); export it again" },
    });
  });

  it('offers the token to the event socket as a subprotocol, not in its URL', () => {
    const opened: { url: string; protocols: unknown }[] = [];
    class FakeSocket {
      onopen: (() => void) | null = null;
      onmessage: ((m: MessageEvent) => void) | null = null;
      onclose: (() => void) | null = null;
      constructor(url: string, protocols: unknown) {
        opened.push({ url, protocols });
      }
    }
    const t = createHttpTransport({ origin: 'http://127.0.0.1:9', token: 'T', WebSocketImpl: FakeSocket as unknown as typeof WebSocket });
    t.on('models:onDidProgress', () => {});
    expect(opened).toEqual([{ url: 'ws://127.0.0.1:9/events', protocols: eventProtocols('T') }]);
    expect(eventProtocols('T')).toEqual(['horizon-events', 'token.T']);
  });

  it('turns transport failures into NETWORK results', async () => {
    const fetchImpl = (async () => {
      throw new Error('ECONNREFUSED');
    }) as unknown as typeof fetch;
    const r = await createHttpTransport({ origin: 'http://x', token: 'T', fetchImpl }).invoke('runs:list', undefined);
    expect(r).toEqual({ ok: false, error: { code: 'NETWORK', message: 'runs:list: the local server did not answer (ECONNREFUSED)' } });
  });
});

describe('createPreloadTransport', () => {
  it('forwards to window.api and rejects malformed replies', async () => {
    const t = createPreloadTransport({ invoke: async (ch) => (ch === 'runs:list' ? { ok: true, value: [] } : 'junk'), on: () => () => {} });
    expect(await t.invoke('runs:list', undefined)).toEqual({ ok: true, value: [] });
    expect(await t.invoke('system:check', undefined)).toMatchObject({ ok: false, error: { code: 'INTERNAL' } });
    expect(t.download).toBeNull();
  });
});
