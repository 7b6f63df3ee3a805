import type { ReactNode, Ref } from 'react';

interface Props {
  title: string;
  subtitle?: ReactNode;
  actions?: ReactNode;
  children: ReactNode;
  className?: string;
  testId?: string;
  /** Given, the title can take focus from script (focus moved to a card that just appeared). */
  headingRef?: Ref<HTMLHeadingElement>;
}

export function Card({ title, subtitle, actions, children, className, testId, headingRef }: Props) {
  return (
    <section className={`card ${className ?? ''}`} aria-label={title} data-testid={testId}>
      <header className="card__header">
        <div>
          <h2 className="card__title" ref={headingRef} tabIndex={headingRef ? -1 : undefined}>
            {title}
          </h2>
          {subtitle ? <p className="card__subtitle">{subtitle}</p> : null}
        </div>
        {actions ? <div className="card__actions">{actions}</div> : null}
      </header>
      {children}
    </section>
  );
}
