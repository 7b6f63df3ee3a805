/**
 * The renderer against an in-memory fake of the services, over the real `horizon serve` transport: every screen,
 * its keyboard path and its screenshots, independent of the engine. app.e2e.test.ts runs the real services.
 */
import { mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';

import { verdict } from './fake-api.js';
import { FakeApp, shared } from './fake-app.js';
import { fullShot } from './launch-browser.js';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const shots = path.join(repoRoot, 'test-results', 'e2e', 'fake');

describe('renderer over horizon serve (fake services)', () => {
  const app = new FakeApp();
  let page: Page;
  const consoleErrors = app.consoleErrors;

  beforeAll(async () => {
    mkdirSync(shots, { recursive: true });
    // As in the desktop app, the Punkt folder comes from the (stand-in) file dialog; the IFEval file is typed.
    await app.open({ pickPaths: { 'Punkt English parameters folder': path.join(shared, 'nltk', 'punkt_english') } });
    page = app.page;
  });

  afterAll(() => app.close());

  it('walks system → prepare → import → run → results → history', async () => {
    await page.goto(app.server.url);
    await expect.poll(() => page.getByTestId('backend').textContent()).toContain('CPU backend');
    await fullShot(page, path.join(shots, '1-system.png'));

    await app.prepareAndImportPrompts();
    await page.getByRole('button', { name: 'Browse for Punkt English' }).click();
    await expect.poll(() => page.getByLabel('Import Punkt English from').inputValue()).toBe(path.join(shared, 'nltk', 'punkt_english'));
    await page.getByLabel('Import Punkt English from').press('Enter');
    await expect.poll(() => page.getByTestId('import-punkt').textContent()).toContain('Imported');
    await fullShot(page, path.join(shots, '2-models.png'));

    await page.getByRole('button', { name: 'Run IFEval' }).click();
    await page.getByLabel('Prompts').fill('10');
    await page.getByLabel('Max new tokens').fill('32');
    await page.getByRole('button', { name: 'Start run' }).click();
    await expect.poll(() => page.getByTestId('run-status').textContent(), { timeout: 10_000 }).toBe('completed');
    expect(await page.getByTestId('run-count').textContent()).toBe('10 / 10 prompts');
    // Streamed responses arrive as their own events, which can land after the status turns completed.
    await expect.poll(() => page.getByTestId('run-stream').locator('li').count()).toBe(10);
    // A response the cap cut says so; one the model ended does not.
    const streamed = (key: number) => page.getByTestId('run-stream').locator('li').filter({ hasText: `#${key}` }).locator('.stream__meta').textContent();
    expect(await streamed(1001)).toContain('24 tokens, cut at max new tokens');
    expect(await streamed(1005)).toMatch(/24 tokens$/);
    await fullShot(page, path.join(shots, '3-run.png'));

    await page.getByRole('button', { name: 'View results' }).click();
    await expect.poll(() => page.getByTestId('pager-status').textContent()).toBe('1–10 of 10');
    // The Performance card: the CPU run's rate chart and TTFT histogram, and no GPU figure passed off as a dash.
    await expect.poll(() => page.getByTestId('performance').textContent()).toContain('Peak GPU memory' + 'n/a on CPU');
    // Said once: the summary row above has no GPU memory figure for a CPU run.
    expect(await page.getByTestId('peak-memory').count()).toBe(0);
    expect(await page.getByTestId('rate-chart').count()).toBe(1);
    expect(await page.getByTestId('ttft-histogram').count()).toBe(1);
    await expect.poll(() => page.getByTestId('instruction-chart').locator('.chart__row').count()).toBeGreaterThan(3);
    // A bar filters the responses from the keyboard too.
    const bar = page.getByRole('button', { name: /^Show the responses with / }).first();
    const barName = /^Show the responses with (\S+) \(strict \d+ of \d+ \(95% interval \d+–\d+%\), loose \d+ of \d+ \(95% interval \d+–\d+%\)\)$/.exec((await bar.getAttribute('aria-label')) ?? '')?.[1];
    expect(barName).toBeTruthy();
    await bar.focus();
    await page.keyboard.press('Enter');
    await expect.poll(() => page.getByLabel('Instruction', { exact: true }).inputValue()).toBe(barName);
    await page.getByLabel('Instruction', { exact: true }).selectOption('');
    await expect.poll(() => page.getByTestId('pager-status').textContent()).toBe('1–10 of 10');
    await page.getByLabel('Verdict').selectOption('fail:strict');
    await expect.poll(() => page.getByTestId('pager-status').textContent()).not.toBe('1–10 of 10');
    await page.getByLabel('Verdict').selectOption('');
    // A label names the run for people: said wrong, the field says why and keeps the text; Enter saves it.
    await page.getByRole('button', { name: 'Add a label' }).click();
    const labelField = page.getByLabel('Run label');
    expect(await page.evaluate('document.activeElement?.id')).toBe(await labelField.getAttribute('id'));
    await labelField.fill('x'.repeat(81));
    await labelField.press('Enter');
    await expect.poll(() => page.getByTestId('label-field').locator('.field__error').textContent()).toBe(
      'A label has at most 80 characters (this one has 81).',
    );
    await labelField.fill('  baseline g32 ');
    await labelField.press('Enter');
    await expect.poll(() => page.getByTestId('label-field').textContent()).toBe('baseline g32Edit label');
    expect(await page.evaluate('document.activeElement?.textContent')).toBe('Edit label');
    expect(await page.getByLabel('Run', { exact: true }).locator('option:checked').textContent()).toBe('run-1 · baseline g32 · completed · 10/10');
    await fullShot(page, path.join(shots, '4-results.png'));

    await page.getByRole('button', { name: 'Open response 1000' }).click();
    const detail = page.getByTestId('response-detail');
    await expect.poll(() => detail.getByTestId('verdicts').locator('tbody tr').count()).toBe(3);
    expect(await detail.textContent()).toContain('punctuation:no_comma');
    // What decided each verdict, under its instruction.
    expect(await detail.getByTestId('finding').allTextContents()).toEqual([
      'fake finding 1: followed',
      'fake finding 2: followed',
      'fake finding 3: not followed',
    ]);
    expect(await detail.getByTestId('loose-finding').count()).toBe(0);
    await page.screenshot({ path: path.join(shots, '5-response.png') });
    expect(await page.evaluate('document.activeElement?.getAttribute("aria-label")')).toBe('Close response');
    await page.keyboard.press('Shift+Tab');
    expect(await page.evaluate('!!document.activeElement?.closest("[role=dialog]")')).toBe(true);
    // ← and → step through the list in its order (by key: 102, 1000, 1001, …); its row shows which one is open.
    const title = detail.getByRole('heading', { level: 2 });
    expect(await detail.getByTestId('response-position').textContent()).toBe('2 of 10');
    await page.keyboard.press('ArrowRight');
    await expect.poll(() => title.textContent()).toBe('Response #1001');
    expect(await detail.getByTestId('response-position').textContent()).toBe('3 of 10');
    expect(await page.getByRole('button', { name: 'Open response 1001' }).getAttribute('aria-current')).toBe('true');
    expect(await page.getByRole('button', { name: 'Open response 1000' }).getAttribute('aria-current')).toBeNull();
    await page.keyboard.press('ArrowLeft');
    await page.keyboard.press('ArrowLeft');
    await expect.poll(() => title.textContent()).toBe('Response #102');
    const previous = detail.getByRole('button', { name: 'Previous response' });
    expect(await previous.getAttribute('aria-disabled')).toBe('true');
    expect(await previous.getAttribute('title')).toBe('Previous response: none, this is the first of 10');
    // Playwright waits for an aria-disabled button to be enabled; a click dispatched anyway does nothing.
    await previous.dispatchEvent('click');
    await page.keyboard.press('ArrowLeft');
    expect(await title.textContent()).toBe('Response #102');
    await detail.getByRole('button', { name: 'Next response' }).click();
    await expect.poll(() => title.textContent()).toBe('Response #1000');
    expect(await page.evaluate('!!document.activeElement?.closest("[role=dialog]")')).toBe(true);
    await page.keyboard.press('Escape');
    await expect.poll(() => page.getByTestId('response-detail').count()).toBe(0);
    expect(await page.evaluate('document.activeElement?.getAttribute("aria-label")')).toBe('Open response 1000');
    // A loose pass where strict failed names the variant of the response that passed.
    await page.getByRole('button', { name: 'Open response 102', exact: true }).click();
    await expect.poll(() => detail.getByTestId('loose-finding').allTextContents()).toEqual([
      'Loose, without its first line: fake finding 1: followed',
    ]);
    await page.keyboard.press('Escape');
    await expect.poll(() => page.getByTestId('response-detail').count()).toBe(0);

    // The responses cut at max new tokens (the fake's keys not divisible by 5) are counted and listed on one click.
    const cutHint = page.getByTestId('tokens-generated').getByRole('button');
    expect(await cutHint.textContent()).toBe('7 cut at 32');
    // Each cut response's row says so.
    expect(await page.getByRole('row').filter({ has: page.getByTestId('row-cut') }).count()).toBe(7);
    expect(await page.getByRole('row').filter({ has: page.getByRole('button', { name: 'Open response 1000' }) }).getByTestId('row-cut').count()).toBe(0);
    await cutHint.click();
    await expect.poll(() => page.getByTestId('pager-status').textContent()).toBe('1–7 of 7');
    expect(await page.getByLabel('Ending').inputValue()).toBe('length');
    expect(await page.getByRole('button', { name: 'Open response 1000' }).count()).toBe(0);
    await page.getByLabel('Ending').selectOption('stop');
    await expect.poll(() => page.getByTestId('pager-status').textContent()).toBe('1–3 of 3');
    await page.getByLabel('Ending').selectOption('');
    await expect.poll(() => page.getByTestId('pager-status').textContent()).toBe('1–10 of 10');

    await page.getByRole('button', { name: 'Export ZIP' }).click();
    await expect.poll(() => page.getByTestId('export-status').textContent()).toContain('verified');
    expect(await page.getByTestId('export-partial').count()).toBe(0);

    await page.getByRole('button', { name: 'Run', exact: true }).click();
    await page.getByLabel('Prompts').fill('12');
    // The fake's model under other settings: at 48 new tokens it words its answers otherwise and some verdicts change.
    await page.getByLabel('Max new tokens').fill('48');
    await page.getByLabel('Label (optional)').fill('twelve prompts');
    await page.getByRole('button', { name: 'Start run' }).click();
    // The first run's "completed" is still on screen until the second one's progress arrives.
    await expect.poll(() => page.getByTestId('run-count').textContent(), { timeout: 10_000 }).toBe('12 / 12 prompts');
    await expect.poll(() => page.getByTestId('run-status').textContent(), { timeout: 10_000 }).toBe('completed');
    await page.getByRole('button', { name: 'History' }).click();
    await page.getByLabel('Select run run-1 for comparison').check();
    await page.getByLabel('Select run run-2 for comparison').check();
    await page.getByRole('button', { name: /Compare A and B/ }).click();
    await expect.poll(() => page.getByTestId('comparison').textContent()).toContain('10 prompts scored in both runs');
    expect(await page.getByTestId('history').locator('.history__label').allTextContents()).toEqual(['twelve prompts', 'baseline g32']);
    expect(await page.getByTestId('comparison').locator('.compare__label').allTextContents()).toEqual(['baseline g32', 'twelve prompts']);
    // Keys not divisible by 5 were cut in both runs: 7 of run-1's 10 at 32, 8 of run-2's 12 at 48.
    expect(await page.getByTestId('comparison-cut').locator('td').allTextContents()).toEqual(['7 of 10 at 32', '8 of 12 at 48', '']);
    await fullShot(page, path.join(shots, '6-history.png'));
    // The comparison as JSON, in the shape horizon compare --json prints.
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Export comparison (JSON)' }).click()]);
    expect(download.suggestedFilename()).toBe('compare-run-1-run-2.json');
    const saved = JSON.parse(readFileSync((await download.path())!, 'utf8')) as Record<string, unknown>;
    expect(saved).toMatchObject({
      runA: 'run-1', runB: 'run-2', labelA: 'baseline g32', labelB: 'twelve prompts',
      cutA: { cut: 7, of: 10, maxNewTokens: 32 }, cutB: { cut: 8, of: 12, maxNewTokens: 48 }, common: 10,
    });
    expect((saved.changed as unknown[]).length).toBe(await page.getByTestId('comparison').getByRole('button', { name: 'Open', exact: true }).count());
    // A changed prompt opens on both responses: the words they share muted, each side highlighted from where they part
    // (the fake's answers share "Fake response K. This text stands in for the model's answer").
    await page.getByTestId('comparison').getByRole('button', { name: 'Open', exact: true }).first().click();
    const hide = page.getByTestId('comparison').getByRole('button', { name: 'Hide', exact: true });
    expect(await hide.getAttribute('aria-expanded')).toBe('true');
    await expect.poll(() => page.getByTestId('pair-divergence').textContent()).toBe('The responses share their first 11 words; what differs is highlighted.');
    expect(await page.getByTestId('pair-A').locator('mark').textContent()).toMatch(/^\(the responses differ from here\) to: /);
    expect(await page.getByTestId('pair-B').locator('mark').textContent()).toMatch(/^\(the responses differ from here\) in at most 48 tokens to: /);
    await hide.click();
    expect(await page.getByTestId('pair-divergence').count()).toBe(0);
    // The filter narrows the table by any word of a run's label, model, device, status or id.
    const historyRows = page.getByTestId('history').locator('tbody tr');
    expect(await page.getByTestId('history-shown').textContent()).toBe('2 runs');
    await page.getByLabel('Filter runs').fill('BASELINE');
    await expect.poll(() => historyRows.count()).toBe(1);
    expect(await historyRows.locator('.history__label').textContent()).toBe('baseline g32');
    expect(await page.getByTestId('history-shown').textContent()).toBe('1 of 2 runs');
    await page.getByLabel('Filter runs').fill('no such run');
    await expect.poll(() => historyRows.count()).toBe(0);
    await page.getByRole('button', { name: 'Show every run' }).click();
    await expect.poll(() => historyRows.count()).toBe(2);

    expect(consoleErrors).toEqual([]);
    // The production bundle, as the app ships it (React's development build says so on the console).
    expect(app.consoleAll.filter((m) => m.includes('React DevTools'))).toEqual([]);
  });

  it('fits 1024x700 without sideways scrolling, with a collapsible sidebar, in light and dark', async () => {
    const small = path.join(shots, '1024x700');
    mkdirSync(small, { recursive: true });
    await page.setViewportSize({ width: 1024, height: 700 });
    await page.reload();
    // Narrow window: the sidebar starts as a rail; its labels stay the buttons' names.
    await expect.poll(() => page.getByRole('button', { name: 'Expand the sidebar' }).count()).toBe(1);
    const overflow = async () => Number(await page.evaluate('document.documentElement.scrollWidth - document.documentElement.clientWidth'));
    const tableOverflow = async () =>
      Number(await page.evaluate("Math.max(0, ...[...document.querySelectorAll('.table-scroll')].map((e) => e.scrollWidth - e.clientWidth))"));
    const background = () => page.evaluate('getComputedStyle(document.documentElement).backgroundColor');
    for (const theme of ['light', 'dark'] as const) {
      await page.getByRole('button', { name: 'Expand the sidebar' }).click();
      await page.getByLabel('Colour theme').selectOption(theme);
      if (theme === 'dark') {
        await expect.poll(() => background()).toBe('rgb(14, 16, 22)');
        await fullShot(page, path.join(small, 'sidebar-open-dark.png'));
      }
      await page.getByRole('button', { name: 'Collapse the sidebar' }).click();
      for (const name of ['System', 'Models', 'Run', 'Results', 'History']) {
        await page.getByRole('navigation').getByRole('button', { name: new RegExp(`^${name}`) }).click();
        await expect.poll(() => page.getByRole('heading', { level: 1 }).count()).toBe(1);
        expect(await overflow(), `${name} (${theme}) scrolls sideways`).toBeLessThanOrEqual(0);
        expect(await tableOverflow(), `a table on ${name} (${theme}) scrolls sideways`).toBeLessThanOrEqual(0);
        await fullShot(page, path.join(small, `${name.toLowerCase()}-${theme}.png`));
      }
      // History's Delete buttons are within the window.
      const box = await page.getByRole('button', { name: /^Delete run / }).first().boundingBox();
      expect(box && box.x + box.width).toBeLessThanOrEqual(1024);
    }
    // The choice outlives a reload; 'System theme' follows the operating system's preference.
    await page.reload();
    await expect.poll(() => page.evaluate('document.documentElement.dataset.theme')).toBe('dark');
    await page.getByRole('button', { name: 'Expand the sidebar' }).click();
    await page.getByLabel('Colour theme').selectOption('system');
    await page.emulateMedia({ colorScheme: 'dark' });
    await expect.poll(() => background()).toBe('rgb(14, 16, 22)');
    await page.emulateMedia({ colorScheme: 'light' });
    await expect.poll(() => background()).toBe('rgb(244, 245, 248)');
    await page.setViewportSize({ width: 1360, height: 900 });
    expect(consoleErrors).toEqual([]);
  });

  it('keeps the page, the run and its settings over a reload, and resumes a cancelled run from History', async () => {
    await page.getByRole('button', { name: 'Run', exact: true }).click();
    expect(new URL(page.url()).searchParams.get('page')).toBe('run');
    // 500 prompts (about 15 s of the fake's steps): long enough that a slow reload cannot outrun the run.
    await page.getByLabel('Prompts').fill('500');
    await page.getByLabel('Batch size').fill('3');
    await page.getByLabel('Max new tokens').fill('40');
    await page.getByRole('button', { name: 'Start run' }).click();
    await expect.poll(() => page.getByTestId('run-status').textContent(), { timeout: 10_000 }).toBe('running');
    const runId = ((await page.getByTestId('run-live').getByRole('heading').first().textContent()) ?? '').replace(/^Run /, '');
    expect(runId).toMatch(/^run-\d+$/);

    await page.reload();
    // Back on the Run page, with the live run's own settings in the form, not the defaults.
    await expect.poll(() => page.getByTestId('run-status').textContent(), { timeout: 10_000 }).toBe('running');
    await expect.poll(() => page.getByLabel('Prompts').inputValue()).toBe('500');
    expect(await page.getByLabel('Batch size').inputValue()).toBe('3');
    expect(await page.getByLabel('Max new tokens').inputValue()).toBe('40');
    await page.getByRole('button', { name: 'Cancel run' }).click();
    await expect.poll(() => page.getByTestId('run-status').textContent()).toBe('cancelled');

    await page.getByRole('button', { name: 'History' }).click();
    await page.getByRole('button', { name: `Resume run ${runId}` }).click();
    await expect.poll(() => new URL(page.url()).searchParams.get('page')).toBe('run');
    await expect.poll(() => page.getByTestId('run-status').textContent(), { timeout: 10_000 }).toBe('running');
    await page.getByRole('button', { name: 'Cancel run' }).click();
    await expect.poll(() => page.getByTestId('run-status').textContent()).toBe('cancelled');

    // After a reload with no run live, the Run page offers the newest run that stopped early.
    await page.reload();
    await expect.poll(() => page.getByTestId('resume-offer').textContent()).toContain(runId);
    await fullShot(page, path.join(shots, '7-resume-offer.png'));
    await page.getByRole('button', { name: `Resume run ${runId}` }).click();
    await expect.poll(() => page.getByTestId('run-status').textContent(), { timeout: 10_000 }).toBe('running');
    await page.getByRole('button', { name: 'Cancel run' }).click();
    await expect.poll(() => page.getByTestId('run-status').textContent()).toBe('cancelled');

    // Results: the run and the open response come back after a reload; Back returns to the page before.
    await page.getByRole('button', { name: 'Results', exact: true }).click();
    await page.getByLabel('Run', { exact: true }).selectOption('run-1');
    await page.getByRole('button', { name: 'Open response 1000' }).click();
    await expect.poll(() => new URL(page.url()).searchParams.get('response')).toBe('1000');
    await page.reload();
    await expect.poll(() => page.getByTestId('response-detail').count()).toBe(1);
    expect(await page.getByLabel('Run', { exact: true }).inputValue()).toBe('run-1');
    await page.keyboard.press('Escape');
    await expect.poll(() => new URL(page.url()).searchParams.get('response')).toBe(null);
    await page.goBack();
    await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent()).toBe('Run IFEval');
    await page.goForward();
    await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent()).toBe('Results');
    expect(consoleErrors).toEqual([]);
  });

  it('says the connection is lost when the server goes away, greys the live run, and recovers by itself', async () => {
    await page.getByRole('button', { name: 'Run', exact: true }).click();
    await page.getByLabel('Prompts').fill('541');
    await page.getByRole('button', { name: 'Start run' }).click();
    await expect.poll(() => page.getByTestId('run-status').textContent(), { timeout: 10_000 }).toBe('running');
    await app.stopServer();
    await expect.poll(() => page.getByTestId('connection-lost').count(), { timeout: 10_000 }).toBe(1);
    await expect.poll(() => page.getByTestId('run-stale').count()).toBe(1);
    expect(await page.getByTestId('run-live').getAttribute('class')).toContain('is-stale');
    const frozen = await page.getByTestId('run-count').textContent();
    await page.getByRole('button', { name: 'History' }).click();
    // One app-wide notice, not each list's own "did not answer".
    await expect.poll(() => page.locator('.notice--error').count()).toBe(0);
    await fullShot(page, path.join(shots, '8-connection-lost.png'));
    // The nav button's name carries the live run's count ("Run in progress: 12/541").
    await page.getByRole('navigation').getByRole('button', { name: /^Run/ }).click();

    await app.startServerAgain();
    // The socket retries every 5 s at most.
    await expect.poll(() => page.getByTestId('connection-lost').count(), { timeout: 15_000 }).toBe(0);
    await expect.poll(() => page.getByTestId('run-count').textContent(), { timeout: 10_000 }).not.toBe(frozen);
    expect(await page.getByTestId('run-stale').count()).toBe(0);
    // On a slow machine the run may have ended meanwhile (the fake went on while the server was away).
    if ((await page.getByTestId('run-status').textContent()) === 'running') {
      await page.getByRole('button', { name: 'Cancel run' }).click();
      await expect.poll(() => page.getByTestId('run-status').textContent()).toBe('cancelled');
    }
    expect(consoleErrors.filter((e) => !/WebSocket|ERR_CONNECTION_REFUSED|Failed to load resource/.test(e))).toEqual([]);
    consoleErrors.length = 0;
  });

  it("sorts the responses by column and shows a filtered instruction's own verdict", async () => {
    // Run 1's 10 prompts (the run Results still shows) and the fake's verdict rule give an instruction that passes
    // strict in a prompt that fails strict through another instruction.
    const prompts = readFileSync(path.join(shared, 'ifeval', 'input_data.jsonl'), 'utf8')
      .split('\n').filter(Boolean).slice(0, 10)
      .map((l) => JSON.parse(l) as { key: number; instruction_id_list: string[] });
    const split = prompts.flatMap((p) =>
      p.instruction_id_list
        .map((id, i) => ({ key: p.key, id, index: i, passes: verdict(p.key, i, false) && p.instruction_id_list.every((other, j) => other !== id || verdict(p.key, j, false)) }))
        .filter((x) => x.passes && p.instruction_id_list.some((_, j) => !verdict(p.key, j, false))),
    )[0];
    expect(split).toBeDefined();
    await page.getByRole('button', { name: 'Results', exact: true }).click();
    await expect.poll(() => page.getByTestId('pager-status').textContent()).toBe('1–10 of 10');
    const keys = async () => (await page.getByRole('button', { name: /^Open response / }).allTextContents()).map((t) => Number(t.slice(1)));
    const ascending = prompts.map((p) => p.key).sort((a, b) => a - b);
    await expect.poll(keys).toEqual(ascending);
    const keyHeader = page.getByRole('columnheader', { name: /Key/ });
    expect(await keyHeader.getAttribute('aria-sort')).toBe('ascending');
    await keyHeader.getByRole('button').click();
    await expect.poll(keys).toEqual([...ascending].reverse());
    expect(await keyHeader.getAttribute('aria-sort')).toBe('descending');
    await page.getByRole('columnheader', { name: /Strict/ }).getByRole('button').click();
    expect(await keyHeader.getAttribute('aria-sort')).toBe('none');
    // Every failing row before every passing one, once the ordered page has arrived.
    const failsFirst = async () => {
      const fails = (await page.getByTestId('cell-strict').allTextContents()).map((t) => t.includes('fail'));
      return fails.includes(true) && fails.includes(false) && fails.lastIndexOf(true) < fails.indexOf(false);
    };
    await expect.poll(failsFirst).toBe(true);

    await page.getByLabel('Instruction', { exact: true }).selectOption(split!.id);
    await expect.poll(() => page.getByTestId('verdict-scope').textContent()).toContain(split!.id);
    const row = page.getByRole('row').filter({ has: page.getByRole('button', { name: `Open response ${split!.key}` }) });
    // The prompt fails strict (another instruction fails); the row shows this instruction's pass.
    await expect.poll(() => row.getByTestId('cell-strict').textContent()).toContain('pass');
    // With what the scorer found for this instruction (the fake leaves it out for keys of 1 mod 4).
    expect(await row.getByTestId('row-finding').allTextContents()).toEqual(
      split!.key % 4 === 1 ? [] : [`fake finding ${split!.index + 1}: followed`],
    );
    await page.getByRole('button', { name: `Open response ${split!.key}` }).click();
    await expect.poll(() => page.getByTestId('response-detail').textContent()).toContain('fail');
    await page.keyboard.press('Escape');
    await page.getByLabel('Instruction', { exact: true }).selectOption('');
    await page.getByRole('columnheader', { name: /Key/ }).getByRole('button').click();
    expect(consoleErrors).toEqual([]);
  });

  it('runs the performance campaign in one click on the CPU, with n/a for what the CPU has not', async () => {
    await page.getByRole('navigation').getByRole('button', { name: /^Performance/ }).click();
    expect(await page.getByLabel('Expert budgets (GiB)').isDisabled()).toBe(true);
    await page.getByRole('button', { name: 'Run campaign' }).click();
    await expect.poll(() => page.getByTestId('perf-status').textContent(), { timeout: 15_000 }).toBe('completed');
    await expect.poll(() => page.getByTestId('campaign').textContent()).toContain('36 requests measured');
    const table = page.getByTestId('campaign-table');
    expect(await table.locator('tbody tr').count()).toBe(1);
    expect(await table.locator('tbody tr').first().textContent()).toContain('n/a on CPU');
    expect(await page.getByTestId('rate-memory-none').textContent()).toContain('No GPU memory axis on the CPU backend');
    await page.getByRole('button', { name: 'Export ZIP' }).click();
    await expect.poll(() => page.getByTestId('perf-exported').textContent()).toContain('perf-1.zip');
    expect(new URL(page.url()).searchParams.get('page')).toBe('perf');
    // Its own ZIP is refused as a campaign stored already; the field and the refusal sit in their own card.
    const exportedZip = /(\/\S+perf-1\.zip)/.exec((await page.getByTestId('perf-exported').textContent()) ?? '')?.[1] ?? '';
    const importCard = page.getByTestId('perf-import');
    await importCard.getByRole('textbox', { name: 'Campaign ZIP' }).fill(exportedZip);
    await importCard.getByRole('button', { name: 'Add campaign' }).click();
    await expect.poll(() => importCard.getByTestId('perf-import-error').textContent()).toBe(
      `${exportedZip}: campaign perf-1 is stored already: it was measured on this machine`,
    );
    await fullShot(page, path.join(shots, '10-performance-cpu.png'));
    // History's Verify takes a campaign ZIP too, and says where it imports.
    await page.getByRole('navigation').getByRole('button', { name: /^History/ }).click();
    const verifyCard = page.getByTestId('verify-card');
    await verifyCard.getByRole('textbox', { name: 'Result ZIP' }).fill(exportedZip);
    await verifyCard.getByRole('button', { name: 'Verify' }).click();
    await expect.poll(() => verifyCard.getByRole('status').first().textContent()).toMatch(
      /^Verified: a performance campaign ZIP, every aggregate recomputed from its requests\. The Performance page imports it\./,
    );
    // Which campaign the ZIP says it holds, the time as the page shows times.
    expect(await verifyCard.getByTestId('verify-subject').textContent()).toMatch(
      /^The ZIP says it holds campaign perf-1: allenai\/OLMoE-1B-7B-0924-Instruct @ 7f1c97f, INT4, CPU backend, started \w{3} \d+, \d{4}, \d+:\d\d [AP]M\.$/,
    );
    await page.getByRole('navigation').getByRole('button', { name: /^Performance/ }).click();
    expect(consoleErrors).toEqual([]);
  });

  it('shows the next step and free space, a model\'s details, and deletes its INT4 pack after asking', async () => {
    await page.getByRole('navigation').getByRole('button', { name: /^System/ }).click();
    await expect.poll(() => page.getByTestId('next-step').textContent()).toContain('Ready: a model is prepared');
    expect(await page.getByTestId('data-free').textContent()).toBe('48.4 GiB');
    await page.getByRole('navigation').getByRole('button', { name: /^Models/ }).click();
    expect(await page.getByTestId('disk-note').textContent()).toContain('48.4 GiB free in /tmp/horizon-fake.');
    const id = 'allenai--OLMoE-1B-7B-0924-Instruct@7f1c97f/int4';
    await page.getByRole('button', { name: `Details of ${id}` }).click();
    await expect.poll(() => page.getByTestId('model-details').textContent()).toContain('qpacked-v2, hq4nl codebook, group 32: 4.5 bits a weight');
    await fullShot(page, path.join(shots, '9-model-details.png'));
    // The INT4 quality check, with llama.cpp's Q4_0 on the same tokens beside it.
    const quality = page.getByTestId('quality-card');
    const prompts = quality.getByRole('textbox', { name: 'Prompts' });
    await prompts.fill('0');
    await quality.getByRole('button', { name: 'Check quality' }).click();
    expect(await quality.locator('.field__error').textContent()).toBe('Prompts must be a whole number from 1 to 541.');
    expect(await prompts.getAttribute('aria-invalid')).toBe('true');
    await prompts.fill('16');
    await quality.getByRole('button', { name: 'Check quality' }).click();
    await expect.poll(() => quality.getByTestId('quality-q4_0').count()).toBe(1);
    expect(await quality.locator('h3').textContent()).toContain('2048 positions of 16 prompts');
    // Checking again repeats the stored check's prompt count unless told otherwise.
    expect(await quality.getByRole('textbox', { name: 'Prompts' }).getAttribute('placeholder')).toBe('16');
    const rows = await quality.getByTestId('quality-q4_0').locator('tbody tr').allInnerTexts();
    expect(rows.map((r) => r.split(/\s*\t\s*/))).toEqual([
      ['INT4, this pack', '95.00%', '1.00e-2', '2.00e-1', '5.00e-2'],
      ["llama.cpp's Q4_0, the same experts", '93.00%', '2.00e-2', '3.00e-1', '7.00e-2'],
    ]);
    expect(await quality.getByTestId('quality-ratio').textContent()).toContain(
      "INT4's mean KL is 0.50x Q4_0's (95% interval 0.45–0.56x, prompts resampled): closer to BF16 than llama.cpp's Q4_0 on the same tokens. " +
        'INT4 is closer to BF16 on 13 prompts, Q4_0 on 3 (sign test p = 0.0040).',
    );
    await quality.screenshot({ path: path.join(shots, '12-quality.png') });
    // Results names the check of the model its run used.
    await page.getByRole('navigation').getByRole('button', { name: /^Results/ }).click();
    await expect.poll(() => page.getByTestId('int4-check').textContent()).toBe(
      "This model's INT4 check (16 prompts, 2048 positions): top-1 agreement 95.00%, mean KL 1.00e-2 nats; llama.cpp's Q4_0: 93.00%, 2.00e-2 nats (INT4's mean KL 0.50x, 95% CI 0.45-0.56x).",
    );
    await page.getByRole('navigation').getByRole('button', { name: /^Models/ }).click();
    await page.getByRole('button', { name: `Delete ${id}` }).click();
    const confirm = page.getByTestId('delete-model-confirm');
    await expect.poll(() => confirm.count()).toBe(1);
    // Escape calls it off, and nothing is deleted.
    await page.keyboard.press('Escape');
    await expect.poll(() => confirm.count()).toBe(0);
    await page.getByRole('button', { name: `Delete ${id}` }).click();
    await page.getByRole('button', { name: 'Delete the INT4 pack' }).click();
    await expect.poll(() => page.getByTestId('models-list').textContent()).toContain('freed');
    await expect.poll(() => page.getByTestId('models-list').textContent()).toContain('No prepared models yet.');
    await page.getByRole('navigation').getByRole('button', { name: /^System/ }).click();
    await expect.poll(() => page.getByTestId('next-step').textContent()).toContain('Next: prepare a model');
    expect(consoleErrors).toEqual([]);
  });
});

describe('renderer over horizon serve (fake services, two GPUs)', () => {
  const app = new FakeApp();
  let page: Page;
  const GIB = 2 ** 30;
  const gpu = (index: number, name: string, total: number, free: number) => ({
    index, name, totalMemoryBytes: total * GIB, freeMemoryBytes: free * GIB, driverVersion: '13.0', computeCapability: '8.9',
  });

  beforeAll(async () => {
    await app.open({ gpus: [gpu(0, 'RTX 4090', 24, 21.5), gpu(1, 'RTX 4060', 8, 6.25)] });
    page = app.page;
  });

  afterAll(() => app.close());

  it('lists each GPU with its free memory and runs on the one chosen', async () => {
    await page.goto(app.server.url);
    await expect.poll(() => page.getByTestId('backend').textContent()).toContain('CUDA: RTX 4090');
    await expect.poll(() => page.getByTestId('gpu-memory-1').textContent()).toBe('8.0 GiB (6.3 GiB free)');
    expect(await page.getByTestId('gpu-memory-0').textContent()).toBe('24.0 GiB (21.5 GiB free)');

    await app.prepareAndImportPrompts();
    await page.getByRole('button', { name: 'Run IFEval' }).click();
    const select = page.getByLabel('GPU', { exact: true });
    expect(await select.locator('option').allTextContents()).toEqual([
      '0: RTX 4090 (24.0 GiB, 21.5 free)',
      '1: RTX 4060 (8.0 GiB, 6.3 free)',
    ]);
    await select.selectOption({ label: '1: RTX 4060 (8.0 GiB, 6.3 free)' });
    await page.getByLabel('Prompts').fill('541');
    await page.getByRole('button', { name: 'Start run' }).click();
    await expect.poll(() => page.getByTestId('run-live').textContent(), { timeout: 10_000 }).toContain('CUDA: RTX 4060');

    // A run still generating can be neither deleted nor exported (its ZIP would be out of date at once); a cancelled
    // one can.
    await page.getByRole('button', { name: 'History', exact: true }).click();
    await expect.poll(() => page.getByRole('button', { name: 'Delete run run-1' }).isDisabled()).toBe(true);
    expect(await page.getByTestId('history').textContent()).toContain('CUDA: RTX 4060');
    await page.getByRole('button', { name: 'Results', exact: true }).click();
    const exportButton = page.getByRole('button', { name: 'Export ZIP' });
    await expect.poll(() => page.getByTestId('accuracies').count()).toBe(1);
    expect(await page.getByTestId('peak-memory').textContent()).toBe('Peak GPU memory7.5 GiBwhole GPU, other programs included');
    await expect.poll(() => page.getByTestId('perf-cache').textContent()).toMatch(/^Expert cache48,000 hits · 0 missesall experts resident · /);
    expect(await page.getByTestId('perf-vram').textContent()).toBe('Peak GPU memory7.5 GiBwhole GPU, other programs included');
    expect(await exportButton.isDisabled()).toBe(true);
    expect(await exportButton.getAttribute('title')).toContain('still generating');
    // While a run is live the nav item's name carries its badge ("Run run in progress").
    await page.getByRole('navigation', { name: 'Main' }).getByRole('button', { name: /^Run\b/ }).click();
    await page.getByRole('button', { name: 'Cancel run' }).click();
    await expect.poll(() => page.getByTestId('run-status').textContent()).toBe('cancelled');
    await page.getByRole('button', { name: 'Results', exact: true }).click();
    await expect.poll(() => exportButton.isDisabled()).toBe(false);
    await exportButton.click();
    await expect.poll(() => page.getByTestId('export-status').textContent()).toContain('verified');
    expect(await page.getByTestId('export-partial').textContent()).toMatch(/a cancelled run: \d+ of 541 prompts/);
    // Verified again from History, the ZIP says it holds a partial run.
    const zip = (await page.getByTestId('export-status').locator('.mono').textContent()) ?? '';
    await page.getByRole('button', { name: 'History', exact: true }).click();
    const verifyCard = page.getByTestId('verify-card');
    await verifyCard.getByLabel('Result ZIP').fill(zip);
    await verifyCard.getByRole('button', { name: 'Verify' }).click();
    await expect.poll(() => verifyCard.textContent()).toMatch(/Verified\. .* A cancelled run: \d+ of 541 prompts\./);
    expect(await verifyCard.getByTestId('verify-subject').textContent()).toMatch(
      /^The ZIP says it holds run run-1: allenai\/OLMoE-1B-7B-0924-Instruct @ 7f1c97f, INT4, CUDA: RTX 4060, started .+\.$/,
    );
    // The fake cuts every response whose key 5 does not divide, as the ZIP's responses say.
    expect(await verifyCard.getByTestId('verify-cut').textContent()).toMatch(/^\d+ of \d+ responses cut at max new tokens \(1,280\)\.$/);
    expect(await verifyCard.getByTestId('verify-unchecked').textContent()).toBe(
      'Not checked:input_data.jsonl: its rows were not compared with the official IFEval set',
    );
    expect(app.consoleErrors).toEqual([]);
  });

  it('runs a campaign over expert budgets on the GPU and charts decode rate against GPU memory', async () => {
    await page.getByRole('navigation').getByRole('button', { name: /^Performance/ }).click();
    await page.getByLabel('Expert budgets (GiB)').fill('4, lots');
    await expect.poll(() => page.getByTestId('perf-form').locator('.field__error').textContent()).toBe(
      "Expert budget 'lots' must be a number of GiB from 0.25 to 1024.",
    );
    await page.getByLabel('Expert budgets (GiB)').fill('2, 4');
    await page.getByLabel('Label (optional)').fill('two budgets');
    await page.getByRole('button', { name: 'Run campaign' }).click();
    await expect.poll(() => page.getByTestId('perf-status').textContent(), { timeout: 20_000 }).toBe('completed');
    await expect.poll(() => page.getByTestId('campaign').textContent()).toContain('108 requests measured');
    const rows = page.getByTestId('campaign-table').locator('tbody tr');
    expect(await rows.count()).toBe(3);
    expect(await rows.nth(0).locator('th').textContent()).toContain('full residency');
    expect(await rows.nth(2).locator('th').textContent()).toContain('4 GiB experts');
    // Each budget against full residency (the fake decodes at 500 / (1 + 8 / GiB) tok/s, less a little a prompt).
    expect(await rows.nth(0).getByTestId('full-residency-ratio').count()).toBe(0);
    expect(await rows.nth(1).getByTestId('full-residency-ratio').textContent()).toMatch(/^0\.20x of full \(0\.\d\d–0\.\d\dx\)$/);
    expect(await rows.nth(2).getByTestId('full-residency-ratio').textContent()).toMatch(/^0\.33x of full \(0\.\d\d–0\.\d\dx\)$/);
    const label = (await page.getByTestId('rate-memory-chart').locator('svg').getAttribute('aria-label')) ?? '';
    // Sorted by memory: 2 GiB of experts first, full residency (7 GiB + 1) last.
    expect(label).toMatch(/^Decode rate against peak GPU memory: 2 GiB experts [\d.]+ tok\/s at 3\.0 GiB; 4 GiB experts [\d.]+ tok\/s at 5\.0 GiB; full residency [\d.]+ tok\/s at 8\.0 GiB$/);
    const first = (await page.getByLabel('Campaign', { exact: true }).inputValue()) ?? '';

    // A second campaign, over one budget, compared with the first configuration by configuration.
    await page.getByLabel('Expert budgets (GiB)').fill('2');
    await page.getByRole('button', { name: 'Run campaign' }).click();
    await expect.poll(() => page.getByTestId('campaign').textContent(), { timeout: 20_000 }).toContain('72 requests measured');
    await page.getByLabel('Compare with').selectOption(first);
    const compared = page.getByTestId('campaign-comparison').locator('tbody tr');
    await expect.poll(() => compared.count()).toBe(3);
    // The same figures for the same configuration; B measured no 4 GiB configuration.
    expect(await compared.nth(0).textContent()).toMatch(/^full residency([\d.]+) tok\/s\1 tok\/s1\.00x/);
    expect(await compared.nth(2).textContent()).toMatch(/^4 GiB expertsnot measured[\d.]+ tok\/s—/);
    // Each ratio's 95% interval over the 12 prompts both measured: the fake measures the same figures each time.
    expect(await compared.nth(0).getByTestId('decode-ratio-ci').textContent()).toBe('1.00–1.00x');
    expect(await compared.nth(0).getByTestId('ttft-ratio-ci').textContent()).toBe('1.00–1.00x');
    expect(await compared.nth(2).getByTestId('decode-ratio-ci').count()).toBe(0);
    expect(await page.getByTestId('campaign-differences').count()).toBe(0);
    // The shown campaign (A) labelled: the list and the comparison name it.
    await page.getByRole('button', { name: 'Add a label' }).click();
    await page.getByLabel('Campaign label').fill('one budget');
    await page.getByLabel('Campaign label').press('Enter');
    await expect.poll(() => page.getByTestId('label-field').textContent()).toBe('one budgetEdit label');
    expect(await page.getByLabel('Campaign', { exact: true }).locator('option:checked').textContent()).toMatch(/^perf-\d+ · one budget · completed · /);
    expect(await page.getByTestId('campaign-comparison').textContent()).toMatch(/^A perf-\d+ “one budget” on CUDA: .* · B perf-\d+ “two budgets” on CUDA: /);
    await fullShot(page, path.join(shots, '11-performance-gpu.png'));

    // The filter narrows what the pickers offer by any word of a campaign's label, model, device, status or id; the
    // shown campaign (and the one compared with) stay offered, as a select shows its value.
    expect(await page.getByTestId('perf-shown').textContent()).toBe('2 campaigns');
    await page.getByLabel('Compare with').selectOption('');
    const offeredText = (name: string) => page.getByLabel(name, { exact: true }).locator('option').allTextContents();
    await page.getByLabel('Filter campaigns').fill('ONE budget');
    await expect.poll(() => page.getByTestId('perf-shown').textContent()).toBe('1 of 2 campaigns match');
    expect(await offeredText('Compare with')).toEqual(['—']);
    await page.getByLabel('Filter campaigns').fill('two 4090');
    await expect.poll(() => offeredText('Compare with')).toEqual([expect.stringMatching(/^—$/), expect.stringMatching(/^perf-\d+ · two budgets · CUDA: /)]);
    expect(await offeredText('Campaign')).toHaveLength(2);
    await page.getByLabel('Filter campaigns').fill('no such campaign');
    await expect.poll(() => page.getByTestId('perf-shown').textContent()).toBe('0 of 2 campaigns match');
    expect(await offeredText('Campaign')).toEqual([expect.stringMatching(/ · one budget · /)]);
    await page.getByRole('button', { name: 'Offer every campaign' }).click();
    await expect.poll(() => offeredText('Compare with')).toHaveLength(2);
    expect(await page.getByLabel('Filter campaigns').inputValue()).toBe('');

    // The second campaign, exported, deleted after asking with its ZIP: the first is shown again, with nothing left to
    // compare it with.
    const second = await page.getByLabel('Campaign', { exact: true }).inputValue();
    await page.getByRole('button', { name: 'Export ZIP' }).click();
    await expect.poll(() => page.getByTestId('perf-exported').textContent()).toContain(`exports/${second}.zip`);
    await page.getByRole('button', { name: `Delete campaign ${second}` }).click();
    const confirm = page.getByTestId('perf-delete-confirm');
    expect(await confirm.textContent()).toContain('Deleting it removes its measured requests from the database for good');
    const alsoZip = confirm.getByRole('checkbox', { name: /Also delete its exported ZIP/ });
    await expect.poll(() => alsoZip.count()).toBe(1);
    expect(await alsoZip.locator('xpath=..').textContent()).toBe(`Also delete its exported ZIP: exports/${second}.zip (4.2 KiB)`);
    await alsoZip.check();
    await confirm.getByRole('button', { name: 'Delete campaign' }).click();
    await expect.poll(() => page.getByTestId('perf-deleted').textContent()).toBe(`Deleted campaign ${second} and its 72 requests, and its campaign ZIP.`);
    await expect.poll(() => page.getByLabel('Campaign', { exact: true }).inputValue()).toBe(first);
    expect(await page.getByTestId('campaign-comparison').count()).toBe(0);
    expect(await page.getByLabel('Compare with').count()).toBe(0);
    expect(app.consoleErrors).toEqual([]);
  });
});
