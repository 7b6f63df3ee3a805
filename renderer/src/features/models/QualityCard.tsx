import type { PreparedModel, StoredQualityReport } from '../../../../electron/common/ipc-contract.js';
import { Card } from '../../components/Card.js';
import { formatDate, formatPercent } from '../../components/format.js';
import { Stat } from '../../components/Stat.js';

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

/**
 * What INT4 costs against the BF16 source, per INT4 model that has a stored check; for the others, the command that
 * makes one (it runs for minutes on the CPU, so it is not started from here).
 */
export function QualityCard({ models }: { models: readonly PreparedModel[] }) {
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
          </section>
        ) : (
          <p key={m.id} className="muted">
            {m.id}: not checked yet. Run <code className="mono">horizon quality --model &lt;prepared model folder&gt;</code> (it runs both
            weight sets, the BF16 one on the CPU, so it takes minutes); the result shows here.
          </p>
        ),
      )}
    </Card>
  );
}
