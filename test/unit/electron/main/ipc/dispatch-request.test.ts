import path from 'node:path';

import { describe, expect, it } from 'vitest';

import type { Api } from '../../../../../electron/common/ipc-contract.js';
import { CHANNELS } from '../../../../../electron/common/ipc-validators.js';
import { ok } from '../../../../../electron/common/result.js';
import { dispatchRequest } from '../../../../../electron/main/ipc/dispatch-request.js';
import { createFakeApi } from '../../../../e2e/fake-api.js';

const shared = path.resolve(import.meta.dirname, '..', '..', '..', '..', '..', '..', 'shared');

describe('dispatchRequest', () => {
  it('delegates a valid request to its service', async () => {
    const { api } = createFakeApi({ sharedDir: shared });
    const r = await dispatchRequest(api, 'system:check', undefined);
    expect(r.ok && (r.value as { backend: string }).backend).toBe('cpu');
  });

  it('rejects an invalid payload before the service sees it', async () => {
    let called = false;
    const { api } = createFakeApi({ sharedDir: shared });
    const spy: Api = { ...api, runs: { ...api.runs, start: async (req) => ((called = true), api.runs.start(req)) } };
    const r = await dispatchRequest(spy, 'runs:start', { modelId: 'm', limit: -3 });
    expect(r).toEqual({ ok: false, error: { code: 'BAD_INPUT', message: 'runs:start: request.limit must be between 1 and 541' } });
    expect(called).toBe(false);
  });

  it('rejects unknown channels and prototype keys', async () => {
    const { api } = createFakeApi({ sharedDir: shared });
    for (const channel of ['runs:drop', 'constructor', '__proto__:x', 42]) {
      const r = await dispatchRequest(api, channel, {});
      expect(r.ok).toBe(false);
      if (!r.ok) expect(r.error.message).toMatch(/^unknown channel/);
    }
  });

  it('turns a throwing service into an INTERNAL result naming the channel', async () => {
    const { api } = createFakeApi({ sharedDir: shared });
    const broken: Api = {
      ...api,
      runs: {
        ...api.runs,
        list: async () => {
          throw new Error('database is locked');
        },
      },
    };
    expect(await dispatchRequest(broken, 'runs:list', undefined)).toEqual({
      ok: false,
      error: { code: 'INTERNAL', message: 'runs:list: database is locked' },
    });
  });

  it('every channel reaches a method of the fake implementation', async () => {
    const { api } = createFakeApi({ sharedDir: shared });
    for (const channel of CHANNELS) {
      const [service, method] = channel.split(':') as [keyof Api, string];
      expect(typeof (api[service] as unknown as Record<string, unknown>)[method], channel).toBe('function');
    }
    const calls: string[] = [];
    const system = { ...api.system, check: async () => (calls.push('check'), ok(null as never)) };
    await dispatchRequest({ ...api, system }, 'system:check', {});
    expect(calls).toEqual(['check']);
  });
});
