/**
 * The host side of the frame-limit tests (issue 16) as its own process, so its memory is measured alone:
 * connects to the connector row given as JSON in argv[2], calls `flood` with the arguments in argv[3], then
 * `mhs__devices`, and prints one JSON line: the flood call's code and details, whether the connection still
 * answers, and the process's peak RSS (`process.resourceUsage().maxRSS`, bytes).
 */
import { HostError } from '../../../src/core/index.js';
import { connect } from '../../../src/mhs/connector.js';
import type { ConnectorRow } from '../../../src/mhs/connector-row.js';
import { REPO_ROOT } from '../../helpers/cli-entry.js';

const row = JSON.parse(process.argv[2] ?? '{}') as ConnectorRow;
const args = JSON.parse(process.argv[3] ?? '{}') as Record<string, unknown>;
const codeOf = async (p: Promise<unknown>) =>
  p.then(
    () => ({ code: 'ok', details: {} }),
    (e: unknown) => (e instanceof HostError ? { code: e.code, details: e.details } : { code: String(e), details: {} }),
  );
const conn = await connect(row, { cwd: REPO_ROOT, timeoutMs: 90_000, callTimeoutMs: 120_000 });
const flood = await codeOf(conn.callTool('flood', args));
const after = await codeOf(conn.callTool('mhs__devices', {}, { timeoutMs: 30_000 }));
const maxRssBytes = process.resourceUsage().maxRSS * 1024;
process.stdout.write(`${JSON.stringify({ flood, after: after.code, maxRssBytes })}\n`);
await conn.close().catch(() => undefined);
process.exit(0);
