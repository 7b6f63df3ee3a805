import { useEffect, useMemo } from 'react';

import { compareCampaigns, PERF_SETTINGS, ratiosToFullResidency, type PerfCampaignDetail, type ResidencyRatio } from '../../../../electron/common/perf-campaign.js';
import { Card } from '../../components/Card.js';
import { ConfirmPanel } from '../../components/ConfirmPanel.js';
import { DeletedNotice } from '../../components/DeletedNotice.js';
import { LabelField } from '../../components/LabelField.js';
import { ExportZipsOption } from '../../components/ExportZipsOption.js';
import { Field } from '../../components/Field.js';
import { baseName, formatBytes, formatDate, formatNumber, withLabel } from '../../components/format.js';
import { Notice } from '../../components/Notice.js';
import { ProgressBar } from '../../components/ProgressBar.js';
import { ModelSelect } from '../../components/ModelSelect.js';
import { WordFilter } from '../../components/WordFilter.js';
import { useModels } from '../../stores/models.js';
import { campaignMatches, usePerf } from '../../stores/perf.js';
import { useSystem } from '../../stores/system.js';
import { ZipPathField } from '../system/BrowseButton.js';

/** Decode rate against peak GPU memory, one point a configuration: what each GiB of expert budget buys. */
export function RateMemoryChart({ campaign: c }: { campaign: PerfCampaignDetail }) {
  const pts = c.aggregates
    .map((a, i) => ({ label: c.configs[i]?.label ?? '', mem: a.peakMemoryBytes, rate: a.decodeTokensPerSecond }))
    .filter((p): p is { label: string; mem: number; rate: number } => p.mem !== null && p.rate !== null);
  if (pts.length === 0) {
    return (
      <p className="muted" data-testid="rate-memory-none">
        {c.backend === 'cpu' ? 'No GPU memory axis on the CPU backend: the decode rate is in the table.' : 'No configuration has finished yet.'}
      </p>
    );
  }
  const W = 520;
  const H = 220;
  const pad = 44;
  const maxMem = Math.max(...pts.map((p) => p.mem)) * 1.1;
  const maxRate = Math.max(...pts.map((p) => p.rate)) * 1.15;
  const x = (m: number) => pad + (m / maxMem) * (W - pad - 12);
  const y = (r: number) => H - pad + 6 - (r / maxRate) * (H - pad - 14);
  const sorted = [...pts].sort((a, b) => a.mem - b.mem);
  const summary = sorted.map((p) => `${p.label} ${formatNumber(p.rate)} tok/s at ${formatBytes(p.mem)}`).join('; ');
  return (
    <figure className="perf-chart" data-testid="rate-memory-chart">
      <svg viewBox={`0 0 ${W} ${H}`} role="img" aria-label={`Decode rate against peak GPU memory: ${summary}`}>
        <line className="perf-chart__axis" x1={pad} y1={H - pad + 6} x2={W - 8} y2={H - pad + 6} />
        <line className="perf-chart__axis" x1={pad} y1={8} x2={pad} y2={H - pad + 6} />
        <polyline className="perf-chart__line" points={sorted.map((p) => `${x(p.mem).toFixed(1)},${y(p.rate).toFixed(1)}`).join(' ')} />
        {sorted.map((p) => (
          <g key={p.label}>
            <circle className="perf-chart__point" cx={x(p.mem)} cy={y(p.rate)} r={4} />
            <text className="perf-chart__label" x={x(p.mem)} y={y(p.rate) - 8} textAnchor="middle">
              {p.label}
            </text>
          </g>
        ))}
        <text className="perf-chart__label" x={W - 8} y={H - 6} textAnchor="end">
          peak GPU memory ({formatBytes(maxMem / 1.1)} max)
        </text>
        <text className="perf-chart__label" x={pad - 6} y={14} textAnchor="end">
          {Math.round(maxRate / 1.15)}
        </text>
        <text className="perf-chart__label" x={pad - 6} y={H - pad + 10} textAnchor="end">
          0
        </text>
      </svg>
      <figcaption className="muted small">Pooled decode tok/s of each configuration against its peak GPU memory.</figcaption>
    </figure>
  );
}

/** An expert budget's decode rate over full residency's, with its 95% interval where there is one. */
function FullResidencyRatio({ ratio }: { ratio: ResidencyRatio | null }) {
  if (!ratio) return null;
  const ci = ratio.decodeRatioCi95;
  return (
    <div
      className="muted small nowrap"
      data-testid="full-residency-ratio"
      title="Decode rate over full residency's in this campaign; 95% interval: a seeded bootstrap over its prompts and each configuration's blocks"
    >
      {ratio.decodeRatio.toFixed(2)}x of full{ci ? ` (${ci[0].toFixed(2)}–${ci[1].toFixed(2)}x)` : ''}
    </div>
  );
}

/** A campaign's configurations, one row each, with every figure the campaign measures. */
export function CampaignTable({ campaign: c }: { campaign: PerfCampaignDetail }) {
  const onCpu = c.backend === 'cpu';
  const na = 'n/a on CPU';
  // Each budget's intervals resample its requests 10,000 times: once the campaign has ended, not on every request.
  const toFull = useMemo(() => (c.status === 'running' ? [] : ratiosToFullResidency(c)), [c]);
  return (
    <table className="table table--compact" data-testid="campaign-table">
      <thead>
        <tr>
          <th scope="col">Configuration</th>
          <th scope="col" className="num">
            Decode tok/s
          </th>
          <th scope="col" className="num">
            TTFT p50 / p90
          </th>
          <th scope="col" className="num">
            Response p50
          </th>
          <th scope="col" className="num">
            Peak GPU memory
          </th>
          <th scope="col" className="num">
            Host → GPU
          </th>
          <th scope="col" className="num">
            Expert hits / misses
          </th>
        </tr>
      </thead>
      <tbody>
        {c.aggregates.map((a, i) => {
          const spec = c.configs[i]!;
          return (
            <tr key={spec.label}>
              <th scope="row">
                {spec.label}
                <div className="muted small">{spec.residency ?? 'not loaded yet'}</div>
              </th>
              <td className="num">
                {formatNumber(a.decodeTokensPerSecond)}
                <FullResidencyRatio ratio={toFull[i] ?? null} />
              </td>
              <td className="num nowrap">
                {formatNumber(a.ttftMsP50, 0)} / {formatNumber(a.ttftMsP90, 0)} ms
              </td>
              <td className="num nowrap">{a.responseMsP50 === null ? '—' : `${formatNumber(a.responseMsP50, 0)} ms`}</td>
              <td className="num nowrap">{onCpu ? na : formatBytes(a.peakMemoryBytes)}</td>
              <td className="num nowrap">{onCpu ? na : formatBytes(a.h2dBytes)}</td>
              <td className="num nowrap">{onCpu ? na : `${a.expertHits.toLocaleString()} / ${a.expertMisses.toLocaleString()}`}</td>
            </tr>
          );
        })}
      </tbody>
    </table>
  );
}

const ratioText = (r: number | null) => (r === null ? '—' : `${r.toFixed(2)}x`);

/** A ratio's 95% interval under it, where the two campaigns measured two prompts or more in common. */
function RatioInterval({ ci, testId }: { ci: readonly [number, number] | null; testId: string }) {
  if (!ci) return null;
  return (
    <div className="muted small nowrap" data-testid={testId} title="95% interval: a seeded bootstrap over the prompts both campaigns measured and each campaign's blocks">
      {ci[0].toFixed(2)}–{ci[1].toFixed(2)}x
    </div>
  );
}

/** Two campaigns side by side, configuration by configuration: B (the one picked to compare) over A (the one shown). */
export function CampaignComparison({ a, b }: { a: PerfCampaignDetail; b: PerfCampaignDetail }) {
  // Its intervals resample every request 10,000 times: once per pair of campaigns, not per render.
  const { configs, differences } = useMemo(() => compareCampaigns(a, b), [a, b]);
  return (
    <div data-testid="campaign-comparison">
      <p className="muted small">
        A <span className="mono">{a.id}</span>
        {a.label !== null ? ` “${a.label}”` : ''} on {a.deviceLabel} · B <span className="mono">{b.id}</span>
        {b.label !== null ? ` “${b.label}”` : ''} on {b.deviceLabel}
      </p>
      {differences.length ? (
        <Notice tone="info">
          <span data-testid="campaign-differences">Not like for like: {differences.join('; ')}.</span>
        </Notice>
      ) : null}
      <table className="table table--compact">
        <thead>
          <tr>
            <th scope="col">Configuration</th>
            <th scope="col" className="num">
              Decode A
            </th>
            <th scope="col" className="num">
              Decode B
            </th>
            <th scope="col" className="num">
              B / A
            </th>
            <th scope="col" className="num">
              TTFT p50 A
            </th>
            <th scope="col" className="num">
              TTFT p50 B
            </th>
            <th scope="col" className="num">
              B / A
            </th>
          </tr>
        </thead>
        <tbody>
          {configs.map((c) => (
            <tr key={c.label}>
              <th scope="row">{c.label}</th>
              <td className="num">{c.a ? `${formatNumber(c.a.decodeTokensPerSecond)} tok/s` : 'not measured'}</td>
              <td className="num">{c.b ? `${formatNumber(c.b.decodeTokensPerSecond)} tok/s` : 'not measured'}</td>
              <td className="num">
                {ratioText(c.decodeRatio)}
                <RatioInterval ci={c.decodeRatioCi95} testId="decode-ratio-ci" />
              </td>
              <td className="num nowrap">{c.a ? `${formatNumber(c.a.ttftMsP50, 0)} ms` : '—'}</td>
              <td className="num nowrap">{c.b ? `${formatNumber(c.b.ttftMsP50, 0)} ms` : '—'}</td>
              <td className="num">
                {ratioText(c.ttftRatio)}
                <RatioInterval ci={c.ttftRatioCi95} testId="ttft-ratio-ci" />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

export function PerfPage() {
  const allModels = useModels((s) => s.models);
  const models = useMemo(() => allModels.filter((m) => m.ready), [allModels]);
  const onCpu = useSystem((s) => s.info?.backend === 'cpu');
  const campaigns = usePerf((s) => s.campaigns);
  const selected = usePerf((s) => s.selected);
  const progress = usePerf((s) => s.progress);
  const form = usePerf((s) => s.form);
  const budgetsError = usePerf((s) => s.budgetsError);
  const labelError = usePerf((s) => s.labelError);
  const error = usePerf((s) => s.error);
  const busy = usePerf((s) => s.busy);
  const exported = usePerf((s) => s.exported);
  const compareWith = usePerf((s) => s.compareWith);
  const deletion = usePerf((s) => s.deletion);
  const deleted = usePerf((s) => s.deleted);
  const filter = usePerf((s) => s.filter);
  const matching = useMemo(() => campaigns.filter((c) => campaignMatches(c, filter)), [campaigns, filter]);
  // The shown campaign and the one it is compared with stay in their pickers, matching or not: a select shows its value.
  const offered = (keep: string | undefined) => campaigns.filter((c) => c.id === keep || matching.includes(c));
  const { setFilter, setForm, start, cancel, select, exportZip, setCompareWith, askDelete, setDeleteZips, cancelDelete, confirmDelete } = usePerf.getState();
  const running = progress?.status === 'running';

  useEffect(() => {
    void useModels.getState().refresh();
    void usePerf.getState().refresh();
    // What the last deletion did is said while the page stays open.
    return () => usePerf.setState({ deleted: null });
  }, []);
  useEffect(() => {
    if (!form.modelId && models[0]) setForm({ modelId: models[0].id });
  }, [models, form.modelId, setForm]);

  return (
    <div className="page">
      <header className="page__header">
        <div>
          <h1>Performance</h1>
          <p className="page__lede">
            The published campaign: the first {PERF_SETTINGS.prompts} IFEval prompts, each alone, greedy with EOS suppressed,{' '}
            {PERF_SETTINGS.maxNewTokens} new tokens, {PERF_SETTINGS.blocks} blocks, after an excluded {PERF_SETTINGS.warmupTokens}-token warm-up; for
            full residency and each expert budget.
          </p>
        </div>
      </header>
      <Card title="Run a campaign" testId="perf-form">
        <form
          className="form"
          onSubmit={(e) => {
            e.preventDefault();
            void start();
          }}
        >
          <div className="form__row">
            <ModelSelect models={models} value={form.modelId} onValue={(modelId) => setForm({ modelId })} disabled={running} />
            <Field
              label="Expert budgets (GiB)"
              placeholder={onCpu ? 'CUDA only' : 'e.g. 2, 4, 8'}
              value={form.budgets}
              onValue={(budgets) => setForm({ budgets })}
              disabled={running || onCpu}
              error={budgetsError}
              hint={
                onCpu
                  ? 'CUDA only: the CPU backend keeps every expert in host memory, so it measures one configuration.'
                  : 'Each adds a configuration after full residency.'
              }
            />
          </div>
          <div className="form__row">
            <Field
              label="Label (optional)"
              placeholder="e.g. driver 580"
              value={form.label}
              onValue={(label) => setForm({ label })}
              disabled={running}
              error={labelError}
              hint="Names the campaign in the list, comparisons and its ZIP."
            />
          </div>
          <div className="form__actions">
            {running ? (
              <button type="button" className="btn" onClick={() => void cancel()}>
                Cancel campaign
              </button>
            ) : null}
            <button type="submit" className="btn btn--primary" disabled={running || !form.modelId} aria-disabled={busy || undefined}>
              Run campaign
            </button>
          </div>
        </form>
        {error ? <Notice tone="error">{error}</Notice> : null}
        {progress ? (
          <div className="run-progress" data-testid="perf-progress">
            <div className="run-progress__head">
              <span role="status" aria-atomic="true">
                <span className={`status status--${progress.status}`} data-testid="perf-status">
                  {progress.status}
                </span>{' '}
                <span className="muted">{progress.error ?? progress.message}</span>
              </span>
              <span className="run-progress__count">
                {progress.done} / {progress.total || '…'} requests
              </span>
            </div>
            <ProgressBar
              label="Campaign progress"
              value={progress.done}
              max={progress.total || 1}
              valueText={`${progress.done} of ${progress.total} requests`}
              tone={progress.status === 'failed' ? 'bad' : progress.status === 'completed' ? 'ok' : 'accent'}
            />
          </div>
        ) : null}
      </Card>
      {deleted ? (
        <DeletedNotice
          what={
            <>
              campaign <span className="mono">{deleted.campaignId}</span> and its {deleted.requests} {deleted.requests === 1 ? 'request' : 'requests'}
            </>
          }
          deletedFiles={deleted.deletedFiles}
          fileErrors={deleted.fileErrors}
          zipName="campaign ZIP"
          testId="perf-deleted"
        />
      ) : null}
      {campaigns.length ? (
        <Card
          title="Campaigns"
          actions={
            selected && selected.status !== 'running' ? (
              <div className="row-actions">
                <button type="button" className="btn" onClick={() => void exportZip()}>
                  Export ZIP
                </button>
                <button type="button" className="btn" aria-label={`Delete campaign ${selected.id}`} onClick={() => void askDelete()}>
                  Delete
                </button>
              </div>
            ) : null
          }
        >
          {deletion ? (
            <ConfirmPanel
              titleId="delete-campaign-title"
              title={
                <>
                  Delete campaign <span className="mono">{deletion.campaign.id}</span>?
                </>
              }
              testId="perf-delete-confirm"
              subject={deletion.campaign.id}
              busy={deletion.busy}
              error={deletion.error}
              keepLabel="Keep it"
              confirmLabel="Delete campaign"
              onConfirm={() => void confirmDelete()}
              onCancel={cancelDelete}
            >
              <p>
                The {deletion.campaign.status} campaign on {deletion.campaign.deviceLabel}
                {deletion.campaign.imported ? `, imported from ${baseName(deletion.campaign.imported.file)},` : ''} started{' '}
                {formatDate(deletion.campaign.createdAt)}. Deleting it removes its measured requests from the database for good.
              </p>
              <ExportZipsOption zips={deletion.zips} checked={deletion.deleteZips} disabled={deletion.busy} onChange={setDeleteZips} />
            </ConfirmPanel>
          ) : null}
          {campaigns.length > 1 || filter ? (
            <WordFilter
              label="Filter campaigns"
              value={filter}
              onValue={setFilter}
              count={filter.trim() ? `${matching.length} of ${campaigns.length} campaigns match` : `${campaigns.length} campaigns`}
              countTestId="perf-shown"
              noMatch={filter.trim() && !matching.length ? { what: 'campaign', clearLabel: 'Offer every campaign' } : null}
            />
          ) : null}
          <div className="field field--inline">
            <label htmlFor="perf-campaign">Campaign</label>
            <select id="perf-campaign" value={selected?.id ?? ''} onChange={(e) => void select(e.target.value)}>
              {offered(selected?.id).map((c) => (
                <option key={c.id} value={c.id}>
                  {withLabel(c.id, c.label)} · {c.status} · {formatDate(c.createdAt)}
                  {c.imported ? ' · imported' : ''}
                </option>
              ))}
            </select>
            {campaigns.length > 1 ? (
              <>
                <label htmlFor="perf-compare">Compare with</label>
                <select id="perf-compare" value={compareWith?.id ?? ''} onChange={(e) => void setCompareWith(e.target.value)}>
                  <option value="">—</option>
                  {offered(compareWith?.id)
                    .filter((c) => c.id !== selected?.id)
                    .map((c) => (
                      <option key={c.id} value={c.id}>
                        {withLabel(c.id, c.label)} · {c.deviceLabel}
                        {c.imported ? ' · imported' : ''}
                      </option>
                    ))}
                </select>
              </>
            ) : null}
          </div>
          {exported ? (
            <Notice tone="ok">
              <span data-testid="perf-exported">
                Exported <span className="mono">{exported.path}</span> ({formatBytes(exported.bytes)}); <span className="mono">horizon verify</span>{' '}
                checks it.
              </span>
            </Notice>
          ) : null}
          {selected ? (
            <div className="perf" data-testid="campaign">
              <LabelField
                subject={selected.id}
                label={selected.label}
                name="Campaign label"
                shownIn="The campaign list, comparisons and campaign ZIPs show it too."
                save={(text) => usePerf.getState().setLabel(selected.id, text)}
              />
              <p className="muted small">
                {selected.model.modelId} on {selected.deviceLabel} · {selected.status}
                {selected.error ? `: ${selected.error}` : ''} · {selected.requests.length} requests measured
                {selected.peakMemoryScope === 'device' ? ' · peak GPU memory is the whole GPU, other programs included' : ''}
                {selected.imported ? (
                  <span data-testid="campaign-imported">
                    {' '}
                    · imported from <span className="mono">{baseName(selected.imported.file)}</span> on {formatDate(selected.imported.importedAt)}
                  </span>
                ) : null}
              </p>
              <CampaignTable campaign={selected} />
              <RateMemoryChart campaign={selected} />
              {compareWith ? <CampaignComparison a={selected} b={compareWith} /> : null}
            </div>
          ) : null}
        </Card>
      ) : (
        <p className="muted">No campaign yet.</p>
      )}
      <ImportCampaignCard />
    </div>
  );
}

/** Adds a campaign ZIP's campaign (another machine's, a colleague's) to the list once it verifies. */
function ImportCampaignCard() {
  const zipPath = usePerf((s) => s.zipPath);
  const importing = usePerf((s) => s.importing);
  const importError = usePerf((s) => s.importError);
  const imported = usePerf((s) => s.imported);
  const { setZipPath, importZip } = usePerf.getState();
  return (
    <Card
      title="Import a campaign ZIP"
      subtitle="Another machine's campaign, checked as horizon verify checks it (every hash, every aggregate recomputed), beside yours."
      testId="perf-import"
    >
      <form
        className="asset__row"
        onSubmit={(e) => {
          e.preventDefault();
          if (!importing) void importZip();
        }}
      >
        <ZipPathField title="Campaign ZIP" what="a campaign ZIP" value={zipPath} onValue={setZipPath} />
        <button type="submit" className="btn" aria-disabled={importing || undefined}>
          {importing ? 'Adding…' : 'Add campaign'}
        </button>
      </form>
      {importError ? (
        <Notice tone="error">
          <span data-testid="perf-import-error">{importError}</span>
        </Notice>
      ) : null}
      {imported ? (
        <Notice tone="ok">
          <span data-testid="perf-import-done">
            Added campaign <span className="mono">{imported.id}</span> ({imported.status}, {imported.deviceLabel}); it is shown above.
          </span>
        </Notice>
      ) : null}
    </Card>
  );
}
