import { describe, expect, it } from 'vitest';

import { applyTheme } from '../../../../renderer/src/stores/theme.js';

function fakeQuery(matches: boolean) {
  const listeners = new Set<() => void>();
  return {
    matches,
    addEventListener: (_t: 'change', l: () => void) => void listeners.add(l),
    removeEventListener: (_t: 'change', l: () => void) => void listeners.delete(l),
    flip(next: boolean) {
      this.matches = next;
      for (const l of listeners) l();
    },
    listeners,
  };
}

describe('applyTheme', () => {
  it('sets the chosen theme, and for system follows the preference as it changes until another choice', () => {
    const root = { dataset: {} as { theme?: string } };
    const q = fakeQuery(true);
    applyTheme('system', root, q);
    expect(root.dataset.theme).toBe('dark');
    q.flip(false);
    expect(root.dataset.theme).toBe('light');
    applyTheme('dark', root, q);
    expect(root.dataset.theme).toBe('dark');
    expect(q.listeners.size).toBe(0);
    q.flip(false);
    expect(root.dataset.theme).toBe('dark');
    applyTheme('light', root, undefined);
    expect(root.dataset.theme).toBe('light');
    applyTheme('system', root, undefined);
    expect(root.dataset.theme).toBe('light');
  });
});
