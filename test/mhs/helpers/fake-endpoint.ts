/**
 * An in-process MHS projection for connector tests that need a manifest the reference simulators
 * never serve (invalid, unrenderable, unclaimed) or exact control over replies. Served over the
 * MCP SDK's own server (createMcpHandler, both revisions) through an injected fetch: no socket.
 */
import { McpServer, createMcpHandler, fromJsonSchema } from '@modelcontextprotocol/server';
import type { FetchLike } from '@modelcontextprotocol/client';
import { H } from '../../../src/core/index.js';
import type { Manifest } from '../../../src/mhs/wire-types.js';

/** A valid two-device manifest (one simulated, one hardware). */
export function sampleManifest(overrides: Partial<Manifest> = {}): Manifest {
  const body: Omit<Manifest, 'manifest_digest'> = {
    mhs_version: '0.9',
    endpoint_id: 'mhs://fake:1',
    manifest_version: 1,
    display_name: 'Fake endpoint',
    safety_notice: 'MHS.SAFETY.NOT_CERTIFIED',
    conformance: { level: 'CL3', trust: 'self', report_ref: null, report_digest: null },
    limits: {
      max_frame_bytes: 4194304,
      max_deadline_ms: 30000,
      receipt_retention_s: 86400,
      max_session_ttl_ms: 600000,
    },
    replay: { supported: true },
    redaction: { paths: [] },
    devices: [
      {
        device_id: 'stage',
        instance_id: 'sim-01',
        display_name: 'Linear stage',
        summary: 'A one-axis stage; positions in mm.',
        mode: 'simulated',
        risk_class: 'R1',
        determinism: { kind: 'seeded', seed: 7 },
        fidelity: { gaps: ['no backlash', 'no thermal drift'] },
        estop: { kind: 'software', physical_ref: null },
        interlocks: [{ id: 'door', state: 'closed' }],
        resources: ['axis'],
        capabilities: [
          {
            capability_id: 'cap.stage.move.v1',
            summary: 'Move the carriage to an absolute position.',
            semantic_tags: ['actuation', 'motion'],
            effect: 'actuate',
            risk_class: 'R1',
            resources: ['axis'],
            idempotent: true,
            typical_duration_ms: 200,
            max_duration_ms: 2000,
            permit: { required: false, ttl_ms: 60000, approval: 'human' },
            input_schema: {
              type: 'object',
              required: ['position_mm'],
              properties: { position_mm: { type: 'number', minimum: 0, maximum: 300, 'x-unit': 'mm' } },
            },
            output_schema: { type: 'object', properties: { position_mm: { type: 'number', 'x-unit': 'mm' } } },
          },
        ],
      },
    ],
    ...overrides,
  };
  return withDigest(body);
}

/** Sets `manifest_digest` to `H(manifest without manifest_digest)`. */
export function withDigest(m: Omit<Manifest, 'manifest_digest'> | Record<string, unknown>): Manifest {
  const { manifest_digest: _drop, ...rest } = m as Record<string, unknown>;
  return { ...rest, manifest_digest: H(rest) } as unknown as Manifest;
}

export interface FakeEndpoint {
  fetch: FetchLike;
  /** Replace the manifest served from now on. */
  setManifest(m: unknown): void;
  /** Release every stalled `mhs__stall` call. */
  release(): void;
  /** Number of MCP requests that reached the handler. */
  requests(): number;
}

const anyArgs = fromJsonSchema({ type: 'object', additionalProperties: true });

/** Starts a fake endpoint. Tools: mhs__inspect, mhs__echo, mhs__big (5 MiB reply), mhs__stall. */
export function fakeEndpoint(initial: unknown = sampleManifest(), opts: { legacyOnly?: boolean } = {}): FakeEndpoint {
  let manifest = initial;
  let waiters: Array<() => void> = [];
  let count = 0;
  const json = (v: unknown) => ({
    content: [{ type: 'text' as const, text: JSON.stringify(v) }],
    structuredContent: v as Record<string, unknown>,
  });
  const factory = () => {
    const s = new McpServer({ name: 'fake-mhs', version: '1.0.0' });
    s.registerTool('mhs__inspect', { inputSchema: anyArgs }, async () => json(manifest));
    s.registerTool('mhs__echo', { inputSchema: anyArgs }, async (args) => json({ args }));
    s.registerTool('mhs__big', { inputSchema: anyArgs }, async () => json({ pad: 'x'.repeat(5 * 1024 * 1024) }));
    s.registerTool(
      'mhs__stall',
      { inputSchema: anyArgs },
      () => new Promise((resolve) => waiters.push(() => resolve(json({ released: true })))),
    );
    return s;
  };
  const handler = createMcpHandler(factory, opts.legacyOnly ? {} : {});
  const fetch: FetchLike = async (url, init) => {
    const req = new Request(url, init);
    if (opts.legacyOnly && req.method === 'POST') {
      const body = (await req.clone().json()) as { method?: string };
      if (body.method === 'server/discover')
        return Response.json({
          jsonrpc: '2.0',
          id: (body as { id?: number }).id ?? null,
          error: { code: -32601, message: 'Method not found' },
        });
    }
    count++;
    return handler.fetch(req);
  };
  return {
    fetch,
    setManifest: (m) => (manifest = m),
    release: () => {
      const w = waiters;
      waiters = [];
      w.forEach((f) => f());
    },
    requests: () => count,
  };
}
