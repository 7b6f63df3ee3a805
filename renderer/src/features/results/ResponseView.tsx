import { useEffect, useRef } from 'react';

import { formatNumber } from '../../components/format.js';
import { Verdict } from '../../components/Verdict.js';
import { useResults } from '../../stores/results.js';

function kwargsText(kwargs: Readonly<Record<string, unknown>>): string {
  const entries = Object.entries(kwargs).filter(([, v]) => v !== null && v !== undefined);
  return entries.length ? entries.map(([k, v]) => `${k}=${JSON.stringify(v)}`).join(', ') : '—';
}

/** One response: prompt, text, and the pass/fail of each instruction, strict and loose, with what decided it. */
export function ResponseView() {
  const r = useResults((s) => s.selected);
  const close = useResults((s) => s.closeResponse);
  const closeRef = useRef<HTMLButtonElement>(null);
  const dialogRef = useRef<HTMLElement>(null);

  useEffect(() => {
    if (!r) return;
    const previous = document.activeElement as HTMLElement | null;
    closeRef.current?.focus();
    const onKey = (e: KeyboardEvent) => {
      if (e.key === 'Escape') close();
      if (e.key !== 'Tab' || !dialogRef.current) return;
      // Keep Tab inside the dialog while it is open.
      const focusable = dialogRef.current.querySelectorAll<HTMLElement>('button, [href], input, select, [tabindex]:not([tabindex="-1"])');
      const first = focusable[0];
      const last = focusable[focusable.length - 1];
      if (e.shiftKey && document.activeElement === first) {
        e.preventDefault();
        last?.focus();
      } else if (!e.shiftKey && document.activeElement === last) {
        e.preventDefault();
        first?.focus();
      }
    };
    window.addEventListener('keydown', onKey);
    return () => {
      window.removeEventListener('keydown', onKey);
      previous?.focus();
    };
  }, [r, close]);

  if (!r) return null;
  return (
    <div className="drawer-backdrop" onClick={close}>
      <aside
        className="drawer"
        role="dialog"
        aria-modal="true"
        aria-labelledby="response-title"
        data-testid="response-detail"
        ref={dialogRef}
        onClick={(e) => e.stopPropagation()}
      >
        <header className="drawer__header">
          <div>
            <h2 id="response-title">Response #{r.key}</h2>
            <div className="drawer__meta">
              <Verdict pass={r.strictPass} label="strict" />
              <Verdict pass={r.loosePass} label="loose" />
              <span className="muted">
                {r.tokens} tokens · {r.finishReason} · TTFT {formatNumber(r.ttftMs, 0)} ms ·{' '}
                {formatNumber(r.decodeTokensPerSecond)} tok/s
              </span>
            </div>
          </div>
          <button type="button" className="btn btn--ghost" onClick={close} ref={closeRef} aria-label="Close response">
            ✕
          </button>
        </header>
        <h3 className="section-title">Instructions</h3>
        <table className="table" data-testid="verdicts">
          <thead>
            <tr>
              <th scope="col">Instruction</th>
              <th scope="col">Arguments</th>
              <th scope="col">Strict</th>
              <th scope="col">Loose</th>
            </tr>
          </thead>
          <tbody>
            {r.verdicts.map((v, i) => (
              <tr key={`${v.instructionId}-${i}`}>
                <td>
                  <div className="mono">{v.instructionId}</div>
                  {v.finding !== null && (
                    <div className="finding" data-testid="finding">
                      {v.finding}
                    </div>
                  )}
                  {v.looseFinding !== null && (
                    <div className="finding" data-testid="loose-finding">
                      Loose, {v.looseFinding.variant}: {v.looseFinding.detail}
                    </div>
                  )}
                </td>
                <td className="mono small">{kwargsText(v.kwargs)}</td>
                <td>
                  <Verdict pass={v.strict} />
                </td>
                <td>
                  <Verdict pass={v.loose} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
        <h3 className="section-title">Prompt</h3>
        <pre className="textblock">{r.prompt}</pre>
        <h3 className="section-title">Response</h3>
        <pre className="textblock textblock--response">{r.response || '(empty)'}</pre>
      </aside>
    </div>
  );
}
