import path from 'node:path';

import { beforeEach, describe, expect, it, vi } from 'vitest';

import { DEFAULT_MODEL_REPO, DEFAULT_MODEL_REVISION } from '../../../../electron/common/ipc-contract.js';
import { setTransport } from '../../../../renderer/src/api.js';
import { connectEvents } from '../../../../renderer/src/stores/events.js';
import { useModels } from '../../../../renderer/src/stores/models.js';
import { useSystem } from '../../../../renderer/src/stores/system.js';
import { inProcessTransport, shared } from '../in-process-transport.js';

describe('models store', () => {
  beforeEach(() => {
    useModels.setState({ job: null, submitting: false, models: [], error: null, assetMessage: {}, importPaths: { ifeval: '', punkt: '' } });
    useModels.getState().setForm({ repo: DEFAULT_MODEL_REPO, revision: DEFAULT_MODEL_REVISION, token: '' });
  });

  it('defaults to the pinned model and never sends an empty token', async () => {
    const t = inProcessTransport(2);
    setTransport(t.transport);
    const off = connectEvents();
    await useModels.getState().prepare();
    expect(t.calls.at(-1)).toEqual({
      channel: 'models:prepare',
      payload: { repo: DEFAULT_MODEL_REPO, revision: DEFAULT_MODEL_REVISION },
    });
    await vi.waitFor(() => expect(useModels.getState().job?.status).toBe('done'), { timeout: 5000 });
    const job = useModels.getState().job!;
    expect(Object.keys(job.steps).sort()).toEqual(['download', 'pack', 'resolve', 'verify']);
    expect(job.modelId).toMatch(/^allenai--OLMoE/);
    await vi.waitFor(() => expect(useModels.getState().models).toHaveLength(1), { timeout: 10_000 });
    off();
  });

  it('sends one prepare request for a double click', async () => {
    const t = inProcessTransport(2);
    setTransport(t.transport);
    await Promise.all([useModels.getState().prepare(), useModels.getState().prepare()]);
    expect(t.calls.filter((c) => c.channel === 'models:prepare')).toHaveLength(1);
    expect(useModels.getState().submitting).toBe(false);
  });

  it('starts no second job while one runs (its button stays focusable)', async () => {
    const t = inProcessTransport(20);
    setTransport(t.transport);
    const off = connectEvents();
    await useModels.getState().prepare();
    expect(useModels.getState().job?.status).toBe('running');
    await useModels.getState().prepare();
    expect(t.calls.filter((c) => c.channel === 'models:prepare')).toHaveLength(1);
    await useModels.getState().cancel();
    await vi.waitFor(() => expect(useModels.getState().job?.status).toBe('cancelled'));
    off();
  });

  it('passes a token when given and keeps it out of the job state', async () => {
    const t = inProcessTransport();
    setTransport(t.transport);
    useModels.getState().setForm({ repo: ' org/gated ', token: 'hf_secret' });
    await useModels.getState().prepare();
    expect(t.calls.at(-1)?.payload).toEqual({ repo: 'org/gated', revision: DEFAULT_MODEL_REVISION, token: 'hf_secret' });
    expect(JSON.stringify(useModels.getState().job)).not.toContain('hf_secret');
  });

  it('shows a validation error from the service', async () => {
    const t = inProcessTransport();
    setTransport(t.transport);
    useModels.getState().setForm({ repo: 'not a repo' });
    await useModels.getState().prepare();
    expect(useModels.getState().error).toBe('models:prepare: request.repo has an invalid format');
    expect(useModels.getState().job).toBeNull();
  });

  it('applies events that arrive before the prepare reply', async () => {
    const base = { step: 'pack' as const, doneBytes: 0, totalBytes: 0, bytesPerSecond: 0, etaSeconds: null, message: 'x' };
    setTransport({
      kind: 'http',
      invoke: (async (channel: string) => {
        if (channel !== 'models:prepare') return { ok: true, value: [] };
        useModels.getState().handleProgress({ ...base, jobId: 'fast-job', status: 'done', modelId: 'o--m@1234567/int4-g32' });
        return { ok: true, value: { jobId: 'fast-job' } };
      }) as never,
      on: () => () => {},
      download: null,
    });
    await useModels.getState().prepare();
    expect(useModels.getState().job).toMatchObject({ jobId: 'fast-job', status: 'done', modelId: 'o--m@1234567/int4-g32' });
  });

  it('ignores progress for unknown jobs and records failures', () => {
    useModels.setState({ job: { jobId: 'j1', request: { repo: 'a/b', revision: 'r' }, steps: {}, status: 'running', error: null, modelId: null } });
    const base = { step: 'download' as const, doneBytes: 1, totalBytes: 2, bytesPerSecond: 1, etaSeconds: 1, message: 'x' };
    useModels.getState().handleProgress({ ...base, jobId: 'other', status: 'failed', error: { code: 'NETWORK', message: 'nope' } });
    expect(useModels.getState().job?.status).toBe('running');
    useModels.getState().handleProgress({ ...base, jobId: 'j1', status: 'failed', error: { code: 'HASH_MISMATCH', message: 'model.safetensors: sha256 mismatch' } });
    expect(useModels.getState().job).toMatchObject({ status: 'failed', error: 'model.safetensors: sha256 mismatch' });
  });

  it('imports an asset and refreshes the system check', async () => {
    const t = inProcessTransport();
    setTransport(t.transport);
    await useModels.getState().importAsset('ifeval');
    expect(useModels.getState().assetMessage.ifeval).toEqual({ ok: false, text: 'Enter a path first.' });
    useModels.getState().setImportPath('ifeval', path.join(shared, 'ifeval', 'input_data.jsonl'));
    await useModels.getState().importAsset('ifeval');
    expect(useModels.getState().assetMessage.ifeval).toEqual({ ok: true, text: 'Imported: 541 prompts, sha256 ok' });
    expect(useSystem.getState().info?.assets.find((a) => a.kind === 'ifeval')?.ready).toBe(true);
  });

  it('shows an imported asset as ready with its message, whatever order the slow system checks reply in', async () => {
    const t = inProcessTransport();
    setTransport(t.transport);
    await useSystem.getState().refresh();
    const punktReady = () => useSystem.getState().info?.assets.find((a) => a.kind === 'punkt')?.ready;
    expect(punktReady()).toBe(false);
    // Each system check's reply is now held until released (the device probe makes real checks slow).
    const held: (() => void)[] = [];
    setTransport({
      ...t.transport,
      invoke: (async (channel: string, payload: unknown) => {
        const reply = await (t.transport.invoke as (c: string, p: unknown) => Promise<unknown>)(channel, payload);
        if (channel === 'system:check') await new Promise<void>((release) => held.push(release));
        return reply;
      }) as typeof t.transport.invoke,
    });
    const stale = useSystem.getState().refresh(); // started before the import: its view of Punkt is older
    useModels.getState().setImportPath('punkt', path.join(shared, 'nltk', 'punkt_english'));
    const imported = useModels.getState().importAsset('punkt');
    await vi.waitFor(() => expect(useModels.getState().assetMessage.punkt?.ok).toBe(true), { timeout: 10_000 });
    expect(punktReady()).toBe(true);
    await vi.waitFor(() => expect(held).toHaveLength(2), { timeout: 10_000 });
    held[1]!();
    await imported;
    held[0]!();
    await stale;
    expect(punktReady()).toBe(true);
    expect(useSystem.getState().loading).toBe(false);
  });
});
