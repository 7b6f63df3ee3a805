import { useEffect, useRef } from 'react';

import { instructionArgsText } from '../../../../electron/common/instruction-args.js';
import { ENDING_TEXT } from '../../../../electron/common/ipc-contract.js';
import { formatNumber } from '../../components/format.js';
import { Verdict } from '../../components/Verdict.js';
import { responsePosition, useResults } from '../../stores/results.js';

/** ‹ or ›: the previous or next response of the list; it says why not where there is none. */
function StepButton({ step, at }: { step: 1 | -1; at: { index: number; total: number } | null }) {
  const name = step > 0 ? 'Next response' : 'Previous response';
  const none = !at
    ? 'this response is not in the list shown'
    : step > 0
      ? at.index + 1 >= at.total ? `none, this is the last of ${at.total}` : null
      : at.index === 0 ? `none, this is the first of ${at.total}` : null;
  return (
    <button
      type="button"
      className="btn btn--ghost btn--small"
      aria-label={name}
      aria-disabled={none !== null || undefined}
      title={none === null ? `${name} (${step > 0 ? '→' : '←'})` : `${name}: ${none}`}
      onClick={() => {
        if (none === null) void useResults.getState().stepResponse(step);
      }}
    >
      {step > 0 ? '›' : '‹'}
    </button>
  );
}


/**
 * One response: prompt, text, and the pass/fail of each instruction, strict and loose, with what decided it. ← and →
 * (or the header's arrows) step to the previous and next response of the list as filtered and sorted.
 */
export function ResponseView() {
  const r = useResults((s) => s.selected);
  const page = useResults((s) => s.page);
  const close = useResults((s) => s.closeResponse);
  const closeRef = useRef<HTMLButtonElement>(null);
  const dialogRef = useRef<HTMLElement>(null);
  // The response shown last: closing returns focus to its row, which stepping may have moved to another page.
  const lastKey = useRef<number | null>(null);
  if (r) lastKey.current = r.key;
  const open = r !== null;
  const at = responsePosition({ selected: r, page });

  useEffect(() => {
    if (!open) return;
    const previous = document.activeElement as HTMLElement | null;
    closeRef.current?.focus();
    const onKey = (e: KeyboardEvent) => {
      if (e.key === 'Escape') close();
      if ((e.key === 'ArrowLeft' || e.key === 'ArrowRight') && !e.altKey && !e.ctrlKey && !e.metaKey && !e.shiftKey) {
        e.preventDefault();
        void useResults.getState().stepResponse(e.key === 'ArrowRight' ? 1 : -1);
      }
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
      const row = document.querySelector<HTMLElement>(`[data-response-key="${lastKey.current}"]`);
      (row ?? previous)?.focus();
    };
  }, [open, close]);

  // Each response starts at its top.
  useEffect(() => {
    dialogRef.current?.scrollTo?.({ top: 0 });
  }, [r?.key]);

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
                {r.tokens} tokens · {ENDING_TEXT[r.finishReason]} · TTFT {formatNumber(r.ttftMs, 0)} ms ·{' '}
                {formatNumber(r.decodeTokensPerSecond)} tok/s
              </span>
            </div>
          </div>
          <div className="drawer__actions">
            <div className="drawer__nav" role="group" aria-label="Step through the responses">
              <StepButton step={-1} at={at} />
              <span className="muted small nowrap" data-testid="response-position">
                {at ? `${at.index + 1} of ${at.total}` : ''}
              </span>
              <StepButton step={1} at={at} />
            </div>
            <button type="button" className="btn btn--ghost" onClick={close} ref={closeRef} aria-label="Close response">
              ✕
            </button>
          </div>
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
                <td className="mono small">{instructionArgsText(v.kwargs) || '—'}</td>
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
