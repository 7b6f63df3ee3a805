import { useEffect, useRef, type ReactNode } from 'react';

import { Notice } from './Notice.js';

interface Props {
  /** Ties the section to its heading (aria-labelledby). */
  readonly titleId: string;
  readonly title: ReactNode;
  readonly testId: string;
  /** Focus moves to the question again when this changes (another thing asked about). */
  readonly subject: string;
  readonly busy: boolean;
  readonly error: string | null;
  readonly keepLabel: string;
  readonly confirmLabel: string;
  readonly onConfirm: () => void;
  readonly onCancel: () => void;
  readonly children: ReactNode;
}

/**
 * A question asked inside the page before something is deleted: its heading takes the focus, Escape calls it off,
 * and both answers wait while the deletion is on its way.
 */
export function ConfirmPanel(p: Props) {
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => heading.current?.focus(), [p.subject]);
  return (
    <section
      className="confirm"
      aria-labelledby={p.titleId}
      data-testid={p.testId}
      onKeyDown={(e) => {
        if (e.key === 'Escape' && !p.busy) {
          e.preventDefault();
          p.onCancel();
        }
      }}
    >
      <h3 id={p.titleId} className="confirm__title" tabIndex={-1} ref={heading}>
        {p.title}
      </h3>
      {p.children}
      {p.error ? <Notice tone="error">{p.error}</Notice> : null}
      <div className="form__actions">
        <button type="button" className="btn" onClick={p.busy ? undefined : p.onCancel} aria-disabled={p.busy || undefined}>
          {p.keepLabel}
        </button>
        <button type="button" className="btn btn--danger" onClick={p.busy ? undefined : p.onConfirm} aria-disabled={p.busy || undefined}>
          {p.busy ? 'Deleting…' : p.confirmLabel}
        </button>
      </div>
    </section>
  );
}
