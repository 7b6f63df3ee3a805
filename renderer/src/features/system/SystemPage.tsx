import { useEffect } from 'react';

import { Card } from '../../components/Card.js';
import { capitalize, formatBytes } from '../../components/format.js';
import { Notice } from '../../components/Notice.js';
import { useModels } from '../../stores/models.js';
import { useNav } from '../../stores/nav.js';
import { useSystem } from '../../stores/system.js';

/** The one thing to do next on a machine being set up: prepare a model, get the eval assets, or run. */
function NextStep({ assetsReady }: { assetsReady: boolean }) {
  const models = useModels((s) => s.models);
  const listed = useModels((s) => s.listed);
  const go = useNav((s) => s.go);
  useEffect(() => {
    void useModels.getState().refresh();
  }, []);
  if (!listed) return null;
  const ready = models.some((m) => m.ready);
  const [text, page, label] = !ready
    ? (['Next: prepare a model (download, verify and pack OLMoE to INT4).', 'models', 'Prepare a model'] as const)
    : !assetsReady
      ? (['Next: get the IFEval prompts and the Punkt sentence model.', 'models', 'Get assets'] as const)
      : (['Ready: a model is prepared and the eval assets are in place.', 'run', 'Run IFEval'] as const);
  return (
    <div className="notice notice--info next-step" data-testid="next-step">
      <span>{text}</span>
      <button type="button" className="btn btn--primary btn--small" onClick={() => go(page)}>
        {label}
      </button>
    </div>
  );
}

export function SystemPage() {
  const info = useSystem((s) => s.info);
  const error = useSystem((s) => s.error);
  const loading = useSystem((s) => s.loading);
  const refresh = useSystem((s) => s.refresh);
  const go = useNav((s) => s.go);

  useEffect(() => {
    if (!info) void refresh();
  }, [info, refresh]);

  const assetsReady = info?.assets.every((a) => a.ready) ?? false;

  return (
    <div className="page">
      <header className="page__header">
        <div>
          <h1>System check</h1>
          <p className="page__lede">What this machine will run the benchmark on, and where your data lives.</p>
        </div>
        <button type="button" className="btn" onClick={() => void refresh()} disabled={loading}>
          {loading ? 'Checking…' : 'Check again'}
        </button>
      </header>
      {error ? <Notice tone="error">{error}</Notice> : null}
      {info ? (
        <>
          <NextStep assetsReady={info.assets.every((a) => a.ready)} />
          <section
            className={`hero hero--${info.backend}`}
            aria-label="Inference backend"
            data-testid="backend"
          >
            <div className="hero__badge">{info.backend === 'cuda' ? 'GPU' : 'CPU'}</div>
            <div>
              <div className="hero__title">{info.backend === 'cuda' ? info.backendLabel : 'CPU backend'}</div>
              <div className="hero__sub">
                {info.backend === 'cuda'
                  ? 'INT4 experts run on the W4A16 CUDA kernels.'
                  : `${capitalize(info.cudaStatus || 'no usable CUDA device')}. Runs use the CPU backend; expect far lower throughput than on an RTX GPU.`}
              </div>
            </div>
          </section>
          <div className="grid grid--2">
            <Card title="Devices">
              {info.gpus.length ? (
                <table className="table">
                  <thead>
                    <tr>
                      <th scope="col">GPU</th>
                      <th scope="col">VRAM</th>
                      <th scope="col">Compute</th>
                      <th scope="col">Driver</th>
                    </tr>
                  </thead>
                  <tbody>
                    {info.gpus.map((g) => (
                      <tr key={g.index}>
                        <td>
                          cuda:{g.index} {g.name}
                        </td>
                        <td data-testid={`gpu-memory-${g.index}`}>
                          {formatBytes(g.totalMemoryBytes)} <span className="muted">({formatBytes(g.freeMemoryBytes)} free)</span>
                        </td>
                        <td>{g.computeCapability}</td>
                        <td>{g.driverVersion}</td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              ) : (
                <p className="muted">No CUDA device found.</p>
              )}
              <dl className="kv">
                <dt>CPU</dt>
                <dd>{info.cpuLabel}</dd>
                <dt>Memory</dt>
                <dd>{formatBytes(info.memoryBytes)}</dd>
              </dl>
            </Card>
            <Card title="Data">
              <dl className="kv">
                <dt>Data folder</dt>
                <dd className="mono">{info.dataDir}</dd>
                <dt>Free disk space</dt>
                <dd data-testid="data-free">{info.dataDirFreeBytes === null ? 'not reported by the system' : formatBytes(info.dataDirFreeBytes)}</dd>
                <dt>Model hub</dt>
                <dd className="mono">{info.hubUrl}</dd>
                <dt>App version</dt>
                <dd>{info.appVersion}</dd>
              </dl>
            </Card>
          </div>
          <Card
            title="Evaluation assets"
            subtitle="IFEval prompts and the Punkt sentence model, pinned by sha256."
            actions={
              assetsReady ? null : (
                <button type="button" className="btn btn--primary" onClick={() => go('models')}>
                  Get assets
                </button>
              )
            }
          >
            <ul className="checklist">
              {info.assets.map((a) => (
                <li key={a.kind} className={a.ready ? 'is-ok' : 'is-missing'} data-testid={`asset-${a.kind}`}>
                  <span className="checklist__mark" aria-hidden="true">
                    {a.ready ? '✓' : '•'}
                  </span>
                  <span className="checklist__name">{a.kind === 'ifeval' ? 'IFEval input data' : 'Punkt English'}</span>
                  <span className="muted">{a.detail}</span>
                </li>
              ))}
            </ul>
          </Card>
        </>
      ) : !error ? (
        <p className="muted">Checking…</p>
      ) : null}
    </div>
  );
}
