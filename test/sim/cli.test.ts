// Guarantees (issue 2 acceptance): `mhs-host sim conveyor --http <port>` serves, and
// GET /.well-known/mhs.json returns a descriptor whose manifest_digest equals H(manifest without
// manifest_digest); `--help` lists every flag; a legacy (2025-11-25) client completes initialize; an
// unknown family exits non-zero with MHS.HOST.CONFIG_INVALID; a foreign Host header gets HTTP 403.
import { spawn, spawnSync } from 'node:child_process';
import { request } from 'node:http';
import { createServer } from 'node:net';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { H } from '../../src/core/index.js';
import { cliEntry } from '../helpers/cli-entry.js';
import { REPO_ROOT, callMhs, connectMcpClient } from '../helpers/sim.js';

// Child processes start slowly on a loaded machine (2 cores shared with other suites).
vi.setConfig({ hookTimeout: 120_000, testTimeout: 120_000 });

const CLI = cliEntry().args;

async function freePort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', () => r()));
  const port = (srv.address() as { port: number }).port;
  await new Promise<void>((r) => srv.close(() => r()));
  return port;
}

describe('mhs-host sim CLI', () => {
  const children: Array<ReturnType<typeof spawn>> = [];
  afterAll(() => {
    for (const c of children) c.kill('SIGTERM');
  });

  it('serves conveyor on --http PORT; the descriptor digest is H(manifest without manifest_digest)', async () => {
    const port = await freePort();
    const child = spawn(process.execPath, [...CLI, 'sim', 'conveyor', '--http', String(port)], {
      cwd: REPO_ROOT,
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    children.push(child);
    let err = '';
    await new Promise<void>((resolve, reject) => {
      child.stderr.setEncoding('utf8');
      child.stderr.on('data', (d: string) => {
        err += d;
        if (err.includes('listening ')) resolve();
      });
      child.once('exit', (code) => reject(new Error(`exited ${code}: ${err}`)));
    });
    expect(err).toContain(`listening http://127.0.0.1:${port}`);
    const desc = (await (await fetch(`http://127.0.0.1:${port}/.well-known/mhs.json`)).json()) as Record<
      string,
      unknown
    >;
    expect(desc['endpoint_id']).toBe(`mhs://localhost:${port}`);
    const c = await connectMcpClient({ mcpUrl: `http://127.0.0.1:${port}/mcp` }, 'legacy');
    expect(c.getProtocolEra()).toBe('legacy');
    expect(c.getNegotiatedProtocolVersion()).toBe('2025-11-25');
    const manifest = (await callMhs(c, 'mhs__inspect')).body;
    const { manifest_digest, ...rest } = manifest;
    expect(desc['manifest_digest']).toBe(H(rest));
    expect(desc['manifest_digest']).toBe(manifest_digest);
    await c.close();
    // DNS-rebinding protection: a foreign Host header is refused before MCP sees the request.
    const status = await new Promise<number>((resolve, reject) => {
      const req = request(
        {
          host: '127.0.0.1',
          port,
          path: '/mcp',
          method: 'POST',
          headers: { host: 'evil.example', 'content-type': 'application/json' },
        },
        (res) => resolve(res.statusCode ?? 0),
      );
      req.once('error', reject);
      req.end('{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}');
    });
    expect(status).toBe(403);
  });

  it('--help lists every flag', () => {
    const r = spawnSync(process.execPath, [...CLI, 'sim', '--help'], { cwd: REPO_ROOT, encoding: 'utf8' });
    for (const flag of [
      '--stdio',
      '--http',
      '--operator-tools',
      '--config',
      '--seed',
      '--endpoint-id',
      '--device',
      '--replay',
      '--time-scale',
      '--interlock',
      '--latency-ms',
      '--drop-reply',
      '--stall',
      '--close-after',
      '--oversize-reply',
      '--corrupt-evidence',
    ]) {
      expect(r.stdout).toContain(flag);
    }
  });

  it('an unknown family exits 1 with MHS.HOST.CONFIG_INVALID', () => {
    const r = spawnSync(process.execPath, [...CLI, 'sim', 'teleporter', '--http', '0'], {
      cwd: REPO_ROOT,
      encoding: 'utf8',
    });
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('MHS.HOST.CONFIG_INVALID');
  });
});
