import { create } from 'zustand';

import type { DeletedRun, ImportedRunReport, RunComparison, RunSummary, VerifyReport } from '../../../electron/common/ipc-contract.js';
import { readLabel } from '../../../electron/common/label.js';
import { call } from '../api.js';
import { confirmationSteps, deletesZips, lookUpZips, type PendingConfirmation, type ZipChoice } from './deletion.js';
import { askAboutZip } from './zip-request.js';
import { useResults } from './results.js';
import { useRuns } from './runs.js';
import { matchesEveryWord } from './word-filter.js';

/** A deletion being confirmed on the History page. */
export interface PendingDeletion extends PendingConfirmation, ZipChoice {
  readonly run: RunSummary;
}

interface HistoryState {
  runs: readonly RunSummary[];
  /** Up to two run ids, in the order they were picked (A then B). */
  selected: readonly string[];
  comparison: RunComparison | null;
  error: string | null;
  zipPath: string;
  verifyReport: VerifyReport | null;
  verifyError: string | null;
  verifying: boolean;
  /** What the last import of the ZIP at zipPath stored. */
  imported: ImportedRunReport | null;
  importError: string | null;
  importing: boolean;
  /** What the runs table is filtered by (runMatches); empty shows every run. */
  filter: string;
  setFilter(filter: string): void;
  refresh(): Promise<void>;
  setZipPath(path: string): void;
  /** Re-checks a result ZIP (hashes and re-scoring) by its path on the machine running the services. */
  verifyZip(): Promise<void>;
  /** Adds the run of the result ZIP at zipPath to History, once it verifies (the services verify it again). */
  importZip(): Promise<void>;
  toggle(runId: string): void;
  compare(): Promise<void>;
  clearComparison(): void;
  /** The deletion being confirmed, if any. */
  deletion: PendingDeletion | null;
  /** What the last deletion did. */
  deleted: DeletedRun | null;
  /** Opens the confirmation for a run and looks up its result ZIPs. */
  askDelete(runId: string): Promise<void>;
  setDeleteZips(on: boolean): void;
  cancelDelete(): void;
  /** Deletes the run being confirmed; true when it was deleted. */
  confirmDelete(): Promise<boolean>;
  /** Forgets what the last deletion did (the page is left). */
  dismissDeleted(): void;
  /** A run was deleted (`runs:onDidDelete`): every store lets go of it, unless this window's own delete is on its way. */
  handleDeleted(runId: string): void;
  /** Labels a run (empty text clears its label); the services' refusal as a sentence, or null once it is stored. */
  setLabel(runId: string, text: string): Promise<string | null>;
  /** A run's label changed (`runs:onDidLabel`, any window or `horizon label`): every store shows the new one. */
  handleLabelled(runId: string, label: string | null): void;
}

/** Numbers each `runs:list` request; the newest one whose reply has been shown. */
let listAsked = 0;
let listShown = 0;
/** Runs deleted while list requests were on their way: run id → the newest request sent before the deletion. */
const deletedWhileListing = new Map<string, number>();

function noteDeleted(runId: string): void {
  deletedWhileListing.set(runId, listAsked);
}

function sameAccuracies(a: RunSummary['accuracies'], b: RunSummary['accuracies']): boolean {
  if (a === b) return true;
  if (!a || !b) return false;
  return (
    a.promptStrict === b.promptStrict &&
    a.promptLoose === b.promptLoose &&
    a.instructionStrict === b.instructionStrict &&
    a.instructionLoose === b.instructionLoose
  );
}

function sameOrigin(a: RunSummary['imported'], b: RunSummary['imported']): boolean {
  return a === b || (a !== null && b !== null && a.file === b.file && a.sha256 === b.sha256 && a.importedAt === b.importedAt);
}

function sameSummary(a: RunSummary, b: RunSummary): boolean {
  const keys = Object.keys(b) as (keyof RunSummary)[];
  if (Object.keys(a).length !== keys.length) return false;
  return keys.every((k) =>
    k === 'accuracies' ? sameAccuracies(a.accuracies, b.accuracies) : k === 'imported' ? sameOrigin(a.imported, b.imported) : a[k] === b[k],
  );
}

/**
 * Whether a run is one the History filter asks for: every word of `query` (case aside) is in its id, label, model
 * (repo, revision, id), weights, device, status, or the ZIP it was imported from.
 */
export function runMatches(run: RunSummary, query: string): boolean {
  return matchesEveryWord(query, [
    run.id, run.label ?? '', run.modelRepo, run.modelRevision, run.modelId, run.weights, run.backendLabel, run.status, run.imported?.file ?? '',
  ]);
}

/**
 * The new list, keeping the previous objects of unchanged runs, and the previous array itself when nothing changed:
 * a live run refreshes the list twice a second, and only its own row should render again.
 */
export function mergeRuns(prev: readonly RunSummary[], next: readonly RunSummary[]): readonly RunSummary[] {
  const byId = new Map(prev.map((r) => [r.id, r]));
  let changed = prev.length !== next.length;
  const merged = next.map((r, i) => {
    const old = byId.get(r.id);
    const keep = old !== undefined && sameSummary(old, r) ? old : r;
    if (keep !== prev[i]) changed = true;
    return keep;
  });
  return changed ? merged : prev;
}

export const useHistory = create<HistoryState>((set, get) => ({
  runs: [],
  selected: [],
  comparison: null,
  error: null,
  filter: '',
  setFilter: (filter) => set({ filter }),
  zipPath: '',
  verifyReport: null,
  verifyError: null,
  verifying: false,
  imported: null,
  importError: null,
  importing: false,
  deletion: null,
  deleted: null,
  // A report is about the path it was asked for: it goes when the path changes, and so does a late reply.
  setZipPath: (zipPath) =>
    set({ zipPath, verifyReport: null, verifyError: null, verifying: false, imported: null, importError: null, importing: false }),
  verifyZip: async () => {
    await askAboutZip(get, set, { busy: 'verifying', value: 'verifyReport', error: 'verifyError' }, 'a result ZIP', (path) => call('export:verify', { path }));
  },
  importZip: async () => {
    const ok = await askAboutZip(get, set, { busy: 'importing', value: 'imported', error: 'importError' }, 'a result ZIP', (path) =>
      call('export:importRun', { path }),
    );
    if (ok) await get().refresh();
  },
  refresh: async () => {
    const mine = ++listAsked;
    const r = await call('runs:list', undefined);
    if (mine < listShown) return;
    listShown = mine;
    for (const [runId, before] of deletedWhileListing) if (before < mine) deletedWhileListing.delete(runId);
    if (!r.ok) return set({ error: r.error.message });
    // A reply asked for before a deletion can still list the deleted run.
    const runs = r.value.filter((x) => !deletedWhileListing.has(x.id));
    set({ runs: mergeRuns(get().runs, runs), error: null });
  },
  toggle: (runId) => {
    const sel = get().selected;
    // A comparison shown is of the runs it was asked for: it goes when the choice changes.
    if (sel.includes(runId)) set({ selected: sel.filter((id) => id !== runId), comparison: null });
    else set({ selected: [...sel, runId].slice(-2), comparison: null });
  },
  compare: async () => {
    const [runA, runB] = get().selected;
    if (!runA || !runB) {
      set({ error: 'Pick two runs to compare.' });
      return;
    }
    const r = await call('runs:compare', { runA, runB });
    set(r.ok ? { comparison: r.value, error: null } : { error: r.error.message });
  },
  clearComparison: () => set({ comparison: null }),
  askDelete: async (runId) => {
    const run = get().runs.find((r) => r.id === runId);
    if (!run || get().deletion?.busy) return;
    set({ deletion: { run, zips: null, deleteZips: false, busy: false, error: null }, deleted: null });
    await lookUpZips(get, set, (d) => d.run.id === runId, call('export:listZips', { runId }));
  },
  setDeleteZips: (on) => confirmationSteps(get, set).edit({ deleteZips: on }),
  cancelDelete: () => confirmationSteps(get, set).cancel(),
  confirmDelete: async () => {
    const steps = confirmationSteps(get, set);
    const d = steps.begin();
    if (!d) return false;
    const runId = d.run.id;
    const r = await call('runs:delete', { runId, ...(deletesZips(d) ? { deleteExport: true } : {}) });
    if (!r.ok) {
      steps.fail(d, r.error.message);
      return false;
    }
    noteDeleted(runId);
    const { runs, selected, comparison } = get();
    set({
      deletion: null,
      deleted: r.value,
      runs: runs.filter((x) => x.id !== runId),
      selected: selected.filter((id) => id !== runId),
      comparison: comparison && (comparison.a.id === runId || comparison.b.id === runId) ? null : comparison,
    });
    useResults.getState().forget(runId);
    useRuns.getState().forget(runId);
    void get().refresh();
    return true;
  },
  dismissDeleted: () => set({ deleted: null }),
  handleDeleted: (runId) => {
    noteDeleted(runId);
    const { runs, selected, comparison, deletion } = get();
    // confirmDelete lets go of it once its reply says what was deleted (the event can arrive before the reply).
    if (deletion?.busy && deletion.run.id === runId) return;
    set({
      runs: runs.filter((x) => x.id !== runId),
      selected: selected.filter((id) => id !== runId),
      comparison: comparison && (comparison.a.id === runId || comparison.b.id === runId) ? null : comparison,
      ...(deletion?.run.id === runId ? { deletion: null } : {}),
    });
    useResults.getState().handleDeleted(runId);
    useRuns.getState().forget(runId);
  },
  setLabel: async (runId, text) => {
    const { problem } = readLabel(text);
    if (problem) return problem;
    const r = await call('runs:setLabel', { runId, label: text });
    if (!r.ok) return r.error.message;
    get().handleLabelled(runId, r.value.label);
    return null;
  },
  handleLabelled: (runId, label) => {
    const relabel = <T extends RunSummary>(r: T): T => (r.id === runId && r.label !== label ? { ...r, label } : r);
    const { runs, comparison } = get();
    const next = runs.map(relabel);
    if (next.some((r, i) => r !== runs[i])) set({ runs: next });
    if (comparison && (comparison.a.id === runId || comparison.b.id === runId)) {
      set({ comparison: { ...comparison, a: relabel(comparison.a), b: relabel(comparison.b) } });
    }
    useResults.getState().handleLabelled(runId, label);
    useRuns.getState().handleLabelled(runId, label);
  },
}));
