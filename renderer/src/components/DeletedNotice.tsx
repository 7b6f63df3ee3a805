import type { ReactNode } from 'react';

import { Notice } from './Notice.js';

interface Props {
  /** What went, e.g. "run 2026… and its 541 responses". */
  what: ReactNode;
  /** The exported ZIPs deleted with it, and one line per ZIP that could not be. */
  deletedFiles: readonly string[];
  fileErrors: readonly string[];
  /** What its ZIPs are called: "result ZIP", "campaign ZIP". */
  zipName: string;
  testId: string;
}

/** Says what a confirmed deletion removed, its exported ZIPs included, and which of those stayed against its will. */
export function DeletedNotice({ what, deletedFiles, fileErrors, zipName, testId }: Props) {
  const files = deletedFiles.length;
  return (
    <div className="confirm-done" data-testid={testId}>
      <Notice tone="ok">
        Deleted {what}
        {files ? `, and ${files === 1 ? `its ${zipName}` : `its ${files} ${zipName}s`}` : ''}.
      </Notice>
      {fileErrors.length ? (
        <Notice tone="error">
          Not every {zipName} could be deleted:
          <ul>
            {fileErrors.map((e) => (
              <li key={e}>{e}</li>
            ))}
          </ul>
        </Notice>
      ) : null}
    </div>
  );
}
