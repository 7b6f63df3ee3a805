import path from 'node:path';

import { beforeEach, describe, expect, it } from 'vitest';

import { setTransport } from '../../../../renderer/src/api.js';
import { PAGE_SIZE, responsePosition, useResults } from '../../../../renderer/src/stores/results.js';
import { inProcessTransport, scripted, shared } from '../in-process-transport.js';

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
    useResults.setState({ filters: { instructionId: '', verdict: '', mode: 'strict', text: '', finish: '' }, sort: { by: 'key', descending: false } });
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
    // By how the responses ended: the two endings a run's responses have split them, as the run's counts say.
    await useResults.getState().setFilters({ instructionId: '', finish: 'length' });
    expect(calls.filter((c) => c.channel === 'runs:responses').at(-1)?.payload).toEqual({ runId, finish: 'length', offset: 0, limit: PAGE_SIZE });
    const cut = useResults.getState().page!;
    expect(cut.items.every((r) => r.finishReason === 'length')).toBe(true);
    await useResults.getState().setFilters({ finish: 'stop' });
    const ended = useResults.getState().page!;
    expect(ended.items.every((r) => r.finishReason === 'stop')).toBe(true);
    expect(useResults.getState().detail!.endings).toEqual({ stop: ended.total, length: cut.total, cancelled: 0 });
    expect(cut.total + ended.total).toBe(25);
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
    await useResults.getState().setFilters({ instructionId: 'punctuation:no_comma', verdict: 'fail', mode: 'loose', text: 'x', finish: 'length' });
    await useResults.getState().open(b);
    expect(useResults.getState().filters).toEqual({ instructionId: '', verdict: '', mode: 'loose', text: '', finish: '' });
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

  it('steps through the responses in the list\'s order, turning its page at either edge, and stops at its ends', async () => {
    const { runId } = await completedRun(25);
    await useResults.getState().open(runId);
    // Highest key first (the list is by key already: the same column flips it), so the order is the list's.
    await useResults.getState().sortBy('key');
    const order: number[] = [];
    for (const offset of [0, PAGE_SIZE]) {
      await useResults.getState().setOffset(offset);
      order.push(...useResults.getState().page!.items.map((r) => r.key));
    }
    await useResults.getState().setOffset(0);
    expect(order).toHaveLength(25);
    expect(order).toEqual([...order].sort((x, y) => y - x));
    const shown = () => {
      const s = useResults.getState();
      return { key: s.selected?.key, offset: s.offset, at: responsePosition(s) };
    };

    await useResults.getState().openResponse(order[PAGE_SIZE - 2]!);
    await useResults.getState().stepResponse(1);
    expect(shown()).toEqual({ key: order[PAGE_SIZE - 1], offset: 0, at: { index: PAGE_SIZE - 1, total: 25 } });
    await useResults.getState().stepResponse(1);
    expect(shown()).toEqual({ key: order[PAGE_SIZE], offset: PAGE_SIZE, at: { index: PAGE_SIZE, total: 25 } });
    await useResults.getState().stepResponse(-1);
    expect(shown()).toEqual({ key: order[PAGE_SIZE - 1], offset: 0, at: { index: PAGE_SIZE - 1, total: 25 } });

    await useResults.getState().setOffset(PAGE_SIZE);
    await useResults.getState().openResponse(order[24]!);
    await useResults.getState().stepResponse(1);
    expect(shown()).toEqual({ key: order[24], offset: PAGE_SIZE, at: { index: 24, total: 25 } });
    await useResults.getState().setOffset(0);
    await useResults.getState().openResponse(order[0]!);
    await useResults.getState().stepResponse(-1);
    expect(shown()).toEqual({ key: order[0], offset: 0, at: { index: 0, total: 25 } });

    // A response not on the page shown (opened from the address) has no place to step from.
    await useResults.getState().openResponse(order[22]!);
    expect(responsePosition(useResults.getState())).toBeNull();
    await useResults.getState().stepResponse(1);
    expect(shown()).toEqual({ key: order[22], offset: 0, at: null });
  });

  it('takes steps faster than responses load one after another, and a closed detail stays closed', async () => {
    const t = inProcessTransport(1);
    const { runId } = await completedRun(25, t);
    await useResults.getState().open(runId);
    const order = useResults.getState().page!.items.map((r) => r.key);
    await useResults.getState().openResponse(order[PAGE_SIZE - 2]!);
    delaying(t, (channel) => channel === 'runs:response' || channel === 'runs:responses', 30);
    // Three steps before the first has loaded: across the page's end to the next page's second row.
    await Promise.all([useResults.getState().stepResponse(1), useResults.getState().stepResponse(1), useResults.getState().stepResponse(1)]);
    expect(responsePosition(useResults.getState())).toEqual({ index: PAGE_SIZE + 1, total: 25 });
    await Promise.all([useResults.getState().stepResponse(-1), useResults.getState().stepResponse(-1)]);
    expect(responsePosition(useResults.getState())).toEqual({ index: PAGE_SIZE - 1, total: 25 });
    expect(useResults.getState().selected?.key).toBe(order[PAGE_SIZE - 1]);

    const step = useResults.getState().stepResponse(-1);
    useResults.getState().closeResponse();
    await step;
    expect(useResults.getState().selected).toBeNull();
  });

  it('shows the response asked for last when an earlier one answers last', async () => {
    const t = inProcessTransport(1);
    const { runId } = await completedRun(3, t);
    await useResults.getState().open(runId);
    const [first, second] = useResults.getState().page!.items.map((r) => r.key);
    delaying(t, (channel, payload) => channel === 'runs:response' && (payload as { key: number }).key === first);
    await Promise.all([useResults.getState().openResponse(first!), useResults.getState().openResponse(second!)]);
    expect(useResults.getState().selected?.key).toBe(second);
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

/** Scripted replies of runs `ids`: a detail naming the run, a page of one response, one response, a ZIP and its report. */
function scriptedRuns(over: (channel: string, payload: { runId?: string }) => unknown = () => undefined) {
  return scripted((channel, payload) => {
    const p = payload as { runId?: string; offset?: number; path?: string; key?: number };
    const mine = over(channel, p);
    if (mine !== undefined) return mine;
    switch (channel) {
      case 'runs:get': return { ok: true, value: { id: p.runId, status: 'completed', done: 3, total: 3 } };
      case 'runs:responses': return { ok: true, value: { total: 3, items: [{ key: p.offset ?? 0 }] } };
      case 'runs:response': return { ok: true, value: { runId: p.runId, key: p.key } };
      case 'export:exportRun': return { ok: true, value: { path: `/x/${p.runId}.zip` } };
      case 'export:verify': return { ok: true, value: { verified: true, zip: p.path } };
      default: return undefined;
    }
  });
}

const fail = (code: string, message: string) => ({ ok: false, error: { code, message } });

describe('results store: the edges', () => {
  beforeEach(() => {
    useResults.setState({ runId: null, detail: null, page: null, selected: null, exported: null, exportedRun: null, verify: null, exporting: false, error: null, gone: null, offset: 0 });
    useResults.setState({ filters: { instructionId: '', verdict: '', mode: 'strict', text: '', finish: '' }, sort: { by: 'key', descending: false } });
  });

  it('opened again, a run keeps its filters, page and response; another run starts over and is blank while it loads', async () => {
    const calls = scriptedRuns();
    await useResults.getState().open('a');
    await useResults.getState().setFilters({ verdict: 'fail' });
    await useResults.getState().setFilters({ text: 'comma' });
    await useResults.getState().setOffset(20);
    await useResults.getState().openResponse(20);
    await useResults.getState().open('a');
    expect(useResults.getState()).toMatchObject({
      offset: 20, filters: { verdict: 'fail', text: 'comma', mode: 'strict' }, selected: { runId: 'a', key: 20 },
    });
    expect(calls.at(-1)?.payload).toEqual({ runId: 'a', verdict: 'fail', mode: 'strict', text: 'comma', offset: 20, limit: PAGE_SIZE });

    useResults.setState({ error: 'runs:response: gone' });
    const opening = useResults.getState().open('b');
    expect(useResults.getState()).toMatchObject({ runId: 'b', detail: null, page: null, selected: null, offset: 0, error: null });
    await opening;
    expect(calls.at(-1)?.payload).toEqual({ runId: 'b', offset: 0, limit: PAGE_SIZE });
  });

  it('asks for nothing without a run, and never for a page before the first', async () => {
    const calls = scriptedRuns();
    await useResults.getState().reload();
    await useResults.getState().openResponse(1);
    await useResults.getState().exportZip();
    expect(calls).toEqual([]);
    await useResults.getState().open('a');
    await useResults.getState().setOffset(-20);
    expect(useResults.getState().offset).toBe(0);
    expect(calls.at(-1)?.payload).toMatchObject({ offset: 0 });
  });

  it("keeps a run that could not be read for another reason than being deleted, and shows the detail when only the page failed", async () => {
    let broken: 'get' | 'responses' | null = 'get';
    scriptedRuns((channel) =>
      broken === 'get' && channel === 'runs:get' ? fail('INTERNAL', 'runs:get: database is locked')
      : broken === 'responses' && channel === 'runs:responses' ? fail('INTERNAL', 'runs:responses: database is locked')
      : undefined);
    await useResults.getState().open('a');
    expect(useResults.getState()).toMatchObject({ runId: 'a', gone: null, detail: null, error: 'runs:get: database is locked' });
    broken = 'responses';
    await useResults.getState().reload();
    expect(useResults.getState()).toMatchObject({ runId: 'a', detail: { id: 'a' }, page: null, error: 'runs:responses: database is locked' });
    broken = null;
    await useResults.getState().reload();
    expect(useResults.getState()).toMatchObject({ detail: { id: 'a' }, page: { total: 3 }, error: null });
  });

  it('drops a reload answered after its run was deleted elsewhere', async () => {
    scriptedRuns();
    await useResults.getState().open('a');
    const held: (() => void)[] = [];
    scriptedRuns((channel) =>
      channel === 'runs:get'
        ? new Promise((resolve) => held.push(() => resolve({ ok: true, value: { id: 'a', status: 'completed', done: 3, total: 3 } })))
        : undefined);
    const reloading = useResults.getState().reload();
    await expect.poll(() => held.length).toBe(1);
    useResults.getState().handleDeleted('a');
    held[0]!();
    await reloading;
    expect(useResults.getState()).toMatchObject({ runId: null, detail: null, page: null, gone: 'a' });
  });

  it("shows why a response could not be opened, and clears that once one opens", async () => {
    let refuse = true;
    scriptedRuns((channel) => (refuse && channel === 'runs:response' ? fail('NOT_FOUND', 'runs:response: no response 7') : undefined));
    await useResults.getState().open('a');
    await useResults.getState().openResponse(7);
    expect(useResults.getState()).toMatchObject({ selected: null, error: 'runs:response: no response 7' });
    refuse = false;
    await useResults.getState().openResponse(8);
    expect(useResults.getState()).toMatchObject({ selected: { key: 8 }, error: null });
  });

  it("shows why an export or its check failed, and forgets the last export's ZIP and report when exporting again", async () => {
    let failing: 'export' | 'verify' | null = null;
    scriptedRuns((channel) =>
      failing === 'export' && channel === 'export:exportRun' ? fail('DISK_FULL', 'export: no space left')
      : failing === 'verify' && channel === 'export:verify' ? fail('INTERNAL', 'export:verify: unreadable')
      : undefined);
    await useResults.getState().open('a');
    await useResults.getState().exportZip();
    expect(useResults.getState()).toMatchObject({ exported: { path: '/x/a.zip' }, verify: { verified: true }, exporting: false, error: null });
    failing = 'export';
    const again = useResults.getState().exportZip();
    expect(useResults.getState()).toMatchObject({ exporting: true, exported: null, verify: null });
    await again;
    expect(useResults.getState()).toMatchObject({ exporting: false, exported: null, error: 'export: no space left' });
    failing = 'verify';
    await useResults.getState().exportZip();
    expect(useResults.getState()).toMatchObject({ exporting: false, exported: { path: '/x/a.zip' }, verify: null, error: 'export:verify: unreadable' });
  });

  it("drops an export's check answered after another run opened", async () => {
    const held: (() => void)[] = [];
    scriptedRuns((channel) =>
      channel === 'export:verify' ? new Promise((resolve) => held.push(() => resolve({ ok: true, value: { verified: true } }))) : undefined);
    await useResults.getState().open('a');
    const exporting = useResults.getState().exportZip();
    await expect.poll(() => held.length).toBe(1);
    await useResults.getState().open('b');
    held[0]!();
    await exporting;
    expect(useResults.getState()).toMatchObject({ runId: 'b', exported: null, verify: null, exporting: false });
  });

  it('keeps the run open when another run is deleted or let go of', async () => {
    scriptedRuns();
    await useResults.getState().open('a');
    useResults.getState().forget('b');
    useResults.getState().handleDeleted('b');
    expect(useResults.getState()).toMatchObject({ runId: 'a', detail: { id: 'a' }, gone: null });
    useResults.setState({ error: 'runs:response: no response 7' });
    useResults.getState().handleDeleted('a');
    expect(useResults.getState()).toMatchObject({ runId: null, gone: 'a', error: null });
  });
});
