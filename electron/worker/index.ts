/**
 * The runtime worker's entry: an Electron utilityProcess in the app, a Node child process (fork through tsx)
 * outside it. It alone loads the native addon.
 */
import { connectParent } from './parent-port.js';
import { createNativeEngine } from './runtime/native-engine.js';
import { serveWorker } from './worker-server.js';

serveWorker(connectParent(), createNativeEngine());
