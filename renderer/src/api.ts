/**
 * The renderer's only door to the services: `window.api` (the Electron preload) when present, else the
 * `horizon serve` HTTP + WebSocket transport with the token taken from the URL fragment.
 */
import type { Channel, EventMap, EventName, Invoke, RequestOf, ResponseOf } from '../../electron/common/ipc-contract.js';
import { err, type Result } from '../../electron/common/result.js';

/** What the preload exposes on `window.api`. */
export interface PreloadApi {
  invoke(channel: string, payload: unknown): Promise<unknown>;
  on(event: string, listener: (payload: unknown) => void): () => void;
}

export interface Transport {
  readonly kind: 'electron' | 'http';
  readonly invoke: Invoke;
  on<E extends EventName>(event: E, listener: (payload: EventMap[E]) => void): () => void;
  /**
   * Saves a file of the export folder through the browser (the token goes in a header, not a link); null in
   * Electron, where the files are local.
   */
  readonly download: ((filePath: string) => Promise<Result<void>>) | null;
  /**
   * Reports whether the services can be reached: false once the event socket closes or a call gets no answer, true
   * once the socket is open again. Absent in Electron, where the window lives and dies with the main process.
   */
  readonly onConnection?: (listener: (up: boolean) => void) => () => void;
}

declare global {
  interface Window {
    api?: PreloadApi;
  }
}

type Listeners = Map<EventName, Set<(payload: unknown) => void>>;

function isResult(value: unknown): value is Result<unknown> {
  return typeof value === 'object' && value !== null && typeof (value as { ok?: unknown }).ok === 'boolean';
}

export function createPreloadTransport(bridge: PreloadApi): Transport {
  return {
    kind: 'electron',
    invoke: (async (channel: Channel, payload: unknown) => {
      try {
        const value = await bridge.invoke(channel, payload);
        return isResult(value) ? value : err('INTERNAL', `${channel}: malformed reply`);
      } catch (e) {
        return err('INTERNAL', `${channel}: ${e instanceof Error ? e.message : String(e)}`);
      }
    }) as Invoke,
    on: (event, listener) => bridge.on(event, listener as (payload: unknown) => void),
    download: null,
  };
}

export interface HttpTransportOptions {
  /** E.g. "http://127.0.0.1:5173". */
  readonly origin: string;
  readonly token: string;
  readonly fetchImpl?: typeof fetch;
  /** Omit to skip events (tests). */
  readonly WebSocketImpl?: typeof WebSocket;
  /** Hands a fetched file to the browser as a download (default: a temporary link to an object URL). */
  readonly saveBlob?: (blob: Blob, name: string) => void;
}

/** The event socket's subprotocols (see serve-server.ts): the token rides in the second. */
export function eventProtocols(token: string): string[] {
  return ['horizon-events', `token.${token}`];
}

/** The little of the DOM saveBlobWithLink uses; typed here so Node-side tests type-check this file too. */
interface LinkDocument {
  createElement(tag: 'a'): { href: string; download: string; hidden: boolean; click(): void; remove(): void };
  body: { append(node: unknown): void };
}

function saveBlobWithLink(blob: Blob, name: string): void {
  const document = (globalThis as unknown as { document: LinkDocument }).document;
  const url = URL.createObjectURL(blob);
  const a = document.createElement('a');
  a.href = url;
  a.download = name;
  a.hidden = true;
  document.body.append(a);
  a.click();
  a.remove();
  // Revoked once the click's navigation has taken the blob; revoking at once can cancel the download.
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
}

export function createHttpTransport(opts: HttpTransportOptions): Transport {
  const fetchImpl = opts.fetchImpl ?? fetch.bind(globalThis);
  const listeners: Listeners = new Map();
  const connection = new Set<(up: boolean) => void>();
  let up = true;
  const setUp = (next: boolean): void => {
    if (next === up) return;
    up = next;
    for (const l of connection) l(up);
  };
  let socket: WebSocket | null = null;
  let retryMs = 250;

  function connect(): void {
    const Ws = opts.WebSocketImpl;
    if (!Ws || socket) return;
    const ws = new Ws(`${opts.origin.replace(/^http/, 'ws')}/events`, eventProtocols(opts.token));
    socket = ws;
    ws.onopen = () => {
      retryMs = 250;
      setUp(true);
    };
    ws.onmessage = (msg: MessageEvent) => {
      try {
        const { event, payload } = JSON.parse(String(msg.data)) as { event: EventName; payload: unknown };
        for (const l of listeners.get(event) ?? []) l(payload);
      } catch {
        // A malformed frame is dropped; the next progress event carries the full state again.
      }
    };
    ws.onclose = () => {
      socket = null;
      setUp(false);
      setTimeout(connect, retryMs);
      retryMs = Math.min(retryMs * 2, 5000);
    };
  }

  return {
    kind: 'http',
    invoke: (async (channel: Channel, payload: unknown) => {
      const [service, method] = channel.split(':');
      try {
        const res = await fetchImpl(`${opts.origin}/api/${service}/${method}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${opts.token}` },
          body: payload === undefined ? '' : JSON.stringify(payload),
        });
        const body: unknown = await res.json();
        if (!opts.WebSocketImpl) setUp(true);
        return isResult(body) ? body : err('INTERNAL', `${channel}: HTTP ${res.status} without a result`);
      } catch (e) {
        // The socket tells when the server is back (it retries on its own); without one, a call that answers does.
        setUp(false);
        return err('NETWORK', `${channel}: the local server did not answer (${e instanceof Error ? e.message : String(e)})`);
      }
    }) as Invoke,
    onConnection: (listener) => {
      connection.add(listener);
      return () => {
        connection.delete(listener);
      };
    },
    on: (event, listener) => {
      const set = listeners.get(event) ?? new Set();
      listeners.set(event, set);
      const l = listener as (payload: unknown) => void;
      set.add(l);
      connect();
      return () => {
        set.delete(l);
      };
    },
    download: async (filePath) => {
      const name = filePath.split(/[\\/]/).pop() ?? '';
      try {
        const res = await fetchImpl(`${opts.origin}/files/${encodeURIComponent(name)}`, { headers: { authorization: `Bearer ${opts.token}` } });
        if (res.status === 404) return err('NOT_FOUND', `${name}: not in the data folder's exports/ any more (deleted since it was exported?); export it again`);
        if (!res.ok) return err('PERMISSION', `${name}: the server answered HTTP ${res.status}`);
        (opts.saveBlob ?? saveBlobWithLink)(await res.blob(), name);
        return { ok: true, value: undefined };
      } catch (e) {
        return err('NETWORK', `${name}: the local server did not answer (${e instanceof Error ? e.message : String(e)})`);
      }
    },
  };
}

/** Reads `#token=…` from a location hash. */
export function tokenFromHash(hash: string): string | null {
  return new URLSearchParams(hash.replace(/^#/, '')).get('token');
}

/** The browser globals the transport choice reads; typed here so Node-side tests type-check this file too. */
export interface BrowserGlobals {
  api?: PreloadApi;
  location?: { hash: string; origin: string; pathname: string; search: string };
  history?: { replaceState(data: unknown, unused: string, url?: string): void };
  sessionStorage?: { getItem(key: string): string | null; setItem(key: string, value: string): void };
  WebSocket?: typeof WebSocket;
}

/** Where a `horizon serve` tab keeps its token once it is out of the address bar. */
export const SERVE_TOKEN_KEY = 'horizon-serve-token';

/**
 * The `horizon serve` token: the `#token=…` the server printed, on the first load, is kept in this tab's
 * sessionStorage and taken out of the address bar (where a shared screen, a copied link or the history would show
 * it); a reload of the tab finds it there. '' when neither has one.
 */
export function takeServeToken(g: BrowserGlobals): string {
  const fromHash = tokenFromHash(g.location?.hash ?? '');
  let stored: string | null;
  try {
    if (fromHash) g.sessionStorage?.setItem(SERVE_TOKEN_KEY, fromHash);
    stored = g.sessionStorage?.getItem(SERVE_TOKEN_KEY) ?? null;
  } catch {
    // Storage disabled: the token stays in the address bar, where a reload still finds it.
    return fromHash ?? '';
  }
  if (fromHash && stored === fromHash && g.location && g.history) {
    g.history.replaceState(null, '', `${g.location.pathname}${g.location.search}`);
  }
  return fromHash ?? stored ?? '';
}

function pickTransport(): Transport {
  const g = globalThis as unknown as BrowserGlobals;
  if (g.api) return createPreloadTransport(g.api);
  return createHttpTransport({
    origin: g.location?.origin ?? 'http://127.0.0.1',
    token: takeServeToken(g),
    WebSocketImpl: g.WebSocket,
  });
}

let transport: Transport | null = null;

function current(): Transport {
  transport ??= pickTransport();
  return transport;
}

/** Replaces the transport (tests). */
export function setTransport(next: Transport): void {
  transport = next;
}

/** Calls one contract method. */
export function call<C extends Channel>(channel: C, payload: RequestOf<C>): Promise<Result<ResponseOf<C>>> {
  return current().invoke(channel, payload);
}

/** Subscribes to one contract event; returns the unsubscribe function. */
export function onEvent<E extends EventName>(event: E, listener: (payload: EventMap[E]) => void): () => void {
  return current().on(event, listener);
}

/** Follows whether the services can be reached (always reachable in Electron); returns the unsubscribe function. */
export function onConnection(listener: (up: boolean) => void): () => void {
  return current().onConnection?.(listener) ?? (() => undefined);
}

/** Saves an exported file through the browser; null where files are local (Electron). */
export function downloader(): Transport['download'] {
  return current().download;
}

export function transportKind(): Transport['kind'] {
  return current().kind;
}
