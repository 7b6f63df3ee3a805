import { useEffect, type RefObject } from 'react';

/**
 * Moves focus to `target` when a change of `key` left it nowhere: the focused control was removed or disabled by
 * that change (a Cancel button gone with its job), which drops keyboard users back to the top of the page.
 */
export function useFocusFallback(target: RefObject<HTMLElement | null>, key: unknown): void {
  useEffect(() => {
    const active = document.activeElement;
    if (active === null || active === document.body) target.current?.focus({ preventScroll: true });
  }, [target, key]);
}
