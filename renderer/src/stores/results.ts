import { create } from 'zustand';

import type {
  ExportedZip,
  ResponseDetail,
  ResponsePage,
  ResponseSortKey,
  RunDetail,
  ScoreMode,
  VerdictFilter,
  VerifyReport,
} from '../../../electron/common/ipc-contract.js';
import { call } from '../api.js';

export const PAGE_SIZE = 20;

export interface ResponseFilters {
  instructionId: string;
  verdict: '' | VerdictFilter;
  mode: ScoreMode;
  text: string;
  /** How the responses ended: '' for any, 'stop' (the model's end token), 'length' (cut at max new tokens). */
  finish: '' | 'stop' | 'length';
}

export interface ResponseSort {
  by: ResponseSortKey;
  descending: boolean;
}

interface ResultsState {
  runId: string | null;
  detail: RunDetail | null;
  filters: ResponseFilters;
  /** A view preference: kept when another run opens. */
  sort: ResponseSort;
  offset: number;
  page: ResponsePage | null;
  selected: ResponseDetail | null;
  exported: ExportedZip | null;
  /** The run as it was exported: it can be resumed afterwards, and the ZIP keeps what it had then. */
  exportedRun: { status: string; done: number; total: number } | null;
  verify: VerifyReport | null;
  exporting: boolean;
  error: string | null;
  /** The run that was open until it turned out deleted elsewhere (another window, `horizon delete`). */
  gone: string | null;
  open(runId: string): Promise<void>;
  reload(): Promise<void>;
  setFilters(patch: Partial<ResponseFilters>): Promise<void>;
  /** Orders by `by`; the same column again flips the direction. Back to the first page. */
  sortBy(by: ResponseSortKey): Promise<void>;
  setOffset(offset: number): Promise<void>;
  openResponse(key: number): Promise<void>;
  /**
   * Opens the response after (+1) or before (-1) the open one in the list as filtered and sorted, turning the list's
   * page when it is on the next or previous one. Nothing when the open one is not on the page shown, or at either end.
   */
  stepResponse(step: 1 | -1): Promise<void>;
  closeResponse(): void;
  exportZip(): Promise<void>;
  /** Lets go of a run that was deleted, when it is the one open (the page then opens the newest run left). */
  forget(runId: string): void;
  /** A run was deleted in another window or tab: lets go of it, when open, and names it as gone. */
  handleDeleted(runId: string): void;
  /** Forgets `gone` (the page is left). */
  dismissGone(): void;
  /** A run's label changed: the open run shows the new one. */
  handleLabelled(runId: string, label: string | null): void;
}

/** Numbers each reload: only the latest one's answer is shown (an older, slower one must not overwrite it). */
let reloadSeq = 0;
/** The same for opening a response: stepping quickly through them, the last one asked for is the one shown. */
let openSeq = 0;
/** Where the step in progress goes (an index of the list as filtered and sorted); null when none is. */
let stepTarget: number | null = null;

/**
 * Where the open response stands in the list as filtered and sorted (`index` from 0 of `total`); null when it is not
 * on the page shown (opened from the address, or filtered out since).
 */
export function responsePosition(s: Pick<ResultsState, 'selected' | 'page'>): { index: number; total: number } | null {
  if (!s.selected || !s.page) return null;
  const i = s.page.items.findIndex((r) => r.key === s.selected!.key);
  return i < 0 ? null : { index: s.page.offset + i, total: s.page.total };
}

export const useResults = create<ResultsState>((set, get) => ({
  runId: null,
  detail: null,
  filters: { instructionId: '', verdict: '', mode: 'strict', text: '', finish: '' },
  sort: { by: 'key', descending: false },
  offset: 0,
  page: null,
  selected: null,
  exported: null,
  exportedRun: null,
  verify: null,
  exporting: false,
  error: null,
  gone: null,
  open: async (runId) => {
    if (get().runId !== runId) {
      // Another run: its own instructions and responses, so the filters start over (the scoring mode is a view).
      const filters = { ...get().filters, instructionId: '', verdict: '' as const, text: '', finish: '' as const };
      set({ runId, detail: null, page: null, selected: null, offset: 0, filters, exported: null, exportedRun: null, verify: null, exporting: false, error: null });
    }
    await get().reload();
  },
  reload: async () => {
    const { runId, filters, offset, sort } = get();
    if (!runId) return;
    const mine = ++reloadSeq;
    const [detail, page] = await Promise.all([
      call('runs:get', { runId }),
      call('runs:responses', {
        runId,
        ...(filters.instructionId ? { instructionId: filters.instructionId } : {}),
        ...(filters.verdict ? { verdict: filters.verdict, mode: filters.mode } : {}),
        ...(filters.text.trim() ? { text: filters.text.trim() } : {}),
        ...(filters.finish ? { finish: filters.finish } : {}),
        ...(sort.by !== 'key' ? { sortBy: sort.by } : {}),
        ...(sort.descending ? { descending: true } : {}),
        offset,
        limit: PAGE_SIZE,
      }),
    ]);
    if (mine !== reloadSeq || get().runId !== runId) return;
    if (!detail.ok && detail.error.code === 'NOT_FOUND') {
      // Deleted since it was opened: its figures and ZIP notice would describe nothing; the page opens the newest run.
      get().forget(runId);
      return set({ gone: runId, error: detail.error.message });
    }
    if (!detail.ok) return set({ error: detail.error.message });
    if (!page.ok) return set({ error: page.error.message, detail: detail.value });
    set({ detail: detail.value, page: page.value, error: null });
  },
  setFilters: async (patch) => {
    set({ filters: { ...get().filters, ...patch }, offset: 0 });
    await get().reload();
  },
  sortBy: async (by) => {
    const { sort } = get();
    set({ sort: { by, descending: sort.by === by ? !sort.descending : false }, offset: 0 });
    await get().reload();
  },
  setOffset: async (offset) => {
    set({ offset: Math.max(0, offset) });
    await get().reload();
  },
  openResponse: async (key) => {
    const runId = get().runId;
    if (!runId) return;
    const mine = ++openSeq;
    const r = await call('runs:response', { runId, key });
    if (mine !== openSeq || get().runId !== runId) return;
    set(r.ok ? { selected: r.value, error: null } : { error: r.error.message });
  },
  stepResponse: async (step) => {
    // Steps taken faster than responses load count from the last one asked for, not from the one shown.
    const from = stepTarget ?? responsePosition(get())?.index;
    const total = get().page?.total ?? 0;
    if (from === undefined) return;
    const target = from + step;
    if (target < 0 || target >= total) return;
    stepTarget = target;
    try {
      // The page as loaded (the state's offset moves before its reload answers).
      const shown = get().page;
      const onPage = shown !== null && target >= shown.offset && target < shown.offset + shown.items.length;
      if (!onPage) await get().setOffset(Math.floor(target / PAGE_SIZE) * PAGE_SIZE);
      const { page } = get();
      if (stepTarget !== target || !page || target < page.offset) return;
      const row = page.items[target - page.offset];
      if (row) await get().openResponse(row.key);
    } finally {
      if (stepTarget === target) stepTarget = null;
    }
  },
  closeResponse: () => {
    // A response still loading (a step just taken) must not open the detail again once it answers.
    openSeq++;
    stepTarget = null;
    set({ selected: null });
  },
  exportZip: async () => {
    const { runId, detail, exporting } = get();
    if (!runId || exporting) return;
    const exportedRun = detail ? { status: detail.status, done: detail.done, total: detail.total } : null;
    set({ exporting: true, exported: null, exportedRun, verify: null, error: null });
    // Another run opened meanwhile resets these; this export's outcome then belongs to no page.
    const r = await call('export:exportRun', { runId });
    if (get().runId !== runId) return;
    if (!r.ok) return set({ exporting: false, error: r.error.message });
    set({ exported: r.value });
    const v = await call('export:verify', { path: r.value.path });
    if (get().runId !== runId) return;
    set(v.ok ? { verify: v.value, exporting: false } : { exporting: false, error: v.error.message });
  },
  forget: (runId) => {
    if (get().runId !== runId) return;
    set({ runId: null, detail: null, page: null, selected: null, offset: 0, exported: null, exportedRun: null, verify: null, exporting: false, error: null });
  },
  handleDeleted: (runId) => {
    if (get().runId !== runId) return;
    get().forget(runId);
    set({ gone: runId });
  },
  dismissGone: () => set({ gone: null }),
  handleLabelled: (runId, label) => {
    const d = get().detail;
    if (d?.id === runId && d.label !== label) set({ detail: { ...d, label } });
  },
}));
