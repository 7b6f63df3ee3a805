import { create } from 'zustand';

import { isLiveStatus, type ResponseRow, type RunDetail, type RunProgress, type RunSummary } from '../../../electron/common/ipc-contract.js';
import { readLabel } from '../../../electron/common/label.js';
import { RUN_BATCH, RUN_EXPERT_BUDGET_MIB, RUN_MAX_NEW_TOKENS, RUN_PROMPTS } from '../../../electron/common/run-settings.js';
import { call } from '../api.js';

const STREAM_LIMIT = 50;

export interface RunForm {
  modelId: string;
  /** Empty string means all 541 prompts. */
  limit: string;
  /** Empty string means automatic: on a GPU the most whose KV cache fits beside the model. */
  batch: string;
  maxNewTokens: string;
  /** GiB of GPU memory for resident experts; empty means as much as fits. */
  expertBudgetGiB: string;
  /** CUDA device index as a string; empty means the first device. */
  cudaDevice: string;
  /** The next run's label; empty means none. Cleared once its run starts: a label names one run. */
  label: string;
}

/** The form as the run was started: what a reload or another window shows beside a live run. */
export function formOfRun(run: Pick<RunDetail, 'modelId' | 'total' | 'policy'>): RunForm {
  const p = run.policy;
  return {
    modelId: run.modelId,
    limit: run.total === 541 ? '' : String(run.total),
    batch: String(p.batch),
    maxNewTokens: String(p.maxNewTokens),
    expertBudgetGiB: p.expertBudgetBytes === null ? '' : String(Number((p.expertBudgetBytes / 2 ** 30).toFixed(3))),
    cudaDevice: p.cudaDevice === null || p.cudaDevice === 0 ? '' : String(p.cudaDevice),
    // The live run's label is on its card; the field is for the next run.
    label: '',
  };
}

/** A run that stopped before its last prompt and can go on: cancelled, or failed. */
export function isResumable(run: Pick<RunSummary, 'status' | 'done' | 'total' | 'imported'>): boolean {
  // An imported run's model is on the machine that made it.
  return (run.status === 'cancelled' || run.status === 'failed') && run.done < run.total && run.imported === null;
}

/** Each run-form field's problem, as its field shows it. */
export type RunFieldErrors = Partial<Record<Exclude<keyof RunForm, 'modelId'>, string>>;

interface RunsState {
  form: RunForm;
  fieldErrors: RunFieldErrors;
  run: RunSummary | null;
  /** The newest resumable run, offered on the Run page when no run is shown there. */
  resumable: RunSummary | null;
  progress: RunProgress | null;
  /** Newest first. */
  stream: readonly ResponseRow[];
  error: string | null;
  /** A start, cancel or resume is on its way: the others wait (their buttons stay focusable, so they must). */
  busy: boolean;
  setForm(patch: Partial<RunForm>): void;
  start(): Promise<void>;
  cancel(): Promise<void>;
  /** Resumes `runId` (default: the run shown), from any page; it becomes the run shown. True when it resumed. */
  resume(runId?: string): Promise<boolean>;
  /** Picks up a run already in progress (after a reload or from another window). */
  attachActive(): Promise<void>;
  /** Re-reads the current run's summary (final accuracies, error). */
  refresh(): Promise<void>;
  handleProgress(p: RunProgress): void;
  handleResponse(runId: string, row: ResponseRow): void;
  /** Lets go of a run that was deleted, when it is the one shown. */
  forget(runId: string): void;
  /** A run's label changed: the run shown carries the new one. */
  handleLabelled(runId: string, label: string | null): void;
}

/** Parses an optional positive integer field; returns an error message for bad input. */
export function parseCount(label: string, text: string, min: number, max: number): number | undefined | string {
  const t = text.trim();
  if (!t) return undefined;
  const n = Number(t);
  if (!Number.isInteger(n) || n < min || n > max) return `${label} must be a whole number from ${min} to ${max}.`;
  return n;
}

/** Parses an optional GiB amount into whole MiB; returns an error message for bad input. */
export function parseGiBToMiB(label: string, text: string, min: number, max: number): number | undefined | string {
  const t = text.trim();
  if (!t) return undefined;
  const n = Number(t);
  if (!Number.isFinite(n) || n < min || n > max) return `${label} must be a number of GiB from ${min} to ${max}, or empty for automatic.`;
  return Math.round(n * 1024);
}

/**
 * Events of runs this window has not adopted yet: a start reply can lose the race to its own run's events, so the
 * latest progress and the newest streamed responses wait here until the reply names the run.
 */
const early = new Map<string, { progress?: RunProgress; rows: readonly ResponseRow[] }>();

function earlyFor(runId: string): { progress?: RunProgress; rows: readonly ResponseRow[] } {
  let e = early.get(runId);
  if (!e) {
    e = { rows: [] };
    early.set(runId, e);
    if (early.size > 16) early.delete(early.keys().next().value as string);
  }
  return e;
}

export const useRuns = create<RunsState>((set, get) => ({
  form: { modelId: '', limit: '', batch: '', maxNewTokens: String(RUN_MAX_NEW_TOKENS.default), expertBudgetGiB: '', cudaDevice: '', label: '' },
  fieldErrors: {},
  run: null,
  resumable: null,
  progress: null,
  stream: [],
  error: null,
  busy: false,
  setForm: (patch) => {
    // A field's error goes as soon as it is edited; the others stay until the next start.
    const fieldErrors = { ...get().fieldErrors };
    for (const k of Object.keys(patch)) delete fieldErrors[k as keyof RunFieldErrors];
    set({ form: { ...get().form, ...patch }, fieldErrors });
  },
  start: async () => {
    const { form } = get();
    if (get().busy) return;
    if (!form.modelId) {
      set({ error: 'Choose a prepared model first.' });
      return;
    }
    const limit = parseCount('Prompts', form.limit, RUN_PROMPTS.min, RUN_PROMPTS.max);
    const batch = parseCount('Batch size', form.batch, RUN_BATCH.min, RUN_BATCH.max);
    const maxNewTokens = parseCount('Max new tokens', form.maxNewTokens, RUN_MAX_NEW_TOKENS.min, RUN_MAX_NEW_TOKENS.max);
    const expertBudgetMiB = parseGiBToMiB('GPU expert memory', form.expertBudgetGiB, RUN_EXPERT_BUDGET_MIB.min / 1024, RUN_EXPERT_BUDGET_MIB.max / 1024);
    const cudaDevice = parseCount('GPU', form.cudaDevice, 0, 63);
    const { label, problem: labelProblem } = readLabel(form.label);
    const parsed = { limit, batch, maxNewTokens, expertBudgetGiB: expertBudgetMiB, cudaDevice, label: labelProblem };
    // Every field's problem at once, each beside its field.
    const fieldErrors: RunFieldErrors = {};
    for (const [field, v] of Object.entries(parsed)) if (typeof v === 'string') fieldErrors[field as keyof RunFieldErrors] = v;
    if (Object.keys(fieldErrors).length > 0) {
      set({ fieldErrors, error: null });
      return;
    }
    set({ busy: true, error: null, fieldErrors: {} });
    const r = await call('runs:start', {
      modelId: form.modelId,
      ...(typeof limit === 'number' ? { limit } : {}),
      ...(typeof batch === 'number' ? { batch } : {}),
      ...(typeof maxNewTokens === 'number' ? { maxNewTokens } : {}),
      ...(typeof expertBudgetMiB === 'number' ? { expertBudgetMiB } : {}),
      ...(typeof cudaDevice === 'number' ? { cudaDevice } : {}),
      ...(label !== null ? { label } : {}),
    });
    const pending = r.ok ? early.get(r.value.id) : undefined;
    set(
      r.ok
        ? { run: r.value, progress: null, stream: pending?.rows ?? [], busy: false, form: { ...get().form, label: '' } }
        : { error: r.error.message, busy: false },
    );
    if (pending?.progress) get().handleProgress(pending.progress);
    early.clear();
  },
  cancel: async () => {
    const run = get().run;
    if (!run || get().busy) return;
    set({ busy: true });
    const r = await call('runs:cancel', { runId: run.id });
    if (!r.ok) return set({ busy: false, error: r.error.message });
    // The run as it is now (progress arrived during the cancel), not as it was when the cancel was asked.
    const now = get().run;
    set({ busy: false, ...(now?.id === run.id ? { run: { ...now, status: 'cancelled' as const } } : {}) });
    await get().refresh();
  },
  resume: async (runId) => {
    const id = runId ?? get().run?.id;
    if (!id || get().busy) return false;
    const same = get().run?.id === id;
    // What was heard of it before (its cancel, say) is older than the resume: only events from here on count.
    early.delete(id);
    set({ busy: true, error: null });
    const r = await call('runs:resume', { runId: id });
    if (!r.ok) {
      set({ busy: false, error: r.error.message });
      return false;
    }
    const pending = early.get(id);
    set({
      busy: false,
      run: r.value,
      resumable: null,
      // Another run than the one shown: its own stream from here on.
      ...(same ? {} : { progress: null, stream: pending?.rows ?? [] }),
    });
    if (!same && pending?.progress) get().handleProgress(pending.progress);
    const detail = await call('runs:get', { runId: id });
    if (detail.ok && get().run?.id === id) set({ form: formOfRun(detail.value) });
    return true;
  },
  attachActive: async () => {
    if (get().run) return;
    const r = await call('runs:list', undefined);
    if (!r.ok || get().run) return;
    const active = r.value.find((x) => isLiveStatus(x.status));
    if (!active) {
      // Newest first: the latest run that stopped early.
      set({ resumable: r.value.find(isResumable) ?? null });
      return;
    }
    set({ run: active, resumable: null, form: { ...get().form, modelId: active.modelId } });
    // The settings it runs with, not the form's defaults.
    const detail = await call('runs:get', { runId: active.id });
    if (detail.ok && get().run?.id === active.id) set({ form: formOfRun(detail.value) });
  },
  refresh: async () => {
    const run = get().run;
    if (!run) return;
    const r = await call('runs:get', { runId: run.id });
    const now = get().run;
    if (r.ok && now?.id === run.id) {
      const { policy: _p, byInstruction: _b, figures: _f, ...summary } = r.value;
      // Read while generating, the reply can be older than the progress that arrived meanwhile: the count never goes back.
      const live = isLiveStatus(summary.status);
      set({ run: live ? { ...summary, status: now.status, done: Math.max(summary.done, now.done) } : summary });
    }
  },
  handleProgress: (p) => {
    const run = get().run;
    if (!run || run.id !== p.runId) {
      earlyFor(p.runId).progress = p;
      return;
    }
    set({
      progress: p,
      run: {
        ...run,
        status: p.status,
        done: p.done,
        total: p.total,
        error: p.error ?? run.error,
        accuracies: p.accuracies === undefined ? run.accuracies : p.accuracies,
        // Named by every event once the model has loaded: a summary read before ("loading the model…") catches up.
        backendLabel: p.backendLabel ?? run.backendLabel,
      },
    });
    if (p.status !== run.status && !isLiveStatus(p.status)) void get().refresh();
  },
  handleResponse: (runId, row) => {
    if (get().run?.id !== runId) {
      const e = earlyFor(runId);
      e.rows = [row, ...e.rows].slice(0, STREAM_LIMIT);
      return;
    }
    set({ stream: [row, ...get().stream].slice(0, STREAM_LIMIT) });
  },
  forget: (runId) => {
    if (get().run?.id === runId) set({ run: null, progress: null, stream: [], error: null });
    if (get().resumable?.id === runId) set({ resumable: null });
  },
  handleLabelled: (runId, label) => {
    const { run, resumable } = get();
    if (run?.id === runId && run.label !== label) set({ run: { ...run, label } });
    if (resumable?.id === runId && resumable.label !== label) set({ resumable: { ...resumable, label } });
  },
}));
