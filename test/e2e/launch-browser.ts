import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { chromium, type BrowserContext, type Page } from 'playwright-core';

/** Debian's real Chromium binary (not the /usr/bin wrapper), or $CHROMIUM_PATH. */
export function chromiumPath(): string | null {
  const candidates = [process.env.CHROMIUM_PATH, '/usr/lib/chromium/chromium'].filter((p): p is string => !!p);
  return candidates.find((p) => existsSync(p)) ?? null;
}

export interface LaunchedBrowser {
  readonly context: BrowserContext;
  close(): Promise<void>;
}

/** Launch options from shared/TOOLCHAIN.md: a persistent context in a temp profile, no network extras. */
export async function launchBrowser(): Promise<LaunchedBrowser> {
  const executablePath = chromiumPath();
  if (!executablePath) throw new Error('no Chromium: install Debian chromium or set CHROMIUM_PATH');
  const profile = mkdtempSync(path.join(os.tmpdir(), 'horizon-e2e-profile-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath,
    headless: true,
    viewport: { width: 1360, height: 900 },
    // Screenshots show settled progress bars, not a transition caught half-way.
    reducedMotion: 'reduce',
    acceptDownloads: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
  return {
    context,
    close: async () => {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

/** A screenshot of the whole page taken at a viewport as tall as the content, so fixed panels span it. */
export async function fullShot(page: Page, file: string): Promise<void> {
  const vp = page.viewportSize() ?? { width: 1360, height: 900 };
  const height = Number(await page.evaluate('document.documentElement.scrollHeight'));
  await page.setViewportSize({ width: vp.width, height: Math.max(vp.height, Math.min(height, 6000)) });
  await page.screenshot({ path: file });
  await page.setViewportSize(vp);
}
