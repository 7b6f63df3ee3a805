import type { ReactNode } from 'react';

interface Props {
  tone: 'error' | 'ok' | 'info';
  children: ReactNode;
}

export function Notice({ tone, children }: Props) {
  return (
    <div className={`notice notice--${tone}`} role={tone === 'error' ? 'alert' : 'status'}>
      {children}
    </div>
  );
}
