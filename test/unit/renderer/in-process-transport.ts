import path from 'node:path';

import type { EmitEvent, EventName, Invoke } from '../../../electron/common/ipc-contract.js';
import { dispatchRequest } from '../../../electron/main/ipc/dispatch-request.js';
import type { Transport } from '../../../renderer/src/api.js';
import { setTransport } from '../../../renderer/src/api.js';
import { createFakeApi } from '../../e2e/fake-api.js';

export const shared = path.resolve(import.meta.dirname, '..', '..', '..', '..', 'shared');

/** The fake services behind a transport that round-trips payloads through JSON like the real ones. */
export function inProcessTransport(tickMs = 5, pickPaths?: Readonly<Record<string, string>>) {
  const fake = createFakeApi({ sharedDir: shared, tickMs, ...(pickPaths ? { pickPaths } : {}) });
  const events = eventListeners((p) => JSON.parse(JSON.stringify(p)));
  const calls: { channel: string; payload: unknown }[] = [];
  const emit: EmitEvent = events.emit;
  fake.setEmit(emit);
  const transport: Transport = {
    kind: 'http',
    invoke: (async (channel: string, payload: unknown) => {
      calls.push({ channel, payload });
      const wire = payload === undefined ? undefined : JSON.parse(JSON.stringify(payload));
      return JSON.parse(JSON.stringify(await dispatchRequest(fake.api, channel, wire)));
    }) as Invoke,
    on: events.on,
    download: null,
  };
  return { transport, calls, api: fake.api };
}

/** Listeners by event name: `on` as a Transport subscribes, `emit` calls them with `copy(payload)`. */
export function eventListeners(copy: (payload: unknown) => unknown = (p) => p) {
  const listeners = new Map<EventName, Set<(p: unknown) => void>>();
  const on: Transport['on'] = (event, listener) => {
    const set = listeners.get(event) ?? new Set();
    listeners.set(event, set);
    set.add(listener as (p: unknown) => void);
    return () => void set.delete(listener as (p: unknown) => void);
  };
  const emit = (event: EventName, payload: unknown) => {
    for (const l of listeners.get(event) ?? []) l(copy(payload));
  };
  const listening = () => [...listeners.values()].reduce((n, s) => n + s.size, 0);
  return { on, emit, listening };
}

/** Installs a transport whose replies `reply` scripts (none: an INTERNAL error); every call is recorded. */
export function scripted(reply: (channel: string, payload: unknown) => unknown) {
  const calls: { channel: string; payload: unknown }[] = [];
  setTransport({
    kind: 'http',
    invoke: (async (channel: string, payload: unknown) => {
      calls.push({ channel, payload });
      return (await reply(channel, payload)) ?? { ok: false, error: { code: 'INTERNAL', message: `${channel}: not scripted` } };
    }) as never,
    on: () => () => {},
    download: null,
  });
  return calls;
}

/** Installs `t`'s transport with each reply on `held` (as read when asked) held until released; the releases. */
export function holdReplies(t: ReturnType<typeof inProcessTransport>, held: string): (() => void)[] {
  const releases: (() => void)[] = [];
  setTransport({
    ...t.transport,
    invoke: (async (channel: string, payload: unknown) => {
      const reply = await (t.transport.invoke as (c: string, p: unknown) => Promise<unknown>)(channel, payload);
      if (channel === held) await new Promise<void>((release) => releases.push(release));
      return reply;
    }) as typeof t.transport.invoke,
  });
  return releases;
}
