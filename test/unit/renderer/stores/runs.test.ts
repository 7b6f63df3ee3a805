import path from 'node:path';

import { beforeEach, describe, expect, it, vi } from 'vitest';

import type { Accuracies, ResponseRow, RunProgress, RunSummary } from '../../../../electron/common/ipc-contract.js';
import { setTransport } from '../../../../renderer/src/api.js';
import { connectEvents } from '../../../../renderer/src/stores/events.js';
import { useModels } from '../../../../renderer/src/stores/models.js';
import { isResumable, parseCount, parseGiBToMiB, useRuns } from '../../../../renderer/src/stores/runs.js';
import { inProcessTransport, scripted, shared } from '../in-process-transport.js';

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
    useRuns.getState().setForm({ modelId: '', limit: '', batch: '', maxNewTokens: '1280', expertBudgetGiB: '', cudaDevice: '', label: '' });
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
    // Every bad field at once, each under its own name.
    useRuns.getState().setForm({ modelId: 'm', batch: '300', expertBudgetGiB: '0.1', cudaDevice: 'gpu1', limit: '20', label: 'x'.repeat(81) });
    await useRuns.getState().start();
    expect(useRuns.getState().error).toBeNull();
    expect(useRuns.getState().fieldErrors).toEqual({
      batch: 'Batch size must be a whole number from 1 to 256.',
      expertBudgetGiB: 'GPU expert memory must be a number of GiB from 0.25 to 1024, or empty for automatic.',
      cudaDevice: 'GPU must be a whole number from 0 to 63.',
      label: 'A label has at most 80 characters (this one has 81).',
    });
    // Editing a field clears its own error only.
    useRuns.getState().setForm({ batch: '8' });
    expect(Object.keys(useRuns.getState().fieldErrors)).toEqual(['expertBudgetGiB', 'cudaDevice', 'label']);
    expect(t.calls.filter((c) => c.channel === 'runs:start')).toEqual([]);
  });

  it('starts a run, follows progress and streamed responses to completion', async () => {
    const { calls, off } = await preparedFake();
    const modelId = useModels.getState().models[0]?.id;
    expect(modelId).toBeTruthy();
    useRuns.getState().setForm({ modelId, limit: '5', batch: '4', maxNewTokens: '16', expertBudgetGiB: '6.5', cudaDevice: '1', label: ' g32 try ' });
    await useRuns.getState().start();
    expect(calls.find((c) => c.channel === 'runs:start')?.payload).toEqual({
      modelId, limit: 5, batch: 4, maxNewTokens: 16, expertBudgetMiB: 6656, cudaDevice: 1, label: 'g32 try',
    });
    // The label named that run; the next one is named afresh, its other settings kept.
    expect(useRuns.getState().form).toMatchObject({ limit: '5', batch: '4', label: '' });
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
      backend: 'cpu' as const, backendLabel: 'CPU backend', createdAt: '', finishedAt: null, done: 3, total: 3, batch: 2, accuracies: null, error: null, imported: null, label: null,
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

  it("fills the form with an attached live run's own settings, not the defaults", async () => {
    const { off, api } = await preparedFake();
    const modelId = useModels.getState().models[0]!.id;
    await api.runs.start({ modelId, limit: 300, batch: 3, maxNewTokens: 64 });
    useRuns.getState().setForm({ modelId: '', limit: '', batch: '', maxNewTokens: '1280' });
    await useRuns.getState().attachActive();
    expect(useRuns.getState().form).toEqual({ modelId, limit: '300', batch: '3', maxNewTokens: '64', expertBudgetGiB: '', cudaDevice: '', label: '' });
    await useRuns.getState().cancel();
    off();
  });

  it('offers the newest resumable run when none is live, and resumes a run by id from any page', async () => {
    const { off, api } = await preparedFake();
    const modelId = useModels.getState().models[0]!.id;
    const first = await api.runs.start({ modelId, limit: 300, batch: 2, maxNewTokens: 48 });
    if (!first.ok) throw new Error(first.error.message);
    await api.runs.cancel({ runId: first.value.id });
    useRuns.setState({ run: null, resumable: null });
    await useRuns.getState().attachActive();
    expect(useRuns.getState()).toMatchObject({ run: null, resumable: { id: first.value.id, status: 'cancelled' } });
    expect(await useRuns.getState().resume(first.value.id)).toBe(true);
    expect(useRuns.getState()).toMatchObject({ run: { id: first.value.id, status: 'running' }, resumable: null });
    expect(useRuns.getState().form).toMatchObject({ modelId, limit: '300', batch: '2', maxNewTokens: '48' });
    // A run that cannot resume says why, and nothing is adopted.
    expect(await useRuns.getState().resume('no-such-run')).toBe(false);
    expect(useRuns.getState().error).toMatch(/no-such-run/);
    expect(useRuns.getState().run?.id).toBe(first.value.id);
    await useRuns.getState().cancel();
    off();
  });

  it('tells resumable runs apart', () => {
    const here = { imported: null };
    expect(isResumable({ status: 'cancelled', done: 3, total: 10, ...here })).toBe(true);
    expect(isResumable({ status: 'failed', done: 0, total: 10, ...here })).toBe(true);
    expect(isResumable({ status: 'failed', done: 10, total: 10, ...here })).toBe(false);
    expect(isResumable({ status: 'completed', done: 10, total: 10, ...here })).toBe(false);
    expect(isResumable({ status: 'running', done: 3, total: 10, ...here })).toBe(false);
    // Its model is on the machine that made it.
    const imported = { imported: { file: '/z/run.zip', sha256: 'e'.repeat(64), importedAt: '2026-12-06T19:00:00Z' } };
    expect(isResumable({ status: 'cancelled', done: 3, total: 10, ...imported })).toBe(false);
  });

  it('ignores events for other runs', () => {
    useRuns.setState({
      run: {
        id: 'a', modelId: 'm', modelRepo: 'o/m', modelRevision: 'x', weights: 'int4', status: 'running',
        backend: 'cpu', backendLabel: 'CPU backend', createdAt: '', finishedAt: null, done: 0, total: 3, batch: 2, accuracies: null, error: null, imported: null, label: null,
      },
    });
    useRuns.getState().handleProgress({ runId: 'b', status: 'running', done: 2, total: 3, tokensPerSecond: 1, etaSeconds: 1, elapsedSeconds: 1 });
    useRuns.getState().handleResponse('b', { key: 1, promptPreview: '', responsePreview: '', instructionIds: [], strictPass: true, loosePass: true, tokens: 1, finishReason: 'stop' });
    expect(useRuns.getState().run?.done).toBe(0);
    expect(useRuns.getState().stream).toEqual([]);
  });
});

function summary(over: Partial<RunSummary> = {}): RunSummary {
  return {
    id: 'a', modelId: 'm', modelRepo: 'o/m', modelRevision: 'x', weights: 'int4', status: 'running',
    backend: 'cpu', backendLabel: 'CPU backend', createdAt: '', finishedAt: null, done: 0, total: 10, batch: 2, accuracies: null, error: null, imported: null, label: null,
    ...over,
  };
}

const progressOf = (over: Partial<RunProgress> = {}): RunProgress => ({
  runId: 'a', status: 'running', done: 1, total: 10, tokensPerSecond: 1, etaSeconds: 1, elapsedSeconds: 1, ...over,
});

const row = (key: number): ResponseRow => ({ key, promptPreview: '', responsePreview: '', instructionIds: [], strictPass: true, loosePass: true, tokens: 1, finishReason: 'stop' });
const acc = (x: number): Accuracies => ({ promptStrict: x, promptLoose: x, instructionStrict: x, instructionLoose: x });

describe('runs store: the edges', () => {
  beforeEach(() => {
    useRuns.setState({ run: null, progress: null, stream: [], error: null, busy: false });
    useRuns.getState().setForm({ modelId: '', limit: '', batch: '', maxNewTokens: '1280', expertBudgetGiB: '', cudaDevice: '', label: '' });
  });

  it('accepts the bounds themselves, and GiB as whole MiB, rounded', () => {
    expect(parseCount('Prompts', '1', 1, 541)).toBe(1);
    expect(parseCount('Prompts', '541', 1, 541)).toBe(541);
    expect(parseCount('Prompts', '542', 1, 541)).toMatch(/whole number/);
    expect(parseGiBToMiB('GPU expert memory', ' ', 0.25, 1024)).toBeUndefined();
    expect(parseGiBToMiB('GPU expert memory', '0.25', 0.25, 1024)).toBe(256);
    expect(parseGiBToMiB('GPU expert memory', '1024', 0.25, 1024)).toBe(1024 * 1024);
    expect(parseGiBToMiB('GPU expert memory', '1024.5', 0.25, 1024)).toMatch(/from 0.25 to 1024/);
    expect(parseGiBToMiB('GPU expert memory', '1.9999', 0.25, 1024)).toBe(2048);
    expect(parseGiBToMiB('GPU expert memory', 'lots', 0.25, 1024)).toBe('GPU expert memory must be a number of GiB from 0.25 to 1024, or empty for automatic.');
  });

  it("sends each field's extreme accepted values, and keeps the other fields when one changes", async () => {
    const calls = scripted((channel) => (channel === 'runs:start' ? { ok: true, value: summary() } : undefined));
    useRuns.getState().setForm({ modelId: 'm', limit: '541', batch: '64', maxNewTokens: '4096' });
    useRuns.getState().setForm({ expertBudgetGiB: '1024', cudaDevice: '0' });
    await useRuns.getState().start();
    expect(calls[0]).toEqual({
      channel: 'runs:start',
      payload: { modelId: 'm', limit: 541, batch: 64, maxNewTokens: 4096, expertBudgetMiB: 1024 * 1024, cudaDevice: 0 },
    });
  });

  it("shows why a start was refused, lets the next start go, and leaves the previous run's progress and responses", async () => {
    let refuse = true;
    scripted((channel) =>
      channel !== 'runs:start' ? undefined
      : refuse ? { ok: false, error: { code: 'MODEL_NOT_FOUND', message: "runs:start: no prepared model 'm'" } }
      : { ok: true, value: summary({ id: 'b' }) });
    useRuns.setState({ run: summary({ status: 'completed', done: 10 }), progress: progressOf({ status: 'completed' }), stream: [row(1)] });
    useRuns.getState().setForm({ modelId: 'm' });
    await useRuns.getState().start();
    expect(useRuns.getState()).toMatchObject({ busy: false, error: "runs:start: no prepared model 'm'", run: { id: 'a' } });
    refuse = false;
    await useRuns.getState().start();
    expect(useRuns.getState()).toMatchObject({ busy: false, error: null, run: { id: 'b' }, progress: null, stream: [] });
  });

  it('applies the progress that arrived before the start reply', async () => {
    scripted((channel) => {
      if (channel !== 'runs:start') return undefined;
      useRuns.getState().handleProgress(progressOf({ runId: 'early', done: 3, backendLabel: 'CUDA: H200' }));
      return { ok: true, value: summary({ id: 'early', backendLabel: 'loading the model…' }) };
    });
    useRuns.getState().setForm({ modelId: 'm' });
    await useRuns.getState().start();
    expect(useRuns.getState().run).toMatchObject({ id: 'early', done: 3, backendLabel: 'CUDA: H200' });
    expect(useRuns.getState().progress).toMatchObject({ runId: 'early', done: 3 });
  });

  it('shows why a cancel or a resume failed, and clears that on the next resume', async () => {
    let refuse = true;
    scripted((channel) =>
      refuse ? undefined
      : channel === 'runs:resume' ? { ok: true, value: summary({ status: 'running' }) }
      : undefined);
    useRuns.setState({ run: summary() });
    await useRuns.getState().cancel();
    expect(useRuns.getState()).toMatchObject({ busy: false, error: 'runs:cancel: not scripted', run: { status: 'running' } });
    useRuns.setState({ run: summary({ status: 'cancelled' }) });
    await useRuns.getState().resume();
    expect(useRuns.getState()).toMatchObject({ busy: false, error: 'runs:resume: not scripted', run: { status: 'cancelled' } });
    refuse = false;
    await useRuns.getState().resume();
    expect(useRuns.getState()).toMatchObject({ busy: false, error: null, run: { status: 'running' } });
  });

  it('after a cancel, reads the run again, and leaves a run shown instead meanwhile as it is', async () => {
    const calls = scripted((channel) => {
      if (channel === 'runs:cancel') return { ok: true, value: null };
      if (channel === 'runs:get') return { ok: true, value: { ...summary({ status: 'cancelled', done: 4, error: 'cancelled by you' }), residency: '', policy: {}, byInstruction: [], figures: {} } };
      return undefined;
    });
    useRuns.setState({ run: summary({ done: 2 }) });
    await useRuns.getState().cancel();
    expect(calls.map((c) => c.channel)).toEqual(['runs:cancel', 'runs:get']);
    expect(useRuns.getState().run).toMatchObject(summary({ status: 'cancelled', done: 4, error: 'cancelled by you' }));

    // Another run is shown by the time the cancel answers (the first was deleted, another attached).
    scripted((channel) => {
      if (channel !== 'runs:cancel') return undefined;
      useRuns.setState({ run: summary({ id: 'b' }) });
      return { ok: true, value: null };
    });
    useRuns.setState({ run: summary() });
    await useRuns.getState().cancel();
    expect(useRuns.getState().run).toMatchObject({ id: 'b', status: 'running' });
  });

  it('attaches to a live run only when none is shown, taking its model into the form', async () => {
    const live = summary({ id: 'live', modelId: 'm-live' });
    const calls = scripted((channel) => (channel === 'runs:list' ? { ok: true, value: [summary({ id: 'old', status: 'completed' }), live] } : undefined));
    useRuns.setState({ run: summary({ id: 'shown', status: 'completed' }) });
    await useRuns.getState().attachActive();
    expect(calls).toEqual([]);
    expect(useRuns.getState().run?.id).toBe('shown');
    useRuns.setState({ run: null });
    await useRuns.getState().attachActive();
    expect(useRuns.getState().run).toEqual(live);
    expect(useRuns.getState().form.modelId).toBe('m-live');

    // A run started in this window while the list was on its way stays the one shown.
    scripted((channel) => {
      if (channel !== 'runs:list') return undefined;
      useRuns.setState({ run: summary({ id: 'mine' }) });
      return { ok: true, value: [live] };
    });
    useRuns.setState({ run: null });
    await useRuns.getState().attachActive();
    expect(useRuns.getState().run?.id).toBe('mine');
  });

  it('reads a live run again without moving it back, takes a finished one as read, and drops a reply for another run', async () => {
    let reply = summary({ status: 'running', done: 3, backendLabel: 'CPU backend' });
    scripted((channel) => (channel === 'runs:get' ? { ok: true, value: { ...reply, residency: '', policy: {}, byInstruction: [], figures: {} } } : undefined));
    // Progress said 5 done and queued→running; the summary was read before.
    useRuns.setState({ run: summary({ status: 'queued', done: 5 }) });
    await useRuns.getState().refresh();
    expect(useRuns.getState().run).toMatchObject({ status: 'queued', done: 5 });
    useRuns.setState({ run: summary({ status: 'running', done: 1 }) });
    await useRuns.getState().refresh();
    expect(useRuns.getState().run).toMatchObject({ status: 'running', done: 3 });
    reply = summary({ status: 'completed', done: 10, accuracies: acc(0.5) });
    await useRuns.getState().refresh();
    expect(useRuns.getState().run).toMatchObject(reply);

    scripted((channel) => {
      if (channel !== 'runs:get') return undefined;
      useRuns.setState({ run: summary({ id: 'b' }) });
      return { ok: true, value: { ...summary({ status: 'completed' }), residency: '', policy: {}, byInstruction: [], figures: {} } };
    });
    await useRuns.getState().refresh();
    expect(useRuns.getState().run).toEqual(summary({ id: 'b' }));
  });

  it("takes progress's counts, errors and accuracies, keeping what an event leaves out, and reads a run that ends once", async () => {
    const calls = scripted(() => undefined);
    useRuns.setState({ run: summary({ error: 'earlier warning', accuracies: acc(0.4) }) });
    useRuns.getState().handleProgress(progressOf({ done: 2, total: 12 }));
    expect(useRuns.getState().run).toMatchObject({ done: 2, total: 12, error: 'earlier warning', accuracies: acc(0.4) });
    useRuns.getState().handleProgress(progressOf({ done: 3, accuracies: acc(0.6), error: 'slow' }));
    expect(useRuns.getState().run).toMatchObject({ done: 3, error: 'slow', accuracies: acc(0.6) });
    // Resumed from nothing scored: the engine says so with null.
    useRuns.getState().handleProgress(progressOf({ done: 3, accuracies: null }));
    expect(useRuns.getState().run?.accuracies).toBeNull();
    expect(calls).toEqual([]);
    useRuns.getState().handleProgress(progressOf({ status: 'failed', done: 3, error: 'worker crashed' }));
    useRuns.getState().handleProgress(progressOf({ status: 'failed', done: 3, error: 'worker crashed' }));
    expect(calls.map((c) => c.channel)).toEqual(['runs:get']);
  });

  it('keeps the newest 50 streamed responses, also of a run not adopted yet', async () => {
    scripted((channel) => (channel === 'runs:start' ? { ok: true, value: summary({ id: 'b' }) } : undefined));
    for (let k = 0; k < 60; k++) useRuns.getState().handleResponse('b', row(k));
    useRuns.getState().setForm({ modelId: 'm' });
    await useRuns.getState().start();
    expect(useRuns.getState().stream.map((r) => r.key)).toEqual(Array.from({ length: 50 }, (_, i) => 59 - i));
    for (let k = 60; k < 70; k++) useRuns.getState().handleResponse('b', row(k));
    expect(useRuns.getState().stream).toHaveLength(50);
    expect(useRuns.getState().stream[0]?.key).toBe(69);
    expect(useRuns.getState().stream.at(-1)?.key).toBe(20);
  });

  it("clears a deleted run's error with it", () => {
    useRuns.setState({ run: summary(), error: 'runs:cancel: busy' });
    useRuns.getState().forget('a');
    expect(useRuns.getState().error).toBeNull();
  });
});
