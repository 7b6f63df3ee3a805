import { beforeEach, describe, expect, it } from 'vitest';

import type { PerfCampaign, PerfCampaignDetail } from '../../../../electron/common/perf-campaign.js';
import { campaignMatches, usePerf } from '../../../../renderer/src/stores/perf.js';
import { scripted } from '../in-process-transport.js';

const campaign: PerfCampaign = {
  id: 'perf-elsewhere', createdAt: '2026-12-06T10:00:00.000Z', finishedAt: '2026-12-06T10:05:00.000Z', status: 'completed', error: null,
  model: { modelId: 'm@abc/int4-g32', repo: 'o/m', revision: 'a'.repeat(40), weights: 'int4', manifestSha256: 'b'.repeat(64) },
  backend: 'cuda', deviceLabel: 'CUDA: NVIDIA RTX 4090', peakMemoryScope: 'process',
  settings: { prompts: 2, blocks: 1, maxNewTokens: 128, warmupTokens: 64, keys: [1000, 1001] },
  configs: [{ label: 'full residency', expertBudgetBytes: null, residency: 'all 64 experts a layer' }],
  imported: { file: '/z/perf.zip', sha256: 'e'.repeat(64), importedAt: '2026-12-06T19:30:00.000Z' },
  label: null,
};
const detail: PerfCampaignDetail = { ...campaign, requests: [], aggregates: [] };

describe('perf store: importing a campaign ZIP', () => {
  beforeEach(() =>
    usePerf.setState({ campaigns: [], selected: null, error: null, exported: null, zipPath: '', importing: false, importError: null, imported: null }),
  );

  it('asks for a path, then imports, shows and lists the campaign', async () => {
    const calls = scripted((channel) => {
      if (channel === 'perf:importZip') return { ok: true, value: campaign };
      if (channel === 'perf:get') return { ok: true, value: detail };
      if (channel === 'perf:list') return { ok: true, value: [campaign] };
      return undefined;
    });
    await usePerf.getState().importZip();
    expect(usePerf.getState().importError).toBe('Enter the path of a campaign ZIP.');
    expect(calls).toEqual([]);

    usePerf.getState().setZipPath(' /z/perf.zip ');
    expect(usePerf.getState().importError).toBeNull();
    await usePerf.getState().importZip();
    expect(calls[0]).toEqual({ channel: 'perf:importZip', payload: { path: '/z/perf.zip' } });
    expect(usePerf.getState()).toMatchObject({ importing: false, importError: null, imported: campaign, selected: detail, campaigns: [campaign] });
  });

  it("shows the services' refusal, and drops a reply once the path has changed", async () => {
    let release: () => void = () => {};
    const calls = scripted(async (channel, payload) => {
      if (channel !== 'perf:importZip') return undefined;
      if ((payload as { path: string }).path === '/z/slow.zip') await new Promise<void>((r) => (release = r));
      return { ok: false, error: { code: 'BAD_INPUT', message: `${(payload as { path: string }).path}: is not a performance campaign ZIP` } };
    });
    usePerf.getState().setZipPath('/z/result.zip');
    await usePerf.getState().importZip();
    expect(usePerf.getState()).toMatchObject({ importing: false, imported: null, importError: '/z/result.zip: is not a performance campaign ZIP' });

    usePerf.getState().setZipPath('/z/slow.zip');
    const late = usePerf.getState().importZip();
    expect(usePerf.getState().importing).toBe(true);
    await usePerf.getState().importZip();
    usePerf.getState().setZipPath('/z/other.zip');
    release();
    await late;
    expect(usePerf.getState()).toMatchObject({ zipPath: '/z/other.zip', importing: false, importError: null, imported: null });
    expect(calls.filter((c) => c.channel === 'perf:importZip')).toHaveLength(2);
  });
});

describe('perf store: comparing campaigns', () => {
  it('reads the campaign to compare with, stops comparing, and never compares a campaign with itself', async () => {
    const here: PerfCampaignDetail = { ...detail, id: 'perf-here', imported: null };
    const calls = scripted((channel, payload) => {
      if (channel !== 'perf:get') return undefined;
      const id = (payload as { campaignId: string }).campaignId;
      return { ok: true, value: id === detail.id ? detail : here };
    });
    usePerf.setState({ selected: here, compareWith: null });
    await usePerf.getState().setCompareWith(detail.id);
    expect(calls).toEqual([{ channel: 'perf:get', payload: { campaignId: detail.id } }]);
    expect(usePerf.getState().compareWith).toBe(detail);
    await usePerf.getState().setCompareWith('');
    expect(usePerf.getState().compareWith).toBeNull();

    await usePerf.getState().setCompareWith(detail.id);
    await usePerf.getState().select(detail.id);
    expect(usePerf.getState()).toMatchObject({ selected: detail, compareWith: null });
  });
});

describe('perf store: deleting a campaign', () => {
  const zip = { path: '/data/exports/perf-elsewhere.zip', name: 'perf-elsewhere.zip', bytes: 4321 };

  it('asks, offers its ZIP, deletes, lets go of it everywhere it was shown, and keeps the question open on a refusal', async () => {
    const other: PerfCampaign = { ...campaign, id: 'perf-other', imported: null };
    let refuse = true;
    const calls = scripted((channel, payload) => {
      if (channel === 'perf:delete') {
        return refuse
          ? { ok: false, error: { code: 'BAD_INPUT', message: 'campaign perf-elsewhere is running: cancel it before deleting it' } }
          : { ok: true, value: { campaignId: (payload as { campaignId: string }).campaignId, requests: 4, deletedFiles: [zip.path], fileErrors: [] } };
      }
      if (channel === 'perf:listZips') return { ok: true, value: [zip] };
      if (channel === 'perf:list') return { ok: true, value: [other] };
      if (channel === 'perf:get') return { ok: true, value: { ...other, requests: [], aggregates: [] } };
      return undefined;
    });
    usePerf.setState({ selected: detail, compareWith: detail, campaigns: [campaign, other], deletion: null, deleted: null });
    const asked = usePerf.getState().askDelete();
    expect(usePerf.getState().deletion).toEqual({ campaign, zips: null, deleteZips: false, busy: false, error: null });
    await asked;
    expect(usePerf.getState().deletion).toEqual({ campaign, zips: [zip], deleteZips: false, busy: false, error: null });
    usePerf.getState().setDeleteZips(true);

    expect(await usePerf.getState().confirmDelete()).toBe(false);
    expect(usePerf.getState().deletion).toEqual({
      campaign, zips: [zip], deleteZips: true, busy: false, error: 'campaign perf-elsewhere is running: cancel it before deleting it',
    });
    refuse = false;
    expect(await usePerf.getState().confirmDelete()).toBe(true);
    expect(calls.filter((c) => c.channel === 'perf:listZips').map((c) => c.payload)).toEqual([{ campaignId: campaign.id }]);
    expect(calls.filter((c) => c.channel === 'perf:delete').map((c) => c.payload)).toEqual([
      { campaignId: campaign.id, deleteExport: true },
      { campaignId: campaign.id, deleteExport: true },
    ]);
    expect(usePerf.getState()).toMatchObject({
      deletion: null, deleted: { campaignId: campaign.id, requests: 4, deletedFiles: [zip.path] }, compareWith: null, selected: { id: 'perf-other' },
    });
    expect(usePerf.getState().campaigns.map((c) => c.id)).toEqual(['perf-other']);
  });

  it('keeps the ZIPs when none was found, or the lookup failed, whatever the box said', async () => {
    let found = false;
    const calls = scripted((channel, payload) => {
      if (channel === 'perf:listZips') return found ? { ok: false, error: { code: 'INTERNAL', message: 'EACCES' } } : { ok: true, value: [] };
      if (channel === 'perf:delete') return { ok: true, value: { campaignId: (payload as { campaignId: string }).campaignId, requests: 0, deletedFiles: [], fileErrors: [] } };
      if (channel === 'perf:list') return { ok: true, value: [] };
      return undefined;
    });
    for (const lookupFails of [false, true]) {
      found = lookupFails;
      usePerf.setState({ selected: detail, campaigns: [campaign], deletion: null, deleted: null });
      await usePerf.getState().askDelete();
      expect(usePerf.getState().deletion?.zips).toEqual([]);
      usePerf.getState().setDeleteZips(true);
      expect(await usePerf.getState().confirmDelete()).toBe(true);
    }
    expect(calls.filter((c) => c.channel === 'perf:delete').map((c) => c.payload)).toEqual([{ campaignId: campaign.id }, { campaignId: campaign.id }]);
  });

  it("drops a ZIP lookup's late answer once the question is about another campaign", async () => {
    const other: PerfCampaignDetail = { ...detail, id: 'perf-other', imported: null };
    let answer: (() => void) | undefined;
    scripted((channel, payload) => {
      if (channel !== 'perf:listZips') return undefined;
      const id = (payload as { campaignId: string }).campaignId;
      if (id === campaign.id) return new Promise((resolve) => (answer = () => resolve({ ok: true, value: [zip] })));
      return { ok: true, value: [] };
    });
    usePerf.setState({ selected: detail, campaigns: [campaign, other], deletion: null });
    const first = usePerf.getState().askDelete();
    usePerf.getState().cancelDelete();
    usePerf.setState({ selected: other });
    await usePerf.getState().askDelete();
    answer?.();
    await first;
    expect(usePerf.getState().deletion).toMatchObject({ campaign: { id: 'perf-other' }, zips: [] });
  });

  it('does not ask to delete a campaign still running', async () => {
    usePerf.setState({ selected: { ...detail, status: 'running' }, deletion: null });
    await usePerf.getState().askDelete();
    expect(usePerf.getState().deletion).toBeNull();
  });
});

describe('perf store: a campaign deleted in another window', () => {
  it('lets go of it where it was shown and reads the list again, unless its own delete is on its way', () => {
    const calls = scripted(() => undefined);
    const other: PerfCampaign = { ...campaign, id: 'perf-other', imported: null };
    usePerf.setState({ campaigns: [campaign, other], selected: detail, compareWith: detail, deletion: { campaign, zips: [], deleteZips: false, busy: true, error: null } });
    usePerf.getState().handleDeleted(campaign.id);
    expect(usePerf.getState().campaigns).toHaveLength(2);

    usePerf.setState({ deletion: { campaign, zips: [], deleteZips: false, busy: false, error: null } });
    usePerf.getState().handleDeleted(campaign.id);
    expect(usePerf.getState()).toMatchObject({ campaigns: [other], selected: null, compareWith: null, deletion: null });
    expect(calls.map((c) => c.channel)).toEqual(['perf:list']);

    // Another campaign than the one shown: only the list changes.
    usePerf.setState({ campaigns: [other], selected: { ...detail, id: 'perf-other' } });
    usePerf.getState().handleDeleted('perf-gone');
    expect(usePerf.getState().selected?.id).toBe('perf-other');
    expect(calls).toHaveLength(1);
  });
});

describe('perf store: labelling a campaign', () => {
  it('refuses a bad label before asking, then shows the stored one wherever the campaign is', async () => {
    const other: PerfCampaign = { ...campaign, id: 'perf-other', imported: null };
    const calls = scripted((channel, payload) => {
      if (channel !== 'perf:setLabel') return undefined;
      const { campaignId, label } = payload as { campaignId: string; label: string };
      if (campaignId !== campaign.id) return { ok: false, error: { code: 'NOT_FOUND', message: `campaign ${campaignId} not found` } };
      return { ok: true, value: { ...campaign, label: label.trim() || null } };
    });
    usePerf.setState({ campaigns: [campaign, other], selected: detail, compareWith: detail, deletion: null });
    expect(await usePerf.getState().setLabel(campaign.id, 'a\nb')).toBe('A label is one line of text, without control characters.');
    expect(calls).toEqual([]);
    expect(await usePerf.getState().setLabel('perf-gone', 'x')).toBe('campaign perf-gone not found');
    expect(await usePerf.getState().setLabel(campaign.id, ' RTX 4090 ')).toBeNull();
    const s = usePerf.getState();
    expect([s.campaigns[0]?.label, s.selected?.label, s.compareWith?.label]).toEqual(['RTX 4090', 'RTX 4090', 'RTX 4090']);
    expect(s.campaigns[1]).toBe(other);
    // Told by another window: cleared here too.
    usePerf.getState().handleLabelled(campaign.id, null);
    expect(usePerf.getState().selected?.label).toBeNull();
    expect(usePerf.getState().campaigns[0]?.label).toBeNull();
  });
});

describe('perf store: starting a labelled campaign', () => {
  it('says what is wrong with the label as it is typed, starts nothing then, and sends the trimmed label', async () => {
    const calls = scripted((channel) => {
      if (channel === 'perf:start') return { ok: true, value: { ...campaign, id: 'perf-new', label: 'driver 580', imported: null } };
      if (channel === 'perf:list') return { ok: true, value: [] };
      return undefined;
    });
    usePerf.setState({ form: { modelId: 'm', budgets: '', label: '' }, busy: false, budgetsError: null, labelError: null });
    usePerf.getState().setForm({ label: 'tab\there' });
    expect(usePerf.getState().labelError).toBe('A label is one line of text, without control characters.');
    await usePerf.getState().start();
    expect(calls.filter((c) => c.channel === 'perf:start')).toEqual([]);
    usePerf.getState().setForm({ label: ' driver 580 ' });
    expect(usePerf.getState().labelError).toBeNull();
    await usePerf.getState().start();
    expect(calls.find((c) => c.channel === 'perf:start')?.payload).toEqual({ modelId: 'm', label: 'driver 580' });
    expect(usePerf.getState().form.label).toBe('');
  });
});

describe('campaignMatches', () => {
  const labelled: PerfCampaign = { ...campaign, label: 'Driver 580', status: 'cancelled' };
  it.each([
    ['', true],
    ['  ', true],
    ['driver', true],
    ['DRIVER 580', true],
    ['580 driver', true],
    ['driver 575', false],
    ['rtx 4090', true],
    ['h200', false],
    ['cancelled', true],
    ['completed', false],
    ['perf-else', true],
    ['int4-g32', true],
    ['o/m', true],
    ['aaaaaaa', true],
    ['int4', true],
    ['bf16', false],
    ['perf.zip', true],
  ])('the filter %j %s the campaign', (query, matches) => {
    expect(campaignMatches(labelled, query)).toBe(matches);
  });
});
