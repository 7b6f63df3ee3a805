import { useEffect, useRef } from 'react';

import type { Interval } from '../../../../electron/common/accuracy-intervals.js';
import { isLiveStatus } from '../../../../electron/common/ipc-contract.js';
import { qualitySummary } from '../../../../electron/common/quality-summary.js';
import { Card } from '../../components/Card.js';
import { baseName, formatBytes, formatDate, formatDuration, formatNumber, formatPercent, shortSha, weightsLabel, withLabel } from '../../components/format.js';
import { Notice } from '../../components/Notice.js';
import { LabelField } from '../../components/LabelField.js';
import { UncheckedList } from '../../components/UncheckedList.js';
import { Stat } from '../../components/Stat.js';
import { useFocusFallback } from '../../components/use-focus-fallback.js';
import { downloader } from '../../api.js';
import { useHistory } from '../../stores/history.js';
import { useModels } from '../../stores/models.js';
import { useResults } from '../../stores/results.js';
import { ResumeRunButton } from '../runs/ResumeRunButton.js';
import { DownloadButton } from './DownloadButton.js';
import { InstructionChart } from './InstructionChart.js';
import { PerformanceCard } from './PerformanceCard.js';
import { ResponseBrowser } from './ResponseBrowser.js';
import { ResponseView } from './ResponseView.js';

/** An accuracy's 95% confidence interval under its figure, with what it means on hover. */
function intervalHint(interval: Interval | undefined, instructions = false) {
  if (!interval) return null;
  const pct = (x: number) => (100 * x).toFixed(1);
  const how = instructions
    ? 'the instructions of one prompt counted as correlated, not as independent trials'
    : 'a Wilson score interval over the prompts';
  return (
    <span
      className="stat__interval"
      title={`95% confidence interval of the model's accuracy on prompts like these, the run's prompts being a sample of them (${how}).`}
    >
      95% CI {pct(interval[0])}–{pct(interval[1])}%
    </span>
  );
}

export function ResultsPage() {
  const runId = useResults((s) => s.runId);
  const d = useResults((s) => s.detail);
  const error = useResults((s) => s.error);
  const exported = useResults((s) => s.exported);
  const exportedRun = useResults((s) => s.exportedRun);
  const verify = useResults((s) => s.verify);
  const exporting = useResults((s) => s.exporting);
  const gone = useResults((s) => s.gone);
  const { open, exportZip, setFilters } = useResults.getState();
  const runs = useHistory((s) => s.runs);
  const refreshRuns = useHistory((s) => s.refresh);
  // The open run's model's INT4 check, where that model is prepared here (an imported run's usually is not).
  const quality = useModels((s) => (d ? (s.models.find((m) => m.id === d.modelId && m.weights === 'int4')?.quality ?? null) : null));

  useEffect(() => {
    void refreshRuns();
    void useModels.getState().refresh();
    return () => useResults.getState().dismissGone();
  }, [refreshRuns]);
  // A run deleted elsewhere may still be in a list read before: read it again, and never open that run.
  useEffect(() => {
    if (gone) void refreshRuns();
  }, [gone, refreshRuns]);
  // The run open when the page is shown is read again; the run list changes with every refresh while a run is live,
  // and the live run's results are reloaded by the events (stores/events.ts), not here.
  useEffect(() => {
    const shown = useResults.getState().runId;
    if (shown) void useResults.getState().open(shown);
  }, []);
  useEffect(() => {
    const latest = runs.find((r) => r.id !== gone);
    if (!runId && latest) void open(latest.id);
  }, [runId, runs, gone, open]);
  // A run deleted in another window closes with its open response, and the focus goes with them.
  const heading = useRef<HTMLHeadingElement>(null);
  useFocusFallback(heading, gone);

  const download = downloader();
  // What the ZIP holds, from its manifest once verified: the run itself may have been resumed since.
  const zipRun = verify?.run ? { status: verify.run.status, done: verify.run.responses, total: verify.run.total } : exportedRun;
  const generating = d !== null && isLiveStatus(d.status);

  return (
    <div className="page">
      <header className="page__header">
        <div>
          <h1 ref={heading} tabIndex={-1}>
            Results
          </h1>
          <p className="page__lede">
            {d ? (
              <>
                {d.modelRepo} @ <span className="mono">{shortSha(d.modelRevision)}</span> · {weightsLabel(d.modelId, d.weights)} ·{' '}
                {d.backendLabel} · {formatDate(d.createdAt)}
                {d.imported ? (
                  <span data-testid="results-imported">
                    {' '}
                    · imported from <span className="mono">{baseName(d.imported.file)}</span> on {formatDate(d.imported.importedAt)}
                  </span>
                ) : null}
              </>
            ) : (
              'Accuracy, per-instruction breakdown and every scored response.'
            )}
          </p>
          {d ? (
            <LabelField
              subject={d.id}
              label={d.label}
              name="Run label"
              shownIn="History and result ZIPs show it too."
              save={(text) => useHistory.getState().setLabel(d.id, text)}
            />
          ) : null}
        </div>
        <div className="page__actions">
          {runs.length ? (
            <div className="field field--inline">
              <label htmlFor="results-run">Run</label>
              <select id="results-run" value={runId ?? ''} onChange={(e) => void open(e.target.value)}>
                {runs.map((r) => (
                  <option key={r.id} value={r.id}>
                    {withLabel(r.id, r.label)} · {r.status} · {r.done}/{r.total}
                  </option>
                ))}
              </select>
            </div>
          ) : null}
          {d ? <ResumeRunButton run={d} className="btn" /> : null}
          <button
            type="button"
            className="btn btn--primary"
            onClick={() => void exportZip()}
            disabled={!d || generating}
            aria-disabled={exporting || undefined}
            title={generating ? 'The run is still generating; export it once it has finished or been cancelled.' : undefined}
          >
            {exporting ? 'Exporting…' : 'Export ZIP'}
          </button>
        </div>
      </header>
      {gone ? (
        <Notice tone="info">
          Run <span className="mono">{gone}</span> is no longer in the database: it was deleted in another window or by{' '}
          <span className="mono">horizon delete</span>.{runId ? ' Showing the newest run.' : ''}
        </Notice>
      ) : null}
      {error ? <Notice tone="error">{error}</Notice> : null}
      {exported ? (
        <Notice tone={verify?.verified ? 'ok' : verify ? 'error' : 'info'}>
          <div data-testid="export-status">
            {verify?.verified ? 'Exported and verified: ' : verify ? 'Exported, but verification failed: ' : 'Exported: '}
            <span className="mono">{exported.path}</span> ({formatBytes(exported.bytes)})
            {zipRun && zipRun.status !== 'completed' ? (
              <span data-testid="export-partial">
                {' '}
                · a {zipRun.status} run: {zipRun.done} of {zipRun.total} prompts
              </span>
            ) : null}
            {exported && download ? (
              <>
                {' · '}
                <DownloadButton path={exported.path} download={download} />
              </>
            ) : null}
            {verify && !verify.verified ? (
              <ul>
                {verify.problems.map((p) => (
                  <li key={p}>{p}</li>
                ))}
              </ul>
            ) : null}
            {verify ? <UncheckedList items={verify.unchecked} testId="export-unchecked" /> : null}
          </div>
        </Notice>
      ) : null}
      {!runId && !runs.length ? <p className="muted">No runs yet. Start one on the Run page.</p> : null}
      {d ? (
        <>
          <div className="stats stats--hero" data-testid="accuracies">
            <Stat label="Prompt-level strict" value={formatPercent(d.accuracies?.promptStrict)} hint={intervalHint(d.intervals?.promptStrict)} testId="acc-prompt-strict" />
            <Stat label="Prompt-level loose" value={formatPercent(d.accuracies?.promptLoose)} hint={intervalHint(d.intervals?.promptLoose)} />
            <Stat
              label="Instruction-level strict"
              value={formatPercent(d.accuracies?.instructionStrict)}
              hint={intervalHint(d.intervals?.instructionStrict, true)}
            />
            <Stat label="Instruction-level loose" value={formatPercent(d.accuracies?.instructionLoose)} hint={intervalHint(d.intervals?.instructionLoose, true)} />
          </div>
          <div className="stats stats--small">
            <Stat label="Prompts scored" value={`${d.done} / ${d.total}`} hint={d.status} />
            <Stat label="TTFT" value={`${formatNumber(d.figures.ttftMs, 0)} ms`} />
            <Stat label="Decode" value={`${formatNumber(d.figures.decodeTokensPerSecond)} tok/s`} />
            {/* A CPU run has none: the Performance card below says so once. */}
            {d.backend === 'cpu' ? null : (
              <Stat
                label="Peak GPU memory"
                value={formatBytes(d.figures.peakMemoryBytes)}
                hint={peakMemoryHint(d.figures.peakMemoryScope)}
                testId="peak-memory"
              />
            )}
            <Stat
              label="Tokens generated"
              value={d.figures.generatedTokens.toLocaleString()}
              testId="tokens-generated"
              hint={
                d.endings.length > 0 ? (
                  <button
                    type="button"
                    className="link"
                    title={`List the responses that reached max new tokens (${d.policy.maxNewTokens}) before the model ended them`}
                    onClick={() => {
                      void setFilters({ finish: 'length' });
                      document.getElementById('response-browser')?.scrollIntoView({ block: 'start' });
                    }}
                  >
                    {d.endings.length.toLocaleString()} cut at {d.policy.maxNewTokens.toLocaleString()}
                  </button>
                ) : d.done > 0 ? (
                  'none cut short'
                ) : null
              }
            />
            <Stat label="Wall time" value={formatDuration(d.figures.wallSeconds)} />
          </div>
          {d.error ? (
            <Notice tone="error">
              <span data-testid="run-error">
                This run {d.status === 'failed' ? 'failed' : 'stopped'}: {d.error}
              </span>
            </Notice>
          ) : null}
          <p className="muted" data-testid="residency">
            Weights: {d.residency === 'pending' ? 'not loaded yet' : d.residency}
          </p>
          {d.carriedQuality ? (
            <p className="muted" data-testid="int4-check">
              The {qualitySummary(d.carriedQuality)}, as this run's result ZIP carried it.
            </p>
          ) : quality && d.weights === 'int4' ? (
            <p className="muted" data-testid="int4-check">
              This model's {qualitySummary(quality)}.
            </p>
          ) : null}
          <Card
            title="By instruction type"
            subtitle={
              `Max new tokens ${d.policy.maxNewTokens}, batch ${d.policy.batch}, ${d.policy.greedy ? 'greedy' : 'sampled'}` +
              (d.policy.expertBudgetBytes !== null ? `, GPU expert memory ${formatBytes(d.policy.expertBudgetBytes)}` : '') +
              (d.policy.cudaDevice !== null ? `, CUDA device ${d.policy.cudaDevice}` : '') +
              '. Click a bar to filter the responses.'
            }
          >
            {d.byInstruction.length ? (
              <InstructionChart rows={d.byInstruction} onPick={(instructionId) => void setFilters({ instructionId })} />
            ) : (
              <p className="muted">Nothing scored yet.</p>
            )}
          </Card>
          <PerformanceCard
            runId={d.id}
            done={d.done}
            figures={d.figures}
            onCpu={d.backend === 'cpu'}
            residency={d.residency === 'pending' ? 'not loaded yet' : d.residency}
            order={d.imported ? 'dataset' : 'finished'}
          />
          <Card title="Responses">
            {/* A fresh search box per run: the filters start over when another run opens. */}
            <ResponseBrowser key={runId} />
          </Card>
        </>
      ) : null}
      <ResponseView />
    </div>
  );
}

function peakMemoryHint(scope: 'process' | 'device' | null): string | undefined {
  if (scope === 'process') return 'this app';
  if (scope === 'device') return 'whole GPU, other programs included';
  return undefined;
}
