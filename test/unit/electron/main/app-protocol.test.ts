import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { frameNavigationAllowed, isOwnRendererUrl, RENDERER_URL, rendererFileFor, rendererResponse } from '../../../../electron/main/app-protocol.js';

let root: string;
let dir: string;

beforeAll(() => {
  root = mkdtempSync(path.join(os.tmpdir(), 'horizon-app-protocol-'));
  dir = path.join(root, 'renderer');
  mkdirSync(path.join(dir, 'assets'), { recursive: true });
  writeFileSync(path.join(dir, 'index.html'), '<!doctype html><title>t</title>');
  writeFileSync(path.join(dir, 'assets', 'main-1.js'), 'console.log(1)');
  writeFileSync(path.join(root, 'secret.txt'), 'outside');
  symlinkSync(path.join(root, 'secret.txt'), path.join(dir, 'assets', 'link.js'));
});

afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('rendererFileFor', () => {
  it.each([
    [RENDERER_URL, 'index.html'],
    ['app://renderer/', 'index.html'],
    ['app://renderer/assets/main-1.js', 'assets/main-1.js'],
    ['app://renderer/assets/main-1.js?v=2#x', 'assets/main-1.js'],
    ['app://renderer/assets/%6Dain-1.js', 'assets/main-1.js'],
    // The URL parser already folds dot segments, encoded or not, so they stay inside the folder.
    ['app://renderer/../secret.txt', 'secret.txt'],
    ['app://renderer/assets/%2E%2E/%2E%2E/secret.txt', 'secret.txt'],
  ])('%s names %s inside the renderer folder', (url, rel) => {
    expect(rendererFileFor(url, dir)).toBe(path.join(dir, rel));
  });

  it.each([
    ['another host', 'app://other/index.html'],
    ['another scheme', 'file:///etc/passwd'],
    ['https', 'https://renderer/index.html'],
    ['credentials', 'app://user:pw@renderer/index.html'],
    ['an encoded backslash', 'app://renderer/assets%5C..%5C..%5Csecret.txt'],
    ['a NUL byte', 'app://renderer/index.html%00.js'],
    ['bad percent-encoding', 'app://renderer/%E0%A4%A'],
    ['not a URL', 'renderer/index.html'],
  ])('refuses %s', (_what, url) => {
    expect(rendererFileFor(url, dir)).toBeNull();
  });

  it('keeps encoded slashes that climb inside the folder', () => {
    expect(rendererFileFor('app://renderer/assets%2F..%2F..%2F..%2Fsecret.txt', dir)).toBe(path.join(dir, 'secret.txt'));
  });
});

describe('rendererResponse', () => {
  it('serves a file with its type, the CSP and nosniff', async () => {
    const res = await rendererResponse({ url: 'app://renderer/assets/main-1.js', method: 'GET' }, dir);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    expect(res.headers.get('content-security-policy')).toMatch(/^default-src 'self'; script-src 'self';.*connect-src 'self';/);
    expect(await res.text()).toBe('console.log(1)');
  });

  it('serves index.html as html for the page URL', async () => {
    const res = await rendererResponse({ url: RENDERER_URL, method: 'GET' }, dir);
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(await res.text()).toContain('<title>t</title>');
  });

  it('answers 404 for missing files, folders and other hosts, 405 for other methods', async () => {
    expect((await rendererResponse({ url: 'app://renderer/nope.js', method: 'GET' }, dir)).status).toBe(404);
    expect((await rendererResponse({ url: 'app://renderer/assets', method: 'GET' }, dir)).status).toBe(404);
    expect((await rendererResponse({ url: 'app://evil/index.html', method: 'GET' }, dir)).status).toBe(404);
    expect((await rendererResponse({ url: RENDERER_URL, method: 'POST' }, dir)).status).toBe(405);
  });

  it('HEAD gives the headers without a body', async () => {
    const res = await rendererResponse({ url: RENDERER_URL, method: 'HEAD' }, dir);
    expect(res.status).toBe(200);
    expect(await res.text()).toBe('');
  });

  it('does not follow a link out of the renderer folder', async () => {
    expect((await rendererResponse({ url: 'app://renderer/assets/link.js', method: 'GET' }, dir)).status).toBe(404);
  });
});

describe('frameNavigationAllowed', () => {
  it.each([
    [true, RENDERER_URL, true],
    [true, `${RENDERER_URL}#/results`, true],
    [true, 'https://evil.example/', false],
    [false, RENDERER_URL, false],
    [false, 'about:blank', false],
  ])('main frame %s to %s: %s', (isMainFrame, url, allowed) => {
    expect(frameNavigationAllowed(isMainFrame, url)).toBe(allowed);
  });
});

describe('isOwnRendererUrl', () => {
  it.each([
    [RENDERER_URL, true],
    [`${RENDERER_URL}#/results`, true],
    [`${RENDERER_URL}?a=1`, true],
    ['app://renderer/index.html.evil', false],
    ['app://renderer/other.html', false],
    ['file:///tmp/index.html', false],
    ['https://huggingface.co/', false],
  ])('%s → %s', (url, own) => {
    expect(isOwnRendererUrl(url)).toBe(own);
  });
});
