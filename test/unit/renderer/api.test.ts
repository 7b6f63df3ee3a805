import { afterEach, describe, expect, it, vi } from 'vitest';

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

/** A stand-in for the browser's WebSocket that records every socket opened. */
function fakeSockets() {
  const opened: FakeSocket[] = [];
  class FakeSocket {
    onopen: (() => void) | null = null;
    onmessage: ((m: MessageEvent) => void) | null = null;
    onclose: (() => void) | null = null;
    constructor(
      readonly url: string,
      readonly protocols: unknown,
    ) {
      opened.push(this);
    }
    message(data: unknown): void {
      this.onmessage?.({ data } as MessageEvent);
    }
  }
  return { opened, WebSocketImpl: FakeSocket as unknown as typeof WebSocket };
}

const replying = (body: string, status = 200) => (async () => new Response(body, { status })) as unknown as typeof fetch;

describe('createHttpTransport: the edges', () => {
  afterEach(() => {
    vi.useRealTimers();
    vi.unstubAllGlobals();
  });

  it('sends JSON by POST, an empty body for no payload, and takes only a Result as the answer', async () => {
    const seen: RequestInit[] = [];
    let body = JSON.stringify({ ok: false, error: { code: 'BAD_INPUT', message: 'no' } });
    const fetchImpl = (async (_url: string, init: RequestInit) => {
      seen.push(init);
      return new Response(body, { status: 400 });
    }) as unknown as typeof fetch;
    const t = createHttpTransport({ origin: 'http://127.0.0.1:9', token: 'T', fetchImpl });
    expect(await t.invoke('runs:list', undefined)).toEqual({ ok: false, error: { code: 'BAD_INPUT', message: 'no' } });
    expect(seen[0]).toMatchObject({ method: 'POST', body: '', headers: { 'content-type': 'application/json', authorization: 'Bearer T' } });
    for (const junk of ['{"ok":"yes"}', '{"error":"x"}', 'null', '[]']) {
      body = junk;
      expect(await t.invoke('runs:list', undefined)).toEqual({ ok: false, error: { code: 'INTERNAL', message: 'runs:list: HTTP 400 without a result' } });
    }
  });

  it('says why a download failed: refused, or no server', async () => {
    const refused = createHttpTransport({ origin: 'http://x', token: 'T', fetchImpl: replying('no', 403), saveBlob: () => {} });
    expect(await refused.download!('/d/exports/r.zip')).toEqual({ ok: false, error: { code: 'PERMISSION', message: 'r.zip: the server answered HTTP 403' } });
    const down = createHttpTransport({
      origin: 'http://x', token: 'T', saveBlob: () => {},
      fetchImpl: (async () => {
        throw new Error('ECONNREFUSED');
      }) as unknown as typeof fetch,
    });
    expect(await down.download!('/d/exports/r.zip')).toEqual({ ok: false, error: { code: 'NETWORK', message: 'r.zip: the local server did not answer (ECONNREFUSED)' } });
  });

  it('saves a download through a hidden link to the blob, and revokes the blob later', async () => {
    vi.useFakeTimers();
    const links: { href: string; download: string; hidden: boolean; clicked: number; removed: boolean }[] = [];
    const appended: unknown[] = [];
    vi.stubGlobal('document', {
      createElement: () => {
        const a = { href: '', download: '', hidden: false, clicked: 0, removed: false, click: () => void a.clicked++, remove: () => void (a.removed = true) };
        links.push(a);
        return a;
      },
      body: { append: (n: unknown) => void appended.push(n) },
    });
    const revoked: string[] = [];
    vi.spyOn(URL, 'createObjectURL').mockReturnValue('blob:fake/1');
    vi.spyOn(URL, 'revokeObjectURL').mockImplementation((u) => void revoked.push(u));
    const t = createHttpTransport({ origin: 'http://x', token: 'T', fetchImpl: replying('PK') });
    expect(await t.download!('/d/exports/run 1.zip')).toEqual({ ok: true, value: undefined });
    expect(links).toEqual([{ href: 'blob:fake/1', download: 'run 1.zip', hidden: true, clicked: 1, removed: true, click: expect.any(Function), remove: expect.any(Function) }]);
    expect(appended).toEqual([links[0]]);
    expect(revoked).toEqual([]);
    vi.advanceTimersByTime(60_000);
    expect(revoked).toEqual(['blob:fake/1']);
    vi.restoreAllMocks();
  });

  it('opens one event socket (wss for https), routes its events to their listeners until they unsubscribe, and drops a malformed frame', () => {
    const { opened, WebSocketImpl } = fakeSockets();
    const t = createHttpTransport({ origin: 'https://host:9', token: 'T', WebSocketImpl });
    const got: unknown[] = [];
    const offA = t.on('runs:onDidDelete', (p) => void got.push(['A', p]));
    t.on('runs:onDidDelete', (p) => void got.push(['B', p]));
    t.on('models:onDidProgress', (p) => void got.push(['M', p]));
    expect(opened.map((s) => s.url)).toEqual(['wss://host:9/events']);
    const ws = opened[0] as unknown as { message(d: unknown): void };
    ws.message(JSON.stringify({ event: 'runs:onDidDelete', payload: { runId: 'r1' } }));
    expect(() => ws.message('{not json')).not.toThrow();
    offA();
    ws.message(JSON.stringify({ event: 'runs:onDidDelete', payload: { runId: 'r2' } }));
    expect(got).toEqual([['A', { runId: 'r1' }], ['B', { runId: 'r1' }], ['B', { runId: 'r2' }]]);
  });

  it('reports the connection lost when the socket closes or a call gets no answer, and back when a socket opens', async () => {
    vi.useFakeTimers();
    const { opened, WebSocketImpl } = fakeSockets();
    let failing = true;
    const fetchImpl = (async () => {
      if (failing) throw new TypeError('fetch failed');
      return new Response(JSON.stringify({ ok: true, value: [] }));
    }) as unknown as typeof fetch;
    const t = createHttpTransport({ origin: 'http://h', token: 'T', WebSocketImpl, fetchImpl });
    const seen: boolean[] = [];
    t.onConnection!((up) => void seen.push(up));
    t.on('runs:onDidDelete', () => undefined);
    opened[0]!.onopen!();
    expect(seen).toEqual([]); // up from the start: no change to report
    opened[0]!.onclose!();
    expect(seen).toEqual([false]);
    vi.advanceTimersByTime(250);
    opened[1]!.onopen!();
    expect(seen).toEqual([false, true]);
    expect(await t.invoke('runs:list', undefined)).toMatchObject({ ok: false, error: { code: 'NETWORK' } });
    expect(seen).toEqual([false, true, false]);
    // With a socket, a call that answers does not say the connection is back: the socket does.
    failing = false;
    expect((await t.invoke('runs:list', undefined)).ok).toBe(true);
    expect(seen).toEqual([false, true, false]);
  });

  it('without a socket, a call that answers again reports the connection back', async () => {
    let failing = true;
    const fetchImpl = (async () => {
      if (failing) throw new TypeError('fetch failed');
      return new Response(JSON.stringify({ ok: true, value: [] }));
    }) as unknown as typeof fetch;
    const t = createHttpTransport({ origin: 'http://h', token: 'T', fetchImpl });
    const seen: boolean[] = [];
    t.onConnection!((up) => void seen.push(up));
    await t.invoke('runs:list', undefined);
    failing = false;
    await t.invoke('runs:list', undefined);
    expect(seen).toEqual([false, true]);
  });

  it('reconnects a closed event socket, waiting twice as long each time up to 5 s, and from the start once one opens', () => {
    vi.useFakeTimers();
    const { opened, WebSocketImpl } = fakeSockets();
    const t = createHttpTransport({ origin: 'http://h', token: 'T', WebSocketImpl });
    const got: unknown[] = [];
    t.on('runs:onDidDelete', (p) => void got.push(p));
    const close = () => opened.at(-1)!.onclose!();
    /** Closes the newest socket, then returns how many ms until the next one opens. */
    const delayAfterClose = () => {
      const n = opened.length;
      close();
      let ms = 0;
      while (opened.length === n && ms < 60_000) {
        vi.advanceTimersByTime(50);
        ms += 50;
      }
      return ms;
    };
    expect([delayAfterClose(), delayAfterClose(), delayAfterClose()]).toEqual([250, 500, 1000]);
    for (let i = 0; i < 5; i++) delayAfterClose();
    expect(delayAfterClose()).toBe(5000);
    opened.at(-1)!.onopen!();
    expect(delayAfterClose()).toBe(250);
    // Listeners carry over to the new socket.
    (opened.at(-1) as unknown as { message(d: unknown): void }).message(JSON.stringify({ event: 'runs:onDidDelete', payload: { runId: 'r' } }));
    expect(got).toEqual([{ runId: 'r' }]);
  });
});

describe('createPreloadTransport: the edges', () => {
  it('turns a thrown or null reply into an INTERNAL result, and forwards subscriptions', async () => {
    const subscribed: string[] = [];
    const t = createPreloadTransport({
      invoke: async (ch) => {
        if (ch === 'runs:list') throw new Error('ipc gone');
        return null;
      },
      on: (event, listener) => {
        subscribed.push(event);
        listener({ runId: 'x' });
        return () => void subscribed.push(`off ${event}`);
      },
    });
    expect(await t.invoke('runs:list', undefined)).toEqual({ ok: false, error: { code: 'INTERNAL', message: 'runs:list: ipc gone' } });
    expect(await t.invoke('system:check', undefined)).toEqual({ ok: false, error: { code: 'INTERNAL', message: 'system:check: malformed reply' } });
    const got: unknown[] = [];
    t.on('runs:onDidDelete', (p) => void got.push(p))();
    expect(got).toEqual([{ runId: 'x' }]);
    expect(subscribed).toEqual(['runs:onDidDelete', 'off runs:onDidDelete']);
  });
});

describe('the transport the renderer picks', () => {
  afterEach(() => vi.unstubAllGlobals());

  it("uses the desktop app's bridge when there is one, and keeps the transport it picked", async () => {
    vi.resetModules();
    const seen: unknown[] = [];
    vi.stubGlobal('api', { invoke: async (ch: string, p: unknown) => (seen.push([ch, p]), { ok: true, value: 1 }), on: () => () => {} });
    const fresh = await import('../../../renderer/src/api.js');
    expect(fresh.transportKind()).toBe('electron');
    vi.unstubAllGlobals();
    expect(await fresh.call('runs:get', { runId: 'r' })).toEqual({ ok: true, value: 1 });
    expect(seen).toEqual([['runs:get', { runId: 'r' }]]);
    expect(fresh.downloader()).toBeNull();
  });

  it("otherwise the page's own server, with the token from the URL fragment", async () => {
    vi.resetModules();
    const seen: { url: string; init: RequestInit }[] = [];
    vi.stubGlobal('location', { hash: '#token=tok-1', origin: 'http://127.0.0.1:7' });
    vi.stubGlobal('fetch', async (url: string, init: RequestInit) => {
      seen.push({ url, init });
      return new Response('{"ok":true,"value":[]}');
    });
    const fresh = await import('../../../renderer/src/api.js');
    expect(fresh.transportKind()).toBe('http');
    expect(await fresh.call('runs:list', undefined)).toEqual({ ok: true, value: [] });
    expect(seen[0]?.url).toBe('http://127.0.0.1:7/api/runs/list');
    expect(seen[0]?.init.headers).toMatchObject({ authorization: 'Bearer tok-1' });
    expect(fresh.downloader()).not.toBeNull();
  });
});
