/** Entry point of the compiled CLI (`out/electron/cli/bin.js`), used where the TypeScript sources are not shipped. */
import { main } from './index.js';

process.exitCode = await main(process.argv.slice(2));
