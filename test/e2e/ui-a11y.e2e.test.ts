/**
 * The renderer at the desktop app's minimum window size (900×600), driven from the keyboard over the fake services:
 * where the focus goes after each action, what screen readers are told, what stays true after a cancel, a resume or
 * a failure, and that no screen scrolls sideways. Screenshots go to test-results/e2e/fake/.
 */
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';

import { FakeApp } from './fake-app.js';
import { fullShot } from './launch-browser.js';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const shots = path.join(repoRoot, 'test-results', 'e2e', 'fake');

/** The focused element's tag and accessible name as a test would look it up ('body' when none has it). */
function focused(page: Page): Promise<string> {
  return page.evaluate(`(() => {
    const a = document.activeElement;
    if (!a || a === document.body) return 'body';
    return a.tagName.toLowerCase() + ': ' + (a.getAttribute('aria-label') ?? a.textContent ?? '').trim();
  })()`);
}

/** Seconds in a duration as the Run page writes it ("0.4s", "12s", "1m 05s"); NaN for anything else ("—"). */
function seconds(text: string): number {
  const m = /^(?:(\d+)m )?(\d+(?:\.\d)?)s$/.exec(text);
  return m ? Number(m[1] ?? 0) * 60 + Number(m[2]) : NaN;
}

/** What sticks out sideways: the page itself, or a card's content past its edge. */
function overflow(page: Page): Promise<string[]> {
  return page.evaluate(`(() => {
    const doc = document.documentElement;
    const out = [];
    if (doc.scrollWidth > doc.clientWidth) out.push('page ' + doc.scrollWidth + ' > ' + doc.clientWidth);
    for (const card of document.querySelectorAll('main .card')) {
      if (card.scrollWidth > card.clientWidth + 1) out.push('card ' + card.getAttribute('aria-label') + ' ' + card.scrollWidth + ' > ' + card.clientWidth);
    }
    return out;
  })()`);
}

describe('renderer at 900×600 by keyboard (fake services)', () => {
  const app = new FakeApp();
  let page: Page;
  let stoppedAt = 0;

  beforeAll(async () => {
    mkdirSync(shots, { recursive: true });
    // A preparation of about 4 s and a 300-prompt run of about 24 s: the test must see them running (and the focus
    // on them) and cancel before the end even on a loaded machine.
    await app.open({ tickMs: 80, prepTickMs: 250 });
    // Checking a ZIP takes a moment for real (hashes, re-scoring): long enough to press the button again.
    const verify = app.api.export.verify;
    app.api.export.verify = async (req) => {
      await new Promise((resolve) => setTimeout(resolve, 400));
      return verify(req);
    };
    page = app.page;
    await page.setViewportSize({ width: 900, height: 600 });
  });

  afterAll(() => app.close());

  it('keeps the serve token and the focus through a failed and a real preparation, a run, a cancel and a resume', async () => {
    await page.goto(app.server.url);
    await expect.poll(() => page.getByTestId('backend').textContent()).toContain('CPU backend');
    expect(await page.title()).toBe('System · Horizon RunMap');

    // The token has left the address bar for the tab's sessionStorage; the skip link moves the focus without adding a
    // fragment of its own.
    const nav = page.getByRole('navigation', { name: 'Main' });
    await nav.getByRole('button', { name: 'System' }).focus();
    await page.keyboard.press('Shift+Tab');
    expect(await focused(page)).toBe('a: Skip to content');
    await page.keyboard.press('Enter');
    expect(await page.evaluate('document.activeElement?.id')).toBe('main');
    expect(await page.evaluate('location.hash')).toBe('');
    expect(await page.evaluate("sessionStorage.getItem('horizon-serve-token')")).toBe(new URL(app.server.url).hash.slice('#token='.length));

    await nav.getByRole('button', { name: 'Models' }).click();
    await page.getByLabel('Repository').fill('missing/model');
    await page.getByLabel('Revision').fill('main');
    await page.getByLabel('Revision').press('Enter');
    const steps = page.getByTestId('prepare-progress');
    await expect.poll(() => steps.getByRole('alert').textContent()).toContain("model repo 'missing/model' not found");
    // It failed while resolving the repo: the steps after it wait for nothing.
    expect(await steps.locator('.step__meta').allTextContents()).toEqual(['not started', 'not started', 'not started']);
    // Nothing was downloaded: there is nothing to resume, so the button says Prepare (#20).
    expect(await page.getByRole('button', { name: 'Resume preparation' }).count()).toBe(0);
    expect(await page.getByRole('button', { name: 'Prepare', exact: true }).count()).toBe(1);
    // A repository typed as a web address is caught beside its field before anything is sent.
    await page.getByLabel('Repository').fill('https://huggingface.co/allenai/OLMoE-1B-7B-0924-Instruct');
    await expect.poll(() => page.getByLabel('Repository').getAttribute('aria-invalid')).toBe('true');
    expect(await page.getByTestId('prepare-card').locator('.field__error').textContent()).toBe(
      'Enter the repository, not its web address: allenai/OLMoE-1B-7B-0924-Instruct.',
    );
    // Another model is a new preparation, not a resume of the failed one.
    await page.getByRole('button', { name: 'Use pinned default' }).click();
    const prepare = page.getByRole('button', { name: 'Prepare', exact: true });
    await prepare.focus();
    await page.keyboard.press('Enter');
    await expect.poll(() => focused(page)).toBe('button: Preparing…');
    expect(await page.getByRole('button', { name: 'Preparing…' }).getAttribute('aria-disabled')).toBe('true');
    await expect.poll(() => steps.textContent(), { timeout: 30_000 }).toContain('Ready');
    expect(await focused(page)).toBe('button: Prepare');
    await app.importPrompts();

    await nav.getByRole('button', { name: 'Run', exact: true }).click();
    await page.getByLabel('Prompts').fill('300');
    await page.getByLabel('Prompts').press('Enter');
    // The form is disabled under the focus: the new run's card takes it, scrolled into view.
    await expect.poll(() => focused(page)).toBe('h2: Run run-1');
    expect(await page.getByTestId('run-live').locator('.run-progress').isVisible()).toBe(true);
    await expect.poll(() => page.getByRole('progressbar', { name: 'Run progress' }).getAttribute('aria-valuetext')).toMatch(/^[1-9]\d* of 300 prompts$/);
    expect(await nav.getByRole('button', { name: /^Run in progress: \d+\/300$/ }).count()).toBe(1);
    // The run's status is announced; the text streaming in token by token is not.
    expect(await page.getByRole('status').filter({ hasText: 'running' }).count()).toBe(1);
    expect(await page.locator('.live[aria-live], .live [aria-live]').count()).toBe(0);

    const cancel = page.getByRole('button', { name: 'Cancel run' });
    await cancel.focus();
    await page.keyboard.press('Enter');
    await expect.poll(() => page.getByTestId('run-status').textContent()).toBe('cancelled');
    expect(await focused(page)).toBe('button: Resume run');
    const elapsed = async () => seconds((await page.getByTestId('run-elapsed').locator('.stat__value').textContent()) ?? '');
    const elapsedAtCancel = await elapsed();
    expect(elapsedAtCancel).toBeGreaterThan(0);
    await page.keyboard.press('Enter');
    await expect.poll(() => page.getByTestId('run-status').textContent()).toBe('running');
    expect(await focused(page)).toBe('button: Cancel run');
    // Resumed, the run's elapsed time goes on from where it was (it does not start again from nothing).
    expect(await elapsed()).toBeGreaterThanOrEqual(elapsedAtCancel);
    await page.keyboard.press('Enter');
    await expect.poll(() => page.getByTestId('run-status').textContent()).toBe('cancelled');
    stoppedAt = Number((await page.getByTestId('run-count').textContent())?.split(' / ')[0]);
    expect(stoppedAt).toBeGreaterThan(0);
    expect(stoppedAt).toBeLessThan(300);
    await page.screenshot({ path: path.join(shots, '900-run-cancelled.png') });
    expect(app.consoleErrors).toEqual([]);
  });

  it('fits results, comparison and history in 900 pixels, and says what an exported ZIP holds after a resume', async () => {
    const nav = page.getByRole('navigation', { name: 'Main' });
    await nav.getByRole('button', { name: 'Results' }).click();
    await expect.poll(() => page.getByTestId('pager-status').textContent()).toBe(`1–${Math.min(20, stoppedAt)} of ${stoppedAt}`);
    expect(await overflow(page)).toEqual([]);
    // The chart's text keeps its size in a narrow window, and its rows are buttons (not inside an image).
    const label = page.getByTestId('instruction-chart').locator('.chart__label').first();
    expect((await label.boundingBox())?.height).toBeGreaterThanOrEqual(11);
    expect(await page.locator('[role=img] button, [role=img] [role=button]').count()).toBe(0);
    await fullShot(page, path.join(shots, '900-results.png'));

    await page.getByRole('button', { name: 'Export ZIP' }).click();
    const status = page.getByTestId('export-status');
    await expect.poll(() => status.textContent()).toContain('Exported and verified');
    expect(await page.getByTestId('export-partial').textContent()).toBe(` · a cancelled run: ${stoppedAt} of 300 prompts`);
    await nav.getByRole('button', { name: 'Run', exact: true }).click();
    await page.getByRole('button', { name: 'Resume run' }).click();
    await expect.poll(() => page.getByTestId('run-count').textContent()).not.toBe(`${stoppedAt} / 300 prompts`);
    await nav.getByRole('button', { name: /^Run\b/ }).click();
    await page.getByRole('button', { name: 'Cancel run' }).click();
    await expect.poll(() => page.getByTestId('run-status').textContent()).toBe('cancelled');
    await nav.getByRole('button', { name: 'Results' }).click();
    await expect.poll(() => page.getByTestId('pager-status').textContent()).not.toBe(`1–${Math.min(20, stoppedAt)} of ${stoppedAt}`);
    // The run went on; the ZIP did not.
    expect(await page.getByTestId('export-partial').textContent()).toBe(` · a cancelled run: ${stoppedAt} of 300 prompts`);
    const zip = (await status.locator('.mono').textContent()) ?? '';

    await nav.getByRole('button', { name: 'Run', exact: true }).click();
    await page.getByLabel('Prompts').fill('12');
    await page.getByRole('button', { name: 'Start run' }).click();
    await expect.poll(() => page.getByTestId('run-status').textContent(), { timeout: 10_000 }).toBe('completed');
    // The chart's rows (of the run just completed) are one Tab stop: the arrow keys, Home and End move between them,
    // Enter and Space pick one.
    await nav.getByRole('button', { name: 'Results' }).click();
    await page.getByLabel('Run', { exact: true }).selectOption('run-2');
    await expect.poll(() => page.getByTestId('pager-status').textContent()).toBe('1–12 of 12');
    const chart = page.getByRole('toolbar', { name: 'Show the responses of an instruction type' });
    expect(await chart.getAttribute('aria-orientation')).toBe('vertical');
    const bars = chart.getByRole('button');
    const last = (await bars.count()) - 1;
    expect(last).toBeGreaterThan(2);
    expect(await chart.locator('[tabindex="0"]').count()).toBe(1);
    const bar = async (i: number) => `button: ${await bars.nth(i).getAttribute('aria-label')}`;
    const barId = async (i: number) => /^Show the responses with (\S+) /.exec((await bars.nth(i).getAttribute('aria-label')) ?? '')?.[1];
    const instructionFilter = page.getByLabel('Instruction', { exact: true });
    await instructionFilter.focus();
    await page.keyboard.press('Shift+Tab');
    expect(await focused(page)).toBe(await bar(0));
    await page.keyboard.press('ArrowUp');
    expect(await focused(page)).toBe(await bar(0));
    await page.keyboard.press('ArrowDown');
    await page.keyboard.press('ArrowDown');
    expect(await focused(page)).toBe(await bar(2));
    await page.keyboard.press('ArrowUp');
    expect(await focused(page)).toBe(await bar(1));
    await page.keyboard.press('End');
    expect(await focused(page)).toBe(await bar(last));
    await page.keyboard.press('ArrowDown');
    expect(await focused(page)).toBe(await bar(last));
    await page.keyboard.press('Home');
    expect(await focused(page)).toBe(await bar(0));
    await page.keyboard.press('ArrowDown');
    // Tab leaves the chart from any row; Shift+Tab comes back to the row it left.
    await page.keyboard.press('Tab');
    expect(await page.evaluate('document.activeElement?.id')).toBe(await instructionFilter.getAttribute('id'));
    await page.keyboard.press('Shift+Tab');
    expect(await focused(page)).toBe(await bar(1));
    expect(await chart.locator('[tabindex="0"]').count()).toBe(1);
    await page.keyboard.press('Enter');
    await expect.poll(() => instructionFilter.inputValue()).toBe(await barId(1));
    expect(await focused(page)).toBe(await bar(1));
    await page.keyboard.press('ArrowDown');
    await page.keyboard.press('Space');
    await expect.poll(() => instructionFilter.inputValue()).toBe(await barId(2));
    expect(await focused(page)).toBe(await bar(2));
    await instructionFilter.selectOption('');
    await expect.poll(() => page.getByTestId('pager-status').textContent()).toBe('1–12 of 12');
    await page.getByLabel('Run', { exact: true }).selectOption('run-1');
    await expect.poll(() => page.locator('.stats--small').first().textContent()).toContain('/ 300');


    await nav.getByRole('button', { name: 'History' }).click();
    await page.getByLabel('Select run run-1 for comparison').check();
    await page.getByLabel('Select run run-2 for comparison').check();
    await page.getByRole('button', { name: /Compare A and B/ }).click();
    await expect.poll(() => page.getByTestId('comparison').textContent()).toMatch(/\d+ prompts scored in both runs/);
    expect(await overflow(page)).toEqual([]);
    // The runs table scrolls inside its card, from the keyboard too.
    expect(await page.getByRole('region', { name: 'Runs table' }).getAttribute('tabindex')).toBe('0');
    await fullShot(page, path.join(shots, '900-history.png'));

    const card = page.getByTestId('verify-card');
    await card.getByLabel('Result ZIP').fill(zip);
    await card.getByRole('button', { name: 'Verify' }).focus();
    await page.keyboard.press('Enter');
    // While the check runs, pressing again starts no second one, and the focus stays on the button.
    await expect.poll(() => focused(page)).toBe('button: Verifying…');
    expect(await card.getByRole('button', { name: 'Verifying…' }).getAttribute('aria-disabled')).toBe('true');
    await expect.poll(() => card.textContent()).toContain(`Verified. Prompt-level strict`);
    expect(await card.textContent()).toContain(`A cancelled run: ${stoppedAt} of 300 prompts.`);
    // A report is about the ZIP it checked: editing the path takes it away.
    await card.getByLabel('Result ZIP').fill(`${zip}.bak`);
    await expect.poll(() => card.textContent()).not.toContain('Verified.');
    expect(app.consoleErrors).toEqual([]);
  });

  it('deletes runs from History after asking inside the page, by keyboard, with the ZIP when asked', async () => {
    const nav = page.getByRole('navigation', { name: 'Main' });
    await nav.getByRole('button', { name: 'History' }).click();
    const table = page.getByRole('region', { name: 'Runs table' });
    const row1 = table.locator('tr', { hasText: 'run-1' });
    const done1 = Number((await row1.locator('td').nth(4).textContent())?.split('/')[0]);
    expect(done1).toBeGreaterThan(stoppedAt);
    expect(await page.getByTestId('comparison').count()).toBe(1);

    // Two more tabs of the app: one with run-1's results and a response of it open, one with History. Neither is
    // reloaded: they learn of the deletion below from its event.
    const resultsTab = await app.browser.context.newPage();
    const historyTab = await app.browser.context.newPage();
    for (const tab of [resultsTab, historyTab]) await tab.goto(app.server.url);
    await historyTab.getByRole('navigation', { name: 'Main' }).getByRole('button', { name: 'History' }).click();
    const otherTable = historyTab.getByRole('region', { name: 'Runs table' });
    await expect.poll(() => otherTable.locator('tbody tr').count()).toBe(2);
    await resultsTab.getByRole('navigation', { name: 'Main' }).getByRole('button', { name: 'Results' }).click();
    await resultsTab.getByLabel('Run', { exact: true }).selectOption('run-1');
    await expect.poll(() => resultsTab.getByTestId('pager-status').textContent()).toBe(`1–${Math.min(20, done1)} of ${done1}`);
    await resultsTab.getByRole('button', { name: /^Open response / }).first().click();
    await expect.poll(() => resultsTab.getByTestId('response-detail').count()).toBe(1);

    // Asked, the question names the run and its responses, offers its ZIP, and takes the focus; Escape calls it off.
    await page.getByRole('button', { name: 'Delete run run-1' }).focus();
    await page.keyboard.press('Enter');
    const confirm = page.getByTestId('delete-confirm');
    await expect.poll(() => focused(page)).toBe('h3: Delete run run-1?');
    expect(await confirm.getByTestId('delete-summary').textContent()).toMatch(
      new RegExp(`^The cancelled run of \\S+ started .+ holds ${done1} scored responses of its 300 prompts\\.`),
    );
    const zipOption = confirm.getByRole('checkbox', { name: /^Also delete its exported ZIP: exports\/run-1\.zip \(12\.1 KiB\)$/ });
    await expect.poll(() => zipOption.count()).toBe(1);
    expect(await zipOption.isChecked()).toBe(false);
    expect(await overflow(page)).toEqual([]);
    await page.screenshot({ path: path.join(shots, '900-history-delete.png') });
    await page.keyboard.press('Escape');
    await expect.poll(() => confirm.count()).toBe(0);
    expect(await focused(page)).toBe('button: Delete run run-1');
    expect(await table.locator('tbody tr').count()).toBe(2);

    // Again, this time with the ZIP: Tab to the option, Space, Tab past "Keep it" to "Delete run", Enter.
    await page.keyboard.press('Enter');
    await expect.poll(() => focused(page)).toBe('h3: Delete run run-1?');
    await expect.poll(() => zipOption.count()).toBe(1);
    await page.keyboard.press('Tab');
    await page.keyboard.press('Space');
    expect(await zipOption.isChecked()).toBe(true);
    await page.keyboard.press('Tab');
    expect(await focused(page)).toBe('button: Keep it');
    await page.keyboard.press('Tab');
    expect(await focused(page)).toBe('button: Delete run');
    await page.keyboard.press('Enter');
    await expect.poll(() => page.getByTestId('delete-done').textContent()).toBe(`Deleted run run-1 and its ${done1} responses, and its result ZIP.`);
    expect(await table.locator('tbody tr').count()).toBe(1);
    // The focus goes to the row that is left (once the deletion's answer is back: until then the closed question leaves
    // it on the Runs heading); the comparison and the selection let go of the deleted run.
    await expect.poll(() => focused(page)).toBe('button: Delete run run-2');
    expect(await page.getByTestId('comparison').count()).toBe(0);
    expect(await page.getByLabel('Select run run-2 for comparison').isChecked()).toBe(true);
    expect(await page.getByRole('button', { name: 'Compare (1/2)' }).count()).toBe(1);
    // The other tabs were told: History drops the row; Results closes the response, says why, and shows the run left.
    await expect.poll(() => otherTable.locator('tbody tr').count()).toBe(1);
    expect(await otherTable.textContent()).not.toContain('run-1');
    await expect.poll(() => resultsTab.getByTestId('response-detail').count()).toBe(0);
    await expect.poll(() => resultsTab.getByTestId('pager-status').textContent()).toBe('1–12 of 12');
    expect(await resultsTab.getByRole('status').filter({ hasText: 'no longer in the database' }).textContent()).toContain(
      'Run run-1 is no longer in the database: it was deleted in another window',
    );
    expect(await resultsTab.evaluate('document.activeElement?.tagName')).toBe('H1');
    await resultsTab.close();
    await historyTab.close();
    // Its ZIP is gone: the verifier no longer finds it.
    const card = page.getByTestId('verify-card');
    await card.getByLabel('Result ZIP').fill('/tmp/horizon-fake/exports/run-1.zip');
    await card.getByRole('button', { name: 'Verify' }).click();
    await expect.poll(() => card.textContent()).toContain('not a result ZIP');

    // Results had the deleted run open: it shows the run that is left.
    await nav.getByRole('button', { name: 'Results' }).click();
    await expect.poll(() => page.getByTestId('pager-status').textContent()).toBe('1–12 of 12');
    expect(await page.getByRole('alert').count()).toBe(0);

    // The last run, without a ZIP to offer: once it is gone the focus goes to the Runs heading, and the Run page
    // lets go of it too.
    await nav.getByRole('button', { name: 'History' }).click();
    await page.getByRole('button', { name: 'Delete run run-2' }).click();
    await expect.poll(() => confirm.textContent()).toContain("It has no exported ZIP in the data folder's exports/.");
    expect(await confirm.getByTestId('delete-summary').textContent()).toMatch(/holds 12 scored responses of its 12 prompts/);
    await confirm.getByRole('button', { name: 'Delete run', exact: true }).click();
    await expect.poll(() => page.getByTestId('delete-done').textContent()).toBe('Deleted run run-2 and its 12 responses.');
    expect(await focused(page)).toBe('h2: Runs');
    expect(await page.getByTestId('history').textContent()).toContain('No runs yet.');
    await nav.getByRole('button', { name: 'Run', exact: true }).click();
    expect(await page.getByTestId('run-live').count()).toBe(0);
    expect(app.consoleErrors).toEqual([]);
  });
});
