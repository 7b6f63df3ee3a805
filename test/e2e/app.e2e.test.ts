/**
 * The whole product in a browser: the local hub fixture serves the tiny OLMoE model, `horizon serve` runs the real
 * services on a temp data dir, and Chromium drives the UI: system check (CPU), prepare, import assets from ../shared,
 * a 10-prompt IFEval run, a response's verdicts, export + verify. Screenshots go to test-results/e2e/.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { makeTinyModel } from '../../scripts/make-tiny-model.js';
import { startHubServer, type HubServer } from '../fixtures/hub-server.js';
import { fullShot, launchBrowser, type LaunchedBrowser } from './launch-browser.js';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const shared = path.resolve(repoRoot, '..', 'shared');
const shots = path.join(repoRoot, 'test-results', 'e2e');
const REPO = 'horizon-test/tiny-olmoe';

/** Starts `horizon serve` and resolves with the URL it prints. */
function startServe(args: string[], log: string[]): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, [path.join(repoRoot, 'scripts', 'horizon.mjs'), 'serve', ...args], {
    cwd: repoRoot,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`horizon serve did not start:\n${log.join('')}`)), 90_000);
    const onData = (d: Buffer) => {
      log.push(d.toString());
      const m = /open (http:\/\/127\.0\.0\.1:\d+\/#token=\S+)/.exec(log.join(''));
      if (m?.[1]) {
        clearTimeout(timer);
        resolve({ child, url: m[1] });
      }
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', (d: Buffer) => log.push(d.toString()));
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`horizon serve exited with ${code}:\n${log.join('')}`));
    });
  });
}

describe('Horizon RunMap in a browser (real services, tiny model)', () => {
  let tmp: string;
  let hub: HubServer;
  let serve: ChildProcess | undefined;
  let url: string;
  let browser: LaunchedBrowser;
  let page: Page;
  const serveLog: string[] = [];
  const pageErrors: string[] = [];
  let exportedZip = '';

  beforeAll(async () => {
    tmp = mkdtempSync(path.join(os.tmpdir(), 'horizon-e2e-'));
    mkdirSync(shots, { recursive: true });
    await makeTinyModel(path.join(tmp, 'model'), { seed: 7 });
    hub = await startHubServer({ repos: { [REPO]: { dir: path.join(tmp, 'model') } } });
    ({ child: serve, url } = await startServe(['--data-dir', path.join(tmp, 'data'), '--hub-url', hub.url], serveLog));
    browser = await launchBrowser();
    page = await browser.context.newPage();
    page.on('pageerror', (e) => pageErrors.push(e.message));
  });

  afterAll(async () => {
    await browser?.close();
    if (serve && serve.exitCode === null) {
      const exited = new Promise((resolve) => serve?.once('exit', resolve));
      serve.kill('SIGTERM');
      await exited;
    }
    await hub?.close();
    if (tmp) rmSync(tmp, { recursive: true, force: true });
  });

  it('prepares the tiny model, runs 10 prompts, shows verdicts and exports a verified ZIP', async () => {
    await page.goto(url);
    await expect.poll(() => page.getByTestId('backend').textContent(), { timeout: 30_000 }).toMatch(/CPU/);
    // The token leaves the address bar for the tab's sessionStorage, where a reload finds it.
    expect(page.url()).not.toContain('token');
    await page.reload();
    await expect.poll(() => page.getByTestId('backend').textContent(), { timeout: 30_000 }).toMatch(/CPU/);
    await fullShot(page, path.join(shots, '1-system.png'));

    await page.getByRole('button', { name: 'Models' }).click();
    // A browser has no native file dialog: the paths are typed and no Browse button is offered.
    expect(await page.getByRole('button', { name: /^Browse for/ }).count()).toBe(0);
    await page.getByLabel('Repository').fill(REPO);
    await page.getByLabel('Revision').fill('main');
    await page.getByRole('button', { name: 'Prepare', exact: true }).click();
    await expect
      .poll(() => page.getByTestId('prepare-progress').textContent(), { timeout: 180_000, interval: 500 })
      .toMatch(/Ready|Error|failed/);
    expect(await page.getByTestId('prepare-progress').textContent()).toContain('Ready');

    await page.getByLabel('Import IFEval input data from').fill(path.join(shared, 'ifeval', 'input_data.jsonl'));
    await page.getByTestId('import-ifeval').getByRole('button', { name: 'Import' }).click();
    await expect.poll(() => page.getByTestId('import-ifeval').textContent()).toMatch(/Imported/);
    await page.getByLabel('Import Punkt English from').fill(path.join(shared, 'nltk', 'punkt_english'));
    await page.getByTestId('import-punkt').getByRole('button', { name: 'Import' }).click();
    await expect.poll(() => page.getByTestId('import-punkt').textContent()).toMatch(/Imported/);
    // The badge turns with the message (the import's reply), not only once the slower system check returns.
    expect(await page.getByTestId('import-ifeval').locator('.chip').textContent()).toBe('ready');
    expect(await page.getByTestId('import-punkt').locator('.chip').textContent()).toBe('ready');
    await fullShot(page, path.join(shots, '2-models.png'));
    // The INT4 check runs `horizon quality` in a child process: INT4, BF16 and the Q4_0 comparison on the tiny model.
    const quality = page.getByTestId('quality-card');
    await quality.getByRole('textbox', { name: 'Prompts' }).fill('3');
    await quality.getByRole('button', { name: 'Check quality' }).click();
    await expect.poll(() => quality.getByTestId('quality-q4_0').count(), { timeout: 120_000, interval: 500 }).toBe(1);
    expect(await quality.locator('h3').textContent()).toMatch(/ · \d+ positions of 3 prompts, INT4 on CPU, /);
    expect(await quality.getByTestId('quality-ratio').textContent()).toMatch(
      /^INT4's mean KL is \d+\.\d\dx Q4_0's \(95% interval \d+\.\d\d–\d+\.\d\dx, prompts resampled\): .+\. INT4 is closer to BF16 on \d prompts?, Q4_0 on \d \(sign test p = [\d.]+\)\./,
    );

    await page.getByRole('button', { name: 'Run', exact: true }).click();
    const model = page.getByLabel('Model');
    const int4 = await model.locator('option', { hasText: 'INT4' }).first().getAttribute('value');
    expect(int4).toBeTruthy();
    await model.selectOption(int4!);
    await page.getByLabel('Prompts').fill('10');
    await page.getByLabel('Batch size').fill('5');
    await page.getByLabel('Max new tokens').fill('8');
    await page.getByRole('button', { name: 'Start run' }).click();
    await expect
      .poll(() => page.getByTestId('run-status').textContent(), { timeout: 300_000, interval: 1000 })
      .toMatch(/completed|failed/);
    await fullShot(page, path.join(shots, '3-run.png'));
    expect(await page.getByTestId('run-status').textContent()).toBe('completed');
    expect(await page.getByTestId('run-count').textContent()).toBe('10 / 10 prompts');
    expect(await page.getByText('CPU backend · 5 at a time').count()).toBe(1);

    await page.getByRole('button', { name: 'View results' }).click();
    await expect.poll(() => page.getByTestId('pager-status').textContent()).toBe('1–10 of 10');
    await expect.poll(() => page.getByTestId('acc-prompt-strict').textContent()).toMatch(/\d+\.\d%/);
    // Under the figure, its 95% interval, around it and wide over 10 prompts (at least 27 points even at 0% or 100%).
    const promptStrict = /^Prompt-level strict(\d+\.\d)%95% CI (\d+\.\d)–(\d+\.\d)%$/.exec((await page.getByTestId('acc-prompt-strict').textContent()) ?? '');
    expect(promptStrict).not.toBeNull();
    const [value, low, high] = promptStrict!.slice(1).map(Number) as [number, number, number];
    expect(low).toBeLessThanOrEqual(value);
    expect(value).toBeLessThanOrEqual(high);
    expect(high - low).toBeGreaterThan(27);
    expect(await page.getByTestId('residency').textContent()).toMatch(/^Weights: host memory, \d+ threads/);
    // The check of the run's model, as the Models page stored it.
    expect(await page.getByTestId('int4-check').textContent()).toMatch(/^This model's INT4 check \(3 prompts, \d+ positions\): top-1 agreement /);
    await fullShot(page, path.join(shots, '4-results.png'));

    await page.getByRole('button', { name: /^Open response / }).first().click();
    const detail = page.getByTestId('response-detail');
    await expect.poll(() => detail.getByTestId('verdicts').locator('tbody tr').count()).toBeGreaterThan(0);
    expect(await detail.getByTestId('verdicts').textContent()).toMatch(/(pass|fail)/);
    // Each verdict with what the scorer found (the tiny model's text is noise, so only that there is one).
    const rows = await detail.getByTestId('verdicts').locator('tbody tr').count();
    expect(await detail.getByTestId('finding').count()).toBe(rows);
    await page.screenshot({ path: path.join(shots, '5-response.png') });
    await page.keyboard.press('Escape');

    await page.getByRole('button', { name: 'Export ZIP' }).click();
    await expect.poll(() => page.getByTestId('export-status').textContent(), { timeout: 60_000 }).toMatch(/verified|failed/);
    const status = (await page.getByTestId('export-status').textContent()) ?? '';
    expect(status).toContain('Exported and verified');
    await fullShot(page, path.join(shots, '6-export.png'));

    const zip = /(\/\S+\.zip)/.exec(status)?.[1];
    expect(zip && existsSync(zip)).toBe(true);
    exportedZip = zip ?? '';
    const verify = spawnSync(process.execPath, [path.join(repoRoot, 'scripts', 'horizon.mjs'), 'verify', zip!], { encoding: 'utf8' });
    expect(verify.status, verify.stdout + verify.stderr).toBe(0);
    expect(verify.stdout).toMatch(/verified/);
    // The model's check went into the ZIP with the run.
    expect(verify.stdout).toMatch(/\ncarried, not re-checked \(that needs the model\): INT4 check \(3 prompts, \d+ positions\): /);

    // The browser saves the ZIP fetched with the token in a header: the same bytes as the export.
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Download' }).click()]);
    expect(download.suggestedFilename()).toBe(path.basename(zip!));
    const saved = await download.path();
    expect(readFileSync(saved).equals(readFileSync(zip!))).toBe(true);

    await page.getByRole('button', { name: 'History' }).click();
    await expect.poll(() => page.getByTestId('history').locator('tbody tr').count()).toBe(1);
    expect(pageErrors).toEqual([]);
  }, 600_000);

  it('cancels and resumes a run, then compares two runs side by side', async () => {
    await page.getByRole('button', { name: 'Run', exact: true }).click();
    // Long enough (one prompt a batch, 256 new tokens: ~30k tokens, seconds even for the tiny model at full speed) that
    // the run cannot finish between "running" and the click on Cancel on a loaded machine: 8 and then 64 new tokens
    // each raced in CI, the button gone with the finished run before the click.
    await page.getByLabel('Prompts').fill('120');
    await page.getByLabel('Batch size').fill('1');
    await page.getByLabel('Max new tokens').fill('256');
    await page.getByRole('button', { name: 'Start run' }).click();
    await expect.poll(() => page.getByTestId('run-status').textContent(), { timeout: 30_000 }).toBe('running');
    await page.getByRole('button', { name: 'Cancel run' }).click();
    await expect.poll(() => page.getByTestId('run-status').textContent(), { timeout: 60_000 }).toBe('cancelled');
    const stopped = Number((await page.getByTestId('run-count').textContent())?.split(' / ')[0]);
    expect(stopped).toBeLessThan(120);
    await page.getByRole('button', { name: 'Resume run' }).click();
    await expect
      .poll(() => page.getByTestId('run-status').textContent(), { timeout: 300_000, interval: 1000 })
      .toMatch(/completed|failed/);
    expect(await page.getByTestId('run-count').textContent()).toBe('120 / 120 prompts');

    await page.getByRole('button', { name: 'History' }).click();
    const rows = page.getByTestId('history').locator('tbody tr');
    await expect.poll(() => rows.count()).toBe(2);
    await rows.nth(1).getByRole('checkbox').check();
    await rows.nth(0).getByRole('checkbox').check();
    await page.getByRole('button', { name: /Compare A and B/ }).click();
    await expect.poll(() => page.getByTestId('comparison').textContent()).toContain('10 prompts scored in both runs');
    await fullShot(page, path.join(shots, '7-history.png'));

    const verifyCard = page.getByTestId('verify-card');
    await verifyCard.getByLabel('Result ZIP').fill(exportedZip);
    await verifyCard.getByRole('button', { name: 'Verify' }).click();
    await expect.poll(() => verifyCard.textContent(), { timeout: 60_000 }).toMatch(/Verified\.|failed/);
    expect(await verifyCard.textContent()).toMatch(/Verified\. Prompt-level strict \d/);
    expect(await verifyCard.getByTestId('verify-subject').textContent()).toMatch(/^The ZIP says it holds run \S+: \S+ @ [0-9a-f]{7}, INT4 g\d+, CPU backend, started .+\.$/);
    expect(await verifyCard.getByTestId('verify-cut').textContent()).toMatch(/^\d+ of 10 responses cut at max new tokens \(8\)\.$/);
    expect(await verifyCard.getByTestId('verify-quality').textContent()).toMatch(
      /^It carries its model's INT4 check \(3 prompts, \d+ positions\): .*, not re-checked \(that needs the model\)\.$/,
    );
    expect(pageErrors).toEqual([]);
  }, 600_000);

  it('adds a deleted run back to History from its result ZIP, marked as imported', async () => {
    const runId = path.basename(exportedZip, '.zip');
    const rows = page.getByTestId('history').locator('tbody tr');
    const before = await page.getByTestId('history').locator('tbody tr', { hasText: runId }).textContent();
    // Deleted by the CLI beside the open app (as on another machine that has only the ZIP).
    const del = spawnSync(process.execPath, [path.join(repoRoot, 'scripts', 'horizon.mjs'), 'delete', runId, '--data-dir', path.join(tmp, 'data')], {
      encoding: 'utf8',
    });
    expect(del.status, del.stdout + del.stderr).toBe(0);
    await expect.poll(() => rows.count(), { timeout: 30_000 }).toBe(1);

    const verifyCard = page.getByTestId('verify-card');
    await verifyCard.getByLabel('Result ZIP').fill(exportedZip);
    await verifyCard.getByRole('button', { name: 'Add to History' }).click();
    await expect.poll(() => verifyCard.getByTestId('import-done').textContent(), { timeout: 60_000 }).toBe(
      `Added run ${runId} to History (completed, 10 of 10 prompts, CPU backend).`,
    );
    await expect.poll(() => rows.count()).toBe(2);
    const row = page.getByTestId('history').locator('tbody tr', { hasText: runId });
    // The same figures as before it was deleted (less its place in the comparison it was picked for), and where it
    // came from.
    expect(await row.textContent()).toBe(before!.replace(/^[AB]/, '').replace(runId, `${runId}imported ${path.basename(exportedZip)}`));
    expect(await row.getByRole('button', { name: `Resume run ${runId}` }).count()).toBe(0);
    // Compared with the run made here (still picked as A), the table says where each came from.
    await row.getByRole('checkbox').check();
    await page.getByRole('button', { name: /Compare A and B/ }).click();
    await expect.poll(() => page.getByTestId('comparison-origin').textContent()).toBe(`Originmade hereimported from ${path.basename(exportedZip)}`);
    await fullShot(page, path.join(shots, '8-imported.png'));

    await verifyCard.getByRole('button', { name: 'Open its results' }).click();
    await expect.poll(() => page.getByTestId('results-imported').textContent()).toMatch(new RegExp(`^ · imported from ${path.basename(exportedZip)} on `));
    // The model's INT4 check came with the run in its ZIP (quality.json).
    expect(await page.getByTestId('int4-check').textContent()).toMatch(/^The INT4 check \(3 prompts, \d+ positions\): top-1 agreement .*, as this run's result ZIP carried it\.$/);
    expect(pageErrors).toEqual([]);
  }, 300_000);
});
