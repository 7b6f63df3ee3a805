import { randomBytes, timingSafeEqual } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { lstat, stat } from 'node:fs/promises';
import { pipeline } from 'node:stream';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';

import { WebSocketServer, type WebSocket } from 'ws';

import type { Api, EmitEvent } from '../../common/ipc-contract.js';
import { err, type Result } from '../../common/result.js';
import { contentTypeFor, insideFolder } from '../../node/static-files.js';
import { dispatchRequest } from '../ipc/dispatch-request.js';
import { servePageCsp } from './content-security-policy.js';

export interface ServeOptions {
  readonly api: Api;
  /** Folder with the built renderer (index.html + assets). */
  readonly staticDir: string;
  /** 0 picks a free port. */
  readonly port?: number;
  /** Random when omitted; every API call and the event socket must present it. */
  readonly token?: string;
  /** Folder whose files `GET /files/<name>` (with the token) may download (result ZIPs); none when omitted. */
  readonly downloadDir?: string;
}

export interface ServeHandle {
  readonly port: number;
  readonly token: string;
  /** The address to open: the token travels in the fragment, which browsers never send to servers. */
  readonly url: string;
  /** Pushes an event to every connected UI. */
  readonly emit: EmitEvent;
  close(): Promise<void>;
}

const MAX_BODY_BYTES = 1 << 20;

function sameToken(given: string | null | undefined, token: string): boolean {
  if (!given) return false;
  const a = Buffer.from(given);
  const b = Buffer.from(token);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** The token of an `Authorization: Bearer <token>` header. */
function bearer(req: http.IncomingMessage): string | null {
  const auth = req.headers.authorization;
  return auth?.startsWith('Bearer ') ? auth.slice(7) : null;
}

/**
 * The event socket's subprotocols: browsers cannot set headers on a WebSocket, so the token travels as a second
 * offered subprotocol (`token.<token>`; base64url is a valid protocol token) rather than in the URL, where it would
 * reach logs and history. The server answers with EVENTS_PROTOCOL only.
 */
export const EVENTS_PROTOCOL = 'horizon-events';
const TOKEN_PROTOCOL_PREFIX = 'token.';

function send(res: http.ServerResponse, status: number, body: string, type = 'application/json'): void {
  res.writeHead(status, {
    'content-type': type,
    'cache-control': 'no-store',
    'x-content-type-options': 'nosniff',
  });
  res.end(body);
}

function sendResult(res: http.ServerResponse, status: number, result: Result<unknown>): void {
  send(res, status, JSON.stringify(result));
}

async function readBody(req: http.IncomingMessage): Promise<string | null> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) return null;
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** The names a download may have: the result ZIPs the app writes (run ids are ASCII), so a header can carry them. */
const DOWNLOAD_NAME = /^[\w@-][\w.@-]*\.zip$/;

/** The decoded path, or null for a malformed percent-encoding (a client error, not a server one). */
function decodePath(p: string): string | null {
  try {
    return decodeURIComponent(p);
  } catch {
    return null;
  }
}

async function sendFile(res: http.ServerResponse, file: string, headers: Record<string, string>): Promise<boolean> {
  const info = await stat(file).catch(() => null);
  if (!info?.isFile()) return false;
  res.writeHead(200, {
    'content-type': contentTypeFor(file),
    'content-length': String(info.size),
    'x-content-type-options': 'nosniff',
    ...headers,
  });
  // A read error (the file removed or unreadable after the stat) ends this response, never the server.
  pipeline(createReadStream(file), res, () => {});
  return true;
}

/**
 * `horizon serve`: the contract's services over loopback HTTP (`POST /api/<service>/<method>`, JSON in, Result out)
 * and a WebSocket (`/events`) for events, plus the built renderer. Only 127.0.0.1 is bound; the Host header must
 * name it (against DNS rebinding) and every call carries the random token.
 */
export async function startServeServer(opts: ServeOptions): Promise<ServeHandle> {
  const token = opts.token ?? randomBytes(24).toString('base64url');
  const staticDir = path.resolve(opts.staticDir);
  const downloadDir = opts.downloadDir ? path.resolve(opts.downloadDir) : null;
  const sockets = new Set<WebSocket>();
  let port = 0;

  const hostOk = (host: string | undefined) => host === `127.0.0.1:${port}` || host === `localhost:${port}`;
  const originOk = (origin: string | undefined) =>
    origin === undefined || origin === `http://127.0.0.1:${port}` || origin === `http://localhost:${port}`;

  const server = http.createServer((req, res) => {
    void handle(req, res).catch((e: unknown) => {
      if (!res.headersSent) sendResult(res, 500, err('INTERNAL', `serve: ${e instanceof Error ? e.message : String(e)}`));
      else res.destroy();
    });
  });

  async function handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    if (!hostOk(req.headers.host)) return send(res, 403, 'forbidden host', 'text/plain');
    const url = new URL(req.url ?? '/', `http://127.0.0.1:${port}`);

    if (url.pathname.startsWith('/api/')) {
      if (req.method !== 'POST') return sendResult(res, 405, err('BAD_INPUT', 'serve: API calls use POST'));
      if (!originOk(req.headers.origin)) return sendResult(res, 403, err('PERMISSION', 'serve: cross-origin request'));
      if (!sameToken(bearer(req), token)) {
        return sendResult(res, 401, err('PERMISSION', 'serve: missing or wrong token (open the URL `horizon serve` printed, which carries it; a restarted serve has a new one)'));
      }
      const [service = '', method = ''] = url.pathname.slice(5).split('/');
      const body = await readBody(req);
      if (body === null) return sendResult(res, 413, err('BAD_INPUT', 'serve: request body over 1 MiB'));
      let payload: unknown = undefined;
      if (body.trim()) {
        try {
          payload = JSON.parse(body);
        } catch {
          return sendResult(res, 400, err('BAD_INPUT', `serve: ${service}:${method}: body is not JSON`));
        }
      }
      const result = await dispatchRequest(opts.api, `${service}:${method}`, payload);
      return sendResult(res, 200, result);
    }

    if (req.method !== 'GET' && req.method !== 'HEAD') return send(res, 405, 'method not allowed', 'text/plain');

    if (url.pathname.startsWith('/files/')) {
      if (!downloadDir || !sameToken(bearer(req), token)) return send(res, 401, 'unauthorized', 'text/plain');
      // Only a result ZIP directly in the exports folder, and a real file there: never a subfolder or a link out.
      const name = decodePath(url.pathname.slice(7));
      if (name === null) return send(res, 400, 'bad request: malformed percent-encoding in the path', 'text/plain');
      const file = DOWNLOAD_NAME.test(name) ? path.join(downloadDir, name) : null;
      const info = file ? await lstat(file).catch(() => null) : null;
      if (file && info?.isFile() && (await sendFile(res, file, { 'content-disposition': `attachment; filename="${name}"` }))) return;
      return send(res, 404, 'not found', 'text/plain');
    }

    const pageHeaders = {
      'content-security-policy': servePageCsp(port),
      'x-frame-options': 'DENY',
      'referrer-policy': 'no-referrer',
      'cache-control': 'no-cache',
    };
    const rel = url.pathname === '/' ? 'index.html' : decodePath(url.pathname);
    if (rel === null) return send(res, 400, 'bad request: malformed percent-encoding in the path', 'text/plain');
    const file = insideFolder(staticDir, rel);
    if (file && (await sendFile(res, file, pageHeaders))) return;
    if (!path.extname(rel) && (await sendFile(res, path.join(staticDir, 'index.html'), pageHeaders))) return;
    return send(res, 404, 'not found', 'text/plain');
  }

  const wss = new WebSocketServer({
    noServer: true,
    maxPayload: 4096,
    handleProtocols: (offered) => (offered.has(EVENTS_PROTOCOL) ? EVENTS_PROTOCOL : false),
  });
  server.on('upgrade', (req, socket, head) => {
    const url = new URL(req.url ?? '/', `http://127.0.0.1:${port}`);
    const offered = String(req.headers['sec-websocket-protocol'] ?? '').split(',').map((p) => p.trim());
    const given = offered.find((p) => p.startsWith(TOKEN_PROTOCOL_PREFIX))?.slice(TOKEN_PROTOCOL_PREFIX.length);
    if (
      url.pathname !== '/events' ||
      !hostOk(req.headers.host) ||
      !originOk(req.headers.origin) ||
      !offered.includes(EVENTS_PROTOCOL) ||
      !sameToken(given, token)
    ) {
      socket.write('HTTP/1.1 401 Unauthorized\r\nConnection: close\r\n\r\n');
      socket.destroy();
      return;
    }
    wss.handleUpgrade(req, socket, head, (ws) => {
      sockets.add(ws);
      ws.on('close', () => sockets.delete(ws));
      ws.on('error', () => sockets.delete(ws));
    });
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, '127.0.0.1', () => resolve());
  });
  port = (server.address() as AddressInfo).port;

  const emit: EmitEvent = (event, payload) => {
    const message = JSON.stringify({ event, payload });
    for (const ws of sockets) if (ws.readyState === ws.OPEN) ws.send(message);
  };

  return {
    port,
    token,
    url: `http://127.0.0.1:${port}/#token=${token}`,
    emit,
    close: async () => {
      for (const ws of sockets) ws.terminate();
      wss.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
