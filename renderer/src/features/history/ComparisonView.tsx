import { useState } from 'react';

import type { Accuracies, ComparedPrompt, PairedComparison, ResponseDetail, RunComparison, RunDetail } from '../../../../electron/common/ipc-contract.js';
import { divergence } from '../../../../electron/common/divergence.js';
import { describeLevel } from '../../../../electron/common/paired-stats.js';
import type { PairedLevel } from '../../../../electron/common/paired-stats.js';
import { call } from '../../api.js';
import { BreakableId } from '../../components/BreakableId.js';
import { Card } from '../../components/Card.js';
import { baseName, deltaPoints, formatDelta, formatNumber, formatPercent, shortSha } from '../../components/format.js';
import { Verdict } from '../../components/Verdict.js';

const METRICS: readonly { key: keyof Accuracies & keyof PairedComparison; label: string }[] = [
  { key: 'promptStrict', label: 'Prompt-level strict' },
  { key: 'promptLoose', label: 'Prompt-level loose' },
  { key: 'instructionStrict', label: 'Instruction-level strict' },
  { key: 'instructionLoose', label: 'Instruction-level loose' },
];

function deltaClass(a: number | null | undefined, b: number | null | undefined): string {
  const d = deltaPoints(a, b);
  if (d === null || d === 0) return 'delta';
  return d > 0 ? 'delta delta--up' : 'delta delta--down';
}

function formatP(p: number): string {
  return p < 0.001 ? '< 0.001' : p.toFixed(3);
}

function formatCi(l: PairedLevel): string {
  const pp = (x: number) => `${x > 0 ? '+' : x < 0 ? '−' : '±'}${Math.abs(100 * x).toFixed(1)}`;
  return `${pp(l.ci95[0])} to ${pp(l.ci95[1])} pp`;
}

/** The comparison as JSON, as `horizon compare --json` prints it, saved through the browser's download. */
function downloadJson(c: RunComparison): void {
  const cut = (r: RunDetail) => ({ cut: r.endings.length, of: r.done, maxNewTokens: r.policy.maxNewTokens });
  const body = JSON.stringify({ runA: c.a.id, runB: c.b.id, labelA: c.a.label, labelB: c.b.label, cutA: cut(c.a), cutB: cut(c.b), ...c.stats, changed: c.changed }, null, 2);
  const url = URL.createObjectURL(new Blob([body], { type: 'application/json' }));
  const a = document.createElement('a');
  a.href = url;
  a.download = `compare-${c.a.id}-${c.b.id}.json`;
  a.click();
  setTimeout(() => URL.revokeObjectURL(url), 0);
}

/** A response whose first `same` characters it shares with the other side: those are muted, the rest marked. */
function ResponseText({ text, same }: { text: string; same: number | null }) {
  if (same === null) return <pre className="pair__text">{text}</pre>;
  return (
    <pre className="pair__text">
      <span className="pair__same">{text.slice(0, same)}</span>
      <mark className="pair__differs">
        <span className="sr-only">(the responses differ from here) </span>
        {text.slice(same) || '(nothing more)'}
      </mark>
    </pre>
  );
}

/** Two responses to one prompt side by side, where they part said and shown. */
export function ResponsePair({ a, b }: { a: ResponseDetail; b: ResponseDetail }) {
  const d = divergence(a.response, b.response);
  return (
    <div className="pair">
      <pre className="pair__prompt">{a.prompt}</pre>
      <p className="muted small" data-testid="pair-divergence">
        {d === null
          ? 'The two responses are the same text.'
          : d.words === 0
            ? 'The responses differ from their first word.'
            : `The responses share their first ${d.words === 1 ? 'word' : `${d.words} words`}; what differs is highlighted.`}
      </p>
      <div className="pair__sides">
        <ResponseSide label="A" detail={a} same={d?.at ?? null} />
        <ResponseSide label="B" detail={b} same={d?.at ?? null} />
      </div>
    </div>
  );
}

function ResponseSide({ label, detail, same }: { label: string; detail: ResponseDetail; same: number | null }) {
  return (
    <div className="pair__side" data-testid={`pair-${label}`}>
      <h4 className="section-title">
        {label} · <Verdict pass={detail.strictPass} label="strict" /> <Verdict pass={detail.loosePass} label="loose" />
      </h4>
      <ul className="pair__verdicts">
        {detail.verdicts.map((v, i) => (
          <li key={i}>
            <span className="mono">
              <BreakableId id={v.instructionId} />
            </span>{' '}
            <Verdict pass={v.strict} label="strict" /> <Verdict pass={v.loose} label="loose" />
            {v.finding !== null && <div className="finding">{v.finding}</div>}
          </li>
        ))}
      </ul>
      <ResponseText text={detail.response} same={same} />
    </div>
  );
}

/** One changed prompt; opening it fetches both responses and shows them side by side with their verdicts. */
function ChangedRow({ c, p }: { c: RunComparison; p: ComparedPrompt }) {
  const [open, setOpen] = useState(false);
  const [pair, setPair] = useState<{ a: ResponseDetail; b: ResponseDetail } | null>(null);
  const [error, setError] = useState<string | null>(null);
  const toggle = async () => {
    const next = !open;
    setOpen(next);
    if (!next || pair) return;
    const [ra, rb] = await Promise.all([call('runs:response', { runId: c.a.id, key: p.key }), call('runs:response', { runId: c.b.id, key: p.key })]);
    if (ra.ok && rb.ok) {
      setPair({ a: ra.value, b: rb.value });
      setError(null);
    } else {
      setError(!ra.ok ? ra.error.message : !rb.ok ? rb.error.message : null);
    }
  };
  const kind = p.a.strict && !p.b.strict ? 'regression' : p.a.loose && !p.b.loose ? 'loose regression' : 'improvement';
  return (
    <>
      <tr>
        <td className="mono">#{p.key}</td>
        <td className="cell-preview">
          <button type="button" className="link-button" aria-expanded={open} onClick={() => void toggle()}>
            {open ? 'Hide' : 'Open'}
          </button>{' '}
          <span className={`tag tag--${kind === 'improvement' ? 'up' : 'down'}`}>{kind}</span> {p.promptPreview}
        </td>
        <td>
          <Verdict pass={p.a.strict} label="strict" /> <Verdict pass={p.a.loose} label="loose" />
        </td>
        <td>
          <Verdict pass={p.b.strict} label="strict" /> <Verdict pass={p.b.loose} label="loose" />
        </td>
      </tr>
      {open ? (
        <tr className="pair-row">
          <td colSpan={4}>
            {error ? (
              <p role="alert">{error}</p>
            ) : pair ? (
              <ResponsePair a={pair.a} b={pair.b} />
            ) : (
              <p className="muted">Loading both responses…</p>
            )}
          </td>
        </tr>
      ) : null}
    </>
  );
}

/** How many of a run's responses reached its max new tokens: a cap that cuts more can cost it instructions. */
const cutText = (r: RunDetail) => `${r.endings.length.toLocaleString()} of ${r.done.toLocaleString()} at ${r.policy.maxNewTokens.toLocaleString()}`;

/** Where a run was made: here, or the result ZIP it was imported from. */
const originText = (r: RunDetail) => (r.imported ? `imported from ${baseName(r.imported.file)}` : 'made here');

export function ComparisonView({ comparison: c }: { comparison: RunComparison }) {
  const s = c.stats;
  const partial = c.a.done !== c.common || c.b.done !== c.common;
  return (
    <Card
      title="Comparison"
      subtitle={`${c.common} prompts scored in both runs; every figure below is over these only${partial ? ` (A scored ${c.a.done}, B ${c.b.done})` : ''}. ${c.changed.length} with a changed verdict, ${s.identicalResponses} with identical responses.`}
      testId="comparison"
    >
      <div className="compare">
        <p className="compare__reading" data-testid="comparison-reading">
          Prompt-level strict: {c.common ? describeLevel(s.promptStrict) : 'no prompt was scored in both runs'}.
        </p>
        <table className="table table--compare">
          <thead>
            <tr>
              <th scope="col">Metric</th>
              <th scope="col">
                A · <span className="mono">{c.a.id}</span>
                {c.a.label !== null ? <div className="compare__label">{c.a.label}</div> : null}
              </th>
              <th scope="col">
                B · <span className="mono">{c.b.id}</span>
                {c.b.label !== null ? <div className="compare__label">{c.b.label}</div> : null}
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
            {c.a.imported || c.b.imported ? (
              <tr data-testid="comparison-origin">
                <th scope="row">Origin</th>
                <td>{originText(c.a)}</td>
                <td>{originText(c.b)}</td>
                <td />
              </tr>
            ) : null}
            {METRICS.map(({ key, label }) => {
              const a = c.common ? s[key].accuracyA : null;
              const b = c.common ? s[key].accuracyB : null;
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
              <th scope="row">Decode tok/s (whole run)</th>
              <td>{formatNumber(c.a.figures.decodeTokensPerSecond)}</td>
              <td>{formatNumber(c.b.figures.decodeTokensPerSecond)}</td>
              <td />
            </tr>
            <tr data-testid="comparison-cut">
              <th scope="row">Cut at max new tokens (whole run)</th>
              <td>{cutText(c.a)}</td>
              <td>{cutText(c.b)}</td>
              <td />
            </tr>
          </tbody>
        </table>
        <h3 className="section-title">Paired over the {c.common} common prompts</h3>
        <table className="table table--compare" data-testid="paired-stats">
          <thead>
            <tr>
              <th scope="col">Level</th>
              <th scope="col">B − A, 95% interval</th>
              <th scope="col">Both pass</th>
              <th scope="col">A pass, B fail</th>
              <th scope="col">A fail, B pass</th>
              <th scope="col">Both fail</th>
              <th scope="col">McNemar p</th>
            </tr>
          </thead>
          <tbody>
            {METRICS.map(({ key, label }) => {
              const l = s[key];
              return (
                <tr key={key}>
                  <th scope="row">{label}</th>
                  <td>{l.n ? formatCi(l) : '—'}</td>
                  <td>{l.bothPass}</td>
                  <td>{l.regressions}</td>
                  <td>{l.improvements}</td>
                  <td>{l.bothFail}</td>
                  <td>{l.n ? formatP(l.pValue) : '—'}</td>
                </tr>
              );
            })}
          </tbody>
        </table>
        <p className="muted">
          Exact two-sided McNemar test on the discordant pairs; interval from 10,000 seeded paired-bootstrap resamples of
          prompts. <button type="button" className="link-button" onClick={() => downloadJson(c)}>Export comparison (JSON)</button>
        </p>
        <h3 className="section-title">Instruction-level strict by type, over the {c.common} common prompts</h3>
        {s.instructionMismatches > 0 ? (
          <p className="muted">
            {s.instructionMismatches} common prompts have other instruction lists in the two runs and are left out here.
          </p>
        ) : null}
        <table className="table table--compare" data-testid="paired-types">
          <thead>
            <tr>
              <th scope="col">Instruction</th>
              <th scope="col">n</th>
              <th scope="col">A</th>
              <th scope="col">B</th>
              <th scope="col">B − A</th>
              <th scope="col">A pass, B fail</th>
              <th scope="col">A fail, B pass</th>
            </tr>
          </thead>
          <tbody>
            {s.byInstructionType.map((t) => {
              const a = t.strictA / t.n;
              const b = t.strictB / t.n;
              return (
                <tr key={t.instructionId}>
                  <th scope="row" className="mono">
                    <BreakableId id={t.instructionId} />
                  </th>
                  <td>{t.n}</td>
                  <td>{formatPercent(a)}</td>
                  <td>{formatPercent(b)}</td>
                  <td className={deltaClass(a, b)}>{formatDelta(a, b)}</td>
                  <td>{t.strictRegressions}</td>
                  <td>{t.strictImprovements}</td>
                </tr>
              );
            })}
          </tbody>
        </table>
        {c.changed.length ? (
          <>
            <h3 className="section-title">Prompts whose verdict changed: regressions first</h3>
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
                  <ChangedRow key={p.key} c={c} p={p} />
                ))}
              </tbody>
            </table>
          </>
        ) : null}
      </div>
    </Card>
  );
}
