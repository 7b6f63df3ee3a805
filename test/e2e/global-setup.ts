/**
 * Builds the renderer once before any test, so the browser tests (and `horizon serve`, which only builds when
 * out/renderer is missing) never run a bundle older than the sources, and two test files never build it at once.
 */
import { execFileSync } from 'node:child_process';
import path from 'node:path';

export default function setup(): void {
  const repoRoot = path.resolve(import.meta.dirname, '..', '..');
  // The bundle the app ships: vitest sets NODE_ENV=test, under which vite would build React's development bundle.
  execFileSync('npx', ['vite', 'build', '--logLevel', 'error'], {
    cwd: repoRoot,
    stdio: 'inherit',
    env: { ...process.env, NODE_ENV: 'production' },
  });
}
