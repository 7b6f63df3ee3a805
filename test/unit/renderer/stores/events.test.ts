import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';

import { EVENT_NAMES, type RunDetail, type RunProgress } from '../../../../electron/common/ipc-contract.js';
import { setTransport } from '../../../../renderer/src/api.js';
import { connectEvents } from '../../../../renderer/src/stores/events.js';
import { useResults } from '../../../../renderer/src/stores/results.js';
import { useRuns } from '../../../../renderer/src/stores/runs.js';
import { eventListeners } from '../in-process-transport.js';

/** A transport that records calls (answering each with an error) and lets the test emit events to its listeners. */
function eventTransport() {
  const calls: { channel: string; payload: unknown }[] = [];
  const { on, emit, listening } = eventListeners();
  setTransport({
    kind: 'http',
    invoke: (async (channel: string, payload: unknown) => {
      calls.push({ channel, payload });
      return { ok: false, error: { code: 'INTERNAL', message: `${channel}: not here` } };
    }) as never,
    on,
    download: null,
  });
  return { calls, emit, listening };
}

const progress = (runId: string, done: number): RunProgress => ({
  runId, status: 'running', done, total: 10, tokensPerSecond: 1, etaSeconds: 1, elapsedSeconds: 1,
});

describe('service events', () => {
  beforeEach(() => {
    vi.useFakeTimers();
    useRuns.setState({ run: null, progress: null, stream: [], error: null, busy: false });
    useResults.setState({ runId: null });
  });
  afterEach(() => vi.useRealTimers());

  it('refreshes the run list at most twice a second while a run progresses, and the results only of the run they show', () => {
    const { calls, emit } = eventTransport();
    const off = connectEvents();
    const channels = () => calls.map((c) => c.channel);
    useResults.setState({ runId: 'shown' });
    emit('runs:onDidProgress', progress('other', 1));
    emit('runs:onDidProgress', progress('other', 2));
    vi.advanceTimersByTime(499);
    expect(channels()).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(channels()).toEqual(['runs:list']);
    emit('runs:onDidProgress', progress('shown', 1));
    emit('runs:onDidProgress', progress('shown', 2));
    vi.advanceTimersByTime(500);
    expect(channels().sort()).toEqual(['runs:get', 'runs:list', 'runs:list', 'runs:responses']);
    expect(calls.find((c) => c.channel === 'runs:get')?.payload).toEqual({ runId: 'shown' });
    off();
  });

  it('reads the run list again when a run is imported elsewhere', () => {
    const { calls, emit } = eventTransport();
    const off = connectEvents();
    emit('runs:onDidImport', { runId: 'from-a-zip' });
    expect(calls.map((c) => c.channel)).toEqual(['runs:list']);
    off();
  });

  it('shows a label given elsewhere on the open run without asking the services again', () => {
    const { calls, emit } = eventTransport();
    const off = connectEvents();
    const detail = { id: 'shown', label: null } as unknown as RunDetail;
    useResults.setState({ runId: 'shown', detail });
    emit('runs:onDidLabel', { runId: 'other', label: 'elsewhere' });
    expect(useResults.getState().detail).toBe(detail);
    emit('runs:onDidLabel', { runId: 'shown', label: 'baseline' });
    expect(useResults.getState().detail).toEqual({ id: 'shown', label: 'baseline' });
    expect(calls).toEqual([]);
    off();
  });

  it('reads the campaign list again when a campaign is imported elsewhere', () => {
    const { calls, emit } = eventTransport();
    const off = connectEvents();
    emit('perf:onDidImport', { campaignId: 'from-a-zip' });
    expect(calls.map((c) => c.channel)).toEqual(['perf:list']);
    off();
  });

  it('stops listening, and drops a refresh still waiting, once disconnected', () => {
    const { calls, emit, listening } = eventTransport();
    const off = connectEvents();
    // Every event the services publish has its listener.
    expect(listening()).toBe(EVENT_NAMES.length);
    emit('runs:onDidProgress', progress('r', 1));
    off();
    expect(listening()).toBe(0);
    vi.advanceTimersByTime(1000);
    emit('runs:onDidProgress', progress('r', 2));
    vi.advanceTimersByTime(1000);
    expect(calls).toEqual([]);
  });
});
