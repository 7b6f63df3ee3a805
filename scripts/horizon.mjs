#!/usr/bin/env node
// The `horizon` CLI: runs the TypeScript sources through tsx so no build step is needed.
import { register } from 'tsx/esm/api';

register();
const { endQuietlyOnClosedStdout, main } = await import('../electron/cli/index.ts');
endQuietlyOnClosedStdout();
process.exitCode = await main(process.argv.slice(2));
