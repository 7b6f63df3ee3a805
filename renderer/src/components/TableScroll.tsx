import type { ReactNode } from 'react';

/**
 * A wide table that scrolls sideways inside its card. Focusable and named, so that the columns past the edge can be
 * scrolled to from the keyboard too (WCAG 2.1.1).
 */
export function TableScroll({ label, children }: { label: string; children: ReactNode }) {
  return (
    <div className="table-scroll" role="region" aria-label={label} tabIndex={0}>
      {children}
    </div>
  );
}
