import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';

import { servePageCsp } from '../../../../../electron/main/serve/content-security-policy.js';
import { startServeServer, type ServeHandle } from '../../../../../electron/main/serve/serve-server.js';
import { createFakeApi } from '../../../../e2e/fake-api.js';

const shared = path.resolve(import.meta.dirname, '..', '..', '..', '..', '..', '..', 'shared');

/** Raw request so tests can forge Host/Origin headers, which fetch does not allow. */
function request(
  port: number,
  opts: { method?: string; path: string; headers?: Record<string, string>; body?: string },
): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      { host: '127.0.0.1', port, method: opts.method ?? 'GET', path: opts.path, headers: { host: `127.0.0.1:${port}`, ...opts.headers } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString() }));
      },
    );
    req.on('error', reject);
    req.end(opts.body);
  });
}

describe('startServeServer', () => {
  let dir: string;
  let server: ServeHandle;
  let setEmitDone = false;

  beforeAll(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'horizon-serve-'));
    mkdirSync(path.join(dir, 'static', 'assets'), { recursive: true });
    mkdirSync(path.join(dir, 'exports'));
    writeFileSync(path.join(dir, 'static', 'index.html'), '<!doctype html><p>app</p>');
    writeFileSync(path.join(dir, 'static', 'assets', 'a.js'), 'console.log(1)');
    writeFileSync(path.join(dir, 'exports', 'run-1.zip'), 'PK zip');
    writeFileSync(path.join(dir, 'secret.txt'), 'secret');
    // Put there by hand: a link out of the exports folder, a subfolder, a name no header can carry.
    symlinkSync(path.join(dir, 'secret.txt'), path.join(dir, 'exports', 'link.zip'));
    mkdirSync(path.join(dir, 'exports', 'sub'));
    writeFileSync(path.join(dir, 'exports', 'sub', 'inner.zip'), 'PK inner');
    writeFileSync(path.join(dir, 'exports', 'ü.zip'), 'PK umlaut');
    const fake = createFakeApi({ sharedDir: shared });
    server = await startServeServer({
      api: fake.api,
      staticDir: path.join(dir, 'static'),
      downloadDir: path.join(dir, 'exports'),
      token: 'tok-123',
    });
    fake.setEmit(server.emit);
    setEmitDone = true;
  });

  afterAll(async () => {
    await server?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const api = (p: string, body: unknown, headers: Record<string, string> = { authorization: 'Bearer tok-123' }) =>
    request(server.port, { method: 'POST', path: p, headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });

  it('puts the token in the URL fragment of a loopback address', () => {
    expect(setEmitDone).toBe(true);
    expect(server.url).toBe(`http://127.0.0.1:${server.port}/#token=tok-123`);
  });

  it('answers API calls with the service Result', async () => {
    const r = await api('/api/system/check', {});
    expect(r.status).toBe(200);
    expect(JSON.parse(r.body)).toMatchObject({ ok: true, value: { backend: 'cpu' } });
  });

  it('validates payloads', async () => {
    const r = await api('/api/runs/get', { runId: 7 });
    expect(JSON.parse(r.body)).toEqual({ ok: false, error: { code: 'BAD_INPUT', message: 'runs:get: request.runId must be a string' } });
    const unknown = await api('/api/runs/drop', {});
    expect(JSON.parse(unknown.body).error.message).toMatch(/unknown channel 'runs:drop'/);
  });

  it('refuses a missing or wrong token, a foreign Host and a cross-origin call', async () => {
    expect((await api('/api/system/check', {}, {})).status).toBe(401);
    expect((await api('/api/system/check', {}, { authorization: 'Bearer tok-124' })).status).toBe(401);
    expect((await api('/api/system/check', {}, { authorization: 'Bearer tok-123', host: 'evil.example' })).status).toBe(403);
    expect((await api('/api/system/check', {}, { authorization: 'Bearer tok-123', origin: 'http://evil.example' })).status).toBe(403);
    expect((await request(server.port, { path: '/api/system/check', headers: { authorization: 'Bearer tok-123' } })).status).toBe(405);
  });

  it('rejects a body that is not JSON', async () => {
    const r = await request(server.port, {
      method: 'POST',
      path: '/api/runs/list',
      headers: { authorization: 'Bearer tok-123' },
      body: '{not json',
    });
    expect(r.status).toBe(400);
  });

  it('serves the renderer with the CSP, falls back to index.html, and never leaves the static folder', async () => {
    const index = await request(server.port, { path: '/' });
    expect(index.status).toBe(200);
    expect(index.headers['content-security-policy']).toBe(servePageCsp(server.port));
    // Only this server's own event socket, not any local port.
    expect(index.headers['content-security-policy']).toContain(`connect-src 'self' ws://127.0.0.1:${server.port} ws://localhost:${server.port};`);
    expect(index.body).toContain('app');
    expect((await request(server.port, { path: '/assets/a.js' })).headers['content-type']).toMatch(/javascript/);
    expect((await request(server.port, { path: '/history' })).body).toContain('app');
    const escape = await request(server.port, { path: '/../secret.txt' });
    expect(escape.body).not.toContain('secret');
    const encoded = await request(server.port, { path: '/%2e%2e/secret.txt' });
    expect(encoded.body).not.toContain('secret');
  });

  it('downloads exports only with the token in the Authorization header', async () => {
    const auth = { authorization: 'Bearer tok-123' };
    expect((await request(server.port, { path: '/files/run-1.zip' })).status).toBe(401);
    // A token in the URL (logs, history) is not accepted.
    expect((await request(server.port, { path: '/files/run-1.zip?token=tok-123' })).status).toBe(401);
    expect((await request(server.port, { path: '/files/run-1.zip', headers: { authorization: 'Bearer tok-124' } })).status).toBe(401);
    const ok = await request(server.port, { path: '/files/run-1.zip', headers: auth });
    expect(ok.status).toBe(200);
    expect(ok.headers['content-disposition']).toContain('run-1.zip');
    expect((await request(server.port, { path: '/files/%2e%2e%2fsecret.txt', headers: auth })).status).toBe(404);
    for (const name of ['link.zip', 'sub/inner.zip', 'sub%2finner.zip', '%C3%BC.zip', 'run-1.txt']) {
      const r = await request(server.port, { path: `/files/${name}`, headers: auth });
      expect([name, r.status, r.body]).toEqual([name, 404, 'not found']);
    }
  });

  it('answers a malformed percent-encoding with 400, for a download and for a page', async () => {
    const auth = { authorization: 'Bearer tok-123' };
    const file = await request(server.port, { path: '/files/%E0%A4%A', headers: auth });
    expect([file.status, file.body]).toEqual([400, 'bad request: malformed percent-encoding in the path']);
    expect((await request(server.port, { path: '/%E0%A4%A' })).status).toBe(400);
    expect((await request(server.port, { path: '/files/%E0%A4%A' })).status).toBe(401);
  });

  it('pushes events over the WebSocket to token holders only', async () => {
    const attempt = (url: string, protocols?: string[]): Promise<string> =>
      new Promise<string>((resolve) => {
        const s = new WebSocket(url, protocols);
        s.on('open', () => {
          resolve(`open ${s.protocol}`);
          s.close();
        });
        s.on('error', () => resolve('error'));
      });
    const events = `ws://127.0.0.1:${server.port}/events`;
    expect(await attempt(events, ['horizon-events', 'token.nope'])).toBe('error');
    expect(await attempt(events)).toBe('error');
    expect(await attempt(`${events}?token=tok-123`)).toBe('error');
    expect(await attempt(events, ['token.tok-123'])).toBe('error');
    expect(await attempt(events, ['horizon-events', 'token.tok-123'])).toBe('open horizon-events');

    const ws = new WebSocket(events, ['horizon-events', 'token.tok-123']);
    await new Promise((resolve) => ws.on('open', resolve));
    const got = new Promise<{ event: string; payload: { jobId: string } }>((resolve) =>
      ws.on('message', (data) => resolve(JSON.parse(String(data)))),
    );
    await api('/api/models/prepare', { repo: 'org/model', revision: 'main' });
    const msg = await got;
    expect(msg.event).toBe('models:onDidProgress');
    expect(msg.payload.jobId).toBe('prep-1');
    ws.close();
  });
});
