/**
 * The Electron shell: one hardened window on the built renderer, the contract's IPC handlers, and the runtime worker
 * as a utilityProcess. Everything else lives in modules that run (and are tested) without Electron.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { app, BrowserWindow, dialog, ipcMain, protocol, session, shell, utilityProcess } from 'electron';

import type { PickPathRequest } from '../common/ipc-contract.js';

import { APP_SCHEME, frameNavigationAllowed, isOwnRendererUrl, RENDERER_URL, rendererResponse } from './app-protocol.js';
import { defaultDataDir } from './data-dir.js';
import { isExternalLinkAllowed } from './external-links.js';
import { createAppApi, type AppApi } from './ipc/create-app-api.js';
import { createEventFanout, registerIpc } from './ipc/register-ipc.js';
import { utilityProcessPacker } from './prep/pack-model.js';
import { contentSecurityPolicy } from './serve/content-security-policy.js';
import { utilityProcessSpawner } from './worker-client.js';

// Built layout: out/electron/main/index.js, out/electron/worker/index.js, out/preload/index.cjs, out/renderer/.
const here = path.dirname(fileURLToPath(import.meta.url));
const outDir = path.resolve(here, '..', '..');
const rendererDir = path.join(outDir, 'renderer');
const preloadPath = path.join(outDir, 'preload', 'index.cjs');
const workerEntry = path.join(outDir, 'electron', 'worker', 'index.js');
const cliEntry = path.join(outDir, 'electron', 'cli', 'bin.js');

let appApi: AppApi | null = null;

function hardenSession(): void {
  session.defaultSession.webRequest.onHeadersReceived((details, callback) => {
    callback({
      responseHeaders: {
        ...details.responseHeaders,
        'Content-Security-Policy': [contentSecurityPolicy()],
        'X-Content-Type-Options': ['nosniff'],
      },
    });
  });
  session.defaultSession.setPermissionRequestHandler((_wc, _permission, callback) => callback(false));
  session.defaultSession.setPermissionCheckHandler(() => false);
  protocol.handle(APP_SCHEME, (request) => rendererResponse(request, rendererDir));
}

/** The system's open dialog, attached to the focused window; null when cancelled. */
async function pickPath(req: PickPathRequest): Promise<string | null> {
  const options: Electron.OpenDialogOptions = {
    title: req.title,
    properties: [req.kind === 'folder' ? 'openDirectory' : 'openFile'],
    filters: (req.filters ?? []).map((f) => ({ name: f.name, extensions: [...f.extensions] })),
  };
  const owner = BrowserWindow.getFocusedWindow();
  const r = owner ? await dialog.showOpenDialog(owner, options) : await dialog.showOpenDialog(options);
  return r.canceled ? null : (r.filePaths[0] ?? null);
}

function createWindow(): BrowserWindow {
  const win = new BrowserWindow({
    width: 1360,
    height: 900,
    minWidth: 900,
    minHeight: 600,
    show: false,
    title: 'Horizon RunMap',
    backgroundColor: '#f4f5f8',
    icon: path.join(app.getAppPath(), 'resources', 'icon.png'),
    webPreferences: {
      preload: preloadPath,
      contextIsolation: true,
      sandbox: true,
      nodeIntegration: false,
      nodeIntegrationInWorker: false,
      webSecurity: true,
      allowRunningInsecureContent: false,
      webviewTag: false,
      spellcheck: false,
      devTools: !app.isPackaged,
    },
  });
  win.once('ready-to-show', () => win.show());
  void win.loadURL(RENDERER_URL);
  return win;
}

app.enableSandbox();
// Must precede 'ready'. Standard and secure: the page gets an origin of its own for 'self' in the CSP, as https would.
protocol.registerSchemesAsPrivileged([{ scheme: APP_SCHEME, privileges: { standard: true, secure: true } }]);

// One app per user: a second start brings the open window forward (the data folder's lock would refuse it anyway).
const primary = app.requestSingleInstanceLock();
if (!primary) {
  app.quit();
} else {
  app.on('second-instance', () => {
    const win = BrowserWindow.getAllWindows()[0];
    if (!win) return;
    if (win.isMinimized()) win.restore();
    win.focus();
  });
}

app.on('web-contents-created', (_event, contents) => {
  contents.on('will-navigate', (event, url) => {
    if (!isOwnRendererUrl(url)) event.preventDefault();
  });
  contents.on('will-frame-navigate', (event) => {
    if (!frameNavigationAllowed(event.isMainFrame, event.url)) event.preventDefault();
  });
  contents.on('will-redirect', (event) => event.preventDefault());
  contents.on('will-attach-webview', (event) => event.preventDefault());
  contents.setWindowOpenHandler(({ url }) => {
    if (isExternalLinkAllowed(url)) void shell.openExternal(url);
    return { action: 'deny' };
  });
});

app.on('window-all-closed', () => app.quit());

// Quit waits for the services to stop: a run is cancelled with its finished responses stored, the worker stops and
// the data folder's lock is released (what a next start would otherwise clean up), for at most DISPOSE_MS.
const DISPOSE_MS = 10_000;
app.on('will-quit', (event) => {
  const api = appApi;
  if (!api) return;
  appApi = null;
  event.preventDefault();
  const timeout = new Promise<void>((resolve) => setTimeout(resolve, DISPOSE_MS).unref());
  void Promise.race([api.dispose().catch(() => undefined), timeout]).finally(() => app.quit());
});

void app.whenReady().then(async () => {
  // The second instance only hands over to the first.
  if (!primary) return;
  hardenSession();
  const emit = createEventFanout(() => BrowserWindow.getAllWindows().map((w) => w.webContents));
  try {
    appApi = await createAppApi({
      dataDir: defaultDataDir(),
      hubUrl: process.env.HORIZON_HUB_URL,
      spawner: utilityProcessSpawner(utilityProcess, workerEntry),
      emit,
      appVersion: app.getVersion(),
      pickPath,
      packer: utilityProcessPacker(utilityProcess, cliEntry),
    });
  } catch (error) {
    // The data folder in use by `horizon serve`, say, or a database that cannot be opened: say why, then quit.
    dialog.showErrorBox('Horizon RunMap cannot start', (error as Error).message);
    app.quit();
    return;
  }
  registerIpc(ipcMain, appApi.api, isOwnRendererUrl);
  createWindow();
  app.on('activate', () => {
    if (BrowserWindow.getAllWindows().length === 0) createWindow();
  });
});
