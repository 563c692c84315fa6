import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { ensureConsoleBundle } from './console-bundle.js';

/**
 * Files of the console: the HTML shell and style sheet in `static/`, and `console.js`, the Preact components of
 * `ui/` bundled by esbuild (built at registration when missing or older than its sources; docs/operator.md).
 */
export const CONSOLE_FILES = {
  'index.html': 'text/html; charset=utf-8',
  'console.js': 'text/javascript; charset=utf-8',
  'console.css': 'text/css; charset=utf-8',
  'uplot.css': 'text/css; charset=utf-8',
} as const;

/**
 * What the console needs from the host. The page itself talks only to the operator API
 * (`/v1/operator/*`, registered by `registerOperatorRoutes`), so nothing is required today.
 */
export type ConsoleDeps = Record<string, unknown>;

// The page may only load itself and call this host; nothing inline, no third-party origin.
const CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; form-action 'none'; base-uri 'none'; frame-ancestors 'none'";

/**
 * Serves the operator console at `/console/` (issues 6 and 18): the live devices panel with the e-stop, approvals
 * (everything HOST-040 lists, rendered from the host's records) with the e-stop on the same view, permits,
 * endpoints with enablement and the experimental status, and the ledger with a verify button. Raises
 * `MHS.HOST.INTERNAL` when the bundle is missing and cannot be built (see `ensureConsoleBundle`).
 */
export async function registerConsole(app: FastifyInstance, _deps: ConsoleDeps = {}): Promise<void> {
  const bundle = await ensureConsoleBundle();
  const files = new Map<string, { body: string; type: string }>();
  for (const [name, type] of Object.entries(CONSOLE_FILES)) {
    const built = name === 'console.js' || name === 'uplot.css';
    const path = built ? join(dirname(bundle), name) : new URL(`./static/${name}`, import.meta.url);
    files.set(name, { body: readFileSync(path, 'utf8'), type });
  }
  const send = (name: string) => {
    const f = files.get(name)!;
    return (_req: unknown, reply: FastifyReply) =>
      reply
        .header('content-type', f.type)
        .header('cache-control', 'no-cache')
        .header('x-content-type-options', 'nosniff')
        .header('referrer-policy', 'no-referrer')
        .header('content-security-policy', CSP)
        .send(f.body);
  };
  app.get('/console', (_req, reply) => reply.redirect('/console/'));
  app.get('/console/', send('index.html'));
  app.get('/console/index.html', send('index.html'));
  app.get('/console/console.js', send('console.js'));
  app.get('/console/console.css', send('console.css'));
  app.get('/console/uplot.css', send('uplot.css'));
}
