// The v1 `ctx.mcp` methods packs ported from major 1 call (host-capabilities.md §host.mcp; RFC 0144 v2.0 §A.7 "a
// host MAY keep them ... with v1 semantics"), over real HTTP against `mhs-host serve --mcp-servers` and a real MCP
// server (Streamable HTTP), through the `conformance-mcp-client` fixture: `invokeTool` answers `{result, isError?}`
// (the tool's structuredContent, else its content), a tool-level failure resolves with `isError: true`, and the v1
// failure codes name what went wrong: `mcp_tool_not_found` (the server refused the call and does not list the tool),
// `mcp_tool_invocation_failed` (a JSON-RPC error from a listed tool), `mcp_server_not_found`; one idempotency key is
// one call; `serverStatus` reports `connected` with the negotiated revision and the server's own `serverInfo`, and
// `disconnected` for a configured server that cannot be reached.
/* eslint-disable @typescript-eslint/no-explicit-any -- JSON bodies are read loosely in assertions */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DOWN_URL, startEchoHttp } from '../helpers/mcp-echo.js';
import type { EchoHttp } from '../helpers/mcp-echo.js';
import { client, makeToken, serve, tempDb } from '../server/serve-helpers.js';
import type { Served } from '../server/serve-helpers.js';

describe('v1 ctx.mcp.invokeTool and serverStatus', () => {
  let echo: EchoHttp;
  let srv: Served;
  let api: ReturnType<typeof client>;

  beforeAll(async () => {
    echo = await startEchoHttp();
    const cfg = join(mkdtempSync(join(tmpdir(), 'mhs-mcp-v1-')), 'servers.json');
    writeFileSync(
      cfg,
      JSON.stringify({
        servers: {
          conformance: { transport: 'streamable-http', url: echo.url },
          down: { transport: 'streamable-http', url: DOWN_URL },
        },
      }),
    );
    const db = tempDb();
    const token = await makeToken(db);
    srv = await serve(db, ['--no-mhs', '--no-workflows', '--mcp-servers', cfg]);
    api = client(srv.url, token);
  });
  afterAll(async () => {
    await srv?.stop();
    await echo?.stop();
  });

  /** Runs the fixture with `inputs` to its end: its snapshot and the node's output (when it completed). */
  async function run(inputs: Record<string, unknown>): Promise<{ snap: any; result: any }> {
    const created = await api.post('/v1/runs', { workflowId: 'conformance-mcp-client', inputs });
    expect(created.status).toBeLessThan(300);
    const snap = await api.until(created.body.runId, (s) => ['completed', 'failed'].includes(s.status));
    const done = (await api.events(created.body.runId)).find((e) => e.type === 'node.completed');
    return { snap, result: (done?.payload.outputs as { result?: unknown } | undefined)?.result };
  }

  const callsOf = async (tool: string): Promise<number> => {
    const { result } = await run({ method: 'callTool', serverId: 'conformance', name: 'calls' });
    return (result.structuredContent.calls[tool] as number | undefined) ?? 0;
  };

  it('invokeTool answers {result} with the structured content; a tool failure resolves with isError', async () => {
    const before = await callsOf('echo');
    const ok = await run({ method: 'invokeTool', serverId: 'conformance', name: 'echo', arguments: { text: 'v1' } });
    expect(ok.snap.status).toBe('completed');
    expect(ok.result).toEqual({ result: { text: 'v1' } });
    expect(await callsOf('echo')).toBe(before + 1);
    const failed = await run({ method: 'invokeTool', serverId: 'conformance', name: 'fail' });
    expect(failed.snap.status).toBe('completed');
    expect(failed.result).toEqual({ result: [{ type: 'text', text: 'the tool failed' }], isError: true });
  });

  it('names the failure with the v1 codes', async () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ method: 'invokeTool', serverId: 'conformance', name: 'no-such-tool' }, 'mcp_tool_not_found'],
      [{ method: 'invokeTool', serverId: 'conformance', name: 'boom' }, 'mcp_tool_invocation_failed'],
      [{ method: 'invokeTool', serverId: 'nowhere', name: 'echo' }, 'mcp_server_not_found'],
      [{ method: 'invokeTool', serverId: 'down', name: 'echo' }, 'mcp_server_disconnected'],
      [{ method: 'serverStatus', serverId: 'nowhere' }, 'mcp_server_not_found'],
    ];
    for (const [inputs, code] of cases) {
      const { snap } = await run(inputs);
      expect([snap.status, snap.error?.code], JSON.stringify(inputs)).toEqual(['failed', code]);
    }
    const boom = await run({ method: 'invokeTool', serverId: 'conformance', name: 'boom' });
    expect(boom.snap.error.details.error).toMatchObject({ code: -32050, message: 'boom: the tool exploded' });
  });

  it('serverStatus: connected with the negotiated revision and serverInfo; an unreachable server is disconnected', async () => {
    const up = await run({ method: 'serverStatus', serverId: 'conformance' });
    expect(up.snap.status).toBe('completed');
    expect(up.result).toMatchObject({
      serverId: 'conformance',
      status: 'connected',
      serverInfo: { name: 'mcp-echo-server', version: '1.0.0' },
    });
    expect(up.result.protocolVersion).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    const down = await run({ method: 'serverStatus', serverId: 'down' });
    expect(down.result).toEqual({ serverId: 'down', status: 'disconnected' });
  });
});
