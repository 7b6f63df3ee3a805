/** The built renderer served over the fake services (`horizon serve`'s server), in a fresh browser page. */
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { expect } from 'vitest';
import type { Page } from 'playwright-core';

import type { Api } from '../../electron/common/ipc-contract.js';
import { startServeServer, type ServeHandle } from '../../electron/main/serve/serve-server.js';
import { createFakeApi, type FakeApiOptions } from './fake-api.js';
import { launchBrowser, type LaunchedBrowser } from './launch-browser.js';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
export const shared = path.resolve(repoRoot, '..', 'shared');
const staticDir = path.join(repoRoot, 'out', 'renderer');

/** Records console errors; `api` is the fake itself, for a test to slow a method down or read its state. */
export class FakeApp {
  server!: ServeHandle;
  browser!: LaunchedBrowser;
  page!: Page;
  api!: Api;
  private fake!: ReturnType<typeof createFakeApi>;
  readonly consoleErrors: string[] = [];
  readonly consoleAll: string[] = [];

  async open(options: Omit<FakeApiOptions, 'sharedDir' | 'tickMs'> & { tickMs?: number }): Promise<void> {
    const fake = createFakeApi({ sharedDir: shared, tickMs: 30, ...options });
    this.fake = fake;
    this.api = fake.api;
    this.server = await startServeServer({ api: fake.api, staticDir });
    fake.setEmit(this.server.emit);
    this.browser = await launchBrowser();
    this.page = await this.browser.context.newPage();
    this.page.on('console', (m) => {
      this.consoleAll.push(m.text());
      if (m.type() === 'error') this.consoleErrors.push(m.text());
    });
    this.page.on('pageerror', (e) => this.consoleErrors.push(e.message));
  }

  /** Stops the server (the fake services go on, unheard), as `horizon serve` stopping would look to the page. */
  async stopServer(): Promise<void> {
    await this.server.close();
  }

  /** Serves again on the same port with the same token, as a restarted server the page can find again. */
  async startServerAgain(): Promise<void> {
    this.server = await startServeServer({ api: this.fake.api, staticDir, port: this.server.port, token: this.server.token });
    this.fake.setEmit(this.server.emit);
  }

  async close(): Promise<void> {
    await this.browser?.close();
    await this.server?.close();
  }

  /** Models screen: prepares the default model and imports the IFEval prompts by typing their path. */
  async prepareAndImportPrompts(): Promise<void> {
    const { page } = this;
    await page.getByRole('button', { name: 'Models' }).click();
    await page.getByRole('button', { name: 'Prepare', exact: true }).click();
    await expect.poll(() => page.getByTestId('prepare-progress').textContent(), { timeout: 10_000 }).toContain('Ready');
    await this.importPrompts();
  }

  async importPrompts(): Promise<void> {
    const { page } = this;
    await page.getByLabel('Import IFEval input data from').fill(path.join(shared, 'ifeval', 'input_data.jsonl'));
    await page.getByTestId('import-ifeval').getByRole('button', { name: 'Import' }).click();
    await expect.poll(() => page.getByTestId('import-ifeval').textContent()).toContain('541 prompts');
  }
}
