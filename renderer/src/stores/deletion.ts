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
