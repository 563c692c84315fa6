// Issue 16 (HOST-063): one endpoint cannot exhaust the host's memory. A 400 MiB reply and an endless reply
// are refused at the 4 MiB frame limit while they are read, on stdio and on Streamable HTTP (JSON and SSE),
// as MHS.TRANSPORT.FRAME_TOO_LARGE for that call (post-send: the outcome is unknown, HOST-091), and the
// peak RSS of the reading host process stays under 300 MB. The host side runs in a child process
// (test/mhs/helpers/frame-reader-child.ts) that reports its own peak RSS.
import { spawn } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ErrorCode } from '../../src/core/index.js';
import type { ConnectorRow } from '../../src/mhs/connector-row.js';
import { REPO_ROOT, entryArgs } from '../helpers/cli-entry.js';
import { startFloodHttp } from './helpers/flood-endpoint.js';

const MiB = 1024 * 1024;
const RSS_BOUND = 300 * 1000 * 1000;

interface Report {
  flood: { code: string; details: Record<string, unknown> };
  after: string;
  maxRssBytes: number;
}

/** Runs the host side in a child; its heap is capped so a regression fails here instead of hurting the machine. */
function hostReads(row: ConnectorRow, args: Record<string, unknown>): Promise<Report> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      [
        '--max-old-space-size=512',
        ...entryArgs('test/mhs/helpers/frame-reader-child.ts'),
        JSON.stringify(row),
        JSON.stringify(args),
      ],
      { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      const line = out.trim().split('\n').at(-1) ?? '';
      try {
        resolve(JSON.parse(line) as Report);
      } catch {
        reject(new Error(`host child exited ${code} without a report: ${err.slice(-2000)}`));
      }
    });
  });
}

const base = { endpoint_id: null, enabled: true, source: { kind: 'env', ref: 'test' } } as const;
const stdioRow: ConnectorRow = {
  ...base,
  connector_id: 'mhs-flood-stdio',
  transport: 'stdio',
  command: [process.execPath, ...entryArgs('test/mhs/helpers/flood-endpoint.ts'), '--stdio'],
  auth: { scheme: 'local' },
};
const httpRow = (url: string, id: string): ConnectorRow => ({
  ...base,
  connector_id: id,
  transport: 'http',
  url,
  auth: { scheme: 'none' },
});

describe('frame limit enforced while reading (issue 16, HOST-063)', { timeout: 240_000 }, () => {
  let json: Awaited<ReturnType<typeof startFloodHttp>>;
  let sse: Awaited<ReturnType<typeof startFloodHttp>>;
  beforeAll(async () => {
    [json, sse] = await Promise.all([startFloodHttp('json'), startFloodHttp('sse')]);
  });
  afterAll(async () => {
    await Promise.all([json?.close(), sse?.close()]);
  });

  const cases: Array<[string, () => ConnectorRow]> = [
    ['stdio', () => stdioRow],
    ['http json', () => httpRow(json.url, 'mhs-flood-json')],
    ['http sse', () => httpRow(sse.url, 'mhs-flood-sse')],
  ];
  for (const [name, row] of cases) {
    it(`HOST-063 ${name}: a 400 MiB reply is refused at the limit and RSS stays under 300 MB`, async () => {
      const r = await hostReads(row(), { bytes: 400 * MiB });
      expect(r.flood.code).toBe(ErrorCode.TRANSPORT_FRAME_TOO_LARGE);
      expect(r.flood.details['limit']).toBe(4 * MiB);
      expect(r.maxRssBytes).toBeLessThan(RSS_BOUND);
      // HTTP: the connection keeps serving; stdio: the pipe was closed at the limit (reconnect takes over).
      expect(r.after).toBe(name === 'stdio' ? ErrorCode.TRANSPORT_DISCONNECTED : 'ok');
    });

    it(`HOST-063 ${name}: an endless reply is cut at the limit and RSS stays under 300 MB`, async () => {
      const r = await hostReads(row(), { endless: true });
      expect(r.flood.code).toBe(ErrorCode.TRANSPORT_FRAME_TOO_LARGE);
      expect(r.maxRssBytes).toBeLessThan(RSS_BOUND);
      expect(r.after).toBe(name === 'stdio' ? ErrorCode.TRANSPORT_DISCONNECTED : 'ok');
    });
  }
});
