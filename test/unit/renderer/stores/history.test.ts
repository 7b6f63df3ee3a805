import path from 'node:path';

import { beforeEach, describe, expect, it } from 'vitest';

import type { RunComparison, RunSummary, VerifyReport } from '../../../../electron/common/ipc-contract.js';
import { setTransport } from '../../../../renderer/src/api.js';
import { connectEvents } from '../../../../renderer/src/stores/events.js';
import { mergeRuns, runMatches, useHistory } from '../../../../renderer/src/stores/history.js';
import { useResults } from '../../../../renderer/src/stores/results.js';
import { useRuns } from '../../../../renderer/src/stores/runs.js';
import { holdReplies, inProcessTransport, scripted, shared } from '../in-process-transport.js';

/** The fake services with a prepared model, the prompts imported and runs of `limits` prompts each, completed. */
async function withRuns(limits: readonly number[]) {
  const t = inProcessTransport(1);
  setTransport(t.transport);
  await t.api.models.prepare({ repo: 'o/m', revision: 'main' });
  await expect.poll(async () => {
    const m = await t.api.models.list();
    return m.ok ? m.value.length : 0;
  }).toBe(1);
  await t.api.models.importAssets({ kind: 'ifeval', path: path.join(shared, 'ifeval', 'input_data.jsonl') });
  const models = await t.api.models.list();
  const ids: string[] = [];
  for (const limit of limits) {
    const r = await t.api.runs.start({ modelId: models.ok ? models.value[0]!.id : '', limit });
    if (!r.ok) throw new Error(r.error.message);
    ids.push(r.value.id);
    await expect.poll(async () => {
      const g = await t.api.runs.get({ runId: r.value.id });
      return g.ok && g.value.status;
    }).toBe('completed');
  }
  return { ...t, ids };
}

/** A run of `limit` prompts exported to its ZIP, then deleted: what another machine would have. */
async function exportedThenDeleted(limit: number) {
  const t = await withRuns([limit]);
  const [a] = t.ids as [string];
  const zip = await t.api.export.exportRun({ runId: a });
  if (!zip.ok) throw new Error(zip.error.message);
  expect((await t.api.runs.delete({ runId: a })).ok).toBe(true);
  return { t, a, zip };
}

describe('history store', () => {
  beforeEach(() =>
    useHistory.setState({
      runs: [], selected: [], comparison: null, error: null, zipPath: '', verifyReport: null, verifyError: null, verifying: false,
      imported: null, importError: null, importing: false, deletion: null, deleted: null,
    }),
  );

  it('verifies a ZIP by path and asks for one when empty', async () => {
    const t = inProcessTransport();
    setTransport(t.transport);
    await useHistory.getState().verifyZip();
    expect(useHistory.getState().verifyError).toBe('Enter the path of a result ZIP.');
    useHistory.getState().setZipPath(' /tmp/not-a-result.zip ');
    await useHistory.getState().verifyZip();
    expect(t.calls.at(-1)).toEqual({ channel: 'export:verify', payload: { path: '/tmp/not-a-result.zip' } });
    expect(useHistory.getState().verifyReport).toEqual({
      kind: 'result',
      verified: false,
      problems: ['/tmp/not-a-result.zip: not a result ZIP'],
      unchecked: [],
      accuracies: null,
    });
  });

  it('verifies once while a check is on its way, and drops a report once the path changes', async () => {
    const t = inProcessTransport();
    setTransport({
      ...t.transport,
      invoke: (async (channel: string, payload: unknown) => {
        if (channel === 'export:verify') await new Promise((res) => setTimeout(res, 30));
        return (t.transport.invoke as (c: string, p: unknown) => Promise<unknown>)(channel, payload);
      }) as typeof t.transport.invoke,
    });
    useHistory.getState().setZipPath('/tmp/a.zip');
    const first = useHistory.getState().verifyZip();
    expect(useHistory.getState().verifying).toBe(true);
    await useHistory.getState().verifyZip();
    await first;
    expect(t.calls.filter((c) => c.channel === 'export:verify')).toHaveLength(1);
    expect(useHistory.getState()).toMatchObject({ verifying: false, verifyReport: { problems: ['/tmp/a.zip: not a result ZIP'] } });
    useHistory.getState().setZipPath('/tmp/b.zip');
    expect(useHistory.getState().verifyReport).toBeNull();
    // A reply for a path no longer in the field is not shown as that field's report.
    const late = useHistory.getState().verifyZip();
    useHistory.getState().setZipPath('/tmp/c.zip');
    await late;
    expect(useHistory.getState()).toMatchObject({ verifying: false, verifyReport: null, verifyError: null });
  });

  it('keeps at most two selections, oldest dropped, toggling off', () => {
    const { toggle } = useHistory.getState();
    toggle('a');
    toggle('b');
    expect(useHistory.getState().selected).toEqual(['a', 'b']);
    toggle('c');
    expect(useHistory.getState().selected).toEqual(['b', 'c']);
    toggle('b');
    expect(useHistory.getState().selected).toEqual(['c']);
  });

  it('drops a comparison shown once the runs picked change', async () => {
    const { ids } = await withRuns([2, 2]);
    const { toggle } = useHistory.getState();
    toggle(ids[0]!);
    toggle(ids[1]!);
    await useHistory.getState().compare();
    expect(useHistory.getState().comparison?.common).toBe(2);
    toggle(ids[0]!);
    expect(useHistory.getState().comparison).toBeNull();
  });

  it('needs two runs to compare and reports service errors', async () => {
    const t = inProcessTransport();
    setTransport(t.transport);
    await useHistory.getState().compare();
    expect(useHistory.getState().error).toBe('Pick two runs to compare.');
    expect(t.calls).toEqual([]);
    useHistory.getState().toggle('x');
    useHistory.getState().toggle('y');
    await useHistory.getState().compare();
    expect(t.calls.at(-1)).toEqual({ channel: 'runs:compare', payload: { runA: 'x', runB: 'y' } });
    expect(useHistory.getState().error).toBe("runs:compare: no run 'x'");
  });

  it('deletes a run after asking, with its ZIP when asked, and lets go of it everywhere', async () => {
    const t = await withRuns([2, 3]);
    const [a, b] = t.ids as [string, string];
    expect((await t.api.export.exportRun({ runId: b })).ok).toBe(true);
    await useHistory.getState().refresh();
    useHistory.getState().toggle(a);
    useHistory.getState().toggle(b);
    await useHistory.getState().compare();
    expect(useHistory.getState().comparison).not.toBeNull();
    await useResults.getState().open(b);

    await useHistory.getState().askDelete(b);
    expect(t.calls.at(-1)).toEqual({ channel: 'export:listZips', payload: { runId: b } });
    expect(useHistory.getState().deletion).toMatchObject({
      run: { id: b, done: 3 }, zips: [{ name: `${b}.zip`, bytes: 12_345 }], deleteZips: false, busy: false, error: null,
    });
    useHistory.getState().setDeleteZips(true);
    expect(await useHistory.getState().confirmDelete()).toBe(true);
    expect(t.calls.find((c) => c.channel === 'runs:delete')?.payload).toEqual({ runId: b, deleteExport: true });
    expect(useHistory.getState()).toMatchObject({
      deletion: null,
      deleted: { runId: b, responses: 3, deletedFiles: [`/tmp/horizon-fake/exports/${b}.zip`], fileErrors: [] },
      selected: [a],
      comparison: null,
    });
    expect(useHistory.getState().runs.map((r) => r.id)).toEqual([a]);
    expect(useResults.getState().runId).toBeNull();
    expect(await t.api.export.listZips({ runId: b })).toEqual({ ok: true, value: [] });
    expect(await t.api.runs.get({ runId: b })).toMatchObject({ ok: false, error: { code: 'NOT_FOUND' } });
  });

  it('adds an exported run back to History from its ZIP, lists it as imported, and refuses it a second time', async () => {
    const { t, a, zip } = await exportedThenDeleted(2);
    await useHistory.getState().importZip();
    expect(useHistory.getState().importError).toBe('Enter the path of a result ZIP.');

    useHistory.getState().setZipPath(zip.value.path);
    await useHistory.getState().importZip();
    expect(t.calls.filter((c) => c.channel === 'export:importRun').map((c) => c.payload)).toEqual([{ path: zip.value.path }]);
    expect(useHistory.getState()).toMatchObject({ importing: false, importError: null, imported: { run: { id: a, status: 'completed', done: 2 }, unchecked: [] } });
    // Listed at once, marked as imported.
    expect(useHistory.getState().runs.map((r) => [r.id, r.imported?.file])).toEqual([[a, zip.value.path]]);

    await useHistory.getState().importZip();
    expect(useHistory.getState()).toMatchObject({
      imported: null,
      importError: `${zip.value.path}: run ${a} is stored already, imported from ${zip.value.path} at ${useHistory.getState().runs[0]!.imported!.importedAt}`,
    });
    useHistory.getState().setZipPath('/tmp/other.zip');
    expect(useHistory.getState()).toMatchObject({ imported: null, importError: null });
  });

  it('lists a run another window imported as soon as it is told', async () => {
    const { t, a, zip } = await exportedThenDeleted(1);
    const off = connectEvents();
    try {
      await useHistory.getState().refresh();
      expect(useHistory.getState().runs).toEqual([]);
      expect((await t.api.export.importRun({ path: zip.value.path })).ok).toBe(true);
      await expect.poll(() => useHistory.getState().runs.map((r) => r.id)).toEqual([a]);
    } finally {
      off();
    }
  });

  it("labels a run, and shows a label given in another window everywhere the run is shown", async () => {
    const t = await withRuns([2, 3]);
    const [a, b] = t.ids as [string, string];
    const off = connectEvents();
    try {
      await useHistory.getState().refresh();
      useHistory.getState().toggle(a);
      useHistory.getState().toggle(b);
      await useHistory.getState().compare();
      await useResults.getState().open(b);
      useRuns.setState({ run: useHistory.getState().runs.find((r) => r.id === b)!, progress: null, stream: [], error: null, busy: false });
      const untouched = useHistory.getState().runs.find((r) => r.id === a);

      // Refused before asking the services, and by them: the label stays as it was.
      expect(await useHistory.getState().setLabel(b, 'x'.repeat(81))).toBe('A label has at most 80 characters (this one has 81).');
      expect(await useHistory.getState().setLabel('gone', 'x')).toBe('run gone not found');
      expect(useResults.getState().detail?.label).toBeNull();

      expect(await useHistory.getState().setLabel(b, ' baseline ')).toBeNull();
      const shown = () => [
        useHistory.getState().runs.find((r) => r.id === b)?.label,
        useHistory.getState().comparison?.b.label,
        useResults.getState().detail?.label,
        useRuns.getState().run?.label,
      ];
      expect(shown()).toEqual(['baseline', 'baseline', 'baseline', 'baseline']);
      // The other run keeps its object: its History row does not render again.
      expect(useHistory.getState().runs.find((r) => r.id === a)).toBe(untouched);

      // Another window (or horizon label) clears it: the event carries it here.
      expect((await t.api.runs.setLabel({ runId: b, label: '' })).ok).toBe(true);
      await expect.poll(shown).toEqual([null, null, null, null]);
    } finally {
      off();
    }
  });

  it('lets go of a run deleted in another window as soon as it is told, everywhere it is shown', async () => {
    const t = await withRuns([2, 3, 1]);
    const [a, b, c] = t.ids as [string, string, string];
    const off = connectEvents();
    try {
      await useHistory.getState().refresh();
      useHistory.getState().toggle(a);
      useHistory.getState().toggle(b);
      await useHistory.getState().compare();
      await useResults.getState().open(b);
      await useResults.getState().openResponse(useResults.getState().page!.items[0]!.key);
      expect(useResults.getState().selected?.runId).toBe(b);
      const summaryB = useHistory.getState().runs.find((r) => r.id === b)!;
      useRuns.setState({ run: summaryB, progress: null, stream: [], error: null, busy: false });
      // This window was about to ask to delete it too.
      await useHistory.getState().askDelete(b);
      const listed = t.calls.filter((c) => c.channel === 'runs:list').length;

      // Another window (here: the services directly) deletes it.
      expect((await t.api.runs.delete({ runId: b })).ok).toBe(true);
      expect(useHistory.getState()).toMatchObject({ selected: [a], comparison: null, deletion: null, deleted: null });
      expect(useHistory.getState().runs.map((r) => r.id)).toEqual([c, a]);
      expect(useResults.getState()).toMatchObject({ runId: null, detail: null, page: null, selected: null, gone: b, error: null });
      expect(useRuns.getState().run).toBeNull();
      // Told, it needs no new list.
      expect(t.calls.filter((c) => c.channel === 'runs:list')).toHaveLength(listed);

      // Its own delete (the event can come before the reply): said as deleted here, not as gone elsewhere.
      useResults.getState().dismissGone();
      await useResults.getState().open(a);
      await useHistory.getState().askDelete(a);
      expect(await useHistory.getState().confirmDelete()).toBe(true);
      expect(useHistory.getState().deleted).toMatchObject({ runId: a });
      expect(useResults.getState()).toMatchObject({ runId: null, gone: null });
      expect(useHistory.getState().runs.map((r) => r.id)).toEqual([c]);

      // A run not shown anywhere only leaves the list.
      await useResults.getState().open(c);
      expect((await t.api.runs.delete({ runId: 'run-nope' })).ok).toBe(false);
      expect(useResults.getState().runId).toBe(c);
    } finally {
      off();
    }
  });

  it('keeps the ZIP unless asked, and says nothing of ZIPs for a run without one', async () => {
    const t = await withRuns([2]);
    const [a] = t.ids as [string];
    await useHistory.getState().refresh();
    await useHistory.getState().askDelete(a);
    expect(useHistory.getState().deletion).toMatchObject({ zips: [], deleteZips: false });
    // Nothing to offer: asking for the ZIPs too sends no deleteExport.
    useHistory.getState().setDeleteZips(true);
    expect(await useHistory.getState().confirmDelete()).toBe(true);
    expect(t.calls.find((c) => c.channel === 'runs:delete')?.payload).toEqual({ runId: a });
  });

  it('calls a deletion off, and keeps the question open with the error when the service refuses', async () => {
    const t = await withRuns([2]);
    const [a] = t.ids as [string];
    await useHistory.getState().refresh();
    await useHistory.getState().askDelete(a);
    useHistory.getState().cancelDelete();
    expect(useHistory.getState().deletion).toBeNull();
    expect(t.calls.filter((c) => c.channel === 'runs:delete')).toEqual([]);

    // Resumed elsewhere (another window) after the list was read: the service refuses a running run.
    const resumed = await t.api.runs.resume({ runId: a });
    expect(resumed.ok).toBe(true);
    await useHistory.getState().askDelete(a);
    expect(await useHistory.getState().confirmDelete()).toBe(false);
    expect(useHistory.getState().deletion).toMatchObject({ busy: false, error: `run ${a} is running: cancel it before deleting it` });
    expect(useHistory.getState().runs.map((r) => r.id)).toEqual([a]);
    await t.api.runs.cancel({ runId: a });
  });

  it('keeps a run deleted meanwhile out of a list reply asked for before the deletion, and drops older replies', async () => {
    const t = await withRuns([1, 1]);
    const [a, b] = t.ids as [string, string];
    // runs:list replies as read at once, handed over only when released.
    const held = holdReplies(t, 'runs:list');
    const off = connectEvents();
    try {
      const late = useHistory.getState().refresh();
      await expect.poll(() => held.length).toBe(1);
      // Deleted in another window while that reply is on its way.
      expect((await t.api.runs.delete({ runId: a })).ok).toBe(true);
      expect(useHistory.getState().runs.map((r) => r.id)).toEqual([]);
      held.shift()!();
      await late;
      expect(useHistory.getState().runs.map((r) => r.id)).toEqual([b]);

      // Of two replies, the older one arriving last is not shown over the newer.
      const older = useHistory.getState().refresh();
      const newer = useHistory.getState().refresh();
      await expect.poll(() => held.length).toBe(2);
      const [releaseOlder, releaseNewer] = held.splice(0) as [() => void, () => void];
      expect((await t.api.runs.delete({ runId: b })).ok).toBe(true);
      releaseNewer();
      await newer;
      releaseOlder();
      await older;
      expect(useHistory.getState().runs).toEqual([]);

      // A list asked for after the deletion is shown as it is.
      const fresh = useHistory.getState().refresh();
      await expect.poll(() => held.length).toBe(1);
      held.shift()!();
      await fresh;
      expect(useHistory.getState().runs).toEqual([]);
    } finally {
      off();
    }
  });

  it('keeps the same list, and the same objects of unchanged runs, when a refresh changes nothing of them', async () => {
    const t = await withRuns([1, 2]);
    const [a, b] = t.ids as [string, string];
    await useHistory.getState().refresh();
    const first = useHistory.getState().runs;
    await useHistory.getState().refresh();
    // Replies are fresh objects (JSON); the list shown stays the one rendered.
    expect(useHistory.getState().runs).toBe(first);

    const before = first.find((r) => r.id === a)!;
    const other = first.find((r) => r.id === b)!;
    const changed = { ...other, done: other.done + 1 };
    const merged = mergeRuns(first, first.map((r) => (r.id === b ? changed : { ...r, accuracies: r.accuracies && { ...r.accuracies } })));
    expect(merged).not.toBe(first);
    expect(merged.find((r) => r.id === a)).toBe(before);
    expect(merged.find((r) => r.id === b)).toBe(changed);
    // Order and membership count as changes too.
    expect(mergeRuns(first, [...first].reverse())).not.toBe(first);
    expect(mergeRuns(first, first.slice(1))).toEqual(first.slice(1));
  });
});

function summary(id: string, over: Partial<RunSummary> = {}): RunSummary {
  return {
    id, modelId: 'm', modelRepo: 'o/m', modelRevision: 'x', weights: 'int4', status: 'completed',
    backend: 'cpu', backendLabel: 'CPU backend', createdAt: '', finishedAt: null, done: 3, total: 3, batch: 2,
    accuracies: { promptStrict: 0.5, promptLoose: 0.6, instructionStrict: 0.7, instructionLoose: 0.8 }, error: null, imported: null, label: null,
    ...over,
  };
}

const comparisonOf = (a: string, b: string) => ({ a: { id: a }, b: { id: b }, changed: [], common: 3 }) as unknown as RunComparison;

describe('history store: the edges', () => {
  beforeEach(() =>
    useHistory.setState({
      runs: [], selected: [], comparison: null, error: null, zipPath: '', verifyReport: null, verifyError: null, verifying: false,
      imported: null, importError: null, importing: false, deletion: null, deleted: null,
    }),
  );

  it("keeps an imported run's object while where it came from reads the same, and not once it differs", () => {
    const origin = { file: '/z/run.zip', sha256: 'e'.repeat(64), importedAt: '2026-12-06T19:30:00.000Z' };
    const prev = [summary('a', { imported: origin })];
    expect(mergeRuns(prev, [summary('a', { imported: { ...origin } })])).toBe(prev);
    for (const k of ['file', 'sha256', 'importedAt'] as const) {
      const next = [summary('a', { imported: { ...origin, [k]: 'other' } })];
      expect(mergeRuns(prev, next)[0]).toBe(next[0]);
    }
    const here = [summary('a')];
    expect(mergeRuns(prev, here)[0]).toBe(here[0]);
    const label = [summary('a', { imported: origin, label: 'x' })];
    expect(mergeRuns(prev, label)[0]).toBe(label[0]);
  });

  it.each([
    ['', true],
    ['   ', true],
    ['baseline', true],
    ['BASELINE g32', true],
    ['g32 baseline', true],
    ['baseline g128', false],
    ['h200', true],
    ['cancelled', true],
    ['completed', false],
    ['20261206T', true],
    ['bf16', true],
    ['colleague.zip', true],
    ['7f1c97f', true],
    ['olmoe', true],
    ['llama', false],
  ])('the filter %j %s the run', (query, matches) => {
    const run = summary('20261206T205311-c5b042', {
      label: 'Baseline G32', modelRepo: 'allenai/OLMoE-1B-7B-0924-Instruct', modelRevision: '7f1c97f440f0', modelId: 'allenai--OLMoE@7f1c97f/bf16',
      weights: 'bf16', backendLabel: 'CUDA: NVIDIA H200', status: 'cancelled',
      imported: { file: '/shared/colleague.zip', sha256: 'e'.repeat(64), importedAt: '2026-12-06T19:30:00.000Z' },
    });
    expect(runMatches(run, query)).toBe(matches);
  });

  it('counts a change in any accuracy, a missing one, or a key only one summary has as a change of that run', () => {
    const prev = [summary('a'), summary('b')];
    for (const k of ['promptStrict', 'promptLoose', 'instructionStrict', 'instructionLoose'] as const) {
      const next = [summary('a', { accuracies: { ...prev[0]!.accuracies!, [k]: 0.1 } }), summary('b')];
      const merged = mergeRuns(prev, next);
      expect(merged[0]).toBe(next[0]);
      expect(merged[1]).toBe(prev[1]);
    }
    const unscored = [summary('a', { accuracies: null }), summary('b')];
    expect(mergeRuns(prev, unscored)[0]).toBe(unscored[0]);
    expect(mergeRuns(unscored, prev)[0]).toBe(prev[0]);
    const unscoredAgain = [summary('a', { accuracies: null }), summary('b')];
    expect(mergeRuns(unscored, unscoredAgain)).toBe(unscored);
    const extra = [{ ...summary('a'), residency: 'host memory' } as RunSummary, summary('b')];
    expect(mergeRuns(extra, [summary('a'), summary('b')])[0]).not.toBe(extra[0]);
  });

  it("shows why a list or a ZIP check failed, and clears that once one succeeds", async () => {
    let failing = true;
    scripted((channel, payload) => {
      if (failing) return undefined;
      if (channel === 'runs:list') return { ok: true, value: [summary('a')] };
      if (channel === 'export:verify') return { ok: true, value: { verified: true, problems: [], unchecked: [], accuracies: null, path: (payload as { path: string }).path } };
      return undefined;
    });
    await useHistory.getState().refresh();
    expect(useHistory.getState().error).toBe('runs:list: not scripted');
    useHistory.getState().setZipPath('/x/a.zip');
    await useHistory.getState().verifyZip();
    expect(useHistory.getState()).toMatchObject({ verifyReport: null, verifyError: 'export:verify: not scripted', verifying: false });
    useHistory.getState().setZipPath('/x/b.zip');
    expect(useHistory.getState().verifyError).toBeNull();
    failing = false;
    await useHistory.getState().refresh();
    expect(useHistory.getState()).toMatchObject({ error: null, runs: [{ id: 'a' }] });
    await useHistory.getState().verifyZip();
    expect(useHistory.getState().verifyReport).toMatchObject({ verified: true });
    // A second check of the same path starts blank; an empty path takes the last report away.
    failing = true;
    const again = useHistory.getState().verifyZip();
    expect(useHistory.getState()).toMatchObject({ verifying: true, verifyReport: null, verifyError: null });
    await again;
    failing = false;
    await useHistory.getState().verifyZip();
    useHistory.getState().setZipPath('  ');
    useHistory.setState({ verifyReport: { verified: true, problems: [], unchecked: [], accuracies: null } as unknown as VerifyReport });
    await useHistory.getState().verifyZip();
    expect(useHistory.getState()).toMatchObject({ verifyReport: null, verifyError: 'Enter the path of a result ZIP.' });
  });

  it('drops a comparison when a third run is picked, clears a comparison error, and takes a comparison away when asked', async () => {
    scripted((channel, payload) => {
      const { runA, runB } = payload as { runA: string; runB: string };
      return channel === 'runs:compare' ? { ok: true, value: comparisonOf(runA, runB) } : undefined;
    });
    await useHistory.getState().compare();
    expect(useHistory.getState().error).toBe('Pick two runs to compare.');
    useHistory.getState().toggle('a');
    useHistory.getState().toggle('b');
    await useHistory.getState().compare();
    expect(useHistory.getState()).toMatchObject({ error: null, comparison: { a: { id: 'a' }, b: { id: 'b' } } });
    useHistory.getState().toggle('c');
    expect(useHistory.getState()).toMatchObject({ selected: ['b', 'c'], comparison: null });
    await useHistory.getState().compare();
    useHistory.getState().clearComparison();
    expect(useHistory.getState().comparison).toBeNull();
  });

  it("asks about one deletion at a time, and each question gets its own run's ZIPs", async () => {
    const held = new Map<string, () => void>();
    const calls = scripted((channel, payload) => {
      const { runId } = payload as { runId: string };
      if (channel !== 'export:listZips') return undefined;
      if (runId === 'broken') return { ok: false, error: { code: 'PERMISSION', message: 'exports/: EACCES' } };
      return new Promise((resolve) => held.set(runId, () => resolve({ ok: true, value: [{ name: `${runId}.zip`, path: `/x/${runId}.zip`, bytes: 1 }] })));
    });
    useHistory.setState({ runs: [summary('a'), summary('b'), summary('broken')], deleted: { runId: 'z', responses: 1, deletedFiles: [], fileErrors: [] } });
    const askA = useHistory.getState().askDelete('a');
    expect(useHistory.getState()).toMatchObject({ deleted: null, deletion: { run: { id: 'a' }, zips: null } });
    const askB = useHistory.getState().askDelete('b');
    await expect.poll(() => held.size).toBe(2);
    held.get('a')!();
    await askA;
    expect(useHistory.getState().deletion).toMatchObject({ run: { id: 'b' }, zips: null });
    held.get('b')!();
    await askB;
    expect(useHistory.getState().deletion).toMatchObject({ run: { id: 'b' }, zips: [{ name: 'b.zip' }] });

    // Not knowing the ZIPs does not keep the question waiting for them.
    await useHistory.getState().askDelete('broken');
    expect(useHistory.getState().deletion).toMatchObject({ run: { id: 'broken' }, zips: [] });

    // While a delete is on its way, nothing about the question changes and no second delete goes.
    useHistory.setState({ deletion: { run: summary('b'), zips: [], deleteZips: false, busy: true, error: null } });
    await useHistory.getState().askDelete('a');
    useHistory.getState().setDeleteZips(true);
    useHistory.getState().cancelDelete();
    expect(await useHistory.getState().confirmDelete()).toBe(false);
    expect(useHistory.getState().deletion).toEqual({ run: summary('b'), zips: [], deleteZips: false, busy: true, error: null });
    expect(calls.map((c) => c.payload)).toEqual([{ runId: 'a' }, { runId: 'b' }, { runId: 'broken' }]);
  });

  it('after its own delete, keeps a comparison of other runs, lists again, and forgets what it did when asked', async () => {
    const calls = scripted((channel, payload) => {
      const { runId } = (payload ?? {}) as { runId?: string };
      if (channel === 'runs:delete') return { ok: true, value: { runId, responses: 3, deletedFiles: [], fileErrors: [] } };
      if (channel === 'runs:list') return { ok: true, value: [summary('b'), summary('c')] };
      return undefined;
    });
    useHistory.setState({
      runs: [summary('a'), summary('b'), summary('c')], selected: ['b', 'c'], comparison: comparisonOf('b', 'c'),
      deletion: { run: summary('a'), zips: [], deleteZips: false, busy: false, error: null },
    });
    useRuns.setState({ run: summary('a'), progress: null, stream: [], error: null, busy: false });
    expect(await useHistory.getState().confirmDelete()).toBe(true);
    expect(useHistory.getState().comparison).toEqual(comparisonOf('b', 'c'));
    expect(useRuns.getState().run).toBeNull();
    expect(calls.map((c) => c.channel)).toEqual(['runs:delete', 'runs:list']);
    await expect.poll(() => useHistory.getState().runs.map((r) => r.id)).toEqual(['b', 'c']);
    useHistory.getState().dismissDeleted();
    expect(useHistory.getState().deleted).toBeNull();

    // A comparison with the deleted run as its A goes.
    useHistory.setState({ comparison: comparisonOf('b', 'c'), deletion: { run: summary('b'), zips: [], deleteZips: false, busy: false, error: null } });
    expect(await useHistory.getState().confirmDelete()).toBe(true);
    expect(useHistory.getState().comparison).toBeNull();
  });

  it('keeps a list reply asked for before its own delete from showing the deleted run again', async () => {
    const held: (() => void)[] = [];
    scripted((channel, payload) => {
      const { runId } = (payload ?? {}) as { runId?: string };
      if (channel === 'runs:delete') return { ok: true, value: { runId, responses: 3, deletedFiles: [], fileErrors: [] } };
      if (channel === 'runs:list') return new Promise((resolve) => held.push(() => resolve({ ok: true, value: [summary('a'), summary('b')] })));
      return undefined;
    });
    useHistory.setState({ runs: [summary('a'), summary('b')], deletion: { run: summary('a'), zips: [], deleteZips: false, busy: false, error: null } });
    const listing = useHistory.getState().refresh();
    await expect.poll(() => held.length).toBe(1);
    expect(await useHistory.getState().confirmDelete()).toBe(true);
    held[0]!();
    await listing;
    expect(useHistory.getState().runs.map((r) => r.id)).toEqual(['b']);
  });

  it("lets go of a run deleted elsewhere while its own delete of another run is on its way, keeping that question and other runs' comparison", () => {
    scripted(() => undefined);
    const question = { run: summary('a'), zips: [], deleteZips: false, busy: true, error: null };
    useHistory.setState({ runs: [summary('a'), summary('b'), summary('c'), summary('d')], selected: ['c', 'd'], comparison: comparisonOf('c', 'd'), deletion: question });
    useHistory.getState().handleDeleted('b');
    expect(useHistory.getState().runs.map((r) => r.id)).toEqual(['a', 'c', 'd']);
    expect(useHistory.getState()).toMatchObject({ deletion: question, comparison: comparisonOf('c', 'd') });
    // Deleted elsewhere: the run a comparison has as its A.
    useHistory.getState().handleDeleted('c');
    expect(useHistory.getState()).toMatchObject({ selected: ['d'], comparison: null, deletion: question });
  });

  it('counts runs gone from the end of the list as a change', () => {
    const prev = [summary('a'), summary('b')];
    expect(mergeRuns(prev, [summary('a')])).toEqual([prev[0]]);
    expect(mergeRuns(prev, [])).toEqual([]);
  });

  it('never shows an older list reply over a newer one', async () => {
    const held: (() => void)[] = [];
    let done = 1;
    scripted((channel) => {
      if (channel !== 'runs:list') return undefined;
      const value = [summary('live', { status: 'running', done: done++ })];
      return new Promise((resolve) => held.push(() => resolve({ ok: true, value })));
    });
    const older = useHistory.getState().refresh();
    const newer = useHistory.getState().refresh();
    await expect.poll(() => held.length).toBe(2);
    held[1]!();
    await newer;
    held[0]!();
    await older;
    expect(useHistory.getState().runs.map((r) => r.done)).toEqual([2]);
  });

  it("shows the report of the path in the field when an earlier path's check answers after a new check started", async () => {
    const held = new Map<string, () => void>();
    scripted((channel, payload) => {
      const { path } = payload as { path: string };
      return new Promise((resolve) =>
        held.set(path, () => resolve({ ok: true, value: { verified: path === '/x/new.zip', problems: [], unchecked: [], accuracies: null } })));
    });
    useHistory.getState().setZipPath('/x/old.zip');
    const first = useHistory.getState().verifyZip();
    useHistory.getState().setZipPath('/x/new.zip');
    const second = useHistory.getState().verifyZip();
    await expect.poll(() => held.size).toBe(2);
    held.get('/x/old.zip')!();
    await first;
    expect(useHistory.getState()).toMatchObject({ verifying: true, verifyReport: null });
    held.get('/x/new.zip')!();
    await second;
    expect(useHistory.getState()).toMatchObject({ verifying: false, verifyReport: { verified: true } });
  });
});
