/** Entry point of the compiled CLI (`out/electron/cli/bin.js`), used where the TypeScript sources are not shipped. */
import { endQuietlyOnClosedStdout, main } from './index.js';

endQuietlyOnClosedStdout();

process.exitCode = await main(process.argv.slice(2));
