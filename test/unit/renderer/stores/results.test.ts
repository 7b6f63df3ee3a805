import path from 'node:path';

import { beforeEach, describe, expect, it } from 'vitest';

import { setTransport } from '../../../../renderer/src/api.js';
import { PAGE_SIZE, useResults } from '../../../../renderer/src/stores/results.js';
import { inProcessTransport, shared } from '../in-process-transport.js';

/** Wraps the transport so that calls `slow` picks answer `ms` later (to make an earlier request finish last). */
function delaying(t: ReturnType<typeof inProcessTransport>, slow: (channel: string, payload: unknown) => boolean, ms = 60) {
  const invoke = t.transport.invoke;
  setTransport({
    ...t.transport,
    invoke: (async (channel: string, payload: unknown) => {
      const answer = await (invoke as (c: string, p: unknown) => Promise<unknown>)(channel, payload);
      if (slow(channel, payload)) await new Promise((resolve) => setTimeout(resolve, ms));
      return answer;
    }) as typeof invoke,
  });
}

async function completedRun(limit: number, t = inProcessTransport(1)) {
  setTransport(t.transport);
  const prep = await t.api.models.prepare({ repo: 'o/m', revision: 'main' });
  expect(prep.ok).toBe(true);
  let models = await t.api.models.list();
  while (!models.ok || models.value.length === 0) {
    await new Promise((res) => setTimeout(res, 5));
    models = await t.api.models.list();
  }
  await t.api.models.importAssets({ kind: 'ifeval', path: path.join(shared, 'ifeval', 'input_data.jsonl') });
  const run = await t.api.runs.start({ modelId: models.ok ? models.value[0]!.id : '', limit });
  if (!run.ok) throw new Error(run.error.message);
  for (;;) {
    const r = await t.api.runs.get({ runId: run.value.id });
    if (r.ok && r.value.status === 'completed') break;
    await new Promise((res) => setTimeout(res, 5));
  }
  return { ...t, runId: run.value.id };
}

describe('results store', () => {
  beforeEach(() => {
    useResults.setState({ runId: null, detail: null, page: null, selected: null, exported: null, exportedRun: null, verify: null, exporting: false, error: null, gone: null, offset: 0 });
    useResults.setState({ filters: { instructionId: '', verdict: '', mode: 'strict', text: '' } });
  });

  it('opens a run: detail plus the first page of responses', async () => {
    const { runId } = await completedRun(25);
    await useResults.getState().open(runId);
    const s = useResults.getState();
    expect(s.detail?.done).toBe(25);
    expect(s.page?.total).toBe(25);
    expect(s.page?.items).toHaveLength(PAGE_SIZE);
    await useResults.getState().setOffset(PAGE_SIZE);
    expect(useResults.getState().page?.items).toHaveLength(5);
  });

  it('sends only the filters that are set, and resets paging when they change', async () => {
    const { runId, calls } = await completedRun(25);
    await useResults.getState().open(runId);
    await useResults.getState().setOffset(PAGE_SIZE);
    await useResults.getState().setFilters({ verdict: 'fail', mode: 'loose', text: '  email ' });
    const last = calls.filter((c) => c.channel === 'runs:responses').at(-1);
    expect(last?.payload).toEqual({ runId, verdict: 'fail', mode: 'loose', text: 'email', offset: 0, limit: PAGE_SIZE });
    const page = useResults.getState().page!;
    for (const row of page.items) expect(row.loosePass).toBe(false);
    await useResults.getState().setFilters({ verdict: '', text: '', instructionId: 'punctuation:no_comma' });
    for (const row of useResults.getState().page!.items) expect(row.instructionIds).toContain('punctuation:no_comma');
  });

  it('lets go of a run deleted elsewhere: no figures or ZIP of it stay, and it is named as gone', async () => {
    const { runId, api } = await completedRun(3);
    await useResults.getState().open(runId);
    await useResults.getState().exportZip();
    expect(useResults.getState().exported).not.toBeNull();
    // Another window (or horizon delete) deletes it; this page reloads (a filter changed).
    expect((await api.runs.delete({ runId })).ok).toBe(true);
    await useResults.getState().setFilters({ verdict: 'pass', mode: 'strict' });
    expect(useResults.getState()).toMatchObject({ runId: null, detail: null, page: null, exported: null, verify: null, gone: runId });
    useResults.getState().dismissGone();
    expect(useResults.getState().gone).toBeNull();
  });

  it('opens one response with its per-instruction verdicts', async () => {
    const { runId } = await completedRun(3);
    await useResults.getState().open(runId);
    await useResults.getState().openResponse(1000);
    const r = useResults.getState().selected!;
    expect(r.verdicts.map((v) => v.instructionId)).toEqual([
      'punctuation:no_comma',
      'detectable_format:number_highlighted_sections',
      'length_constraints:number_words',
    ]);
    expect(r.strictPass).toBe(r.verdicts.every((v) => v.strict));
    useResults.getState().closeResponse();
    expect(useResults.getState().selected).toBeNull();
  });

  it('exports then verifies the ZIP', async () => {
    const { runId, calls } = await completedRun(2);
    await useResults.getState().open(runId);
    await useResults.getState().exportZip();
    expect(useResults.getState().verify?.verified).toBe(true);
    const channels = calls.map((c) => c.channel);
    expect(channels.indexOf('export:verify')).toBeGreaterThan(channels.indexOf('export:exportRun'));
  });

  it('keeps what the ZIP holds when the run goes on after the export, and exports once for a double click', async () => {
    const t = inProcessTransport(5);
    const { api, calls } = await completedRun(1, t);
    const models = await api.models.list();
    const started = await api.runs.start({ modelId: models.ok ? models.value[0]!.id : '', limit: 300 });
    if (!started.ok) throw new Error(started.error.message);
    const live = started.value.id;
    await expect.poll(async () => {
      const r = await api.runs.get({ runId: live });
      return r.ok ? r.value.done : 0;
    }).toBeGreaterThan(2);
    await api.runs.cancel({ runId: live });
    await useResults.getState().open(live);
    const done = useResults.getState().detail!.done;
    await Promise.all([useResults.getState().exportZip(), useResults.getState().exportZip()]);
    expect(calls.filter((c) => c.channel === 'export:exportRun')).toHaveLength(1);
    expect(useResults.getState().exportedRun).toEqual({ status: 'cancelled', done, total: 300 });
    expect(useResults.getState().verify?.run).toEqual({ status: 'cancelled', responses: done, total: 300 });
    // Resumed, the run moves on; the ZIP and what is said about it do not.
    await api.runs.resume({ runId: live });
    await expect.poll(async () => {
      await useResults.getState().reload();
      return useResults.getState().detail!.done;
    }).toBeGreaterThan(done);
    expect(useResults.getState().verify?.run).toEqual({ status: 'cancelled', responses: done, total: 300 });
    await api.runs.cancel({ runId: live });
  });

  it('starts over with the filters when another run opens (keeping the scoring mode)', async () => {
    const t = inProcessTransport(1);
    const { runId: a } = await completedRun(4, t);
    const { runId: b } = await completedRun(3, t);
    await useResults.getState().open(a);
    await useResults.getState().setFilters({ instructionId: 'punctuation:no_comma', verdict: 'fail', mode: 'loose', text: 'x' });
    await useResults.getState().open(b);
    expect(useResults.getState().filters).toEqual({ instructionId: '', verdict: '', mode: 'loose', text: '' });
    expect(useResults.getState().page?.total).toBe(3);
  });

  it('shows the latest filter\'s responses when an earlier request answers last', async () => {
    const t = inProcessTransport(1);
    const { runId } = await completedRun(25, t);
    await useResults.getState().open(runId);
    delaying(t, (channel, payload) => channel === 'runs:responses' && (payload as { verdict?: string }).verdict === 'fail');
    await Promise.all([useResults.getState().setFilters({ verdict: 'fail' }), useResults.getState().setFilters({ verdict: 'pass' })]);
    const s = useResults.getState();
    expect(s.filters.verdict).toBe('pass');
    expect(s.page?.items.length).toBeGreaterThan(0);
    expect(s.page?.items.every((r) => r.strictPass)).toBe(true);
  });

  it("drops an export's and a response's answers when another run opened meanwhile", async () => {
    const t = inProcessTransport(1);
    const { runId: a } = await completedRun(2, t);
    const { runId: b } = await completedRun(2, t);
    await useResults.getState().open(a);
    delaying(t, (channel) => channel === 'export:exportRun' || channel === 'runs:response');
    const exporting = useResults.getState().exportZip();
    const opening = useResults.getState().openResponse(1000);
    await useResults.getState().open(b);
    await Promise.all([exporting, opening]);
    expect(useResults.getState()).toMatchObject({ runId: b, exporting: false, exported: null, verify: null, selected: null });
  });

  it('surfaces a service error', async () => {
    const t = inProcessTransport();
    setTransport(t.transport);
    await useResults.getState().open('missing');
    expect(useResults.getState().error).toBe("runs:get: no run 'missing'");
  });
});
