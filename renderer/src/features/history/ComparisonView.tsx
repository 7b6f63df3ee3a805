import type { Accuracies, RunComparison, RunDetail } from '../../../../electron/common/ipc-contract.js';
import { BreakableId } from '../../components/BreakableId.js';
import { Card } from '../../components/Card.js';
import { deltaPoints, formatDelta, formatNumber, formatPercent, shortSha } from '../../components/format.js';
import { Verdict } from '../../components/Verdict.js';

const METRICS: readonly { key: keyof Accuracies; label: string }[] = [
  { key: 'promptStrict', label: 'Prompt-level strict' },
  { key: 'promptLoose', label: 'Prompt-level loose' },
  { key: 'instructionStrict', label: 'Instruction-level strict' },
  { key: 'instructionLoose', label: 'Instruction-level loose' },
];

function rate(d: RunDetail, id: string): number | null {
  const row = d.byInstruction.find((r) => r.instructionId === id);
  return row && row.count ? row.strictPassed / row.count : null;
}

function deltaClass(a: number | null | undefined, b: number | null | undefined): string {
  const d = deltaPoints(a, b);
  if (d === null || d === 0) return 'delta';
  return d > 0 ? 'delta delta--up' : 'delta delta--down';
}

export function ComparisonView({ comparison: c }: { comparison: RunComparison }) {
  const ids = [...new Set([...c.a.byInstruction, ...c.b.byInstruction].map((r) => r.instructionId))].sort();
  return (
    <Card title="Comparison" subtitle={`${c.common} prompts scored in both runs; ${c.changed.length} changed verdict.`} testId="comparison">
      <div className="compare">
        <table className="table table--compare">
          <thead>
            <tr>
              <th scope="col">Metric</th>
              <th scope="col">
                A · <span className="mono">{c.a.id}</span>
              </th>
              <th scope="col">
                B · <span className="mono">{c.b.id}</span>
              </th>
              <th scope="col">B − A</th>
            </tr>
          </thead>
          <tbody>
            <tr>
              <th scope="row">Model</th>
              <td>
                {c.a.modelRepo} <span className="mono muted">{shortSha(c.a.modelRevision)}</span>
              </td>
              <td>
                {c.b.modelRepo} <span className="mono muted">{shortSha(c.b.modelRevision)}</span>
              </td>
              <td />
            </tr>
            <tr>
              <th scope="row">Backend</th>
              <td>{c.a.backendLabel}</td>
              <td>{c.b.backendLabel}</td>
              <td />
            </tr>
            {METRICS.map(({ key, label }) => {
              const a = c.a.accuracies?.[key];
              const b = c.b.accuracies?.[key];
              return (
                <tr key={key}>
                  <th scope="row">{label}</th>
                  <td>{formatPercent(a)}</td>
                  <td>{formatPercent(b)}</td>
                  <td className={deltaClass(a, b)}>{formatDelta(a, b)}</td>
                </tr>
              );
            })}
            <tr>
              <th scope="row">Decode tok/s</th>
              <td>{formatNumber(c.a.figures.decodeTokensPerSecond)}</td>
              <td>{formatNumber(c.b.figures.decodeTokensPerSecond)}</td>
              <td />
            </tr>
          </tbody>
        </table>
        <h3 className="section-title">Strict accuracy by instruction type</h3>
        <table className="table table--compare">
          <thead>
            <tr>
              <th scope="col">Instruction</th>
              <th scope="col">A</th>
              <th scope="col">B</th>
              <th scope="col">B − A</th>
            </tr>
          </thead>
          <tbody>
            {ids.map((id) => {
              const a = rate(c.a, id);
              const b = rate(c.b, id);
              return (
                <tr key={id}>
                  <th scope="row" className="mono">
                    <BreakableId id={id} />
                  </th>
                  <td>{formatPercent(a)}</td>
                  <td>{formatPercent(b)}</td>
                  <td className={deltaClass(a, b)}>{formatDelta(a, b)}</td>
                </tr>
              );
            })}
          </tbody>
        </table>
        {c.changed.length ? (
          <>
            <h3 className="section-title">Prompts whose verdict changed</h3>
            <table className="table table--fixed">
              <thead>
                <tr>
                  <th scope="col" className="col-key">
                    Key
                  </th>
                  <th scope="col">Prompt</th>
                  <th scope="col" className="col-verdicts">
                    A
                  </th>
                  <th scope="col" className="col-verdicts">
                    B
                  </th>
                </tr>
              </thead>
              <tbody>
                {c.changed.map((p) => (
                  <tr key={p.key}>
                    <td className="mono">#{p.key}</td>
                    <td className="cell-preview">{p.promptPreview}</td>
                    <td>
                      <Verdict pass={p.a.strict} label="strict" /> <Verdict pass={p.a.loose} label="loose" />
                    </td>
                    <td>
                      <Verdict pass={p.b.strict} label="strict" /> <Verdict pass={p.b.loose} label="loose" />
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </>
        ) : null}
      </div>
    </Card>
  );
}
