import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

import type { IpcMain, IpcMainInvokeEvent, WebContents } from 'electron';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { WebSocket } from 'ws';

import type { EmitEvent, EventMap, EventName } from '../../../../../electron/common/ipc-contract.js';
import { RunRepo } from '../../../../../electron/main/db/run-repo.js';
import { createEventFanout, registerIpc } from '../../../../../electron/main/ipc/register-ipc.js';
import { startServeServer } from '../../../../../electron/main/serve/serve-server.js';
import type { Services } from '../../../../../electron/main/services/create-services.js';
import { createServices } from '../../../../../electron/main/services/create-services.js';
import { createScriptedEngine } from '../../worker/scripted-engine.js';
import { writeTinyTokenizer } from '../../worker/tiny-tokenizer.js';
import { writeElsewhereCampaignZip } from '../export/perf-fixtures.js';
import { inProcessWorkers } from '../in-process-spawner.js';
import { FAKE_SHARD, writeFakePack, writePreparedManifest } from '../prep/fake-pack.js';

const shared = path.resolve(import.meta.dirname, '..', '..', '..', '..', '..', '..', 'shared');
const COMMIT = 'c'.repeat(40);

/** A prepared model as preparation leaves it: source/, int4-g32/ and prepared.json; `config` is added to config.json. */
async function writePreparedModel(dataDir: string, config: Record<string, unknown> = {}): Promise<void> {
  const modelDir = path.join(dataDir, 'models', 'horizon--tiny', COMMIT);
  await writeTinyTokenizer(path.join(modelDir, 'source'));
  const configFile = path.join(modelDir, 'source', 'config.json');
  await writeFile(configFile, JSON.stringify({ ...JSON.parse(await readFile(configFile, 'utf8')), ...config }));
  await writeFakePack(path.join(modelDir, 'int4-g32'));
  await writePreparedManifest(modelDir, { repo: 'horizon/tiny', commit: COMMIT });
}

describe('createServices (scripted worker)', () => {
  let dataDir: string;
  let services: Services;
  const events: { name: EventName; payload: EventMap[EventName] }[] = [];
  /** Where events also go: a host's fan-out (Electron windows, `horizon serve` sockets) while a test installs one. */
  let forward: EmitEvent | undefined;

  beforeAll(async () => {
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'horizon-services-'));
    await writePreparedModel(dataDir);
    const workers = inProcessWorkers(() => createScriptedEngine({ reply: (ids) => (ids.length % 2 ? 'Yes, fine.' : 'no commas here') }));
    services = createServices({
      dataDir,
      hubUrl: 'http://localhost',
      spawner: workers.spawner,
      emit: (name, payload) => {
        events.push({ name, payload });
        forward?.(name, payload);
      },
      appVersion: '9.9.9',
      sharedAssetsDir: shared,
    });
  });
  afterAll(async () => {
    await services.dispose();
    await rm(dataDir, { recursive: true, force: true });
  });

  /** Runs the first `limit` prompts to the end; the run's id. */
  const finishedRun = async (limit = 1, batch = 1): Promise<string> => {
    const r = await services.api.runs.start({ modelId: 'horizon--tiny@ccccccc/int4-g32', limit, batch, maxNewTokens: 16 });
    if (!r.ok) throw new Error(r.error.message);
    await services.runs.activeRun?.done;
    return r.value.id;
  };

  it('reports the CPU backend and the asset state', async () => {
    const r = await services.api.system.check();
    if (!r.ok) throw new Error(r.error.message);
    expect(r.value).toMatchObject({ backend: 'cpu', gpus: [], backendLabel: 'CPU backend (scripted engine)', appVersion: '9.9.9', dataDir });
    expect(r.value.assets.map((a) => a.kind)).toEqual(['ifeval', 'punkt']);
  });

  it('lists the int4 and bf16 variants of a prepared model', async () => {
    const r = await services.api.models.list();
    expect(r.ok && r.value.map((m) => [m.id, m.weights, m.ready])).toEqual([
      [`horizon--tiny@ccccccc/int4-g32`, 'int4', true],
      [`horizon--tiny@ccccccc/bf16`, 'bf16', true],
    ]);
  });

  it('refuses to start a run on a model whose files changed since it was prepared, and stores no run', async () => {
    const shard = path.join(dataDir, 'models', 'horizon--tiny', COMMIT, 'int4-g32', FAKE_SHARD);
    const original = await readFile(shard);
    const before = await services.api.runs.list();
    await writeFile(shard, Buffer.from(original.map((b, i) => (i === 0 ? b ^ 1 : b))));
    try {
      const r = await services.api.runs.start({ modelId: 'horizon--tiny@ccccccc/int4-g32', limit: 1, batch: 1 });
      expect(r).toMatchObject({ ok: false, error: { code: 'MODEL_INVALID', message: expect.stringContaining(`int4-g32/${FAKE_SHARD}: sha256`) } });
      expect(await services.api.runs.list()).toEqual(before);
    } finally {
      await writeFile(shard, original);
    }
  });

  it('runs, queries, compares, exports and verifies', async () => {
    const started = await services.api.runs.start({ modelId: 'horizon--tiny@ccccccc/int4-g32', limit: 4, batch: 3, maxNewTokens: 64, expertBudgetMiB: 512 });
    if (!started.ok) throw new Error(started.error.message);
    expect(started.value).toMatchObject({ total: 4, batch: 3, weights: 'int4', backendLabel: 'loading the model…' });
    expect(await services.api.runs.start({ modelId: 'horizon--tiny@ccccccc/int4-g32' })).toMatchObject({ ok: false, error: { code: 'BAD_INPUT' } });
    const runId = started.value.id;
    expect(await services.api.export.exportRun({ runId })).toMatchObject({
      ok: false,
      error: { code: 'BAD_INPUT', message: `run ${runId} is still running: export it once it has finished or been cancelled` },
    });
    await services.runs.activeRun?.done;
    const detail = await services.api.runs.get({ runId });
    if (!detail.ok) throw new Error(detail.error.message);
    expect(detail.value).toMatchObject({ status: 'completed', backendLabel: 'CPU backend', done: 4, total: 4, policy: { batch: 3, maxNewTokens: 64, greedy: true, expertBudgetBytes: 512 * 2 ** 20 }, figures: { peakMemoryBytes: null, peakMemoryScope: null } });
    expect(detail.value.residency).toBe('host'); // as the (scripted) engine reported it
    expect(detail.value.accuracies).not.toBeNull();
    expect(detail.value.byInstruction.reduce((n, r) => n + r.count, 0)).toBeGreaterThan(0);
    const progress = events.filter((e) => e.name === 'runs:onDidProgress').map((e) => e.payload as EventMap['runs:onDidProgress']);
    expect(progress.at(-1)).toMatchObject({ runId, status: 'completed', done: 4 });
    expect(events.filter((e) => e.name === 'runs:onDidResponse')).toHaveLength(4);
    // The device is in progress from the model's load on, before the first response: the UI need not read the run.
    const named = events.findIndex((e) => e.name === 'runs:onDidProgress' && (e.payload as EventMap['runs:onDidProgress']).backendLabel);
    expect(events[named]?.payload).toMatchObject({ runId, status: 'running', done: 0, backendLabel: 'CPU backend', residency: 'host' });
    expect(named).toBeLessThan(events.findIndex((e) => e.name === 'runs:onDidResponse'));
    expect(progress.at(-1)).toMatchObject({ backendLabel: 'CPU backend', elapsedSeconds: detail.value.figures.wallSeconds });

    const page = await services.api.runs.responses({ runId, limit: 2, offset: 1 });
    expect(page.ok && [page.value.total, page.value.items.length, page.value.offset]).toEqual([4, 2, 1]);
    const key = page.ok ? page.value.items[0]!.key : -1;
    const one = await services.api.runs.response({ runId, key });
    expect(one.ok && one.value.verdicts.length).toBeGreaterThan(0);
    // What decided each verdict, worked out by the scorer that gave it.
    expect(one.ok && one.value.verdicts.map((v) => typeof v.finding)).toEqual(one.ok ? one.value.verdicts.map(() => 'string') : []);
    const instructionId = one.ok ? one.value.verdicts[0]!.instructionId : '';
    const filtered = await services.api.runs.responses({ runId, instructionId });
    expect(filtered.ok && filtered.value.items.length).toBeGreaterThan(0);
    expect(filtered.ok && filtered.value.items.every((r) => typeof r.instructionVerdict?.finding === 'string')).toBe(true);
    expect(await services.api.runs.response({ runId, key: -5 })).toMatchObject({ ok: false, error: { code: 'NOT_FOUND' } });

    const second = await services.api.runs.start({ modelId: 'horizon--tiny@ccccccc/bf16', limit: 2 });
    if (!second.ok) throw new Error(second.error.message);
    await services.runs.activeRun?.done;
    const cmp = await services.api.runs.compare({ runA: runId, runB: second.value.id });
    expect(cmp.ok && cmp.value.common).toBe(2);
    const list = await services.api.runs.list();
    expect(list.ok && list.value.length).toBe(2);

    const zip = await services.api.export.exportRun({ runId });
    if (!zip.ok) throw new Error(zip.error.message);
    expect(zip.value.path).toBe(path.join(dataDir, 'exports', `${runId}.zip`));
    expect(await services.api.export.verify({ path: zip.value.path })).toMatchObject({
      ok: true,
      // A run over the first 4 official prompts: its rows were compared with the official ones, nothing left unchecked.
      value: {
        verified: true, problems: [], unchecked: [], run: { status: 'completed', responses: 4, total: 4 },
        subject: { id: runId, label: null, modelRepo: 'horizon/tiny', modelRevision: COMMIT, modelId: 'horizon--tiny@ccccccc/int4-g32', weights: 'int4', backendLabel: 'CPU backend' },
        // As the stored run counts its endings, at its cap of 64.
        cut: { cut: detail.value.endings.length, of: 4, maxNewTokens: 64 },
      },
    });
    expect(await services.api.export.verify({ path: 'relative.zip' })).toMatchObject({ ok: false, error: { code: 'BAD_INPUT' } });

    // A chosen path replaces a ZIP, never another file.
    const notes = path.join(dataDir, 'notes.txt');
    await writeFile(notes, 'mine');
    expect(await services.api.export.exportRun({ runId, path: notes })).toMatchObject({ ok: false, error: { message: `export path must end in .zip: ${notes}` } });
    const disguised = path.join(dataDir, 'thesis.zip');
    await writeFile(disguised, 'not a zip at all');
    expect(await services.api.export.exportRun({ runId, path: disguised })).toMatchObject({ ok: false, error: { message: `${disguised} exists and is not a ZIP; choose another name` } });
    expect(await readFile(disguised, 'utf8')).toBe('not a zip at all');
    // A FIFO (or any non-file) named as the target or given to verify is refused without opening it: an open blocks.
    const fifo = path.join(dataDir, 'pipe.zip');
    execFileSync('mkfifo', [fifo]);
    expect(await services.api.export.exportRun({ runId, path: fifo })).toMatchObject({ ok: false, error: { message: `${fifo} exists and is not a file; choose another name` } });
    expect(await services.api.export.verify({ path: fifo })).toMatchObject({ ok: false, error: { code: 'BAD_INPUT', message: expect.stringContaining(`${fifo}: not a regular file`) } });
    expect(await services.api.models.importAssets({ kind: 'ifeval', path: fifo })).toMatchObject({ ok: false, error: { code: 'BAD_INPUT', message: `${fifo}: not a regular file` } });
    const again = await services.api.export.exportRun({ runId, path: zip.value.path });
    expect(again.ok).toBe(true);
  });

  it('deletes a finished run with its responses, and its result ZIP in exports/ only when asked', async () => {
    const exports = path.join(dataDir, 'exports');
    const [a, b, c] = [await finishedRun(2, 2), await finishedRun(3, 2), await finishedRun(1, 2)];
    const deletions = () => events.filter((e) => e.name === 'runs:onDidDelete').map((e) => e.payload);
    const announced = deletions().length;
    for (const id of [a, b]) expect((await services.api.export.exportRun({ runId: id })).ok).toBe(true);
    // Files that are not the run's ZIP: another name, a copy, and (for c) a link named as its ZIP, to a file outside.
    await writeFile(path.join(exports, `${a}.zip.bak`), 'copy');
    await writeFile(path.join(exports, 'notes.zip'), 'mine');
    const outside = path.join(dataDir, 'outside.zip');
    await writeFile(outside, 'not in exports');
    fs.symlinkSync(outside, path.join(exports, `${c}.zip`));

    const zipA = path.join(exports, `${a}.zip`);
    expect(await services.api.export.listZips({ runId: a })).toEqual({ ok: true, value: [{ path: zipA, name: `${a}.zip`, bytes: fs.statSync(zipA).size }] });
    expect(await services.api.export.listZips({ runId: c })).toEqual({ ok: true, value: [] });

    // Not asked: the ZIP stays.
    expect(await services.api.runs.delete({ runId: a })).toEqual({ ok: true, value: { runId: a, responses: 2, deletedFiles: [], fileErrors: [] } });
    expect(await services.api.runs.get({ runId: a })).toMatchObject({ ok: false, error: { code: 'NOT_FOUND' } });
    for (const t of ['runs', 'run_figures', 'responses', 'verdicts']) {
      expect(services.db.prepare(`SELECT COUNT(*) FROM ${t} WHERE ${t === 'runs' ? 'id' : 'run_id'} = ?`).pluck().get(a)).toBe(0);
    }
    expect(fs.existsSync(zipA)).toBe(true);
    expect(await services.api.runs.delete({ runId: a })).toMatchObject({ ok: false, error: { code: 'NOT_FOUND', message: `run ${a} not found` } });

    const zipB = path.join(exports, `${b}.zip`);
    expect(await services.api.runs.delete({ runId: b, deleteExport: true })).toEqual({
      ok: true, value: { runId: b, responses: 3, deletedFiles: [zipB], fileErrors: [] },
    });
    expect(fs.existsSync(zipB)).toBe(false);
    expect(await services.api.runs.delete({ runId: c, deleteExport: true })).toEqual({
      ok: true, value: { runId: c, responses: 1, deletedFiles: [], fileErrors: [] },
    });
    expect(fs.readFileSync(outside, 'utf8')).toBe('not in exports');
    expect(fs.lstatSync(path.join(exports, `${c}.zip`)).isSymbolicLink()).toBe(true);
    for (const kept of [`${a}.zip`, `${a}.zip.bak`, 'notes.zip']) expect(fs.existsSync(path.join(exports, kept))).toBe(true);
    const left = await services.api.runs.list();
    expect(left.ok && left.value.map((r) => r.id).filter((id) => [a, b, c].includes(id))).toEqual([]);
    // Each deletion is announced once; the refused second delete of a is not.
    expect(deletions().slice(announced)).toEqual([{ runId: a }, { runId: b }, { runId: c }]);
  });

  it('announces a deleted run to every window over IPC and to every `horizon serve` client, and a refused delete to none', async () => {
    const [viaIpc, viaServe] = [await finishedRun(), await finishedRun()];

    // Electron: the IPC handlers, and the fan-out main gives the services, to two windows.
    const handlers = new Map<string, (event: IpcMainInvokeEvent, payload: unknown) => unknown>();
    const ipcMain = { handle: (ch: string, h: never) => handlers.set(ch, h), removeHandler: (ch: string) => handlers.delete(ch) };
    const off = registerIpc(ipcMain as unknown as IpcMain, services.api, () => true);
    const sent: string[] = [];
    const window = (name: string) =>
      ({ isDestroyed: () => false, send: (ch: string, payload: unknown) => sent.push(`${name} ${ch} ${JSON.stringify(payload)}`) }) as unknown as WebContents;
    forward = createEventFanout(() => [window('w1'), window('w2')]);
    const sender = { senderFrame: { url: 'app://renderer/index.html', parent: null } } as unknown as IpcMainInvokeEvent;
    try {
      expect(await handlers.get('runs:delete')!(sender, { runId: 'no-such-run' })).toMatchObject({ ok: false, error: { code: 'NOT_FOUND' } });
      expect(sent).toEqual([]);
      expect(await handlers.get('runs:delete')!(sender, { runId: viaIpc })).toMatchObject({ ok: true });
      expect(sent).toEqual([`w1 runs:onDidDelete {"runId":"${viaIpc}"}`, `w2 runs:onDidDelete {"runId":"${viaIpc}"}`]);
    } finally {
      off();
      forward = undefined;
    }

    // `horizon serve`: the delete route, and the event to every open tab's socket.
    const server = await startServeServer({ api: services.api, staticDir: dataDir, token: 'tok' });
    forward = server.emit;
    try {
      const tab = async () => {
        const ws = new WebSocket(`ws://127.0.0.1:${server.port}/events`, ['horizon-events', 'token.tok']);
        await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject));
        const messages: unknown[] = [];
        ws.on('message', (data) => messages.push(JSON.parse(String(data))));
        return { ws, messages };
      };
      const tabs = [await tab(), await tab()];
      const del = (runId: string) =>
        fetch(`http://127.0.0.1:${server.port}/api/runs/delete`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: 'Bearer tok' },
          body: JSON.stringify({ runId }),
        }).then((r) => r.json());
      expect(await del(viaIpc)).toMatchObject({ ok: false, error: { code: 'NOT_FOUND' } });
      expect(await del(viaServe)).toMatchObject({ ok: true, value: { runId: viaServe } });
      for (const t of tabs) {
        await expect.poll(() => t.messages).toEqual([{ event: 'runs:onDidDelete', payload: { runId: viaServe } }]);
        t.ws.close();
      }
    } finally {
      forward = undefined;
      await server.close();
    }
  });

  it('announces a run `horizon delete` deleted from another process while the app is open, once', async () => {
    const [elsewhere, here] = [await finishedRun(), await finishedRun()];
    const deletions = () => events.filter((e) => e.name === 'runs:onDidDelete').map((e) => e.payload);
    const before = deletions().length;
    services.external.check();
    expect(deletions().length).toBe(before);
    const cli = path.resolve(import.meta.dirname, '..', '..', '..', '..', '..', 'scripts', 'horizon.mjs');
    const out = execFileSync(process.execPath, [cli, 'delete', elsewhere, '--data-dir', dataDir], { encoding: 'utf8' });
    expect(out).toContain(`deleted run ${elsewhere}`);
    // Its own deletion in the same interval is announced by the delete itself, not a second time by the check.
    expect(await services.api.runs.delete({ runId: here })).toMatchObject({ ok: true });
    services.external.check();
    services.external.check();
    expect(deletions().slice(before)).toEqual([{ runId: here }, { runId: elsewhere }]);
  });

  it('starts a run with its label, trimmed, and refuses a bad one before storing a run', async () => {
    const modelId = 'horizon--tiny@ccccccc/int4-g32';
    const count = async () => {
      const l = await services.api.runs.list();
      return l.ok ? l.value.length : -1;
    };
    const stored = await count();
    expect(await services.api.runs.start({ modelId, limit: 1, label: 'two\nlines' })).toEqual({
      ok: false,
      error: { code: 'BAD_INPUT', message: 'A label is one line of text, without control characters.' },
    });
    expect(await count()).toBe(stored);
    const r = await services.api.runs.start({ modelId, limit: 1, batch: 1, maxNewTokens: 16, label: ' from the start ' });
    expect(r).toMatchObject({ ok: true, value: { label: 'from the start' } });
    await services.runs.activeRun?.done;
    expect(await services.api.runs.get({ runId: r.ok ? r.value.id : '' })).toMatchObject({ ok: true, value: { status: 'completed', label: 'from the start' } });
  });

  it('starts a campaign with its label, and refuses a bad one before storing a campaign', async () => {
    const modelId = 'horizon--tiny@ccccccc/int4-g32';
    const listed = async () => {
      const l = await services.api.perf.list();
      return l.ok ? l.value : [];
    };
    const before = (await listed()).length;
    expect(await services.api.perf.start({ modelId, label: 'x'.repeat(81) })).toEqual({
      ok: false,
      error: { code: 'BAD_INPUT', message: 'A label has at most 80 characters (this one has 81).' },
    });
    expect(await listed()).toHaveLength(before);
    const r = await services.api.perf.start({ modelId, label: ' cold cache ' });
    expect(r).toMatchObject({ ok: true, value: { label: 'cold cache' } });
    if (r.ok) {
      expect((await services.api.perf.cancel({ campaignId: r.value.id })).ok).toBe(true);
      expect((await listed()).find((c) => c.id === r.value.id)).toMatchObject({ status: 'cancelled', label: 'cold cache' });
    }
  });

  it('labels a run, tells every UI once, refuses a bad label, and clears it', async () => {
    const runId = await finishedRun();
    const told = () => events.filter((e) => e.name === 'runs:onDidLabel').map((e) => e.payload);
    const before = told().length;
    const labelled = await services.api.runs.setLabel({ runId, label: '  baseline g32 ' });
    expect(labelled).toMatchObject({ ok: true, value: { id: runId, label: 'baseline g32' } });
    const listed = await services.api.runs.list();
    expect(listed.ok && listed.value.find((r) => r.id === runId)?.label).toBe('baseline g32');
    expect(await services.api.runs.setLabel({ runId, label: 'x'.repeat(81) })).toEqual({
      ok: false,
      error: { code: 'BAD_INPUT', message: 'A label has at most 80 characters (this one has 81).' },
    });
    expect(await services.api.runs.setLabel({ runId, label: 'a\nb' })).toMatchObject({ ok: false, error: { code: 'BAD_INPUT' } });
    expect(await services.api.runs.setLabel({ runId: 'nope', label: 'x' })).toMatchObject({ ok: false, error: { code: 'NOT_FOUND', message: 'run nope not found' } });
    expect(await services.api.runs.setLabel({ runId, label: '' })).toMatchObject({ ok: true, value: { label: null } });
    // The checks that follow see no other process's change: this process's own labels are not announced again.
    services.external.check();
    expect(told().slice(before)).toEqual([{ runId, label: 'baseline g32' }, { runId, label: null }]);
  });

  it('announces a label `horizon label` gave from another process while the app is open, once', async () => {
    const runId = await finishedRun();
    const told = () => events.filter((e) => e.name === 'runs:onDidLabel').map((e) => e.payload);
    const before = told().length;
    services.external.check();
    const cli = path.resolve(import.meta.dirname, '..', '..', '..', '..', '..', 'scripts', 'horizon.mjs');
    expect(execFileSync(process.execPath, [cli, 'label', runId, 'from the CLI', '--data-dir', dataDir], { encoding: 'utf8' })).toBe(
      `labelled run ${runId} "from the CLI"\n`,
    );
    services.external.check();
    services.external.check();
    expect(told().slice(before)).toEqual([{ runId, label: 'from the CLI' }]);
    const list = execFileSync(process.execPath, [cli, 'export', '--list', '--data-dir', dataDir], { encoding: 'utf8' });
    expect(list.split('\n').find((l) => l.startsWith(runId))).toMatch(/ "from the CLI"$/);
    execFileSync(process.execPath, [cli, 'label', runId, '--clear', '--data-dir', dataDir], { encoding: 'utf8' });
    services.external.check();
    expect(told().slice(before)).toEqual([{ runId, label: 'from the CLI' }, { runId, label: null }]);
  });

  it('imports a result ZIP into History: announced once, listed as imported, exported again, never resumed', async () => {
    const runId = await finishedRun(2, 2);
    const exported = await services.api.export.exportRun({ runId });
    if (!exported.ok) throw new Error(exported.error.message);
    const zip = exported.value.path;
    const before = await services.api.runs.get({ runId });
    if (!before.ok) throw new Error(before.error.message);
    const imports = () => events.filter((e) => e.name === 'runs:onDidImport').map((e) => e.payload);
    const announced = imports().length;

    expect(await services.api.export.importRun({ path: zip })).toEqual({
      ok: false,
      error: { code: 'BAD_INPUT', message: `${zip}: run ${runId} is stored already: it was made on this machine` },
    });
    expect(await services.api.export.importRun({ path: 'relative.zip' })).toMatchObject({ ok: false, error: { code: 'BAD_INPUT', message: 'ZIP path must be absolute: relative.zip' } });
    expect((await services.api.runs.delete({ runId })).ok).toBe(true);

    const imported = await services.api.export.importRun({ path: zip });
    if (!imported.ok) throw new Error(imported.error.message);
    const { imported: origin, ...summary } = imported.value.run;
    const { imported: none, ...beforeDetail } = before.value;
    expect(none).toBeNull();
    // Every field of the run as it was, but where it came from: the summary, then the whole detail, whatever it holds.
    expect(beforeDetail).toMatchObject(summary);
    expect(Object.keys(summary).every((k) => k in beforeDetail)).toBe(true);
    expect(origin).toEqual({ file: zip, sha256: exported.value.sha256, importedAt: expect.any(String) });
    const after = await services.api.runs.get({ runId });
    if (!after.ok) throw new Error(after.error.message);
    const { imported: afterOrigin, ...afterDetail } = after.value;
    expect(afterOrigin).toEqual(origin);
    expect(afterDetail).toEqual(beforeDetail);
    const { endings } = beforeDetail;
    // The responses' endings came back with them.
    expect(endings.stop + endings.length).toBe(before.value.done);
    services.external.check();
    expect(imports().slice(announced)).toEqual([{ runId }]);

    expect(await services.api.runs.resume({ runId })).toEqual({
      ok: false,
      error: { code: 'BAD_INPUT', message: `run ${runId} is already complete` },
    });
    expect(await services.api.export.importRun({ path: zip })).toMatchObject({
      ok: false,
      error: { message: `${zip}: run ${runId} is stored already, imported from ${zip} at ${origin!.importedAt}` },
    });
    const copy = path.join(dataDir, 'copy.zip');
    const again = await services.api.export.exportRun({ runId, path: copy });
    expect(again.ok && again.value.sha256).toBe(exported.value.sha256);
  });

  it('announces a run `horizon import` imported from another process while the app is open, once', async () => {
    const runId = await finishedRun();
    const exported = await services.api.export.exportRun({ runId });
    if (!exported.ok) throw new Error(exported.error.message);
    expect((await services.api.runs.delete({ runId })).ok).toBe(true);
    const imports = () => events.filter((e) => e.name === 'runs:onDidImport').map((e) => e.payload);
    const announced = imports().length;
    const cli = path.resolve(import.meta.dirname, '..', '..', '..', '..', '..', 'scripts', 'horizon.mjs');
    const out = execFileSync(process.execPath, [cli, 'import', exported.value.path, '--data-dir', dataDir], { encoding: 'utf8' });
    expect(out.split('\n')[0]).toBe(`imported run ${runId} (completed, 1 of 1 prompts, CPU backend) from ${exported.value.path} into ${path.join(dataDir, 'runmap.sqlite')}`);
    services.external.check();
    services.external.check();
    expect(imports().slice(announced)).toEqual([{ runId }]);
    const listed = await services.api.runs.list();
    expect(listed.ok && listed.value.find((r) => r.id === runId)?.imported?.file).toBe(exported.value.path);
    const list = execFileSync(process.execPath, [cli, 'export', '--list', '--data-dir', dataDir], { encoding: 'utf8' });
    expect(list.split('\n').find((l) => l.startsWith(runId))).toMatch(new RegExp(`  imported from ${exported.value.path}$`));
  });

  it("adds another machine's campaign ZIP to the campaigns, and points each kind of ZIP to its own page", async () => {
    const campaignZip = path.join(dataDir, 'perf-elsewhere.zip');
    const perf = await writeElsewhereCampaignZip('perf-elsewhere', campaignZip);

    // The History card's Verify tells a campaign ZIP from a result ZIP and checks it as horizon verify does.
    expect(await services.api.export.verify({ path: campaignZip })).toEqual({
      ok: true,
      value: {
        kind: 'campaign', verified: true, problems: [], unchecked: [], accuracies: null,
        subject: {
          id: 'perf-elsewhere', label: null, modelRepo: 'o/m', modelRevision: 'a'.repeat(40), modelId: 'm@abc/int4-g32', weights: 'int4',
          backendLabel: 'CPU backend', createdAt: '2026-12-06T10:00:00.000Z',
        },
      },
    });
    const imported = await services.api.perf.importZip({ path: campaignZip });
    if (!imported.ok) throw new Error(imported.error.message);
    expect(imported.value).toMatchObject({ id: 'perf-elsewhere', status: 'completed', deviceLabel: 'CPU', imported: { file: campaignZip } });
    const stored = await services.api.perf.get({ campaignId: 'perf-elsewhere' });
    expect(stored.ok && stored.value.requests).toEqual(perf.get('perf-elsewhere')!.requests);
    expect(await services.api.perf.importZip({ path: campaignZip })).toMatchObject({
      ok: false,
      error: { code: 'BAD_INPUT', message: expect.stringMatching(`^${campaignZip}: campaign perf-elsewhere is stored already, imported from `) },
    });

    expect(await services.api.export.importRun({ path: campaignZip })).toEqual({
      ok: false,
      error: { code: 'BAD_INPUT', message: `${campaignZip}: is a performance campaign ZIP, not a result ZIP; import it on the Performance page` },
    });
    const runId = await finishedRun();
    const resultZip = await services.api.export.exportRun({ runId });
    if (!resultZip.ok) throw new Error(resultZip.error.message);
    expect(await services.api.perf.importZip({ path: resultZip.value.path })).toEqual({
      ok: false,
      error: { code: 'BAD_INPUT', message: `${resultZip.value.path}: is not a performance campaign ZIP; a result ZIP is added to History on the History page` },
    });

    // An imported campaign is deleted like one measured here, and can then be imported again; each is announced once.
    const campaignEvents = () => events.filter((e) => e.name.startsWith('perf:onDid') && e.name !== 'perf:onDidProgress');
    expect(campaignEvents()).toEqual([{ name: 'perf:onDidImport', payload: { campaignId: 'perf-elsewhere' } }]);
    // Its ZIP in exports/ goes with it only when asked.
    const campaignExport = path.join(dataDir, 'exports', 'perf-elsewhere.zip');
    expect(await services.api.perf.listZips({ campaignId: 'perf-elsewhere' })).toEqual({ ok: true, value: [] });
    expect(await services.api.perf.exportZip({ campaignId: 'perf-elsewhere' })).toMatchObject({ ok: true, value: { path: campaignExport } });
    const listedZip = { path: campaignExport, name: 'perf-elsewhere.zip', bytes: fs.statSync(campaignExport).size };
    expect(await services.api.perf.listZips({ campaignId: 'perf-elsewhere' })).toEqual({ ok: true, value: [listedZip] });
    expect(await services.api.perf.delete({ campaignId: 'perf-elsewhere', deleteExport: true })).toEqual({
      ok: true,
      value: { campaignId: 'perf-elsewhere', requests: 1, deletedFiles: [campaignExport], fileErrors: [] },
    });
    expect(fs.existsSync(campaignExport)).toBe(false);
    expect(await services.api.perf.delete({ campaignId: 'perf-elsewhere' })).toEqual({
      ok: false,
      error: { code: 'NOT_FOUND', message: 'campaign perf-elsewhere not found' },
    });
    expect(services.db.prepare("SELECT COUNT(*) FROM perf_requests WHERE campaign_id = 'perf-elsewhere'").pluck().get()).toBe(0);
    expect((await services.api.perf.importZip({ path: campaignZip })).ok).toBe(true);
    expect((await services.api.perf.exportZip({ campaignId: 'perf-elsewhere' })).ok).toBe(true);
    expect(await services.api.perf.delete({ campaignId: 'perf-elsewhere' })).toEqual({
      ok: true,
      value: { campaignId: 'perf-elsewhere', requests: 1, deletedFiles: [], fileErrors: [] },
    });
    expect(fs.existsSync(campaignExport)).toBe(true);
    expect(campaignEvents().map((e) => e.name)).toEqual(['perf:onDidImport', 'perf:onDidDelete', 'perf:onDidImport', 'perf:onDidDelete']);
  });

  it('announces a campaign `horizon import`, `label --campaign` and `delete --campaign` changed from another process, once each', async () => {
    const zip = path.join(dataDir, 'perf-cli.zip');
    await writeElsewhereCampaignZip('perf-cli', zip);
    const cli = path.resolve(import.meta.dirname, '..', '..', '..', '..', '..', 'scripts', 'horizon.mjs');
    const told = () => events.filter((e) => e.name !== 'perf:onDidProgress' && e.name.startsWith('perf:') && (e.payload as { campaignId: string }).campaignId === 'perf-cli');
    services.external.check();
    execFileSync(process.execPath, [cli, 'import', zip, '--data-dir', dataDir], { encoding: 'utf8' });
    services.external.check();
    services.external.check();
    execFileSync(process.execPath, [cli, 'label', '--campaign', 'perf-cli', 'from the CLI', '--data-dir', dataDir], { encoding: 'utf8' });
    services.external.check();
    // This process's own label is not announced a second time by the check.
    expect(await services.api.perf.setLabel({ campaignId: 'perf-cli', label: ' here ' })).toMatchObject({ ok: true, value: { id: 'perf-cli', label: 'here' } });
    services.external.check();
    expect(await services.api.perf.setLabel({ campaignId: 'perf-cli', label: 'a\tb' })).toMatchObject({ ok: false, error: { code: 'BAD_INPUT' } });
    expect(await services.api.perf.setLabel({ campaignId: 'perf-nope', label: 'x' })).toMatchObject({ ok: false, error: { code: 'NOT_FOUND' } });
    execFileSync(process.execPath, [cli, 'delete', '--campaign', 'perf-cli', '--data-dir', dataDir], { encoding: 'utf8' });
    services.external.check();
    services.external.check();
    expect(told().map((e) => [e.name, (e.payload as { label?: string | null }).label])).toEqual([
      ['perf:onDidImport', undefined],
      ['perf:onDidLabel', 'from the CLI'],
      ['perf:onDidLabel', 'here'],
      ['perf:onDidDelete', undefined],
    ]);
  });

  it('refuses a second set of services on the same data folder while the first is open', () => {
    expect(() =>
      createServices({ dataDir, hubUrl: 'http://localhost', spawner: inProcessWorkers(() => createScriptedEngine()).spawner, emit: () => undefined, appVersion: '9.9.9' }),
    ).toThrow(`${dataDir} is in use by this process (the Horizon RunMap app, horizon serve or horizon eval); close it first`);
  });

  it('answers unknown runs and models with NOT_FOUND / MODEL_NOT_FOUND', async () => {
    expect(await services.api.runs.get({ runId: 'nope' })).toMatchObject({ ok: false, error: { code: 'NOT_FOUND' } });
    expect(await services.api.runs.cancel({ runId: 'nope' })).toMatchObject({ ok: false, error: { code: 'NOT_FOUND' } });
    expect(await services.api.runs.start({ modelId: 'x/y' })).toMatchObject({ ok: false, error: { code: 'MODEL_NOT_FOUND' } });
  });
});

describe('createServices (scripted worker reporting a GPU)', () => {
  let dataDir: string;
  let services: Services;
  let workers: ReturnType<typeof inProcessWorkers>;

  beforeAll(async () => {
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'horizon-services-gpu-'));
    // OLMoE-1B-7B's attention: 128 KiB of FP16 K and V per token.
    await writePreparedModel(dataDir, { num_hidden_layers: 16, num_attention_heads: 16, num_key_value_heads: 16, hidden_size: 2048 });
    const gpu = (index: number, gib: number) => ({
      index, name: `GPU ${index}`, vramBytes: gib * 2 ** 30, freeVramBytes: gib * 2 ** 30, driverVersion: '13.0', computeCapability: '8.9',
    });
    workers = inProcessWorkers(() => createScriptedEngine({ devices: [gpu(0, 12), gpu(1, 80)] }));
    services = createServices({
      dataDir, hubUrl: 'http://localhost', spawner: workers.spawner, emit: () => undefined, appVersion: '9.9.9', sharedAssetsDir: shared,
    });
  });
  afterAll(async () => {
    await services.dispose();
    await rm(dataDir, { recursive: true, force: true });
  });

  it('sizes the batch of a run that asks for none for the GPU it will use', async () => {
    const start = async (req: { cudaDevice?: number }) => {
      const r = await services.api.runs.start({ modelId: 'horizon--tiny@ccccccc/int4-g32', limit: 2, maxNewTokens: 1792, ...req });
      if (!r.ok) throw new Error(r.error.message);
      await services.runs.activeRun?.done;
      const d = await services.api.runs.get({ runId: r.value.id });
      if (!d.ok) throw new Error(d.error.message);
      return d.value;
    };
    // Context: the longest chat prompt plus 1792 new tokens, rounded up to 2048 tokens = 256 MiB of KV a sequence.
    // 12 GiB: 10.8 - 1.5 GiB of room = 37 → 32 sequences; 80 GiB: 64, the most.
    expect(await start({})).toMatchObject({ status: 'completed', batch: 32, policy: { batch: 32, cudaDevice: null } });
    expect(await start({ cudaDevice: 1 })).toMatchObject({ status: 'completed', batch: 64, policy: { batch: 64, cudaDevice: 1 } });
    // After the worker crashed (a lost GPU context ends it), the probe restarts it rather than falling back to the
    // CPU's batch of 8.
    workers.crash();
    await expect.poll(() => services.worker.state).toBe('crashed');
    expect(await start({ cudaDevice: 1 })).toMatchObject({ status: 'completed', batch: 64 });
  });

  it('refuses a GPU the machine does not have before storing a run, as horizon eval does', async () => {
    const before = await services.api.runs.list();
    const r = await services.api.runs.start({ modelId: 'horizon--tiny@ccccccc/int4-g32', limit: 2, cudaDevice: 7 });
    expect(r).toEqual({ ok: false, error: { code: 'BAD_INPUT', message: 'CUDA device 7 was chosen, but this machine has 0: GPU 0, 1: GPU 1' } });
    expect(await services.api.runs.list()).toEqual(before);
  });
});

describe('createServices (a worker whose generation hangs)', () => {
  let dataDir: string;
  let services: Services;
  let workers: ReturnType<typeof inProcessWorkers>;
  let hang = true;
  let generating = 0;

  beforeAll(async () => {
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'horizon-services-hang-'));
    await writePreparedModel(dataDir);
    workers = inProcessWorkers(() => {
      const engine = createScriptedEngine();
      return {
        probe: engine.probe,
        load: async (req) => {
          const m = await engine.load(req);
          return {
            ...m,
            generate: (prompts, policy, onToken, signal) => {
              generating++;
              // A device call that never returns: the cancel signal is never looked at.
              return hang ? new Promise<never>(() => undefined) : m.generate(prompts, policy, onToken, signal);
            },
          };
        },
      };
    });
    services = createServices({
      dataDir, hubUrl: 'http://localhost', spawner: workers.spawner, appVersion: '9.9.9', sharedAssetsDir: shared,
      emit: () => undefined, cancelGraceMs: 100,
    });
  });
  afterAll(async () => {
    await services.dispose();
    await rm(dataDir, { recursive: true, force: true });
  });

  it('cancels by restarting the worker when it does not stop, as a cancel (not a failure), and resumes', async () => {
    const started = await services.api.runs.start({ modelId: 'horizon--tiny@ccccccc/int4-g32', limit: 3, batch: 2, maxNewTokens: 8 });
    if (!started.ok) throw new Error(started.error.message);
    const runId = started.value.id;
    await expect.poll(() => generating, { timeout: 10_000, interval: 5 }).toBe(1);
    expect(await services.api.runs.cancel({ runId })).toEqual({ ok: true, value: undefined });
    expect(await services.api.runs.get({ runId })).toMatchObject({ ok: true, value: { status: 'cancelled', error: null, done: 0 } });
    expect(workers.spawned).toBe(2);
    expect(services.worker.state).toBe('ready');
    hang = false;
    expect((await services.api.runs.resume({ runId })).ok).toBe(true);
    await services.runs.activeRun?.done;
    expect(await services.api.runs.get({ runId })).toMatchObject({ ok: true, value: { status: 'completed', done: 3 } });
  });
});

describe('createServices (scripted worker, slow tokens)', () => {
  let dataDir: string;
  let services: Services;
  const responses: string[] = [];

  beforeAll(async () => {
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'horizon-services-cancel-'));
    await writePreparedModel(dataDir);
    const workers = inProcessWorkers(() => createScriptedEngine({ tokenDelayMs: 5 }));
    services = createServices({
      dataDir, hubUrl: 'http://localhost', spawner: workers.spawner, appVersion: '9.9.9', sharedAssetsDir: shared,
      emit: (name, payload) => {
        if (name === 'runs:onDidResponse') responses.push((payload as EventMap['runs:onDidResponse']).runId);
      },
    });
  });
  afterAll(async () => {
    await services.dispose();
    await rm(dataDir, { recursive: true, force: true });
  });

  it('answers a cancel once the run has stopped, so it can be resumed at once', async () => {
    const started = await services.api.runs.start({ modelId: 'horizon--tiny@ccccccc/int4-g32', limit: 12, batch: 2, maxNewTokens: 64 });
    if (!started.ok) throw new Error(started.error.message);
    const runId = started.value.id;
    await expect.poll(() => responses.length, { timeout: 10_000, interval: 5 }).toBeGreaterThan(0);
    expect(await services.api.runs.cancel({ runId })).toEqual({ ok: true, value: undefined });
    const stopped = await services.api.runs.get({ runId });
    expect(stopped.ok && stopped.value.status).toBe('cancelled');
    const kept = stopped.ok ? stopped.value.done : -1;
    expect(kept).toBeLessThan(12);
    const resumed = await services.api.runs.resume({ runId });
    expect(resumed.ok).toBe(true);
    await services.runs.activeRun?.done;
    const detail = await services.api.runs.get({ runId });
    expect(detail.ok && [detail.value.status, detail.value.done]).toEqual(['completed', 12]);
  });

  it('refuses to delete the run in progress, and deletes it once cancelled', async () => {
    const started = await services.api.runs.start({ modelId: 'horizon--tiny@ccccccc/int4-g32', limit: 12, batch: 2, maxNewTokens: 64 });
    if (!started.ok) throw new Error(started.error.message);
    const runId = started.value.id;
    expect(await services.api.runs.delete({ runId, deleteExport: true })).toMatchObject({
      ok: false,
      error: { code: 'BAD_INPUT', message: `run ${runId} is running: cancel it before deleting it` },
    });
    expect(await services.api.runs.cancel({ runId })).toEqual({ ok: true, value: undefined });
    // Asked while a resume of it is on its way (before the resume has marked it running): refused too.
    const [resumed, refused] = await Promise.all([services.api.runs.resume({ runId }), services.api.runs.delete({ runId })]);
    expect(resumed.ok).toBe(true);
    expect(refused).toMatchObject({ ok: false, error: { code: 'BAD_INPUT', message: `run ${runId} is running: cancel it before deleting it` } });
    expect(await services.api.runs.cancel({ runId })).toEqual({ ok: true, value: undefined });
    const deleted = await services.api.runs.delete({ runId });
    expect(deleted.ok && deleted.value.runId).toBe(runId);
    expect(await services.api.runs.resume({ runId })).toMatchObject({ ok: false, error: { code: 'NOT_FOUND' } });
  });

  it('refuses to delete the model a live run uses, and deletes its INT4 pack once the run is cancelled', async () => {
    const started = await services.api.runs.start({ modelId: 'horizon--tiny@ccccccc/int4-g32', limit: 12, batch: 2, maxNewTokens: 64 });
    if (!started.ok) throw new Error(started.error.message);
    expect(await services.api.models.delete({ modelId: 'horizon--tiny@ccccccc/int4-g32', scope: 'variant' })).toMatchObject({
      ok: false,
      error: { code: 'BAD_INPUT', message: `run ${started.value.id} is using this model; cancel it before deleting the model` },
    });
    await services.api.runs.cancel({ runId: started.value.id });
    const deleted = await services.api.models.delete({ modelId: 'horizon--tiny@ccccccc/int4-g32', scope: 'variant' });
    expect(deleted.ok).toBe(true);
    const list = await services.api.models.list();
    expect(list.ok && list.value.map((m) => m.id)).toEqual(['horizon--tiny@ccccccc/bf16']);
    // Put back for the tests after this one.
    await rm(path.join(dataDir, 'models'), { recursive: true, force: true });
    await writePreparedModel(dataDir);
  });

  it('starts one of two runs asked for at once and refuses the other', async () => {
    const req = { modelId: 'horizon--tiny@ccccccc/int4-g32', limit: 2, batch: 2, maxNewTokens: 8 };
    const both = await Promise.all([services.api.runs.start(req), services.api.runs.start(req)]);
    expect(both.filter((r) => r.ok)).toHaveLength(1);
    expect(both.find((r) => !r.ok)).toMatchObject({ ok: false, error: { code: 'BAD_INPUT', message: 'another run is being started; wait for it' } });
    await services.runs.activeRun?.done;
  });
});

describe('createServices on a database it cannot write', () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it('names the database file and why, closes it and releases the data folder', async () => {
    const dataDir = await mkdtemp(path.join(os.tmpdir(), 'horizon-services-ro-'));
    try {
      const dbFile = path.join(dataDir, 'runmap.sqlite');
      // A database file on a read-only mount opens, and fails on the first write (marking interrupted runs).
      vi.spyOn(RunRepo.prototype, 'failInterrupted').mockImplementation(() => {
        throw Object.assign(new Error('attempt to write a readonly database'), { code: 'SQLITE_READONLY' });
      });
      const access = fs.accessSync;
      vi.spyOn(fs, 'accessSync').mockImplementation((p, mode) => {
        if (p === dbFile) throw Object.assign(new Error(`EROFS: read-only file system, access '${String(p)}'`), { code: 'EROFS' });
        access(p, mode);
      });
      const open = () =>
        createServices({ dataDir, hubUrl: 'http://localhost', spawner: inProcessWorkers(() => createScriptedEngine()).spawner, emit: () => undefined, appVersion: '9.9.9' });
      expect(open).toThrow(
        `${dbFile}: cannot open the database (the database file ${dbFile} is not writable (EROFS): copy the data folder to a writable place, or fix its permissions)`,
      );
      expect(fs.existsSync(path.join(dataDir, '.runmap.lock'))).toBe(false);
      vi.restoreAllMocks();
      await open().dispose();
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});
