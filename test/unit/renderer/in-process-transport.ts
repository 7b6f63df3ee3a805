import path from 'node:path';

import type { EmitEvent, EventName, Invoke } from '../../../electron/common/ipc-contract.js';
import { dispatchRequest } from '../../../electron/main/ipc/dispatch-request.js';
import type { Transport } from '../../../renderer/src/api.js';
import { createFakeApi } from '../../e2e/fake-api.js';

export const shared = path.resolve(import.meta.dirname, '..', '..', '..', '..', 'shared');

/** The fake services behind a transport that round-trips payloads through JSON like the real ones. */
export function inProcessTransport(tickMs = 5, pickPaths?: Readonly<Record<string, string>>) {
  const fake = createFakeApi({ sharedDir: shared, tickMs, ...(pickPaths ? { pickPaths } : {}) });
  const listeners = new Map<EventName, Set<(p: unknown) => void>>();
  const calls: { channel: string; payload: unknown }[] = [];
  const emit: EmitEvent = (event, payload) => {
    for (const l of listeners.get(event) ?? []) l(JSON.parse(JSON.stringify(payload)));
  };
  fake.setEmit(emit);
  const transport: Transport = {
    kind: 'http',
    invoke: (async (channel: string, payload: unknown) => {
      calls.push({ channel, payload });
      const wire = payload === undefined ? undefined : JSON.parse(JSON.stringify(payload));
      return JSON.parse(JSON.stringify(await dispatchRequest(fake.api, channel, wire)));
    }) as Invoke,
    on: (event, listener) => {
      const set = listeners.get(event) ?? new Set();
      listeners.set(event, set);
      set.add(listener as (p: unknown) => void);
      return () => void set.delete(listener as (p: unknown) => void);
    },
    download: null,
  };
  return { transport, calls, api: fake.api };
}
