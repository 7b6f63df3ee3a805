import path from 'node:path';

import { beforeEach, describe, expect, it, vi } from 'vitest';

import { setTransport } from '../../../../renderer/src/api.js';
import { connectEvents } from '../../../../renderer/src/stores/events.js';
import { useModels } from '../../../../renderer/src/stores/models.js';
import { parseCount, useRuns } from '../../../../renderer/src/stores/runs.js';
import { inProcessTransport, shared } from '../in-process-transport.js';

async function preparedFake() {
  const t = inProcessTransport(2);
  setTransport(t.transport);
  const off = connectEvents();
  await useModels.getState().prepare();
  await vi.waitFor(() => expect(useModels.getState().job?.status).toBe('done'), { timeout: 5000 });
  await t.api.models.importAssets({ kind: 'ifeval', path: path.join(shared, 'ifeval', 'input_data.jsonl') });
  return { ...t, off };
}

describe('runs store', () => {
  beforeEach(() => {
    useRuns.setState({ run: null, progress: null, stream: [], error: null, busy: false });
    useRuns.getState().setForm({ modelId: '', limit: '', batch: '', maxNewTokens: '1280', expertBudgetGiB: '', cudaDevice: '' });
    useModels.setState({ job: null, models: [] });
  });

  it('parses optional counts', () => {
    expect(parseCount('Prompts', '', 1, 541)).toBeUndefined();
    expect(parseCount('Prompts', ' 10 ', 1, 541)).toBe(10);
    expect(parseCount('Prompts', '0', 1, 541)).toBe('Prompts must be a whole number from 1 to 541.');
    expect(parseCount('Prompts', '1.5', 1, 541)).toMatch(/whole number/);
  });

  it('refuses to start without a model or with bad numbers, without calling the service', async () => {
    const t = inProcessTransport();
    setTransport(t.transport);
    await useRuns.getState().start();
    expect(useRuns.getState().error).toBe('Choose a prepared model first.');
    useRuns.getState().setForm({ modelId: 'm', batch: '100' });
    await useRuns.getState().start();
    expect(useRuns.getState().error).toBe('Batch size must be a whole number from 1 to 64.');
    useRuns.getState().setForm({ batch: '', expertBudgetGiB: '0.1' });
    await useRuns.getState().start();
    expect(useRuns.getState().error).toBe('GPU expert memory must be a number of GiB from 0.25 to 1024, or empty for automatic.');
    useRuns.getState().setForm({ expertBudgetGiB: '', cudaDevice: 'gpu1' });
    await useRuns.getState().start();
    expect(useRuns.getState().error).toBe('GPU must be a whole number from 0 to 63.');
    expect(t.calls.filter((c) => c.channel === 'runs:start')).toEqual([]);
  });

  it('starts a run, follows progress and streamed responses to completion', async () => {
    const { calls, off } = await preparedFake();
    const modelId = useModels.getState().models[0]?.id;
    expect(modelId).toBeTruthy();
    useRuns.getState().setForm({ modelId, limit: '5', batch: '4', maxNewTokens: '16', expertBudgetGiB: '6.5', cudaDevice: '1' });
    await useRuns.getState().start();
    expect(calls.find((c) => c.channel === 'runs:start')?.payload).toEqual({
      modelId, limit: 5, batch: 4, maxNewTokens: 16, expertBudgetMiB: 6656, cudaDevice: 1,
    });
    await vi.waitFor(() => expect(useRuns.getState().run?.status).toBe('completed'), { timeout: 5000 });
    const s = useRuns.getState();
    expect(s.run?.done).toBe(5);
    expect(s.stream.map((r) => r.key)).toEqual([1019, 1012, 1005, 1001, 1000]);
    await vi.waitFor(() => expect(useRuns.getState().run?.accuracies).not.toBeNull(), { timeout: 10_000 });
    off();
  });

  it('keeps the responses and progress that arrive before the start reply', async () => {
    const { transport, off } = await preparedFake();
    let streamed = 0;
    const stopCounting = transport.on('runs:onDidResponse', () => void streamed++);
    // Hold the start reply back until the run has streamed two responses (a busy main process can do that).
    setTransport({
      ...transport,
      invoke: (async (channel: string, payload: unknown) => {
        const reply = await transport.invoke(channel as never, payload as never);
        if (channel === 'runs:start') await vi.waitFor(() => expect(streamed).toBeGreaterThanOrEqual(2), { timeout: 10_000 });
        return reply;
      }) as typeof transport.invoke,
    });
    useRuns.getState().setForm({ modelId: useModels.getState().models[0]!.id, limit: '5', maxNewTokens: '16' });
    await useRuns.getState().start();
    expect(useRuns.getState().stream.length).toBeGreaterThanOrEqual(2);
    await vi.waitFor(() => expect(useRuns.getState().run?.status).toBe('completed'), { timeout: 10_000 });
    expect(useRuns.getState().stream.map((r) => r.key)).toEqual([1019, 1012, 1005, 1001, 1000]);
    stopCounting();
    off();
  });

  it('cancels and resumes', async () => {
    const { off, api } = await preparedFake();
    useRuns.getState().setForm({ modelId: useModels.getState().models[0]!.id, limit: '200' });
    await useRuns.getState().start();
    await vi.waitFor(() => expect(useRuns.getState().run!.done).toBeGreaterThan(0), { timeout: 10_000 });
    await useRuns.getState().cancel();
    expect(useRuns.getState().run?.status).toBe('cancelled');
    const doneAtCancel = useRuns.getState().run!.done;
    const stored = await api.runs.get({ runId: useRuns.getState().run!.id });
    expect(stored.ok && stored.value.done).toBe(doneAtCancel);
    expect(doneAtCancel).toBeLessThan(200);
    await useRuns.getState().resume();
    expect(useRuns.getState().run?.status).toBe('running');
    await vi.waitFor(() => expect(useRuns.getState().run!.done).toBeGreaterThan(doneAtCancel), { timeout: 10_000 });
    await useRuns.getState().cancel();
    off();
  });

  it('sends one start, cancel or resume while another is on its way', async () => {
    const { off, calls } = await preparedFake();
    useRuns.getState().setForm({ modelId: useModels.getState().models[0]!.id, limit: '300' });
    await Promise.all([useRuns.getState().start(), useRuns.getState().start()]);
    await Promise.all([useRuns.getState().cancel(), useRuns.getState().resume()]);
    expect(calls.filter((c) => /^runs:(start|cancel|resume)$/.test(c.channel)).map((c) => c.channel)).toEqual(['runs:start', 'runs:cancel']);
    await Promise.all([useRuns.getState().resume(), useRuns.getState().cancel()]);
    expect(calls.filter((c) => /^runs:(cancel|resume)$/.test(c.channel)).map((c) => c.channel)).toEqual(['runs:cancel', 'runs:resume']);
    await useRuns.getState().cancel();
    off();
  });

  it('takes the backend from progress once the model has loaded, without reading the run again', async () => {
    const { calls, off } = await preparedFake();
    useRuns.getState().setForm({ modelId: useModels.getState().models[0]!.id, limit: '300' });
    await useRuns.getState().start();
    // What the service answers before the runtime worker has loaded the model.
    expect(useRuns.getState().run?.backendLabel).toBe('loading the model…');
    // While it runs, not only once it has finished (when the summary is read again anyway).
    await vi.waitFor(() => expect(useRuns.getState().run).toMatchObject({ backendLabel: 'CPU backend', status: 'running' }), { timeout: 5000 });
    expect(useRuns.getState().progress).toMatchObject({ backendLabel: 'CPU backend', residency: 'host memory, fake engine' });
    expect(calls.filter((c) => c.channel === 'runs:get')).toEqual([]);
    // An event without the label (one sent before the model loaded) keeps the one known.
    const run = useRuns.getState().run!;
    useRuns.getState().handleProgress({ runId: run.id, status: 'running', done: run.done, total: run.total, tokensPerSecond: null, etaSeconds: null, elapsedSeconds: 1 });
    expect(useRuns.getState().run?.backendLabel).toBe('CPU backend');
    await useRuns.getState().cancel();
    off();
  });

  it("shows the whole run's elapsed time after a resume, and this session's speed once it generates", async () => {
    const { off } = await preparedFake();
    useRuns.getState().setForm({ modelId: useModels.getState().models[0]!.id, limit: '300' });
    await useRuns.getState().start();
    await vi.waitFor(() => expect(useRuns.getState().run!.done).toBeGreaterThan(2), { timeout: 10_000 });
    await useRuns.getState().cancel();
    const before = useRuns.getState().progress!;
    expect(before.status).toBe('cancelled');
    expect(before.elapsedSeconds).toBeGreaterThan(0);
    await useRuns.getState().resume();
    await vi.waitFor(() => expect(useRuns.getState().progress?.status).toBe('running'), { timeout: 5000 });
    const after = useRuns.getState().progress!;
    expect(after.elapsedSeconds).toBeGreaterThanOrEqual(before.elapsedSeconds);
    await vi.waitFor(() => expect(useRuns.getState().progress?.tokensPerSecond).toBeGreaterThan(0), { timeout: 5000 });
    await useRuns.getState().cancel();
    off();
  });

  it('lets go of a deleted run it shows, and of no other', () => {
    const run = {
      id: 'a', modelId: 'm', modelRepo: 'o/m', modelRevision: 'x', weights: 'int4' as const, status: 'completed' as const,
      backendLabel: 'CPU backend', createdAt: '', finishedAt: null, done: 3, total: 3, batch: 2, accuracies: null, error: null,
    };
    useRuns.setState({ run });
    useRuns.getState().forget('b');
    expect(useRuns.getState().run?.id).toBe('a');
    useRuns.getState().forget('a');
    expect(useRuns.getState()).toMatchObject({ run: null, progress: null, stream: [] });
  });

  it('attaches to a run already in progress', async () => {
    const { off, api } = await preparedFake();
    const started = await api.runs.start({ modelId: useModels.getState().models[0]!.id, limit: 300 });
    expect(started.ok).toBe(true);
    await useRuns.getState().attachActive();
    expect(useRuns.getState().run?.id).toBe(started.ok ? started.value.id : '');
    await useRuns.getState().cancel();
    off();
  });

  it('ignores events for other runs', () => {
    useRuns.setState({
      run: {
        id: 'a', modelId: 'm', modelRepo: 'o/m', modelRevision: 'x', weights: 'int4', status: 'running',
        backendLabel: 'CPU backend', createdAt: '', finishedAt: null, done: 0, total: 3, batch: 2, accuracies: null, error: null,
      },
    });
    useRuns.getState().handleProgress({ runId: 'b', status: 'running', done: 2, total: 3, tokensPerSecond: 1, etaSeconds: 1, elapsedSeconds: 1 });
    useRuns.getState().handleResponse('b', { key: 1, promptPreview: '', responsePreview: '', instructionIds: [], strictPass: true, loosePass: true, tokens: 1 });
    expect(useRuns.getState().run?.done).toBe(0);
    expect(useRuns.getState().stream).toEqual([]);
  });
});
