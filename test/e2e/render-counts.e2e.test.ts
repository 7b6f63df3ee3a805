/**
 * How often the big components render while a run streams its events, counted in the shipped (minified) bundle
 * through React's DevTools hook: a component is known by the element it renders at its root. Counts, not timings.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';

import { FakeApp } from './fake-app.js';

const COUNT_RENDERS = `
window.__renders = {};
window.__REACT_DEVTOOLS_GLOBAL_HOOK__ = {
  supportsFiber: true, renderers: new Map(), isDisabled: false,
  inject(r) { this.renderers.set(1, r); return 1; },
  checkDCE() {}, onCommitFiberUnmount() {}, onPostCommitFiberRoot() {}, onScheduleFiberRoot() {},
  onCommitFiberRoot(_id, root) {
    const rootElement = (f) => { let c = f.child; while (c && c.tag !== 5) c = c.child; return c ? c.stateNode : null; };
    const walk = (f) => {
      for (; f; f = f.sibling) {
        const alt = f.alternate;
        // Function, forwardRef and memo components that rendered in this commit (PerformedWork).
        if ([0, 11, 14, 15].includes(f.tag) && (!alt || (f.flags & 1))) {
          const el = rootElement(f);
          if (el) {
            const run = el.tagName === 'TR' ? el.querySelector('button.link')?.textContent : null;
            const key = el.tagName.toLowerCase() + '.' + (el.classList[0] || '') + (run ? ':' + run : '');
            window.__renders[key] = (window.__renders[key] || 0) + 1;
          }
        }
        // A subtree the commit did not reach keeps its child: nothing under it rendered.
        if (!alt || f.child !== alt.child) walk(f.child);
      }
    };
    walk(root.current.child);
  },
};`;

async function renders(page: Page): Promise<Record<string, number>> {
  return page.evaluate('window.__renders');
}

async function resetRenders(page: Page): Promise<void> {
  await page.evaluate('window.__renders = {}');
}

describe('renders per event of a live run (fake services)', () => {
  const app = new FakeApp();
  let page: Page;
  let events = 0;

  beforeAll(async () => {
    await app.open({ tickMs: 20 });
    page = app.page;
    await page.addInitScript(COUNT_RENDERS);
    page.on('websocket', (ws) =>
      ws.on('framereceived', (f) => {
        if (typeof f.payload === 'string' && f.payload.includes('"event":"runs:')) events++;
      }),
    );
  });

  afterAll(() => app.close());

  it('renders the Run page once per event only in the live card, and each streamed response once', async () => {
    await page.goto(app.server.url);
    await app.prepareAndImportPrompts();
    const nav = page.getByRole('navigation');
    await nav.getByRole('button', { name: 'Run', exact: true }).click();
    await page.getByLabel('Prompts').fill('80');
    await resetRenders(page);
    events = 0;
    await page.getByRole('button', { name: 'Start run' }).click();
    await expect.poll(() => page.getByTestId('run-status').textContent()).toBe('completed');
    await expect.poll(() => page.getByTestId('run-stream').locator('li').count()).toBe(50);
    const r = await renders(page);
    expect(events).toBeGreaterThan(200);
    // The page itself (its form) renders for the start and the status changes, not per event.
    expect(r['div.page']).toBeLessThan(20);
    // A streamed response renders when it arrives; the 49 shown below it do not render again.
    expect(r['li.stream__item']).toBe(80);
    // The shell (the navigation) renders for its badge, which is its own component.
    expect(r['div.shell'] ?? 0).toBeLessThan(5);
  });

  it('renders neither the History page nor the rows of finished runs per event of a live run', async () => {
    const nav = page.getByRole('navigation');
    await page.getByLabel('Prompts').fill('120');
    await page.getByRole('button', { name: 'Start run' }).click();
    await expect.poll(() => page.getByTestId('run-status').textContent()).toBe('running');
    await nav.getByRole('button', { name: 'History', exact: true }).click();
    await expect.poll(() => page.getByTestId('history').locator('tbody tr').count()).toBe(2);
    await resetRenders(page);
    events = 0;
    await expect.poll(() => page.getByTestId('history').locator('tbody tr').first().textContent(), { timeout: 30_000 }).toContain('completed');
    const r = await renders(page);
    expect(events).toBeGreaterThan(100);
    // The list refreshes at most twice a second: the page renders with it, not with every event.
    expect(r['div.page'] ?? 0).toBeLessThan(events / 4);
    // The finished run's row is the same object in each refreshed list, so it never renders again.
    expect(r['tr.:run-1'] ?? 0).toBe(0);
    expect(r['tr.:run-2'] ?? 0).toBeGreaterThan(0);
  });

  it('reloads the open results of a live run with its events only, not again with each refreshed run list', async () => {
    const nav = page.getByRole('navigation');
    await nav.getByRole('button', { name: /^Run/ }).click();
    await page.getByLabel('Prompts').fill('150');
    await page.getByRole('button', { name: 'Start run' }).click();
    await expect.poll(() => page.getByTestId('run-status').textContent()).toBe('running');
    const asked: Record<string, number> = {};
    const count = (r: { url(): string }) => {
      const channel = new URL(r.url()).pathname;
      asked[channel] = (asked[channel] ?? 0) + 1;
    };
    await page.getByRole('button', { name: 'View results' }).click();
    await expect.poll(() => page.getByLabel('Run', { exact: true }).inputValue()).toBe('run-3');
    page.on('request', count);
    await expect.poll(() => page.getByTestId('pager-status').textContent(), { timeout: 30_000 }).toBe('1–20 of 150');
    page.off('request', count);
    const lists = asked['/api/runs/list'] ?? 0;
    expect(lists).toBeGreaterThan(2);
    expect(asked['/api/runs/responses'] ?? 0).toBeLessThanOrEqual(lists + 2);
  });
});
