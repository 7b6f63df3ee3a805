import { create } from 'zustand';

import {
  DEFAULT_MODEL_REPO,
  DEFAULT_MODEL_REVISION,
  type AssetKind,
  type DeletedModel,
  type DeleteModelRequest,
  type ModelDetails,
  type PreparedModel,
  type PrepareProgress,
  type PrepareRequest,
  type PrepareStep,
} from '../../../electron/common/ipc-contract.js';
import { repoProblem, revisionProblem } from '../../../electron/common/model-ref.js';
import { call } from '../api.js';
import { confirmationSteps } from './deletion.js';
import { useSystem } from './system.js';

export interface PrepareJobState {
  readonly jobId: string;
  readonly request: Omit<PrepareRequest, 'token'>;
  /** Latest event per step, in arrival order of steps. */
  readonly steps: Partial<Record<PrepareStep, PrepareProgress>>;
  readonly status: PrepareProgress['status'];
  readonly error: string | null;
  readonly modelId: string | null;
}

/** The quality check's prompts when none are asked for: the services' and `horizon quality`'s default. */
export const DEFAULT_QUALITY_PROMPTS = 32;

export interface ModelsState {
  models: readonly PreparedModel[];
  /** The list has been read at least once (an empty list then means no model). */
  listed: boolean;
  form: { repo: string; revision: string; token: string };
  /** What is wrong with the repository and revision as typed (checked on each keystroke), for their fields. */
  formErrors: { repo: string | null; revision: string | null };
  job: PrepareJobState | null;
  /** A prepare request is on its way (a second click must not start a second job). */
  submitting: boolean;
  assetsJob: PrepareJobState | null;
  /** The running or last quality check (one at a time), with the model it checks. */
  qualityJob: (PrepareJobState & { readonly checking: string }) | null;
  /** The variant whose details are open, and what was read of it. */
  details: { modelId: string; value: ModelDetails | null; error: string | null } | null;
  /** A deletion asked for and not yet confirmed (or on its way). */
  deletion: { model: PreparedModel; scope: DeleteModelRequest['scope']; busy: boolean; error: string | null } | null;
  deleted: DeletedModel | null;
  importPaths: Record<AssetKind, string>;
  assetMessage: Partial<Record<AssetKind, { ok: boolean; text: string }>>;
  error: string | null;
  refresh(): Promise<void>;
  setForm(patch: Partial<ModelsState['form']>): void;
  prepare(): Promise<void>;
  cancel(): Promise<void>;
  setImportPath(kind: AssetKind, path: string): void;
  importAsset(kind: AssetKind): Promise<void>;
  downloadAssets(): Promise<void>;
  /** The first `limit` IFEval prompts (default DEFAULT_QUALITY_PROMPTS, as `horizon quality`). */
  checkQuality(modelId: string, limit?: number): Promise<void>;
  cancelQuality(): Promise<void>;
  handleProgress(p: PrepareProgress): void;
  /** Opens a variant's details (again: closes them). */
  toggleDetails(modelId: string): Promise<void>;
  askDelete(model: PreparedModel): void;
  setDeleteScope(scope: DeleteModelRequest['scope']): void;
  cancelDelete(): void;
  /** True when it was deleted. */
  confirmDelete(): Promise<boolean>;
}

/**
 * Whether a stopped preparation left anything to pick up: bytes downloaded, verified or packed. A job that failed
 * before (a 404 or a gated repo while resolving) has nothing to resume: preparing again starts it over.
 */
export function leftWorkToResume(job: Pick<PrepareJobState, 'status' | 'steps'>): boolean {
  if (job.status !== 'failed' && job.status !== 'cancelled') return false;
  return (['download', 'verify', 'pack'] as const).some((step) => (job.steps[step]?.doneBytes ?? 0) > 0);
}

function applyProgress(job: PrepareJobState, p: PrepareProgress): PrepareJobState {
  return {
    ...job,
    steps: { ...job.steps, [p.step]: p },
    status: p.status,
    error: p.status === 'failed' ? (p.error?.message ?? p.message) : job.error,
    modelId: p.modelId ?? job.modelId,
  };
}

/** Events that arrived before the call that started their job returned its id (events and replies race). */
const early = new Map<string, PrepareProgress[]>();
const EARLY_JOBS = 16;

function stashEarly(p: PrepareProgress): void {
  const list = early.get(p.jobId) ?? [];
  list.push(p);
  early.set(p.jobId, list.slice(-50));
  while (early.size > EARLY_JOBS) early.delete(early.keys().next().value as string);
}

function takeEarly(jobId: string): PrepareProgress[] {
  const list = early.get(jobId) ?? [];
  early.delete(jobId);
  return list;
}

export const useModels = create<ModelsState>((set, get) => ({
  models: [],
  listed: false,
  form: { repo: DEFAULT_MODEL_REPO, revision: DEFAULT_MODEL_REVISION, token: '' },
  formErrors: { repo: null, revision: null },
  job: null,
  submitting: false,
  assetsJob: null,
  qualityJob: null,
  details: null,
  deletion: null,
  deleted: null,
  importPaths: { ifeval: '', punkt: '' },
  assetMessage: {},
  error: null,
  toggleDetails: async (modelId) => {
    if (get().details?.modelId === modelId) return set({ details: null });
    set({ details: { modelId, value: null, error: null } });
    const r = await call('models:details', { modelId });
    if (get().details?.modelId !== modelId) return;
    set({ details: { modelId, value: r.ok ? r.value : null, error: r.ok ? null : r.error.message } });
  },
  askDelete: (model) => set({ deletion: { model, scope: model.weights === 'int4' ? 'variant' : 'model', busy: false, error: null }, deleted: null }),
  setDeleteScope: (scope) => confirmationSteps(get, set).edit({ scope }),
  cancelDelete: () => confirmationSteps(get, set).cancel(),
  confirmDelete: async () => {
    const steps = confirmationSteps(get, set);
    const d = steps.begin();
    if (!d) return false;
    const r = await call('models:delete', { modelId: d.model.id, scope: d.scope });
    if (!r.ok) {
      steps.fail(d, r.error.message);
      return false;
    }
    // The list is read again before the notice shows, so that the two never disagree on screen.
    await get().refresh();
    set({ deletion: null, deleted: r.value, details: null });
    await useSystem.getState().refresh();
    return true;
  },
  refresh: async () => {
    const r = await call('models:list', undefined);
    set(r.ok ? { models: r.value, listed: true, error: null } : { error: r.error.message });
  },
  setForm: (patch) => {
    const form = { ...get().form, ...patch };
    set({ form, formErrors: { repo: repoProblem(form.repo), revision: revisionProblem(form.revision) } });
  },
  prepare: async () => {
    // The button stays focusable while a job runs (so the keyboard focus is not lost), so the store refuses here.
    if (get().submitting || get().job?.status === 'running') return;
    const { repo, revision, token } = get().form;
    const formErrors = { repo: repoProblem(repo), revision: revisionProblem(revision) };
    if (formErrors.repo || formErrors.revision) {
      // Beside their fields: nothing is sent that the services would refuse.
      set({ formErrors, error: null });
      return;
    }
    const request: PrepareRequest = { repo: repo.trim(), revision: revision.trim(), ...(token ? { token } : {}) };
    set({ submitting: true });
    const r = await call('models:prepare', request);
    if (!r.ok) {
      set({ error: r.error.message, submitting: false });
      return;
    }
    set({
      error: null,
      submitting: false,
      job: { jobId: r.value.jobId, request: { repo: request.repo, revision: request.revision }, steps: {}, status: 'running', error: null, modelId: null },
    });
    for (const p of takeEarly(r.value.jobId)) get().handleProgress(p);
  },
  cancel: async () => {
    const job = get().job;
    if (!job) return;
    const r = await call('models:cancel', { jobId: job.jobId });
    set(r.ok ? { job: { ...job, status: 'cancelled' } } : { error: r.error.message });
  },
  setImportPath: (kind, path) => set({ importPaths: { ...get().importPaths, [kind]: path } }),
  importAsset: async (kind) => {
    const path = get().importPaths[kind].trim();
    if (!path) {
      set({ assetMessage: { ...get().assetMessage, [kind]: { ok: false, text: 'Enter a path first.' } } });
      return;
    }
    const r = await call('models:importAssets', { kind, path });
    // The reply carries the asset's verified state: show it with the message, not after the (slow) system check.
    if (r.ok) useSystem.getState().applyAsset(r.value);
    set({
      assetMessage: {
        ...get().assetMessage,
        [kind]: r.ok ? { ok: true, text: `Imported: ${r.value.detail}` } : { ok: false, text: r.error.message },
      },
    });
    if (r.ok) await useSystem.getState().refresh();
  },
  downloadAssets: async () => {
    const r = await call('models:downloadAssets', {});
    if (!r.ok) {
      set({ error: r.error.message });
      return;
    }
    set({
      error: null,
      assetsJob: { jobId: r.value.jobId, request: { repo: '', revision: '' }, steps: {}, status: 'running', error: null, modelId: null },
    });
    for (const p of takeEarly(r.value.jobId)) get().handleProgress(p);
  },
  checkQuality: async (modelId, limit) => {
    if (get().qualityJob?.status === 'running') return;
    const r = await call('models:checkQuality', limit === undefined ? { modelId } : { modelId, limit });
    if (!r.ok) {
      set({ error: r.error.message });
      return;
    }
    set({
      error: null,
      qualityJob: { jobId: r.value.jobId, checking: modelId, request: { repo: '', revision: '' }, steps: {}, status: 'running', error: null, modelId: null },
    });
    for (const p of takeEarly(r.value.jobId)) get().handleProgress(p);
  },
  cancelQuality: async () => {
    const job = get().qualityJob;
    if (!job || job.status !== 'running') return;
    const r = await call('models:cancel', { jobId: job.jobId });
    set(r.ok ? { qualityJob: { ...job, status: 'cancelled' } } : { error: r.error.message });
  },
  handleProgress: (p) => {
    const { job, assetsJob, qualityJob } = get();
    if (qualityJob?.jobId === p.jobId) {
      set({ qualityJob: { ...applyProgress(qualityJob, p), checking: qualityJob.checking } });
      if (p.status === 'done') void get().refresh();
    } else if (job?.jobId === p.jobId) {
      set({ job: applyProgress(job, p) });
      if (p.status === 'done') void get().refresh();
    } else if (assetsJob?.jobId === p.jobId) {
      set({ assetsJob: applyProgress(assetsJob, p) });
      if (p.status === 'done') void useSystem.getState().refresh();
    } else {
      stashEarly(p);
    }
  },
}));
