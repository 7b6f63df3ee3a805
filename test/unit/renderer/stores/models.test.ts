import path from 'node:path';

import { beforeEach, describe, expect, it, vi } from 'vitest';

import { DEFAULT_MODEL_REPO, DEFAULT_MODEL_REVISION } from '../../../../electron/common/ipc-contract.js';
import { setTransport } from '../../../../renderer/src/api.js';
import { connectEvents } from '../../../../renderer/src/stores/events.js';
import { leftWorkToResume, useModels } from '../../../../renderer/src/stores/models.js';
import { useSystem } from '../../../../renderer/src/stores/system.js';
import { holdReplies, inProcessTransport, shared } from '../in-process-transport.js';

describe('models store', () => {
  beforeEach(() => {
    useModels.setState({ job: null, qualityJob: null, submitting: false, models: [], error: null, assetMessage: {}, importPaths: { ifeval: '', punkt: '' } });
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

  it('runs a quality check of a prepared INT4 model, follows its progress and shows the stored report after it', async () => {
    const t = inProcessTransport(2);
    setTransport(t.transport);
    const off = connectEvents();
    await useModels.getState().prepare();
    await vi.waitFor(() => expect(useModels.getState().models).toHaveLength(1), { timeout: 10_000 });
    const id = useModels.getState().models[0]!.id;
    expect(useModels.getState().models[0]!.quality ?? null).toBeNull();
    await useModels.getState().checkQuality(id);
    expect(t.calls.at(-1)).toEqual({ channel: 'models:checkQuality', payload: { modelId: id } });
    expect(useModels.getState().qualityJob).toMatchObject({ checking: id, status: 'running' });
    await useModels.getState().checkQuality(id);
    expect(t.calls.filter((c) => c.channel === 'models:checkQuality')).toHaveLength(1);
    await vi.waitFor(() => expect(useModels.getState().qualityJob?.status).toBe('done'), { timeout: 5000 });
    expect(useModels.getState().qualityJob?.steps.quality).toMatchObject({ doneBytes: 32, totalBytes: 32 });
    await vi.waitFor(() => expect(useModels.getState().models[0]!.quality?.top1Agreement).toBe(0.95), { timeout: 5000 });
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

  it.each([
    ['not a repo', null, /^Add the owner: a repository is owner\/name/],
    ['https://huggingface.co/allenai/OLMoE-1B-7B-0924-Instruct/tree/main', null, /not its web address: allenai\/OLMoE-1B-7B-0924-Instruct\.$/],
    ['o/m x', null, /^Use letters, digits/],
    ['', null, /^Enter a repository/],
    ['o/m', 'a b', /^A branch, tag or commit sha/],
  ])('says what is wrong with repo %j / revision %j beside the field as it is typed, and sends nothing', async (repo, revision, message) => {
    const t = inProcessTransport();
    setTransport(t.transport);
    useModels.getState().setForm({ repo, ...(revision !== null ? { revision } : {}) });
    const errors = useModels.getState().formErrors;
    expect(revision === null ? errors.repo : errors.revision).toMatch(message);
    await useModels.getState().prepare();
    expect(t.calls.filter((c) => c.channel === 'models:prepare')).toEqual([]);
    expect(useModels.getState()).toMatchObject({ job: null, error: null });
  });

  it('shows a validation error from the service (a request the form did not check)', async () => {
    answering((channel) => (channel === 'models:prepare' ? { ok: false, error: { code: 'BAD_INPUT', message: 'models:prepare: request.repo has an invalid format' } } : undefined));
    useModels.getState().setForm({ repo: 'o/m' });
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
    const held = holdReplies(t, 'system:check');
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

/** The fake services with some replies replaced: `answer` returns the reply for a channel, or undefined to let the fake answer. */
function answering(answer: (channel: string, payload: unknown) => unknown) {
  const t = inProcessTransport();
  const calls: string[] = [];
  setTransport({
    ...t.transport,
    invoke: (async (channel: string, payload: unknown) => {
      calls.push(channel);
      return answer(channel, payload) ?? (t.transport.invoke as (c: string, p: unknown) => Promise<unknown>)(channel, payload);
    }) as typeof t.transport.invoke,
  });
  return { ...t, calls };
}

describe('models store: errors, cancels and assets', () => {
  const base = { doneBytes: 0, totalBytes: 0, bytesPerSecond: 0, etaSeconds: null, message: 'x' };
  const idle = { jobId: 'j1', request: { repo: 'a/b', revision: 'r' }, steps: {}, status: 'running' as const, error: null, modelId: null };

  beforeEach(() => {
    useModels.setState({ job: null, assetsJob: null, submitting: false, models: [], error: null, assetMessage: {}, importPaths: { ifeval: '', punkt: '' } });
    useModels.getState().setForm({ repo: DEFAULT_MODEL_REPO, revision: DEFAULT_MODEL_REVISION, token: '' });
  });

  it('shows why the model list could not be read, and clears that once it is read', async () => {
    let failing = true;
    answering((channel) => (failing && channel === 'models:list' ? { ok: false, error: { code: 'PERMISSION', message: 'models:list: EACCES' } } : undefined));
    await useModels.getState().refresh();
    expect(useModels.getState().error).toBe('models:list: EACCES');
    failing = false;
    await useModels.getState().refresh();
    expect(useModels.getState()).toMatchObject({ error: null, models: [] });
  });

  it('trims the revision, and prepares once a refused entry is corrected', async () => {
    const t = inProcessTransport();
    setTransport(t.transport);
    useModels.getState().setForm({ repo: 'not a repo' });
    await useModels.getState().prepare();
    expect(useModels.getState()).toMatchObject({ submitting: false, job: null });
    expect(useModels.getState().formErrors.repo).toMatch(/owner\/name/);
    useModels.getState().setForm({ repo: 'o/m', revision: ' main ' });
    expect(useModels.getState().formErrors).toEqual({ repo: null, revision: null });
    await useModels.getState().prepare();
    expect(t.calls.filter((c) => c.channel === 'models:prepare').map((c) => c.payload)).toEqual([{ repo: 'o/m', revision: 'main' }]);
    expect(useModels.getState()).toMatchObject({ error: null, job: { status: 'running', request: { repo: 'o/m', revision: 'main' } } });
    await useModels.getState().cancel();
  });

  it('offers to resume a stopped preparation only when it left work to pick up', () => {
    const step = (doneBytes: number) => ({ jobId: 'j', step: 'download' as const, status: 'failed' as const, doneBytes, totalBytes: 10, bytesPerSecond: 0, etaSeconds: null, message: '' });
    expect(leftWorkToResume({ status: 'failed', steps: {} })).toBe(false);
    expect(leftWorkToResume({ status: 'failed', steps: { resolve: { ...step(0), step: 'resolve' } } })).toBe(false);
    expect(leftWorkToResume({ status: 'failed', steps: { download: step(0) } })).toBe(false);
    expect(leftWorkToResume({ status: 'cancelled', steps: { download: step(4) } })).toBe(true);
    expect(leftWorkToResume({ status: 'running', steps: { download: step(4) } })).toBe(false);
  });

  it('keeps every step of the events that arrive before the prepare reply', async () => {
    answering((channel) => {
      if (channel !== 'models:prepare') return undefined;
      useModels.getState().handleProgress({ ...base, jobId: 'early-steps', step: 'resolve', status: 'running' });
      useModels.getState().handleProgress({ ...base, jobId: 'early-steps', step: 'download', status: 'running', file: 'model.safetensors' });
      return { ok: true, value: { jobId: 'early-steps' } };
    });
    await useModels.getState().prepare();
    expect(Object.keys(useModels.getState().job!.steps).sort()).toEqual(['download', 'resolve']);
  });

  it('shows a job as cancelled once the service says so, and why a cancel failed', async () => {
    let refuse = false;
    const { calls } = answering((channel) => {
      if (channel !== 'models:cancel') return undefined;
      return refuse ? { ok: false, error: { code: 'INTERNAL', message: 'models:cancel: busy' } } : { ok: true, value: null };
    });
    await useModels.getState().cancel();
    expect(calls).toEqual([]);
    useModels.setState({ job: idle });
    refuse = true;
    await useModels.getState().cancel();
    expect(useModels.getState()).toMatchObject({ job: { status: 'running' }, error: 'models:cancel: busy' });
    refuse = false;
    await useModels.getState().cancel();
    // No progress event comes from this cancel: the reply alone says it.
    expect(useModels.getState().job).toMatchObject({ jobId: 'j1', status: 'cancelled' });
  });

  it("imports a trimmed path, keeps each asset's own message, and shows the service's refusal", async () => {
    const t = inProcessTransport();
    setTransport(t.transport);
    useModels.getState().setImportPath('ifeval', `  ${path.join(shared, 'ifeval', 'input_data.jsonl')}  `);
    useModels.getState().setImportPath('punkt', '   ');
    expect(useModels.getState().importPaths.ifeval).toContain('input_data.jsonl');
    await useModels.getState().importAsset('punkt');
    expect(useModels.getState().assetMessage.punkt).toEqual({ ok: false, text: 'Enter a path first.' });
    await useModels.getState().importAsset('ifeval');
    expect(t.calls.find((c) => c.channel === 'models:importAssets')?.payload).toEqual({
      kind: 'ifeval', path: path.join(shared, 'ifeval', 'input_data.jsonl'),
    });
    useModels.getState().setImportPath('punkt', '/nowhere/punkt');
    await useModels.getState().importAsset('punkt');
    expect(useModels.getState().assetMessage).toEqual({
      ifeval: { ok: true, text: 'Imported: 541 prompts, sha256 ok' },
      punkt: { ok: false, text: expect.stringMatching(/^import punkt: \/nowhere\/punkt: /) as unknown as string },
    });
  });

  it('shows why the assets could not be downloaded', async () => {
    setTransport(inProcessTransport().transport);
    await useModels.getState().downloadAssets();
    expect(useModels.getState()).toMatchObject({ assetsJob: null, error: 'fake: downloads are not available offline; import instead' });
  });

  it('follows an asset download, with the events that came before its reply, and checks the system once done', async () => {
    const { calls } = answering((channel) => {
      if (channel !== 'models:downloadAssets') return undefined;
      useModels.getState().handleProgress({ ...base, jobId: 'assets-1', step: 'download', status: 'running', file: 'input_data.jsonl' });
      return { ok: true, value: { jobId: 'assets-1' } };
    });
    useModels.setState({ error: 'an earlier error' });
    await useModels.getState().downloadAssets();
    expect(useModels.getState()).toMatchObject({ error: null, job: null, assetsJob: { jobId: 'assets-1', status: 'running' } });
    expect(Object.keys(useModels.getState().assetsJob!.steps)).toEqual(['download']);
    useModels.getState().handleProgress({ ...base, jobId: 'assets-1', step: 'verify', status: 'done' });
    expect(useModels.getState().assetsJob).toMatchObject({ status: 'done' });
    expect(calls.filter((c) => c === 'system:check')).toHaveLength(1);
    // The model list is not what an asset download changes.
    expect(calls.filter((c) => c === 'models:list')).toHaveLength(0);
    await vi.waitFor(() => expect(useSystem.getState().info).not.toBeNull());
  });
});
