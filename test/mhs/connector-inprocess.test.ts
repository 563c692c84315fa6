// Guarantees (in-process, MCP SDK server behind an injected fetch, no socket): the connector negotiates
// 2026-07-28 when offered and 2025-11-25 otherwise; it admits only manifests that validate, whose digest
// recomputes, whose disclosure renders and whose CL2+ claim is present (HOST-073); it refuses a disabled
// row before any request; replies over 4 MiB are refused whole (HOST-063); timeouts are classified
// pre-send vs post-send.
import { describe, expect, it } from 'vitest';
import { ErrorCode, HostError, SimulatedClock } from '../../src/core/index.js';
import { connect } from '../../src/mhs/connector.js';
import type { ConnectorRow } from '../../src/mhs/connector-row.js';
import type { EndpointDescriptor } from '../../src/mhs/wire-types.js';
import { REPO_ROOT, entryArgs } from '../helpers/cli-entry.js';
import { fakeEndpoint, sampleManifest, withDigest } from './helpers/fake-endpoint.js';

const row = (over: Partial<ConnectorRow> = {}): ConnectorRow => ({
  connector_id: 'mhs-fake-1',
  transport: 'http',
  url: 'http://fake.invalid/mcp',
  endpoint_id: 'mhs://fake:1',
  enabled: true,
  source: { kind: 'env', ref: 'MHS_ENDPOINTS' },
  auth: { scheme: 'none' },
  ...over,
});

async function codeOf(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (e) {
    if (e instanceof HostError) return e.code;
    throw e;
  }
  throw new Error('expected a rejection');
}

describe('connector (in-process)', () => {
  it('negotiates 2026-07-28 when offered and admits the manifest', async () => {
    const ep = fakeEndpoint();
    const c = await connect(row(), { fetch: ep.fetch });
    expect(c.protocolVersion).toBe('2026-07-28');
    expect(c.manifest.manifest_digest).toBe(sampleManifest().manifest_digest);
    const r = await c.callTool('mhs__echo', { a: 1 });
    expect(r).toEqual({ isError: false, structuredContent: { args: { a: 1 } } });
    await c.close();
    await expect(c.closed).resolves.toMatchObject({ code: ErrorCode.TRANSPORT_DISCONNECTED });
  });

  it('falls back to 2025-11-25 when the endpoint does not offer 2026-07-28, and can be forced legacy', async () => {
    const legacy = await connect(row(), { fetch: fakeEndpoint(undefined, { legacyOnly: true }).fetch });
    expect(legacy.protocolVersion).toBe('2025-11-25');
    await legacy.close();
    const forced = await connect(row(), { fetch: fakeEndpoint().fetch, protocol: 'legacy' });
    expect(forced.protocolVersion).toBe('2025-11-25');
    await forced.close();
  });

  it(
    'falls back to a fresh legacy child when a stdio endpoint dies on the 2026-07-28 probe',
    { timeout: 120_000 },
    async () => {
      const c = await connect(
        row({
          transport: 'stdio',
          url: undefined,
          command: [process.execPath, ...entryArgs('test/mhs/helpers/legacy-stdio-server.ts')],
          auth: { scheme: 'local' },
        }),
        { cwd: REPO_ROOT, timeoutMs: 90_000 },
      );
      expect(c.protocolVersion).toBe('2025-11-25');
      expect(c.manifest.endpoint_id).toBe('mhs://fake:1');
      await c.close();
    },
  );

  it('HOST-068: a disabled row is refused before any request leaves the host', async () => {
    const ep = fakeEndpoint();
    expect(await codeOf(connect(row({ enabled: false }), { fetch: ep.fetch }))).toBe(ErrorCode.HOST_CONNECTOR_DISABLED);
    expect(await codeOf(connect(row(), { fetch: ep.fetch, isEnabled: () => false }))).toBe(
      ErrorCode.HOST_CONNECTOR_DISABLED,
    );
    expect(ep.requests()).toBe(0);
  });

  it('HOST-063: a reply over 4 MiB is refused with FRAME_TOO_LARGE and the connection keeps serving', async () => {
    const c = await connect(row(), { fetch: fakeEndpoint().fetch });
    expect(await codeOf(c.callTool('mhs__big', {}))).toBe(ErrorCode.TRANSPORT_FRAME_TOO_LARGE);
    expect((await c.callTool('mhs__echo', { b: 2 })).structuredContent).toEqual({ args: { b: 2 } });
    await c.close();
  });

  it('classifies a timeout after the request left as TIMEOUT_POSTSEND and an abort before as TIMEOUT_PRESEND', async () => {
    const clock = new SimulatedClock();
    const ep = fakeEndpoint();
    const c = await connect(row(), { fetch: ep.fetch, clock });
    const pending = c.callTool('mhs__stall', {}, { timeoutMs: 1000 });
    const settled = pending.catch((e: unknown) => e);
    // Wait until the request reached the endpoint, then let the deadline pass.
    while (ep.requests() < 3) await new Promise((r) => setImmediate(r));
    clock.advance(1000);
    const err = (await settled) as HostError;
    expect(err.code).toBe(ErrorCode.TRANSPORT_TIMEOUT_POSTSEND);
    expect(err.details.sent).toBe(true);
    ep.release();
    const ac = new AbortController();
    ac.abort();
    const pre = (await c.callTool('mhs__echo', {}, { signal: ac.signal }).catch((e: unknown) => e)) as HostError;
    expect(pre.code).toBe(ErrorCode.TRANSPORT_TIMEOUT_PRESEND);
    // A caller abort after the request left is post-send: the outcome is not known.
    const seen = ep.requests();
    const ac2 = new AbortController();
    const aborted = c.callTool('mhs__stall', {}, { signal: ac2.signal }).catch((e: unknown) => e);
    while (ep.requests() === seen) await new Promise((r) => setImmediate(r));
    ac2.abort();
    const post = (await aborted) as HostError;
    expect(post.code).toBe(ErrorCode.TRANSPORT_TIMEOUT_POSTSEND);
    expect(post.details).toMatchObject({ sent: true, aborted: true });
    ep.release();
    await c.close();
  });

  describe('HOST-073: refuses to connect', () => {
    it('when the manifest fails validation', async () => {
      const bad = withDigest({ ...sampleManifest(), limits: { max_frame_bytes: 'big' } });
      expect(await codeOf(connect(row(), { fetch: fakeEndpoint(bad).fetch }))).toBe(ErrorCode.HOST_MANIFEST_INVALID);
    });
    it('when the digest does not recompute', async () => {
      const m = { ...sampleManifest(), display_name: 'changed after digest' };
      const err = (await connect(row(), { fetch: fakeEndpoint(m).fetch }).catch((e: unknown) => e)) as HostError;
      expect(err.code).toBe(ErrorCode.HOST_MANIFEST_INVALID);
      expect(err.details.reason).toBe('digest_mismatch');
    });
    it('when a mode or risk class cannot be rendered', async () => {
      const base = sampleManifest();
      const dev = { ...base.devices[0]!, mode: 'quantum' };
      const m = withDigest({ ...base, devices: [dev] });
      expect(await codeOf(connect(row(), { fetch: fakeEndpoint(m).fetch }))).toBe(
        ErrorCode.HOST_DISCLOSURE_UNRENDERABLE,
      );
      const noGaps = withDigest({ ...base, devices: [{ ...base.devices[0]!, fidelity: undefined }] });
      expect(await codeOf(connect(row(), { fetch: fakeEndpoint(noGaps).fetch }))).toBe(
        ErrorCode.HOST_DISCLOSURE_UNRENDERABLE,
      );
      const risk = withDigest({ ...base, devices: [{ ...base.devices[0]!, risk_class: 'R9' }] });
      expect(await codeOf(connect(row(), { fetch: fakeEndpoint(risk).fetch }))).toBe(
        ErrorCode.HOST_DISCLOSURE_UNRENDERABLE,
      );
    });
    it('when CL2+ is advertised and the manifest carries no claim', async () => {
      const m = sampleManifest({ conformance: null });
      const descriptor: EndpointDescriptor = {
        mhs_version: '0.9',
        endpoint_id: 'mhs://fake:1',
        display_name: 'Fake',
        transports: [{ kind: 'mcp-http', url: 'http://fake.invalid/mcp' }],
        auth: { scheme: 'none' },
        manifest_digest: m.manifest_digest,
        conformance: { level: 'CL3', trust: 'self' },
      };
      expect(await codeOf(connect(row(), { fetch: fakeEndpoint(m).fetch, descriptor }))).toBe(
        ErrorCode.AUTH_ENDPOINT_UNTRUSTED,
      );
    });
    it('when the endpoint id differs from the one discovered', async () => {
      expect(await codeOf(connect(row({ endpoint_id: 'mhs://other:2' }), { fetch: fakeEndpoint().fetch }))).toBe(
        ErrorCode.AUTH_ENDPOINT_UNTRUSTED,
      );
    });
  });
});
