// Guarantees (v2 interop.md §The facets, §The floor, §The audit event; RFC 0242 §A): the revision ladder ctx.mcp
// negotiates within is the MCP SDK's (its `initialize` list plus the modern revision), cut at the floor, per protocol
// policy; against real MCP servers over Streamable HTTP, a revision between the floor and the preferred one is used and
// recorded as a downgrade (`accepted`, `version` ≠ `requested`), and a server below the floor is `incompatible` to
// `serverHealth` with `interop_version_unsupported`, each negotiation handed to the recorder once.
import {
  DEFAULT_NEGOTIATED_PROTOCOL_VERSION,
  LATEST_PROTOCOL_VERSION,
  SUPPORTED_PROTOCOL_VERSIONS,
} from '@modelcontextprotocol/client';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ErrorCode, HostError, SimulatedClock } from '../../src/core/index.js';
import { createMcpFamily } from '../../src/openwop/services/mcp-family.js';
import type { NegotiationDecided } from '../../src/openwop/services/mcp-negotiation.js';
import { MCP_MODERN_REVISION, revisionLadder } from '../../src/openwop/services/mcp-revisions.js';
import { startEchoHttp } from '../helpers/mcp-echo.js';
import type { EchoHttp } from '../helpers/mcp-echo.js';

describe('the revision ladder', () => {
  it('is the SDK initialize list plus the modern revision, newest first, none below the floor', () => {
    const floor = DEFAULT_NEGOTIATED_PROTOCOL_VERSION;
    const legacy = SUPPORTED_PROTOCOL_VERSIONS.filter((r) => r >= floor);
    expect(revisionLadder()).toEqual({
      revisions: [MCP_MODERN_REVISION, ...legacy],
      preferredVersion: MCP_MODERN_REVISION,
      minimumRevision: floor,
    });
    expect(revisionLadder('modern', '2025-11-25').revisions).toEqual([MCP_MODERN_REVISION]);
    expect(revisionLadder('legacy', '2025-06-18')).toEqual({
      revisions: SUPPORTED_PROTOCOL_VERSIONS.filter((r) => r >= '2025-06-18'),
      preferredVersion: LATEST_PROTOCOL_VERSION,
      minimumRevision: '2025-06-18',
    });
    expect(revisionLadder('auto', '2024-01-01').revisions).toEqual([
      MCP_MODERN_REVISION,
      ...SUPPORTED_PROTOCOL_VERSIONS,
    ]);
  });
});

describe('negotiation outcomes against real servers', () => {
  const midLog = join(mkdtempSync(join(tmpdir(), 'mhs-mcp-rev-')), 'mid.log');
  let mid: EchoHttp;
  let old: EchoHttp;
  beforeAll(async () => {
    mid = await startEchoHttp(['--only-revision', '2025-06-18', '--log', midLog]);
    old = await startEchoHttp(['--only-revision', '2024-11-05']);
  });
  afterAll(async () => {
    await mid?.stop();
    await old?.stop();
  });

  function family(recorded: NegotiationDecided[], refuseRecord: () => boolean = () => false) {
    return createMcpFamily({
      config: {
        servers: {
          mid: { transport: 'streamable-http', url: mid.url },
          old: { transport: 'streamable-http', url: old.url },
        },
      },
      clock: new SimulatedClock(Date.parse('2026-12-01T00:00:00Z')),
      onNegotiated: async (d) => {
        recorded.push(d);
        if (refuseRecord()) throw new Error('the run ended');
      },
    });
  }

  it('a revision between the floor and the preferred one is used and recorded as a downgrade', async () => {
    const recorded: NegotiationDecided[] = [];
    const f = family(recorded);
    try {
      const result = await f.surface().callTool('mid', 'echo', { text: 'd' });
      expect(result.structuredContent).toEqual({ text: 'd' });
      expect(await f.connections.revision('mid')).toBe('2025-06-18');
      expect(recorded).toEqual([
        {
          protocol: 'mcp',
          outcome: 'accepted',
          requested: '2025-11-25',
          version: '2025-06-18',
          floor: DEFAULT_NEGOTIATED_PROTOCOL_VERSION,
          peerDigest: expect.stringMatching(/^[0-9a-f]{64}$/) as string,
          at: '2026-12-01T00:00:00.000Z',
        },
      ]);
    } finally {
      await f.close();
    }
  });

  it('a server below the floor is incompatible to serverHealth and rejects calls, each attempt recorded refused', async () => {
    const recorded: NegotiationDecided[] = [];
    const f = family(recorded);
    try {
      const health = await f.surface().serverHealth('old');
      expect(health).toMatchObject({ status: 'incompatible', error: { code: ErrorCode.INTEROP_VERSION_UNSUPPORTED } });
      const err = await f
        .surface()
        .callTool('old', 'echo', { text: 'x' })
        .catch((e: unknown) => e);
      expect(err).toBeInstanceOf(HostError);
      expect((err as HostError).code).toBe(ErrorCode.INTEROP_VERSION_UNSUPPORTED);
      expect((err as HostError).details).toMatchObject({
        serverId: 'old',
        offered: '2024-11-05',
        minimumRevision: DEFAULT_NEGOTIATED_PROTOCOL_VERSION,
      });
      expect(recorded.map((d) => [d.outcome, d.reason, d.version])).toEqual([
        ['refused', 'below-floor', undefined],
        ['refused', 'below-floor', undefined],
      ]);
    } finally {
      await f.close();
    }
  });

  it('a decision that cannot be recorded fails the connect (nothing is called); the next call negotiates again', async () => {
    const recorded: NegotiationDecided[] = [];
    let refuse = true;
    const f = family(recorded, () => refuse);
    writeFileSync(midLog, '');
    try {
      const err = await f
        .surface()
        .callTool('mid', 'echo', { text: 'x' })
        .catch((e: unknown) => e);
      expect((err as HostError).code).toBe(ErrorCode.MCP_TRANSPORT);
      expect(await f.connections.revision('mid')).toBeUndefined();
      expect(readFileSync(midLog, 'utf8')).not.toContain('tools/call');
      refuse = false;
      expect((await f.surface().callTool('mid', 'echo', { text: 'y' })).structuredContent).toEqual({ text: 'y' });
      expect(recorded.map((d) => d.outcome)).toEqual(['accepted', 'accepted']);
    } finally {
      await f.close();
    }
  });
});
