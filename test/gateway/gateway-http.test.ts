/* eslint-disable @typescript-eslint/no-explicit-any -- tool results and approvals are read loosely in assertions */
// Guarantees (issue 14; HOST-035, 040…043, 062, 063, 066…068): `serve` serves the gateway at `/mcp` over
// Streamable HTTP on both revisions, to an `agent` token only: no token, a client or operator token and a revoked
// token are refused before any tool is listed. The principal of every call is the token's identity. An R2 call
// waits for the operator: the approval is listed by `mhs-host approvals list` at once, MCP progress notifications
// name it while the call waits, and once approved the same tool call returns the completed receipt; a denial returns
// the denial. A call whose wait runs out answers pending with the approval id and the input digest; the approval
// stays open, and the same call made again after the approval consumes it. Changed input after the approval voids
// it (HOST-041). An oversized body is refused with 413 and the server keeps serving.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { ErrorCode, H } from '../../src/core/index.js';
import { capabilityToolName } from '../../src/mhs/tool-names.js';
import { cli, ledgerEntries, startMhsHost } from '../helpers/mhs-host.js';
import type { MhsHost } from '../helpers/mhs-host.js';
import type { McpRevision } from '../helpers/sim.js';
import { serve } from '../server/serve-helpers.js';
import type { Served } from '../server/serve-helpers.js';
import { call, gatewayHttp } from './gateway-helpers.js';

const SETPOINT = capabilityToolName('thermostat', 'cap.thermal.setpoint.v1');
const ASPIRATE = capabilityToolName('liquid-handler', 'cap.liquid.aspirate.v1');
/** The main server waits for operators as long as a test needs; the second one gives up fast. */
const WAIT_MS = 60_000;
const SHORT_WAIT_MS = 1_500;

let host: MhsHost<'thermo' | 'lh'>;
let srv: Served;
let quick: Served;

beforeAll(async () => {
  host = await startMhsHost({
    prefix: 'gwh',
    sims: { thermo: ['thermostat', ['--time-scale', '50']], lh: ['liquid-handler', ['--operator-tools']] },
    tokens: { bot: 'agent', gone: 'agent', cl: 'client', op: 'operator' },
    serve: false,
  });
  expect((await cli(['token', 'revoke', 'gone', '--db', host.dbPath])).code).toBe(0);
  const env = { MHS_GATEWAY_POLL_MS: '100' };
  [srv, quick] = await Promise.all([
    serve(host.dbPath, ['--no-workflows', '--mcp-approval-wait', String(WAIT_MS)], env),
    serve(host.dbPath, ['--no-workflows', '--mcp-approval-wait', String(SHORT_WAIT_MS)], env),
  ]);
}, 120_000);

afterAll(async () => {
  await Promise.all([srv?.stop(), quick?.stop()]);
  await host?.stop();
});

/** Pending approvals as `mhs-host approvals list --json` shows them. */
async function pendingApprovals(): Promise<Array<Record<string, any>>> {
  const r = await cli(['approvals', 'list', '--json', '--db', host.dbPath]);
  expect(r.code).toBe(0);
  return (JSON.parse(r.stdout) as { approvals: Array<Record<string, any>> }).approvals;
}

/** The pending approval bound to `digest`, once `mhs-host approvals list` shows it (one CLI run at a time). */
async function pendingFor(digest: string): Promise<Record<string, any>> {
  for (let i = 0; i < 120; i++) {
    const hit = (await pendingApprovals()).find((a) => a.input_digest === digest);
    if (hit) return hit;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`no pending approval for ${digest}`);
}

async function decide(decision: 'approve' | 'deny', id: string): Promise<void> {
  const r = await cli(['approvals', decision, id, '--operator', 'alice', '--db', host.dbPath]);
  expect(r.code, r.stderr).toBe(0);
}

describe('authentication at /mcp', () => {
  test.each([
    ['no token', undefined, 401],
    ['a revoked agent token', 'gone', 401],
    ['a client token', 'cl', 403],
    ['an operator token', 'op', 403],
  ])('HOST-035: %s is refused before any tool is listed', async (_what, name, status) => {
    const token = name ? host.tokens[name] : undefined;
    // The official client gives up on both revisions (its message differs by revision).
    await expect(gatewayHttp(srv.url, token, '2026-07-28')).rejects.toThrow();
    await expect(gatewayHttp(srv.url, token, 'legacy')).rejects.toThrow(/token/);
    const res = await fetch(`${srv.url}/mcp`, {
      method: 'POST',
      headers: {
        ...(token ? { authorization: `Bearer ${token}` } : {}),
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }),
    });
    expect(res.status).toBe(status);
    if (status === 401) expect(res.headers.get('www-authenticate')).toMatch(/^Bearer/);
    const body = (await res.json()) as { result?: unknown; error: { data: { mhs_code: string } } };
    expect(body.result).toBeUndefined();
    expect(body.error.data.mhs_code).toBe(status === 401 ? ErrorCode.UNAUTHORIZED : ErrorCode.FORBIDDEN);
  });

  test('an agent token cannot use the run or operator API', async () => {
    const auth = { authorization: `Bearer ${host.tokens.bot}` };
    expect((await fetch(`${srv.url}/v1/runs`, { headers: auth })).status).toBe(403);
    expect((await fetch(`${srv.url}/v1/operator/approvals`, { headers: auth })).status).toBe(403);
  });
});

describe.each<McpRevision>(['legacy', '2026-07-28'])('the gateway over HTTP (%s)', (revision) => {
  test('an R1 call is governed under the token principal', async () => {
    const client = await gatewayHttp(srv.url, host.tokens.bot, revision);
    try {
      const names = (await client.listTools()).tools.map((t) => t.name);
      expect(names).toEqual(expect.arrayContaining([SETPOINT, ASPIRATE, 'mhs__estop', 'mhs__inspect']));
      const r = await call(client, SETPOINT, { setpoint_c: revision === 'legacy' ? 33 : 34 });
      expect(r.isError).toBe(false);
      expect(r.body.receipt.status).toBe('completed');
      const entries = await ledgerEntries(host.dbPath);
      const toolCall = entries.find((e) => e.kind === 'tool_call' && e.command_id === r.body.command_id)!;
      expect(toolCall.principal).toMatchObject({ kind: 'agent', name: 'bot' });
      expect(String((toolCall.principal as { id: string }).id)).toMatch(/^tok_/);
      const intent = entries.find((e) => e.kind === 'command.intent' && e.command_id === r.body.command_id)!;
      expect(intent.principal).toMatchObject({ kind: 'agent', name: 'bot' });
    } finally {
      await client.close();
    }
  });

  test('HOST-043, HOST-032: an R2 call waits for the operator with progress, then returns the completed receipt', async () => {
    const client = await gatewayHttp(srv.url, host.tokens.bot, revision);
    try {
      const volume = revision === 'legacy' ? 11 : 12;
      const progress: string[] = [];
      const pending = call(
        client,
        ASPIRATE,
        { volume_ul: volume },
        {
          onprogress: (p) => void progress.push(String(p.message)),
          timeout: 90_000,
        },
      );
      // The operator sees it at once, bound to the digest of what will be sent (HOST-041).
      const approval = await pendingFor(H({ volume_ul: volume }));
      await expect.poll(() => progress.some((m) => m.includes(approval.approval_id)), { timeout: 10_000 }).toBe(true);
      await decide('approve', approval.approval_id);
      const r = await pending;
      expect(r.isError).toBe(false);
      expect(r.body.receipt.status).toBe('completed');
      const intent = (await ledgerEntries(host.dbPath)).find(
        (e) => e.kind === 'command.intent' && e.command_id === r.body.command_id,
      )!;
      expect(intent.approval_id).toBe(approval.approval_id);
      expect(intent.permit_id).toMatch(/^prm_/);
    } finally {
      await client.close();
    }
  });

  test('HOST-045: a denied call returns the denial with the approval named', async () => {
    const client = await gatewayHttp(srv.url, host.tokens.bot, revision);
    try {
      const volume = revision === 'legacy' ? 13 : 14;
      const pending = call(client, ASPIRATE, { volume_ul: volume }, { timeout: 90_000 });
      const approval = await pendingFor(H({ volume_ul: volume }));
      await decide('deny', approval.approval_id);
      const r = await pending;
      expect(r.isError).toBe(true);
      expect(r.body.error.mhs_code).toBe(ErrorCode.HOST_APPROVAL_DENIED);
      expect(r.body.approval).toMatchObject({ status: 'denied', approval_id: approval.approval_id });
      const intents = (await ledgerEntries(host.dbPath)).filter(
        (e) => e.kind === 'command.intent' && e.approval_id === approval.approval_id,
      );
      expect(intents).toEqual([]);
    } finally {
      await client.close();
    }
  });
});

describe('an approval the wait outlives (a second serve on the store, --mcp-approval-wait 1500)', () => {
  test('HOST-063: answers pending, stays open, and the same call after approval consumes it', async () => {
    const client = await gatewayHttp(quick.url, host.tokens.bot, '2026-07-28');
    try {
      const input = { volume_ul: 21 };
      const first = await call(client, ASPIRATE, input, { timeout: 90_000 });
      expect(first.isError).toBe(true);
      expect(first.body.error.mhs_code).toBe(ErrorCode.HOST_APPROVAL_REQUIRED);
      expect(first.body.approval).toMatchObject({ status: 'pending', input_digest: H(input) });
      const id = String(first.body.approval.approval_id);
      expect(first.text).toContain(`mhs-host approvals approve ${id}`);
      expect((await pendingApprovals()).map((a) => a.approval_id)).toContain(id);
      await decide('approve', id);
      const again = await call(client, ASPIRATE, input, { timeout: 90_000 });
      expect(again.isError).toBe(false);
      expect(again.body.receipt.status).toBe('completed');
      const intent = (await ledgerEntries(host.dbPath)).find(
        (e) => e.kind === 'command.intent' && e.command_id === again.body.command_id,
      )!;
      expect(intent.approval_id).toBe(id);
    } finally {
      await client.close();
    }
  });

  test('HOST-041: changed input after the approval voids it', async () => {
    const client = await gatewayHttp(quick.url, host.tokens.bot, '2026-07-28');
    try {
      const first = await call(client, ASPIRATE, { volume_ul: 22 }, { timeout: 90_000 });
      const id = String(first.body.approval.approval_id);
      await decide('approve', id);
      const changed = await call(client, ASPIRATE, { volume_ul: 23 }, { timeout: 90_000 });
      expect(changed.isError).toBe(true);
      expect(changed.body.approval.status).toBe('pending');
      expect(changed.body.approval.approval_id).not.toBe(id);
      const voided = (await ledgerEntries(host.dbPath)).find(
        (e) => e.kind === 'approval' && e.event === 'voided' && e.approval_id === id,
      );
      expect(voided).toMatchObject({ reason: 'input_changed', new_input_digest: H({ volume_ul: 23 }) });
      expect((await ledgerEntries(host.dbPath)).some((e) => e.kind === 'command.intent' && e.approval_id === id)).toBe(
        false,
      );
      await decide('deny', String(changed.body.approval.approval_id));
    } finally {
      await client.close();
    }
  });
});

describe('bad input over HTTP', () => {
  test('an oversized body is refused with 413 and the gateway keeps serving', async () => {
    const big = JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: SETPOINT, arguments: { setpoint_c: 30, pad: 'x'.repeat(4 * 1024 * 1024 + 16) } },
    });
    const res = await fetch(`${srv.url}/mcp`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${host.tokens.bot}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: big,
    });
    expect(res.status).toBe(413);
    const malformed = await fetch(`${srv.url}/mcp`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${host.tokens.bot}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: '{"jsonrpc": "2.0", "id": 1, "method": ',
    });
    expect(malformed.status).toBeGreaterThanOrEqual(400);
    expect(await malformed.text()).toMatch(/-32700|Parse error/i);
    const client = await gatewayHttp(srv.url, host.tokens.bot, '2026-07-28');
    expect((await client.listTools()).tools.length).toBeGreaterThan(7);
    await client.close();
  });
});
