import path from 'node:path';

import type { IpcMain, IpcMainInvokeEvent, WebContents } from 'electron';
import { describe, expect, it } from 'vitest';

import { CHANNELS } from '../../../../../electron/common/ipc-validators.js';
import { createEventFanout, registerIpc } from '../../../../../electron/main/ipc/register-ipc.js';
import { createFakeApi } from '../../../../e2e/fake-api.js';

const shared = path.resolve(import.meta.dirname, '..', '..', '..', '..', '..', '..', 'shared');
type Handler = (event: IpcMainInvokeEvent, payload: unknown) => unknown;

function fakeIpcMain() {
  const handlers = new Map<string, Handler>();
  const ipc = {
    handle: (channel: string, h: Handler) => {
      if (handlers.has(channel)) throw new Error(`second handler for ${channel}`);
      handlers.set(channel, h);
    },
    removeHandler: (channel: string) => handlers.delete(channel),
  };
  return { ipc: ipc as unknown as IpcMain, handlers };
}

const eventFrom = (url: string, parent: object | null = null) => ({ senderFrame: { url, parent } }) as unknown as IpcMainInvokeEvent;

describe('registerIpc', () => {
  it('registers exactly the contract channels and removes them again', () => {
    const { ipc, handlers } = fakeIpcMain();
    const off = registerIpc(ipc, createFakeApi({ sharedDir: shared }).api, () => true);
    expect([...handlers.keys()].sort()).toEqual([...CHANNELS].sort());
    off();
    expect(handlers.size).toBe(0);
  });

  it('answers trusted frames and refuses others', async () => {
    const { ipc, handlers } = fakeIpcMain();
    registerIpc(ipc, createFakeApi({ sharedDir: shared }).api, (url) => url.startsWith('file:///app/'));
    const check = handlers.get('system:check')!;
    const good = (await check(eventFrom('file:///app/index.html'), undefined)) as { ok: boolean };
    expect(good.ok).toBe(true);
    const bad = (await check(eventFrom('https://evil.example/'), undefined)) as { ok: boolean; error: { code: string } };
    expect(bad).toMatchObject({ ok: false, error: { code: 'PERMISSION' } });
  });

  it('refuses a subframe even at a trusted URL, and a request with no frame', async () => {
    const { ipc, handlers } = fakeIpcMain();
    registerIpc(ipc, createFakeApi({ sharedDir: shared }).api, () => true);
    const check = handlers.get('system:check')!;
    const sub = await check(eventFrom('file:///app/index.html', { url: 'file:///app/index.html' }), undefined);
    expect(sub).toMatchObject({ ok: false, error: { code: 'PERMISSION', message: 'system:check: request from a subframe (file:///app/index.html)' } });
    expect(await check({ senderFrame: null } as unknown as IpcMainInvokeEvent, undefined)).toMatchObject({ ok: false, error: { code: 'PERMISSION' } });
  });

  it('validates payloads arriving over IPC', async () => {
    const { ipc, handlers } = fakeIpcMain();
    registerIpc(ipc, createFakeApi({ sharedDir: shared }).api, () => true);
    const r = (await handlers.get('runs:get')!(eventFrom('file:///x'), { runId: 5 })) as { ok: boolean; error?: { message: string } };
    expect(r.ok).toBe(false);
    expect(r.error?.message).toBe('runs:get: request.runId must be a string');
  });
});

describe('createEventFanout', () => {
  it('sends to live windows only', () => {
    const sent: string[] = [];
    const wc = (name: string, destroyed: boolean) =>
      ({ isDestroyed: () => destroyed, send: (ch: string) => sent.push(`${name}:${ch}`) }) as unknown as WebContents;
    const emit = createEventFanout(() => [wc('a', false), wc('b', true)]);
    emit('runs:onDidProgress', { runId: 'r', status: 'running', done: 1, total: 2, tokensPerSecond: 1, etaSeconds: 1, elapsedSeconds: 1 });
    expect(sent).toEqual(['a:runs:onDidProgress']);
  });
});
