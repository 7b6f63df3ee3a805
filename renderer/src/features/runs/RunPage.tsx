import { memo, useEffect, useMemo, useRef, useState, type RefObject } from 'react';

import { ENDING_TEXT, isLiveStatus, type ResponseRow } from '../../../../electron/common/ipc-contract.js';
import { Card } from '../../components/Card.js';
import { Field } from '../../components/Field.js';
import { ModelSelect } from '../../components/ModelSelect.js';
import { SelectField } from '../../components/SelectField.js';
import { formatDuration, formatNumber, formatPercent, withLabel } from '../../components/format.js';
import { Notice } from '../../components/Notice.js';
import { ProgressBar } from '../../components/ProgressBar.js';
import { Stat } from '../../components/Stat.js';
import { Verdict } from '../../components/Verdict.js';
import { useFocusFallback } from '../../components/use-focus-fallback.js';
import { useConnection } from '../../stores/connection.js';
import { useModels } from '../../stores/models.js';
import { useNav } from '../../stores/nav.js';
import { useResults } from '../../stores/results.js';
import { useRuns } from '../../stores/runs.js';
import { useSystem } from '../../stores/system.js';
import { ResumeRunButton } from './ResumeRunButton.js';

export function RunPage() {
  const allModels = useModels((s) => s.models);
  const models = useMemo(() => allModels.filter((m) => m.ready), [allModels]);
  const refreshModels = useModels((s) => s.refresh);
  const form = useRuns((s) => s.form);
  const runId = useRuns((s) => s.run?.id);
  const status = useRuns((s) => s.run?.status);
  const error = useRuns((s) => s.error);
  const fieldErrors = useRuns((s) => s.fieldErrors);
  const busy = useRuns((s) => s.busy);
  const resumable = useRuns((s) => s.resumable);
  const { setForm, start, cancel, resume } = useRuns.getState();
  const go = useNav((s) => s.go);
  const onCpu = useSystem((s) => s.info?.backend === 'cpu');
  const gpus = useSystem((s) => s.info?.gpus);

  useEffect(() => {
    void refreshModels();
    void useRuns.getState().attachActive();
  }, [refreshModels]);
  useEffect(() => {
    const first = models[0];
    if (!form.modelId && first) setForm({ modelId: first.id });
  }, [models, form.modelId, setForm]);

  const running = status !== undefined && isLiveStatus(status);
  const canResume = status === 'cancelled' || status === 'failed';
  const liveHeading = useRef<HTMLHeadingElement>(null);
  const liveProgress = useRef<HTMLDivElement>(null);
  // The run this window just started: its card takes focus (the form is disabled under the keyboard, and at the
  // minimum window size the card is below the fold).
  const [startedId, setStartedId] = useState<string | null>(null);
  useEffect(() => {
    if (startedId && runId === startedId) {
      liveHeading.current?.focus({ preventScroll: true });
      liveProgress.current?.scrollIntoView({ block: 'nearest' });
      setStartedId(null);
    }
  }, [startedId, runId]);
  useFocusFallback(liveHeading, status);

  return (
    <div className="page">
      <header className="page__header">
        <div>
          <h1>Run IFEval</h1>
          <p className="page__lede">Greedy decoding over the IFEval prompts, scored strict and loose as it goes.</p>
        </div>
      </header>
      <Card title="Configuration" testId="run-config">
        <form
          className="form"
          onSubmit={(e) => {
            e.preventDefault();
            const before = useRuns.getState().run?.id;
            void start().then(() => {
              const id = useRuns.getState().run?.id;
              if (id && id !== before) setStartedId(id);
            });
          }}
        >
          <div className="form__row">
            <ModelSelect models={models} value={form.modelId} onValue={(modelId) => setForm({ modelId })} disabled={running} />
            <Field
              label="Prompts"
              inputMode="numeric"
              placeholder="all 541"
              value={form.limit}
              onValue={(limit) => setForm({ limit })}
              error={fieldErrors.limit}
              disabled={running}
              className="field--narrow"
            />
            <Field
              label="Batch size"
              inputMode="numeric"
              placeholder="automatic"
              value={form.batch}
              onValue={(batch) => setForm({ batch })}
              error={fieldErrors.batch}
              disabled={running}
              className="field--narrow"
              hint="Prompts generated at once; the next starts as one ends."
            />
            <Field
              label="Max new tokens"
              inputMode="numeric"
              value={form.maxNewTokens}
              onValue={(maxNewTokens) => setForm({ maxNewTokens })}
              error={fieldErrors.maxNewTokens}
              disabled={running}
              className="field--narrow"
            />
          </div>
          <div className="form__row">
            <Field
              label="GPU expert memory (GiB)"
              inputMode="decimal"
              placeholder="automatic"
              value={form.expertBudgetGiB}
              onValue={(expertBudgetGiB) => setForm({ expertBudgetGiB })}
              error={fieldErrors.expertBudgetGiB}
              disabled={running || onCpu}
              className="field--short-input"
              hint={
                onCpu
                  ? 'CUDA only: the CPU backend keeps every expert in host memory.'
                  : 'Empty: all experts on the GPU when they fit. Less keeps part of them in host memory and copies them in on demand.'
              }
            />
            {gpus && gpus.length > 1 ? (
              <SelectField label="GPU" value={form.cudaDevice} onValue={(cudaDevice) => setForm({ cudaDevice })} disabled={running}>
                {gpus.map((g, i) => (
                  <option key={g.index} value={i === 0 ? '' : String(g.index)}>
                    {g.index}: {g.name} ({formatNumber(g.totalMemoryBytes / 2 ** 30, 1)} GiB,{' '}
                    {formatNumber(g.freeMemoryBytes / 2 ** 30, 1)} free)
                  </option>
                ))}
              </SelectField>
            ) : null}
            <Field
              label="Label (optional)"
              placeholder="e.g. baseline g32"
              value={form.label}
              onValue={(label) => setForm({ label })}
              error={fieldErrors.label}
              disabled={running}
              hint="Names the run in History and its result ZIP."
            />
          </div>
          <div className="form__actions">
            {models.length === 0 ? (
              <button type="button" className="btn btn--ghost" onClick={() => go('models')}>
                Prepare a model
              </button>
            ) : null}
            {/* One element for both, so that the focus stays on it as Cancel turns into Resume and back. */}
            {running || canResume ? (
              <button
                type="button"
                className="btn"
                onClick={() => void (running ? cancel() : resume())}
                aria-disabled={busy || undefined}
              >
                {running ? 'Cancel run' : 'Resume run'}
              </button>
            ) : null}
            <button
              type="submit"
              className="btn btn--primary btn--large"
              disabled={running || !form.modelId}
              aria-disabled={busy || undefined}
            >
              Start run
            </button>
          </div>
        </form>
        {error ? <Notice tone="error">{error}</Notice> : null}
        {fieldErrors.cudaDevice ? <Notice tone="error">{fieldErrors.cudaDevice}</Notice> : null}
        {!runId && resumable ? (
          <div className="notice notice--info resume-offer" data-testid="resume-offer">
            <span>
              Run <span className="mono">{resumable.id}</span> ({resumable.modelRepo}) stopped at {resumable.done} of {resumable.total} prompts
              ({resumable.status}). Resuming keeps its responses and settings.
            </span>
            <ResumeRunButton run={resumable} />
          </div>
        ) : null}
      </Card>

      {runId ? <LiveRun headingRef={liveHeading} progressRef={liveProgress} /> : null}
    </div>
  );
}

/** The live run's card: it alone renders again on each progress event and streamed response. */
function LiveRun({ headingRef, progressRef }: { headingRef: RefObject<HTMLHeadingElement | null>; progressRef: RefObject<HTMLDivElement | null> }) {
  const run = useRuns((s) => s.run);
  const progress = useRuns((s) => s.progress);
  const stream = useRuns((s) => s.stream);
  const go = useNav((s) => s.go);
  const openResults = useResults((s) => s.open);
  const offline = useConnection((s) => !s.up);
  if (!run) return null;
  const running = isLiveStatus(run.status);
  return (
    <Card
      className={offline ? 'is-stale' : undefined}
      title={`Run ${withLabel(run.id, run.label)}`}
      headingRef={headingRef}
      subtitle={`${run.modelRepo} · ${run.backendLabel} · ${run.batch} at a time`}
      testId="run-live"
      actions={
        run.done > 0 ? (
          <button
            type="button"
            className="btn btn--primary"
            onClick={() => {
              void openResults(run.id);
              go('results');
            }}
          >
            View results
          </button>
        ) : null
      }
    >
      <div className="run-progress" ref={progressRef}>
        <div className="run-progress__head">
          <span role="status" aria-atomic="true">
            <span className="sr-only">Run </span>
            <span className={`status status--${run.status}`} data-testid="run-status">
              {run.status}
            </span>
            {offline && running ? (
              <span className="muted" data-testid="run-stale">
                {' '}
                (last known: the server is not answering)
              </span>
            ) : null}
          </span>
          <span className="run-progress__count" data-testid="run-count">
            {run.done} / {run.total} prompts
          </span>
        </div>
        <ProgressBar
          label="Run progress"
          value={run.done}
          max={run.total}
          valueText={`${run.done} of ${run.total} prompts`}
          tone={run.status === 'failed' ? 'bad' : run.status === 'completed' ? 'ok' : 'accent'}
        />
      </div>
      <div className="stats">
        {/* After a resume: the speed is this session's, the time the whole run's (see RunProgress). */}
        <Stat label="Tokens / s" value={formatNumber(progress?.tokensPerSecond)} hint="this session" testId="run-speed" />
        <Stat label="Elapsed" value={formatDuration(progress?.elapsedSeconds)} hint="generating, all sessions" testId="run-elapsed" />
        <Stat
          label="ETA"
          value={
            run.status === 'completed'
              ? 'done'
              : !running
                ? '—'
                : progress?.etaSeconds == null
                  ? 'estimating…'
                  : formatDuration(progress?.etaSeconds)
          }
        />
        <Stat label="Prompt-level strict" value={formatPercent(run.accuracies?.promptStrict)} />
      </div>
      {run.error ? <Notice tone="error">{run.error}</Notice> : null}
      {progress?.partial && running ? (
        // Not a live region: it changes with every token, which would drown a screen reader.
        <div className="live">
          <div className="live__label">Generating prompt {progress.partial.key}</div>
          <pre className="live__text">
            {progress.partial.text}
            <span className="caret" aria-hidden="true" />
          </pre>
        </div>
      ) : null}
      <h3 className="section-title">Latest responses</h3>
      {stream.length ? (
        <ol className="stream" data-testid="run-stream">
          {stream.map((r) => (
            <StreamItem key={r.key} row={r} />
          ))}
        </ol>
      ) : (
        <p className="muted">Responses appear here as they are scored.</p>
      )}
    </Card>
  );
}

/** Rows keep their objects as the stream moves on: only the newest one renders. */
const StreamItem = memo(function StreamItem({ row: r }: { row: ResponseRow }) {
  return (
    <li className="stream__item">
      <div className="stream__meta">
        <span className="mono">#{r.key}</span>
        <Verdict pass={r.strictPass} label="strict" />
        <Verdict pass={r.loosePass} label="loose" />
        <span className="muted">
          {r.tokens} tokens{r.finishReason === 'length' ? `, ${ENDING_TEXT.length}` : ''}
        </span>
      </div>
      <div className="stream__prompt">{r.promptPreview}</div>
      <div className="stream__response">{r.responsePreview}</div>
    </li>
  );
});
