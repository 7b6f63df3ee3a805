import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

import type { EmitEvent } from '../../common/ipc-contract.js';
import { dataLayout, defaultDataDir } from '../../main/data-dir.js';
import { createAppApi } from '../../main/ipc/create-app-api.js';
import { REPO_ROOT as repoRoot, toolVersion } from '../../node/app-root.js';
import { startServeServer } from '../../main/serve/serve-server.js';
import { forkSpawner } from '../../main/worker-client.js';
import { abortOnSignals, dataDirOption, intOption, parseCommandArgs, usageError } from '../command-args.js';

export const summary = 'serve the app UI to a browser on 127.0.0.1 (HTTP + WebSocket, token in the URL)';

const USAGE = `usage: horizon serve [--port P] [--data-dir DIR] [--hub-url URL] [--static DIR]
  --port      port on 127.0.0.1 (default 0: a free one)
  --data-dir  data folder (default $HORIZON_DATA_DIR or the platform app-data folder)
  --hub-url   the Hugging Face Hub endpoint the Models page prepares from (default https://huggingface.co)
  --static    the built renderer folder (default <app>/out/renderer, built with vite when it is missing)`;

/** The vite CLI script of this checkout's node_modules. */
function viteBin(): string {
  const pkgFile = createRequire(path.join(repoRoot, 'package.json')).resolve('vite/package.json');
  const bin = (JSON.parse(readFileSync(pkgFile, 'utf8')) as { bin: { vite: string } }).bin.vite;
  return path.join(path.dirname(pkgFile), bin);
}

export async function run(args: string[]): Promise<number> {
  const parsed = parseCommandArgs('serve', USAGE, args, {
    port: { type: 'string' },
    'data-dir': { type: 'string' },
    'hub-url': { type: 'string' },
    static: { type: 'string' },
  });
  if (typeof parsed === 'number') return parsed;
  const { values } = parsed;
  let port: number;
  try {
    port = intOption('port', values.port, 0, 65535) ?? 0;
  } catch (e) {
    return usageError('serve', USAGE, (e as Error).message);
  }
  const dataDir = dataDirOption(values, defaultDataDir);
  const staticDir = path.resolve(values.static ?? path.join(repoRoot, 'out', 'renderer'));
  if (!existsSync(path.join(staticDir, 'index.html'))) {
    if (values.static) {
      console.error(`horizon serve: ${staticDir}/index.html does not exist`);
      return 1;
    }
    console.log('horizon serve: building the renderer (vite build)…');
    // Vite's own script under this Node: `npx` is `npx.cmd` on Windows, which execFile cannot start without a shell.
    execFileSync(process.execPath, [viteBin(), 'build', '--logLevel', 'warn'], {
      cwd: repoRoot,
      stdio: 'inherit',
      env: { ...process.env, NODE_ENV: 'production' },
    });
  }
  const version = toolVersion();

  let emit: EmitEvent = () => {};
  const app = await createAppApi({
    dataDir,
    hubUrl: values['hub-url'],
    spawner: forkSpawner(),
    emit: (event, payload) => emit(event, payload),
    appVersion: version,
  });
  let server: Awaited<ReturnType<typeof startServeServer>>;
  try {
    server = await startServeServer({
      api: app.api,
      staticDir,
      port,
      downloadDir: dataLayout.exportsDir(dataDir),
    });
  } catch (e) {
    // The services hold the data folder's lock: a server that never listened must not leave it behind.
    await app.dispose();
    throw e;
  }
  emit = server.emit;
  console.log(`horizon serve: data dir ${dataDir}`);
  console.log(`horizon serve: open ${server.url}`);

  const stop = abortOnSignals(['SIGINT', 'SIGTERM']);
  await new Promise<void>((resolve) => stop.signal.addEventListener('abort', () => resolve(), { once: true }));
  console.log('horizon serve: stopping');
  await server.close();
  await app.dispose();
  stop.dispose();
  return 0;
}
