import type { ExportFile } from '../../../electron/common/ipc-contract.js';
import type { Result } from '../../../electron/common/result.js';

/** What a deletion waiting for its confirmation holds, whatever it deletes. */
export interface PendingConfirmation {
  readonly busy: boolean;
  readonly error: string | null;
}

/**
 * The steps every delete-confirm panel's store shares, over its `deletion` field: change a choice, cancel (neither
 * while the deletion runs), start (marks it busy and hands back what was confirmed, or null when there is nothing to
 * start) and fail (back to waiting, with the error beside the panel).
 */
export function confirmationSteps<D extends PendingConfirmation>(
  get: () => { readonly deletion: D | null },
  set: (patch: { deletion: D | null }) => void,
) {
  return {
    edit: (patch: Partial<D>): void => {
      const d = get().deletion;
      if (d && !d.busy) set({ deletion: { ...d, ...patch } });
    },
    cancel: (): void => {
      if (!get().deletion?.busy) set({ deletion: null });
    },
    begin: (): D | null => {
      const d = get().deletion;
      if (!d || d.busy) return null;
      set({ deletion: { ...d, busy: true, error: null } });
      return d;
    },
    fail: (d: D, message: string): void => set({ deletion: { ...d, busy: false, error: message } }),
  };
}

/** What the confirmation of a deletion that can take exported ZIPs with it holds besides. */
export interface ZipChoice {
  /** The ZIPs in exports/; null while they are being looked up. */
  readonly zips: readonly ExportFile[] | null;
  /** Delete them too (offered only when there are some). */
  readonly deleteZips: boolean;
}

/**
 * Fills in the ZIPs the lookup found, unless the panel was closed or moved to another subject meanwhile. Not knowing
 * them (an unreadable exports/ folder) leaves them where they are: the subject can still be deleted.
 */
export async function lookUpZips<D extends PendingConfirmation & ZipChoice>(
  get: () => { readonly deletion: D | null },
  set: (patch: { deletion: D | null }) => void,
  isSubject: (d: D) => boolean,
  lookup: Promise<Result<readonly ExportFile[]>>,
): Promise<void> {
  const r = await lookup;
  const now = get().deletion;
  if (now && isSubject(now)) set({ deletion: { ...now, zips: r.ok ? r.value : [] } });
}

/** Whether the confirmed deletion asks for its ZIPs to go too: only when it was offered, that is, some were found. */
export const deletesZips = (d: ZipChoice): boolean => d.deleteZips && (d.zips?.length ?? 0) > 0;
