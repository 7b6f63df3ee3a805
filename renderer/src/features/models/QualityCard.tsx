import type { PreparedModel, StoredQualityReport } from '../../../../electron/common/ipc-contract.js';
import { Card } from '../../components/Card.js';
import { formatDate, formatPercent } from '../../components/format.js';
import { ProgressBar } from '../../components/ProgressBar.js';
import { Stat } from '../../components/Stat.js';
import { useModels, type ModelsState } from '../../stores/models.js';

function QualityStats({ q }: { q: StoredQualityReport }) {
  return (
    <div className="stats">
      <Stat label="Top-1 agreement" value={formatPercent(q.top1Agreement, 2)} />
      <Stat label="Mean KL(BF16‖INT4)" value={`${q.meanKl.toExponential(2)} nats`} />
      <Stat label="p99 KL" value={`${q.p99Kl.toExponential(2)} nats`} />
      <Stat label="Mean |logit Δ|" value={q.meanAbsLogitDiff.toExponential(2)} />
      <Stat
        label="Greedy agrees to the end"
        value={`${q.promptsWithoutDivergence} of ${q.prompts}`}
        hint={q.medianFirstDivergence === null ? undefined : `else diverges at token ${q.medianFirstDivergence} (median)`}
      />
    </div>
  );
}

type QualityJob = ModelsState['qualityJob'];

interface Controls {
  readonly job: QualityJob;
  readonly onCheck: (modelId: string) => void;
  readonly onCancel: () => void;
}

/** The check of one INT4 model: its button, its progress while it runs, its last failure. */
function CheckControls({ m, job, onCheck, onCancel }: { m: PreparedModel } & Controls) {
  const mine = job?.checking === m.id ? job : null;
  const running = job?.status === 'running';
  const step = mine?.steps.quality;
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
        <button type="button" className="btn btn--small" disabled={running || !m.ready} onClick={() => onCheck(m.id)}>
          {m.quality ? 'Check again' : 'Check quality'}
        </button>
      )}
      {mine?.status === 'failed' && mine.error ? <p role="alert">{mine.error}</p> : null}
      {mine?.status === 'cancelled' ? <p className="muted">Cancelled; nothing was stored.</p> : null}
    </div>
  );
}

/**
 * What INT4 costs against the BF16 source, per INT4 model: the stored check, and a button that runs one (the first
 * 32 IFEval prompts, BF16 on the CPU: minutes), as `horizon quality --model <folder>` does.
 */
export function QualityCard({ models }: { models: readonly PreparedModel[] }) {
  const job = useModels((s) => s.qualityJob);
  const checkQuality = useModels((s) => s.checkQuality);
  const cancelQuality = useModels((s) => s.cancelQuality);
  return <QualityCardView models={models} job={job} onCheck={(id) => void checkQuality(id)} onCancel={() => void cancelQuality()} />;
}

export function QualityCardView({ models, ...controls }: { models: readonly PreparedModel[] } & Controls) {
  const int4 = models.filter((m) => m.weights === 'int4');
  if (!int4.length) return null;
  return (
    <Card
      title="INT4 quality"
      subtitle="The INT4 weights' greedy responses to the first IFEval prompts, run teacher-forced through both weight sets."
      testId="quality-card"
    >
      {int4.map((m) =>
        m.quality ? (
          <section key={m.id} className="quality" aria-label={`Quality of ${m.id}`}>
            <h3 className="section-title">
              {m.id} <span className="muted">· {m.quality.positions} positions of {m.quality.prompts} prompts, INT4 on {m.quality.backend.toUpperCase()}, {formatDate(m.quality.createdAt)}</span>
            </h3>
            <QualityStats q={m.quality} />
            <CheckControls m={m} {...controls} />
          </section>
        ) : (
          <section key={m.id} className="quality" aria-label={`Quality of ${m.id}`}>
            <p className="muted">
              {m.id}: not checked yet. The check runs both weight sets, the BF16 one on the CPU, so it takes minutes
              (<code className="mono">horizon quality --model &lt;prepared model folder&gt;</code> does the same).
            </p>
            <CheckControls m={m} {...controls} />
          </section>
        ),
      )}
    </Card>
  );
}
