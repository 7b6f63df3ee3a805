import { Fragment } from 'react';

/** An instruction id with line-break chances after its separators, so that a narrow column wraps it between words. */
export function BreakableId({ id }: { id: string }) {
  return (
    <>
      {id.split(/(?<=[:_])/).map((part, i) => (
        <Fragment key={i}>
          {i > 0 ? <wbr /> : null}
          {part}
        </Fragment>
      ))}
    </>
  );
}
