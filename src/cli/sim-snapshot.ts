/**
 * Entry of the simulator's startup snapshot (src/build/sim-snapshot.ts): bundled into one CommonJS script and run
 * by `node --build-snapshot`, it loads every module `mhs-host sim` runs (commander, the MCP server SDK and its zod
 * schemas, the simulator, the precompiled family validator) and serves one throwaway session over in-memory
 * streams, so the SDK's lazily built protocol schemas and zod's compiled parsers are in the snapshot too. A child
 * started with `--snapshot-blob` then only parses its argv and serves. Runs only inside that bundle (`__filename`,
 * the `define`d `import.meta.url`), whose build entry also hands family.ts the precompiled validator. Not loaded:
 * `node:http` (Node 20's snapshot builder fails on it; `sim` loads it at run time, as the bundle does).
 */
import { PassThrough } from 'node:stream';
import { pathToFileURL } from 'node:url';
import { startupSnapshot } from 'node:v8';
import { RealClock } from '../core/index.js';
import { BUILTIN_FAMILIES } from '../sim/builtin.js';
import { SimEndpoint } from '../sim/endpoint.js';
import { loadFamily } from '../sim/family.js';
import { MANIFEST_URI } from '../sim/mcp-projection.js';
import '../sim/policy.js';
import { serveStdioProjection } from '../sim/stdio-server.js';
import { runCli } from './cli-run.js';
import { simCommand } from './sim-command.js';

declare const __filename: string;

/** What `import.meta.url` of the bundled modules reads: a file next to the blob (family.ts finds `devices/`). */
const slot = globalThis as { __MHS_SIM_MODULE_URL?: string };

/** The blob this process started from (`--snapshot-blob FILE` or `--snapshot-blob=FILE` in execArgv). */
function blobPath(execArgv: string[]): string {
  for (let i = 0; i < execArgv.length; i++) {
    const a = execArgv[i]!;
    if (a === '--snapshot-blob') return execArgv[i + 1]!;
    if (a.startsWith('--snapshot-blob=')) return a.slice('--snapshot-blob='.length);
  }
  throw new Error('started without --snapshot-blob');
}

/** A handshake, the manifest, the tool list and one tool call, as a host's attach makes them; then EOF. */
async function warmUp(): Promise<void> {
  const ep = new SimEndpoint({
    families: BUILTIN_FAMILIES.map(loadFamily),
    endpointId: 'mhs://stdio/snapshot-warm-up',
    clock: new RealClock(),
    seed: 42,
    operatorTools: true,
    policy: null,
    faults: {},
    transports: [{ kind: 'mcp-stdio', command: ['mhs-host', 'sim'] }],
  });
  const input = new PassThrough();
  const output = new PassThrough();
  const answered = new Map<number, () => void>();
  let buf = '';
  output.on('data', (chunk: Buffer) => {
    buf += chunk.toString('utf8');
    for (let nl = buf.indexOf('\n'); nl >= 0; nl = buf.indexOf('\n')) {
      const msg = JSON.parse(buf.slice(0, nl)) as { id?: number };
      buf = buf.slice(nl + 1);
      if (typeof msg.id === 'number') answered.get(msg.id)?.();
    }
  });
  const closed = new Promise<void>((resolve) => serveStdioProjection(ep, resolve, { input, output }));
  const send = (msg: object) => input.write(`${JSON.stringify({ jsonrpc: '2.0', ...msg })}\n`);
  const request = (id: number, method: string, params: object) =>
    new Promise<void>((resolve) => {
      answered.set(id, resolve);
      send({ id, method, params });
    });
  await request(1, 'initialize', {
    protocolVersion: '2025-06-18',
    capabilities: {},
    clientInfo: { name: 'snapshot-warm-up', version: '0' },
  });
  send({ method: 'notifications/initialized' });
  await request(2, 'resources/read', { uri: MANIFEST_URI });
  await request(3, 'tools/list', {});
  await request(4, 'tools/call', { name: 'mhs__devices', arguments: {} });
  await request(5, 'ping', {});
  input.end();
  await closed;
  // The `sim` flags parsed once (a refused --seed ends the parse before the action).
  await simCommand()
    .exitOverride()
    .configureOutput({ writeOut: () => undefined, writeErr: () => undefined, outputError: () => undefined })
    .parseAsync(['thermostat', '--stdio', '--seed', '-1'], { from: 'user' })
    .then(
      () => Promise.reject(new Error('sim snapshot: the warm-up parse should have been refused')),
      () => undefined,
    );
}

slot.__MHS_SIM_MODULE_URL = pathToFileURL(__filename).href;
let warm = false;
// Deferred: the build entry hands family.ts the precompiled validator once this module has run.
setImmediate(() => void warmUp().then(() => (warm = true)));
// The builder runs the event loop until it is empty, then takes the snapshot: the session must have ended.
startupSnapshot.addSerializeCallback(() => {
  if (!warm) throw new Error('sim snapshot: the warm-up session did not end');
});

startupSnapshot.setDeserializeMainFunction(() => {
  const blob = blobPath(process.execArgv);
  slot.__MHS_SIM_MODULE_URL = pathToFileURL(blob).href;
  // argv as a script would see it: [node, script, 'sim', ...].
  runCli([process.execPath, blob, ...process.argv.slice(1)], { sim: () => Promise.resolve(simCommand()) });
});
