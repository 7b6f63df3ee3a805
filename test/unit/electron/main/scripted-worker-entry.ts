/** Test helper: the runtime worker's message loop over the scripted engine (forked by worker-client tests). */
import { connectParent } from '../../../../electron/worker/parent-port.js';
import { serveWorker } from '../../../../electron/worker/worker-server.js';
import { createScriptedEngine } from '../worker/scripted-engine.js';

serveWorker(connectParent(), createScriptedEngine({ tokenDelayMs: Number(process.env.SCRIPTED_TOKEN_DELAY_MS ?? 0) }));
