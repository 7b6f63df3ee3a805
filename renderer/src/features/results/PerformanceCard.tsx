import { useEffect, useState } from 'react';

import type { RunFigures, RunPerformancePoint } from '../../../../electron/common/ipc-contract.js';
import { histogram, summarize } from '../../../../electron/common/perf-stats.js';
import { call } from '../../api.js';
import { Card } from '../../components/Card.js';
import { formatBytes, formatNumber } from '../../components/format.js';
import { Stat } from '../../components/Stat.js';

const NA_CPU = 'n/a on CPU';

interface ViewProps {
  readonly figures: RunFigures;
  readonly onCpu: boolean;
  readonly residency: string;
  readonly points: readonly RunPerformancePoint[];
  /**
   * 'dataset' for a run imported from a result ZIP: the ZIP keeps no time each response finished, so its points come
   * in dataset order.
   */
  readonly order?: 'finished' | 'dataset';
}

/** A line of the decode rate of each response in the order they finished, with its median drawn across. */
function RateChart({ points, order }: { points: readonly RunPerformancePoint[]; order: 'finished' | 'dataset' }) {
  const inOrder = order === 'finished' ? 'in the order they finished' : 'in dataset order';
  const rates = points.map((p) => p.decodeTokensPerSecond);
  const s = summarize(rates);
  if (!s || points.length < 2) return <p className="muted">The decode rate over the run shows once two responses have one.</p>;
  const W = 640;
  const H = 160;
  const pad = 28;
  const top = s.max * 1.08;
  const x = (i: number) => pad + (i / (points.length - 1)) * (W - pad - 8);
  const y = (v: number) => H - pad - (v / top) * (H - pad - 8);
  const path = rates
    .map((r, i) => (r === null ? null : `${x(i).toFixed(1)},${y(r).toFixed(1)}`))
    .filter(Boolean)
    .join(' ');
  return (
    <figure className="perf-chart" data-testid="rate-chart">
      <svg viewBox={`0 0 ${W} ${H}`} role="img" aria-label={`Decode rate of ${s.n} responses ${inOrder}: median ${formatNumber(s.p50)} tok/s, from ${formatNumber(s.min)} to ${formatNumber(s.max)}`}>
        <line className="perf-chart__axis" x1={pad} y1={H - pad} x2={W - 8} y2={H - pad} />
        <line className="perf-chart__axis" x1={pad} y1={8} x2={pad} y2={H - pad} />
        <line className="perf-chart__median" x1={pad} y1={y(s.p50)} x2={W - 8} y2={y(s.p50)} />
        <polyline className="perf-chart__line" points={path} />
        <text className="perf-chart__label" x={pad - 4} y={y(s.max) + 4} textAnchor="end">
          {Math.round(s.max)}
        </text>
        <text className="perf-chart__label" x={pad - 4} y={H - pad + 4} textAnchor="end">
          0
        </text>
        <text className="perf-chart__label" x={W - 8} y={H - 8} textAnchor="end">
          response {points.length}
        </text>
        <text className="perf-chart__label" x={pad} y={H - 8}>
          first
        </text>
      </svg>
      <figcaption className="muted small">
        {order === 'finished'
          ? 'Decode tok/s of each response as it finished (first token excluded); the dashed line is the median.'
          : 'Decode tok/s of each response in dataset order, as its result ZIP keeps no finishing times (first token excluded); the dashed line is the median.'}
      </figcaption>
    </figure>
  );
}

function TtftHistogram({ points }: { points: readonly RunPerformancePoint[] }) {
  const bins = histogram(
    points.map((p) => p.ttftMs),
    12,
  );
  if (bins.length === 0) return null;
  const most = Math.max(...bins.map((b) => b.count));
  return (
    <figure className="perf-hist" data-testid="ttft-histogram">
      <div className="perf-hist__bars" role="img" aria-label={`Time to first token in ${bins.length} bins from ${formatNumber(bins[0]!.lo, 0)} to ${formatNumber(bins.at(-1)!.hi, 0)} ms`}>
        {bins.map((b) => (
          <div key={b.lo} className="perf-hist__bar" style={{ height: `${most ? (b.count / most) * 100 : 0}%` }} title={`${formatNumber(b.lo, 0)}–${formatNumber(b.hi, 0)} ms: ${b.count}`} />
        ))}
      </div>
      <figcaption className="muted small">
        Time to first token, {formatNumber(bins[0]!.lo, 0)}–{formatNumber(bins.at(-1)!.hi, 0)} ms ({points.filter((p) => p.ttftMs !== null).length} responses)
      </figcaption>
    </figure>
  );
}

/** The run's speed: the decode rate over the run, TTFT's distribution, and the GPU's memory, copies and cache. */
export function PerformanceView({ figures: f, onCpu, residency, points, order = 'finished' }: ViewProps) {
  // Where the weights were explains the cache figures: said beside them (the page says it once more at the top).
  const cacheHint = residency ? `${residency}` : undefined;
  const ttft = summarize(points.map((p) => p.ttftMs));
  const rate = summarize(points.map((p) => p.decodeTokensPerSecond));
  const cache = f.expertCache;
  const scope = f.peakMemoryScope === 'process' ? 'this app' : f.peakMemoryScope === 'device' ? 'whole GPU, other programs included' : 'scope unknown';
  return (
    <div className="perf" data-testid="performance">
      <div className="stats stats--small stats--five">
        <Stat label="Decode (median)" value={rate ? `${formatNumber(rate.p50)} tok/s` : '—'} hint={rate ? `${formatNumber(rate.min)}–${formatNumber(rate.max)} over ${rate.n}` : undefined} testId="perf-decode" />
        <Stat label="TTFT p50 / p90" value={ttft ? `${formatNumber(ttft.p50, 0)} / ${formatNumber(ttft.p90, 0)} ms` : '—'} hint={ttft ? `p99 ${formatNumber(ttft.p99, 0)} ms` : undefined} testId="perf-ttft" />
        <Stat label="Peak GPU memory" value={onCpu ? NA_CPU : formatBytes(f.peakMemoryBytes)} hint={onCpu ? undefined : scope} testId="perf-vram" />
        <Stat label="Host → GPU copies" value={onCpu ? NA_CPU : formatBytes(f.h2dBytes)} testId="perf-h2d" />
        <Stat
          label="Expert cache"
          value={onCpu ? NA_CPU : cache ? `${cache.hits.toLocaleString()} hits · ${cache.misses.toLocaleString()} misses` : 'not recorded'}
          hint={
            onCpu
              ? 'every expert in host memory'
              : cache
                ? `${cache.misses === 0 ? 'all experts resident' : `${cache.evictions.toLocaleString()} evictions`}${cacheHint ? ` · ${cacheHint}` : ''}`
                : 'a run from before this was recorded'
          }
          testId="perf-cache"
        />
      </div>
      <div className="perf__charts">
        <RateChart points={points} order={order} />
        <TtftHistogram points={points} />
      </div>
    </div>
  );
}

/** Reads the run's per-response timings (again as the run moves on) and shows them. */
export function PerformanceCard({
  runId,
  done,
  figures,
  onCpu,
  residency,
  order = 'finished',
}: {
  runId: string;
  done: number;
  figures: RunFigures;
  onCpu: boolean;
  residency: string;
  order?: ViewProps['order'];
}) {
  const [points, setPoints] = useState<readonly RunPerformancePoint[] | null>(null);
  useEffect(() => {
    let live = true;
    void call('runs:performance', { runId }).then((r) => {
      if (live && r.ok) setPoints(r.value.points);
    });
    return () => {
      live = false;
    };
  }, [runId, done]);
  return (
    <Card title="Performance" subtitle="Per-response timings of this run, and what the GPU held and copied.">
      {points ? (
        <PerformanceView figures={figures} onCpu={onCpu} residency={residency} points={points} order={order} />
      ) : (
        <p className="muted">Reading the timings…</p>
      )}
    </Card>
  );
}
