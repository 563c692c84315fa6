// RFC 0144 §mcp: ctx.mcp against real MCP servers (child processes over stdio and Streamable HTTP) resolves to the
// server's results unaltered (deep-equal to what a bare MCP client gets from the same server), passes isError
// results through, forwards the pack's cursor and returns one page, rejects only not_found / mcp_error (the JSON-RPC
// error unaltered) / mcp_transport_error, and reports serverHealth from a server/discover probe no older than its
// ttlMs (with the DiscoverResult), unreachable for an address nothing answers.
import { ProtocolError } from '@modelcontextprotocol/client';
import type { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ErrorCode, HostError, SimulatedClock } from '../../src/core/index.js';
import { createMcpFamily, mcpSurface } from '../../src/openwop/services/mcp-family.js';
import type { McpFamily } from '../../src/openwop/services/mcp-family.js';
import type { McpServerEntry } from '../../src/openwop/services/mcp-servers-config.js';
import type { McpSurface } from '../../src/openwop/services/mcp-surface.js';
import { DOWN_URL, bareClient, echoStdioEntry, startEchoHttp } from '../helpers/mcp-echo.js';
import type { EchoHttp } from '../helpers/mcp-echo.js';

async function rejection(p: Promise<unknown>): Promise<HostError> {
  try {
    await p;
  } catch (err) {
    expect(err).toBeInstanceOf(HostError);
    return err as HostError;
  }
  throw new Error('expected a rejection');
}

let http: EchoHttp;
beforeAll(async () => {
  http = await startEchoHttp();
});
afterAll(async () => {
  await http?.stop();
});

describe.each(['stdio', 'streamable-http'] as const)('ctx.mcp over %s (RFC 0144)', (kind) => {
  let family: McpFamily;
  let mcp: McpSurface;
  let bare: Client;
  const clock = new SimulatedClock();

  beforeAll(async () => {
    const entry: McpServerEntry = kind === 'stdio' ? echoStdioEntry() : { transport: 'streamable-http', url: http.url };
    family = createMcpFamily({
      config: { servers: { conformance: entry, 'conformance-down': { transport: 'streamable-http', url: DOWN_URL } } },
      clock,
    });
    mcp = family.surface();
    bare = await bareClient(entry);
  });
  afterAll(async () => {
    await family?.close();
    await bare?.close();
  });

  it('callTool resolves to the CallToolResult unaltered (content, structuredContent, _meta)', async () => {
    const got = await mcp.callTool('conformance', 'echo', { text: 'hello' });
    const want = await bare.request({ method: 'tools/call', params: { name: 'echo', arguments: { text: 'hello' } } });
    expect(got).toEqual(want);
    expect(got.structuredContent).toEqual({ text: 'hello' });
    expect((got._meta as Record<string, unknown>)['example.test/echoed']).toBe(true);
    expect(await family.connections.revision('conformance')).toBe('2026-07-28');
  });

  it('callTool passes an isError result through instead of rejecting', async () => {
    const got = await mcp.callTool('conformance', 'fail', {});
    expect(got.isError).toBe(true);
    expect(got).toEqual(await bare.request({ method: 'tools/call', params: { name: 'fail', arguments: {} } }));
  });

  it('listTools returns one page unaltered and forwards the cursor', async () => {
    const first = await mcp.listTools('conformance');
    expect(first).toEqual(await bare.request({ method: 'tools/list', params: {} }));
    expect((first.tools as unknown[]).length).toBe(2);
    expect(first.nextCursor).toBe('page-2');
    expect((first.tools as Array<Record<string, unknown>>)[0]).toHaveProperty('outputSchema');
    expect((first.tools as Array<Record<string, unknown>>)[0]).toHaveProperty('annotations');
    const second = await mcp.listTools('conformance', 'page-2');
    expect(second).toEqual(await bare.request({ method: 'tools/list', params: { cursor: 'page-2' } }));
    expect(second.nextCursor).toBeUndefined();
    expect((second.tools as Array<{ name: string }>).map((t) => t.name)).toEqual(['boom', 'noop']);
  });

  it('readResource resolves to the ReadResourceResult unaltered', async () => {
    const got = await mcp.readResource('conformance', 'mem://greeting');
    expect(got).toEqual(await bare.request({ method: 'resources/read', params: { uri: 'mem://greeting' } }));
  });

  it('an MCP error response rejects mcp_error carrying code, message and data unaltered', async () => {
    const err = await rejection(mcp.callTool('conformance', 'boom', {}));
    expect(err.code).toBe(ErrorCode.MCP_ERROR);
    let wire: ProtocolError | undefined;
    try {
      await bare.request({ method: 'tools/call', params: { name: 'boom', arguments: {} } });
    } catch (e) {
      wire = e as ProtocolError;
    }
    expect(wire).toBeInstanceOf(ProtocolError);
    expect(err.details.error).toEqual({ code: wire!.code, message: wire!.message, data: wire!.data });
    const missing = await rejection(mcp.readResource('conformance', 'mem://nope'));
    expect(missing.code).toBe(ErrorCode.MCP_ERROR);
    expect((missing.details.error as { code: number }).code).toBe(-32602);
  });

  it('an unknown serverId rejects not_found on every method', async () => {
    for (const p of [
      mcp.callTool('nope', 'echo', {}),
      mcp.listTools('nope'),
      mcp.readResource('nope', 'mem://greeting'),
      mcp.serverHealth('nope'),
    ])
      expect((await rejection(p)).code).toBe(ErrorCode.NOT_FOUND);
  });

  it('serverHealth is reachable with the DiscoverResult of a server/discover probe', async () => {
    const h = await mcp.serverHealth('conformance');
    expect(h.status).toBe('reachable');
    expect(h.discover).toEqual(await bare.discover());
    expect(h).not.toHaveProperty('session');
  });

  it('conformance-down: serverHealth unreachable, calls reject mcp_transport_error', async () => {
    const h = await mcp.serverHealth('conformance-down');
    expect(h.status).toBe('unreachable');
    expect(h.discover).toBeUndefined();
    expect((await rejection(mcp.callTool('conformance-down', 'echo', { text: 'x' }))).code).toBe(
      ErrorCode.MCP_TRANSPORT,
    );
  });
});

describe('serverHealth ttl (RFC 0144: a probe no older than its ttlMs)', () => {
  it('reuses a verdict within the DiscoverResult ttlMs and probes again after it', async () => {
    const server = await startEchoHttp(['--discover-ttl', '5000']);
    const clock = new SimulatedClock();
    const family = createMcpFamily({
      config: { servers: { s: { transport: 'streamable-http', url: server.url } } },
      clock,
    });
    try {
      const first = await family.surface().serverHealth('s');
      expect(first.status).toBe('reachable');
      expect(first.discover?.ttlMs).toBe(5000);
      // The server goes away; inside the ttl the recorded probe still answers (no new probe is sent).
      await server.stop();
      clock.advance(4999);
      expect(await family.surface().serverHealth('s')).toEqual(first);
      clock.advance(1);
      const after = await family.surface().serverHealth('s');
      expect(after.status).toBe('unreachable');
      expect(after.checkedAt).not.toBe(first.checkedAt);
    } finally {
      await family.close();
      await server.stop();
    }
  });

  it('an unreachable verdict without ttl is probed again on the next call', async () => {
    const clock = new SimulatedClock();
    const family = createMcpFamily({
      config: { servers: { down: { transport: 'streamable-http', url: DOWN_URL } } },
      clock,
    });
    try {
      const a = await family.surface().serverHealth('down');
      clock.advance(1);
      const b = await family.surface().serverHealth('down');
      expect([a.status, b.status]).toEqual(['unreachable', 'unreachable']);
      expect(b.checkedAt).not.toBe(a.checkedAt);
    } finally {
      await family.close();
    }
  });
});

describe('stdio lifecycle and revisions', () => {
  it('a stdio server that dies is a transport failure, the next call starts it again, close() ends it', async () => {
    const family = createMcpFamily({ config: { servers: { s: echoStdioEntry() } }, clock: new SimulatedClock() });
    let pid = 0;
    try {
      const mcp = family.surface();
      expect((await mcp.callTool('s', 'echo', { text: 'one' })).structuredContent).toEqual({ text: 'one' });
      expect((await rejection(mcp.callTool('s', 'crash', {}))).code).toBe(ErrorCode.MCP_TRANSPORT);
      expect((await mcp.callTool('s', 'echo', { text: 'two' })).structuredContent).toEqual({ text: 'two' });
      pid = ((await mcp.callTool('s', 'pid', {})).structuredContent as { pid: number }).pid;
      // Reused: a second call reaches the same child.
      expect(((await mcp.callTool('s', 'pid', {})).structuredContent as { pid: number }).pid).toBe(pid);
    } finally {
      await family.close();
    }
    expect(() => process.kill(pid, 0)).toThrow();
    expect((await rejection(family.surface().callTool('s', 'echo', { text: 'x' }))).code).toBe(ErrorCode.MCP_TRANSPORT);
  });

  it('a cancelled call rejects but keeps the stdio connection for the next call', async () => {
    const family = createMcpFamily({ config: { servers: { s: echoStdioEntry() } }, clock: new SimulatedClock() });
    try {
      expect((await family.surface().callTool('s', 'noop', {})).content).toEqual([]);
      const ac = new AbortController();
      const scoped = mcpSurface(family.connections, family.health, { signal: ac.signal });
      const pending = scoped.callTool('s', 'hang', {});
      ac.abort();
      expect((await rejection(pending)).code).toBe(ErrorCode.MCP_TRANSPORT);
      expect(await family.connections.revision('s')).toBe('2026-07-28');
      expect((await family.surface().callTool('s', 'echo', { text: 'still' })).structuredContent).toEqual({
        text: 'still',
      });
    } finally {
      await family.close();
    }
  });

  it('a stdio command that cannot start is unreachable and calls reject mcp_transport_error', async () => {
    const family = createMcpFamily({
      config: { servers: { gone: { transport: 'stdio', command: '/nonexistent/mcp-server' } } },
      clock: new SimulatedClock(),
    });
    try {
      expect((await family.surface().serverHealth('gone')).status).toBe('unreachable');
      expect((await rejection(family.surface().callTool('gone', 'echo', {}))).code).toBe(ErrorCode.MCP_TRANSPORT);
    } finally {
      await family.close();
    }
  });

  it('a 2025-11-25-only server is used at that revision; serverHealth is reachable without a DiscoverResult', async () => {
    const entry = echoStdioEntry(['--legacy']);
    const family = createMcpFamily({ config: { servers: { old: entry } }, clock: new SimulatedClock() });
    const bare = await bareClient(entry);
    try {
      const mcp = family.surface();
      const got = await mcp.callTool('old', 'echo', { text: 'legacy' });
      expect(got).toEqual(
        await bare.request({ method: 'tools/call', params: { name: 'echo', arguments: { text: 'legacy' } } }),
      );
      expect(await family.connections.revision('old')).toBe('2025-11-25');
      const h = await mcp.serverHealth('old');
      expect(h.status).toBe('reachable');
      expect(h.discover).toBeUndefined();
    } finally {
      await family.close();
      await bare.close();
    }
  });

  it('protocol "modern" against a 2025-11-25-only server: incompatible, calls reject mcp_transport_error', async () => {
    const family = createMcpFamily({
      config: { servers: { old: echoStdioEntry(['--legacy']) }, protocol: 'modern' },
      clock: new SimulatedClock(),
    });
    try {
      const h = await family.surface().serverHealth('old');
      expect(h.status).toBe('incompatible');
      expect(h.discover).toBeUndefined();
      expect((await rejection(family.surface().listTools('old'))).code).toBe(ErrorCode.MCP_TRANSPORT);
    } finally {
      await family.close();
    }
  });
});
