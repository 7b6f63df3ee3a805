import { useState } from 'react';

import type { PreparedModel, StoredQualityReport } from '../../../../electron/common/ipc-contract.js';
import { closerSentence, meanKlRatio, ratioRange } from '../../../../electron/common/quality-summary.js';
import { RUN_PROMPTS } from '../../../../electron/common/run-settings.js';
import { Card } from '../../components/Card.js';
import { Field } from '../../components/Field.js';
import { formatDate, formatPercent } from '../../components/format.js';
import { ProgressBar } from '../../components/ProgressBar.js';
import { Stat } from '../../components/Stat.js';
import { TableScroll } from '../../components/TableScroll.js';
import { DEFAULT_QUALITY_PROMPTS, useModels, type ModelsState } from '../../stores/models.js';
import { parseCount } from '../../stores/runs.js';

function QualityStats({ q }: { q: StoredQualityReport }) {
  return (
    <div className="stats">
      <Stat label="Top-1 agreement" value={formatPercent(q.top1Agreement, 2)} />
      <Stat label="Mean KL(BF16‖INT4)" value={`${exp(q.meanKl)} nats`} />
      <Stat label="p99 KL" value={`${exp(q.p99Kl)} nats`} />
      <Stat label="Mean |logit Δ|" value={exp(q.meanAbsLogitDiff)} />
      <Stat
        label="Greedy agrees to the end"
        value={`${q.promptsWithoutDivergence} of ${q.prompts}`}
        hint={q.medianFirstDivergence === null ? undefined : `else diverges at token ${q.medianFirstDivergence} (median)`}
      />
    </div>
  );
}

const exp = (v: number) => v.toExponential(2);

/** The ratio of the mean KLs, and what its interval lets one say: closer, further, or no clear difference. */
function ratioSentence(ratio: number, ci: readonly [number, number] | null): string {
  const range = ci ? ` (95% interval ${ratioRange(ci).replace('-', '–')}, prompts resampled)` : '';
  const closer = ci ? ci[1] < 1 : ratio <= 1;
  const further = ci ? ci[0] > 1 : ratio > 1;
  const reading = closer
    ? "closer to BF16 than llama.cpp's Q4_0 on the same tokens"
    : further
      ? "further from BF16 than llama.cpp's Q4_0 on the same tokens"
      : "no clear difference from llama.cpp's Q4_0 on these prompts (the interval spans 1x)";
  return `INT4's mean KL is ${ratio.toFixed(2)}x Q4_0's${range}: ${reading}.`;
}

/**
 * INT4 beside what users would run instead: the same BF16 experts rounded as llama.cpp's Q4_0 rounds them, their
 * inputs as its Q8_0 does, over the same tokens; INT4 as the runtime runs it.
 */
function Q4_0Comparison({ q }: { q: StoredQualityReport }) {
  const p = q.q4_0;
  if (!p) {
    return <p className="muted">This check has no Q4_0 point of comparison (it was left out, or predates it); checking again adds it.</p>;
  }
  const rows = [
    { name: 'INT4, this pack', a: q },
    { name: "llama.cpp's Q4_0, the same experts", a: p },
  ];
  const ratio = meanKlRatio(q);
  const closer = q.positions > 0 ? closerSentence(p) : null;
  return (
    <>
      <TableScroll label="INT4 beside llama.cpp's Q4_0">
        <table className="table table--compact" data-testid="quality-q4_0">
          <thead>
            <tr>
              <th scope="col">Experts</th>
              <th scope="col" className="num">Top-1 agreement</th>
              <th scope="col" className="num">Mean KL</th>
              <th scope="col" className="num">p99 KL</th>
              <th scope="col" className="num">Mean |logit Δ|</th>
            </tr>
          </thead>
          <tbody>
            {rows.map(({ name, a }) => (
              <tr key={name}>
                <th scope="row">{name}</th>
                <td className="num">{formatPercent(a.top1Agreement, 2)}</td>
                <td className="num">{exp(a.meanKl)}</td>
                <td className="num">{exp(a.p99Kl)}</td>
                <td className="num">{exp(a.meanAbsLogitDiff)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </TableScroll>
      <p className="muted" data-testid="quality-ratio">
        {q.positions === 0
          ? 'No prompt had a response to compare over.'
          : ratio === null
            ? 'Q4_0 matches BF16 exactly here, so there is no ratio.'
            : ratioSentence(ratio, p.meanKlRatioCi95)}{' '}
        {closer ? `${closer}. ` : ''}
        {p.activations === 'q8_0'
          ? "Q4_0 ran as llama.cpp runs it, its experts' inputs rounded to 8 bits (Q8_0); INT4 as this runtime runs it."
          : 'This check gave Q4_0 float inputs, which favour it; checking again rounds them to 8 bits as llama.cpp does.'}
      </p>
    </>
  );
}

type QualityJob = ModelsState['qualityJob'];

interface Controls {
  readonly job: QualityJob;
  /** `limit`: the first N IFEval prompts; undefined for the check's default. */
  readonly onCheck: (modelId: string, limit?: number) => void;
  readonly onCancel: () => void;
}

/** The check of one INT4 model: how many prompts, its button, its progress while it runs, its last failure. */
function CheckControls({ m, job, onCheck, onCancel }: { m: PreparedModel } & Controls) {
  const mine = job?.checking === m.id ? job : null;
  const running = job?.status === 'running';
  const step = mine?.steps.quality;
  const [prompts, setPrompts] = useState('');
  const [promptsError, setPromptsError] = useState<string | null>(null);
  const check = () => {
    const limit = parseCount('Prompts', prompts, RUN_PROMPTS.min, RUN_PROMPTS.max);
    if (typeof limit === 'string') {
      setPromptsError(limit);
      return;
    }
    // Empty: as many as the stored check had, so "Check again" repeats it.
    onCheck(m.id, limit ?? m.quality?.limit);
  };
  return (
    <div className="quality__controls">
      {mine && mine.status === 'running' ? (
        <>
          <ProgressBar value={step?.doneBytes ?? 0} max={Math.max(1, step?.totalBytes ?? 1)} label={`Quality check of ${m.id}`} />
          <p className="muted" aria-live="polite">
            {step?.message ?? 'starting the quality check'}
            {step?.etaSeconds != null ? `, about ${step.etaSeconds} s left` : ''}
          </p>
          <button type="button" className="btn btn--small" onClick={onCancel}>
            Cancel
          </button>
        </>
      ) : (
        <Field
          label="Prompts"
          inputMode="numeric"
          placeholder={String(m.quality?.limit ?? DEFAULT_QUALITY_PROMPTS)}
          value={prompts}
          onValue={(v) => {
            setPrompts(v);
            setPromptsError(null);
          }}
          error={promptsError}
          disabled={running}
          className="quality__prompts"
          hint="The first N IFEval prompts: more narrow the interval and take longer."
          trailing={
            <button type="button" className="btn btn--small" disabled={running || !m.ready} onClick={check}>
              {m.quality ? 'Check again' : 'Check quality'}
            </button>
          }
        />
      )}
      {mine?.status === 'failed' && mine.error ? <p role="alert">{mine.error}</p> : null}
      {mine?.status === 'cancelled' ? <p className="muted">Cancelled; nothing was stored.</p> : null}
    </div>
  );
}

/**
 * What INT4 costs against the BF16 source, per INT4 model, beside what llama.cpp's Q4_0 costs: the stored check, and
 * a button that runs one (the first 32 IFEval prompts, BF16 on the CPU: minutes), as `horizon quality --model
 * <folder>` does.
 */
export function QualityCard({ models }: { models: readonly PreparedModel[] }) {
  const job = useModels((s) => s.qualityJob);
  const checkQuality = useModels((s) => s.checkQuality);
  const cancelQuality = useModels((s) => s.cancelQuality);
  return <QualityCardView models={models} job={job} onCheck={(id, limit) => void checkQuality(id, limit)} onCancel={() => void cancelQuality()} />;
}

export function QualityCardView({ models, ...controls }: { models: readonly PreparedModel[] } & Controls) {
  const int4 = models.filter((m) => m.weights === 'int4');
  if (!int4.length) return null;
  return (
    <Card
      title="INT4 quality"
      subtitle="The INT4 weights' greedy responses to the first IFEval prompts, teacher-forced through both weight sets and, for comparison, through the same experts as llama.cpp's Q4_0 runs them."
      testId="quality-card"
    >
      {int4.map((m) =>
        m.quality ? (
          <section key={m.id} className="quality" aria-label={`Quality of ${m.id}`}>
            <h3 className="section-title">
              {m.id} <span className="muted">· {m.quality.positions} positions of {m.quality.prompts} prompts, INT4 on {m.quality.backend.toUpperCase()}, {formatDate(m.quality.createdAt)}</span>
            </h3>
            <QualityStats q={m.quality} />
            <Q4_0Comparison q={m.quality} />
            <CheckControls m={m} {...controls} />
          </section>
        ) : (
          <section key={m.id} className="quality" aria-label={`Quality of ${m.id}`}>
            <p className="muted">
              {m.id}: not checked yet. The check runs both weight sets and the Q4_0 comparison, the BF16 ones on the CPU, so it takes minutes
              (<code className="mono">horizon quality --model &lt;prepared model folder&gt;</code> does the same).
            </p>
            <CheckControls m={m} {...controls} />
          </section>
        ),
      )}
    </Card>
  );
}
