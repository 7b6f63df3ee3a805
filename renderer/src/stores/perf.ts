import { create } from 'zustand';

import type { DeletedCampaign, ExportedZip, PerfCampaignProgress } from '../../../electron/common/ipc-contract.js';
import { parseBudgetList, PERF_SETTINGS, type PerfCampaign, type PerfCampaignDetail } from '../../../electron/common/perf-campaign.js';
import { readLabel } from '../../../electron/common/label.js';
import { call } from '../api.js';
import { confirmationSteps, deletesZips, lookUpZips, type PendingConfirmation, type ZipChoice } from './deletion.js';
import { askAboutZip } from './zip-request.js';
import { matchesEveryWord } from './word-filter.js';

/**
 * Parses the budgets field ("4, 8, 12.5" GiB) by the rule `horizon perf` takes: the budgets in GiB, or a sentence for
 * the field when it is wrong (at most 16: what the service accepts).
 */
export function parseBudgetsField(text: string): number[] | string {
  let bytes: number[];
  try {
    bytes = parseBudgetList(text);
  } catch (e) {
    const m = (e as Error).message;
    return `${m.charAt(0).toUpperCase()}${m.slice(1)}.`;
  }
  if (bytes.length > 16) return 'At most 16 budgets.';
  return bytes.map((b) => b / 2 ** 30);
}

/**
 * Whether a campaign is one the Performance page's filter asks for: every word of `query` (case aside) is in its id,
 * label, model (id, repo, revision), weights, device, status, or the ZIP it was imported from.
 */
export function campaignMatches(c: PerfCampaign, query: string): boolean {
  return matchesEveryWord(query, [
    c.id, c.label ?? '', c.model.modelId, c.model.repo, c.model.revision, c.model.weights, c.deviceLabel, c.status, c.imported?.file ?? '',
  ]);
}

/** A campaign's deletion being confirmed. */
export interface PendingCampaignDeletion extends PendingConfirmation, ZipChoice {
  readonly campaign: PerfCampaign;
}

interface PerfState {
  campaigns: readonly PerfCampaign[];
  /** What the campaign pickers are narrowed by (campaignMatches); empty offers every campaign. */
  filter: string;
  setFilter(filter: string): void;
  selected: PerfCampaignDetail | null;
  progress: PerfCampaignProgress | null;
  form: { modelId: string; budgets: string; label: string };
  budgetsError: string | null;
  /** What is wrong with the form's label, as it is typed. */
  labelError: string | null;
  error: string | null;
  busy: boolean;
  exported: ExportedZip | null;
  /** The campaign ZIP path in the import field. */
  zipPath: string;
  importing: boolean;
  importError: string | null;
  /** What the last import of the ZIP at zipPath stored. */
  imported: PerfCampaign | null;
  /** The campaign the shown one is compared with (B, the shown one being A); null for none. */
  compareWith: PerfCampaignDetail | null;
  deletion: PendingCampaignDeletion | null;
  /** What the last deletion did. */
  deleted: DeletedCampaign | null;
  /** Asks to delete the campaign shown (not one running), looking up its ZIP in exports/ to offer it too. */
  askDelete(): Promise<void>;
  /** Whether the campaign's ZIP goes with it. */
  setDeleteZips(on: boolean): void;
  cancelDelete(): void;
  /** Deletes the campaign being confirmed; true when it was deleted. */
  confirmDelete(): Promise<boolean>;
  setForm(patch: Partial<PerfState['form']>): void;
  /** Compares the shown campaign with another (its id), or stops comparing (''). */
  setCompareWith(campaignId: string): Promise<void>;
  setZipPath(path: string): void;
  /** Adds the campaign of the ZIP at zipPath to the list once it verifies, and shows it. */
  importZip(): Promise<void>;
  refresh(): Promise<void>;
  select(campaignId: string): Promise<void>;
  start(): Promise<void>;
  cancel(): Promise<void>;
  exportZip(): Promise<void>;
  handleProgress(p: PerfCampaignProgress): void;
  /** A campaign was deleted (`perf:onDidDelete`, any window): let go of it, unless this window's own delete is on its way. */
  handleDeleted(campaignId: string): void;
  /** Labels a campaign (empty text clears its label); the services' refusal as a sentence, or null once it is stored. */
  setLabel(campaignId: string, text: string): Promise<string | null>;
  /** A campaign's label changed (`perf:onDidLabel`, any window or `horizon label --campaign`): shown everywhere. */
  handleLabelled(campaignId: string, label: string | null): void;
}

/** The state without a campaign that is gone: out of the list, no longer shown, compared with or asked about. */
function withoutCampaign(s: PerfState, campaignId: string): Partial<PerfState> {
  return {
    campaigns: s.campaigns.filter((c) => c.id !== campaignId),
    ...(s.selected?.id === campaignId ? { selected: null, exported: null } : {}),
    ...(s.compareWith?.id === campaignId ? { compareWith: null } : {}),
    ...(s.deletion?.campaign.id === campaignId ? { deletion: null } : {}),
  };
}

export const usePerf = create<PerfState>((set, get) => ({
  campaigns: [],
  filter: '',
  setFilter: (filter) => set({ filter }),
  selected: null,
  progress: null,
  form: { modelId: '', budgets: '', label: '' },
  budgetsError: null,
  labelError: null,
  error: null,
  busy: false,
  exported: null,
  compareWith: null,
  deletion: null,
  deleted: null,
  askDelete: async () => {
    const c = get().selected;
    if (!c || c.status === 'running' || get().deletion?.busy) return;
    const { requests: _requests, aggregates: _aggregates, ...campaign } = c;
    set({ deletion: { campaign, zips: null, deleteZips: false, busy: false, error: null }, deleted: null });
    await lookUpZips(get, set, (d) => d.campaign.id === c.id, call('perf:listZips', { campaignId: c.id }));
  },
  setDeleteZips: (on) => confirmationSteps(get, set).edit({ deleteZips: on }),
  cancelDelete: () => confirmationSteps(get, set).cancel(),
  confirmDelete: async () => {
    const steps = confirmationSteps(get, set);
    const d = steps.begin();
    if (!d) return false;
    const r = await call('perf:delete', { campaignId: d.campaign.id, ...(deletesZips(d) ? { deleteExport: true } : {}) });
    if (!r.ok) {
      steps.fail(d, r.error.message);
      return false;
    }
    set({ ...withoutCampaign(get(), d.campaign.id), deletion: null, deleted: r.value, exported: null });
    await get().refresh();
    return true;
  },
  setCompareWith: async (campaignId) => {
    if (!campaignId) return set({ compareWith: null });
    const r = await call('perf:get', { campaignId });
    set(r.ok ? { compareWith: r.value, error: null } : { error: r.error.message });
  },
  zipPath: '',
  importing: false,
  importError: null,
  imported: null,
  // What is shown is about the path it was asked for: it goes when the path changes, and so does a late reply.
  setZipPath: (zipPath) => set({ zipPath, importing: false, importError: null, imported: null }),
  importZip: async () => {
    const ok = await askAboutZip(get, set, { busy: 'importing', value: 'imported', error: 'importError' }, 'a campaign ZIP', (path) =>
      call('perf:importZip', { path }),
    );
    const imported = get().imported;
    if (!ok || !imported) return;
    await get().select(imported.id);
    await get().refresh();
  },
  setForm: (patch) => {
    const form = { ...get().form, ...patch };
    const parsed = parseBudgetsField(form.budgets);
    set({ form, budgetsError: typeof parsed === 'string' ? parsed : null, labelError: readLabel(form.label).problem });
  },
  refresh: async () => {
    const r = await call('perf:list', undefined);
    if (!r.ok) return set({ error: r.error.message });
    set({ campaigns: r.value, error: null });
    const shown = get().selected?.id ?? r.value[0]?.id;
    if (shown) await get().select(shown);
  },
  select: async (campaignId) => {
    const r = await call('perf:get', { campaignId });
    if (!r.ok) return set({ error: r.error.message });
    const same = get().selected?.id === campaignId;
    // A campaign is not compared with itself.
    set({ selected: r.value, exported: same ? get().exported : null, ...(get().compareWith?.id === campaignId ? { compareWith: null } : {}) });
  },
  start: async () => {
    const { form, busy } = get();
    if (busy) return;
    if (!form.modelId) return set({ error: 'Choose a prepared model first.' });
    const budgets = parseBudgetsField(form.budgets);
    const { label, problem } = readLabel(form.label);
    if (typeof budgets === 'string' || problem) {
      return set({ budgetsError: typeof budgets === 'string' ? budgets : null, labelError: problem });
    }
    set({ busy: true, error: null, exported: null });
    const r = await call('perf:start', { modelId: form.modelId, ...(budgets.length ? { budgetsGiB: budgets } : {}), ...(label !== null ? { label } : {}) });
    if (!r.ok) return set({ busy: false, error: r.error.message });
    set({
      busy: false,
      // The label named this campaign; the next one is named afresh.
      form: { ...get().form, label: '' },
      progress: { campaignId: r.value.id, status: 'running', config: 0, configs: r.value.configs.length, done: 0, total: 0, message: 'loading the model' },
    });
    await get().refresh();
    await get().select(r.value.id);
  },
  cancel: async () => {
    const p = get().progress;
    if (!p || p.status !== 'running') return;
    const r = await call('perf:cancel', { campaignId: p.campaignId });
    if (!r.ok) set({ error: r.error.message });
  },
  exportZip: async () => {
    const c = get().selected;
    if (!c) return;
    const r = await call('perf:exportZip', { campaignId: c.id });
    set(r.ok ? { exported: r.value, error: null } : { error: r.error.message });
  },
  handleProgress: (p) => {
    set({ progress: p });
    // The table and chart follow the campaign shown; the list learns of its end.
    // Read again once a block of prompts is measured, and at the end.
    if (get().selected?.id === p.campaignId && (p.status !== 'running' || p.done % PERF_SETTINGS.prompts === 0)) void get().select(p.campaignId);
    if (p.status !== 'running') void get().refresh();
  },
  handleDeleted: (campaignId) => {
    const { selected, deletion } = get();
    // confirmDelete lets go of it once its reply says what was deleted (the event can arrive before the reply).
    if (deletion?.busy && deletion.campaign.id === campaignId) return;
    set(withoutCampaign(get(), campaignId));
    if (selected?.id === campaignId) void get().refresh();
  },
  setLabel: async (campaignId, text) => {
    const { problem } = readLabel(text);
    if (problem) return problem;
    const r = await call('perf:setLabel', { campaignId, label: text });
    if (!r.ok) return r.error.message;
    get().handleLabelled(campaignId, r.value.label);
    return null;
  },
  handleLabelled: (campaignId, label) => {
    const relabel = <T extends PerfCampaign>(c: T): T => (c.id === campaignId && c.label !== label ? { ...c, label } : c);
    const { campaigns, selected, compareWith, deletion } = get();
    set({
      campaigns: campaigns.map(relabel),
      selected: selected && relabel(selected),
      compareWith: compareWith && relabel(compareWith),
      deletion: deletion && { ...deletion, campaign: relabel(deletion.campaign) },
    });
  },
}));
