/**
 * Manifest admission (HOST-073) and the digest check of wire contract §3. An endpoint whose
 * manifest is not admitted is never connected: fail closed.
 */
import { ErrorCode, H, HostError } from '../core/index.js';
import { checkWire } from './validate.js';
import { CONFORMANCE_LEVELS, DETERMINISM_KINDS, MODES, RISK_CLASSES } from './wire-schemas.js';
import type { ConformanceClaim, EndpointDescriptor, Manifest } from './wire-types.js';

/** `H(manifest without manifest_digest)` (wire contract §3). */
export function manifestDigest(manifest: Record<string, unknown>): string {
  const { manifest_digest: _omit, ...rest } = manifest;
  return H(rest);
}

const levelRank = (c: ConformanceClaim | null | undefined): number => (c ? CONFORMANCE_LEVELS.indexOf(c.level) + 1 : 0);

/**
 * Checks the HOST-013 disclosure fields before anything else, so that an unrenderable mode, risk
 * class, determinism kind or missing fidelity gaps get their own code.
 */
function disclosureProblems(raw: unknown): Array<{ path: string; problem: string }> {
  const out: Array<{ path: string; problem: string }> = [];
  if (!raw || typeof raw !== 'object') return out;
  const devices = (raw as { devices?: unknown }).devices;
  if (!Array.isArray(devices)) return out;
  devices.forEach((d: unknown, i) => {
    if (!d || typeof d !== 'object') return;
    const dev = d as Record<string, unknown>;
    const at = `/devices/${i}`;
    if (!(MODES as readonly unknown[]).includes(dev.mode)) out.push({ path: `${at}/mode`, problem: 'unknown mode' });
    if (!(RISK_CLASSES as readonly unknown[]).includes(dev.risk_class))
      out.push({ path: `${at}/risk_class`, problem: 'unknown risk class' });
    const det = dev.determinism as { kind?: unknown } | undefined;
    if (!det || !(DETERMINISM_KINDS as readonly unknown[]).includes(det.kind))
      out.push({ path: `${at}/determinism/kind`, problem: 'unknown determinism kind' });
    if (dev.mode === 'simulated' || dev.mode === 'hybrid') {
      const gaps = (dev.fidelity as { gaps?: unknown } | undefined)?.gaps;
      if (!Array.isArray(gaps)) out.push({ path: `${at}/fidelity/gaps`, problem: 'fidelity gaps missing' });
    }
    const caps = dev.capabilities;
    if (Array.isArray(caps))
      caps.forEach((c: unknown, j) => {
        const rc = (c as { risk_class?: unknown } | null)?.risk_class;
        if (!(RISK_CLASSES as readonly unknown[]).includes(rc))
          out.push({ path: `${at}/capabilities/${j}/risk_class`, problem: 'unknown risk class' });
      });
  });
  return out;
}

/** Options of {@link admitManifest}. */
export interface AdmitOptions {
  /** Where the manifest came from, named in errors (e.g. `stdio:node sim.js` or an endpoint id). */
  source?: string;
  /** The descriptor that advertised the endpoint, when there was one. */
  descriptor?: EndpointDescriptor;
  /** The endpoint id the connection expects (from the descriptor or the connector row). */
  expectedEndpointId?: string;
  /** Compare the descriptor's `manifest_digest` too (default true; false on a reconnect, where a change is expected). */
  checkDescriptorDigest?: boolean;
}

/**
 * Admits a manifest (HOST-073, HOST-012). Checks, in order:
 * 1. the disclosure can be rendered (mode, risk class, determinism, fidelity gaps) else
 *    `MHS.HOST.DISCLOSURE_UNRENDERABLE`;
 * 2. the manifest validates against the wire schema else `MHS.HOST.MANIFEST_INVALID`;
 * 3. `manifest_digest` equals `H(manifest without manifest_digest)` (and the descriptor's digest,
 *    when given) else `MHS.HOST.MANIFEST_INVALID` with `details.reason: "digest_mismatch"`;
 * 4. a conformance claim is present when CL2+ is advertised (descriptor claim at CL2+ with a null
 *    manifest claim, or descriptor and manifest claims that disagree) else `MHS.AUTH.ENDPOINT_UNTRUSTED`;
 * 5. the endpoint id matches the expected one else `MHS.AUTH.ENDPOINT_UNTRUSTED`.
 * @returns the manifest, typed.
 */
export function admitManifest(raw: unknown, opts: AdmitOptions = {}): Manifest {
  const source = opts.source ?? 'endpoint';
  const details = { source };
  const unrenderable = disclosureProblems(raw);
  if (unrenderable.length)
    throw new HostError(
      ErrorCode.HOST_DISCLOSURE_UNRENDERABLE,
      `manifest from ${source} has a mode/risk disclosure the host cannot render: ${unrenderable
        .map((u) => `${u.path} ${u.problem}`)
        .join('; ')}`,
      { ...details, problems: unrenderable },
      { remediation: 'The endpoint must declare mode, risk_class, determinism.kind and fidelity.gaps per device.' },
    );
  const check = checkWire('manifest', raw);
  if (!check.ok)
    throw new HostError(
      ErrorCode.HOST_MANIFEST_INVALID,
      `manifest from ${source} fails validation: ${check.issues
        .slice(0, 3)
        .map((i) => `${i.path} ${i.message}`)
        .join('; ')}`,
      { ...details, reason: 'schema', issues: check.issues },
      { remediation: 'Fix the endpoint manifest (shared/spec/mhs-wire.md §3).' },
    );
  const m = check.value;
  const actual = manifestDigest(m as unknown as Record<string, unknown>);
  if (actual !== m.manifest_digest)
    throw new HostError(
      ErrorCode.HOST_MANIFEST_INVALID,
      `manifest from ${source} carries a digest that does not recompute`,
      { ...details, reason: 'digest_mismatch', claimed: m.manifest_digest, actual },
      { remediation: 'The endpoint must set manifest_digest = H(manifest without manifest_digest).' },
    );
  const d = opts.descriptor;
  if (d && opts.checkDescriptorDigest !== false && d.manifest_digest !== m.manifest_digest)
    throw new HostError(
      ErrorCode.HOST_MANIFEST_INVALID,
      `manifest from ${source} differs from the one its descriptor announced`,
      { ...details, reason: 'descriptor_digest_mismatch', descriptor: d.manifest_digest, manifest: m.manifest_digest },
      { remediation: 'Re-run discovery; the endpoint changed its manifest.' },
    );
  if (d && (levelRank(d.conformance) >= 2 || levelRank(m.conformance) >= 2)) {
    const same =
      d.conformance !== null &&
      m.conformance !== null &&
      d.conformance.level === m.conformance.level &&
      d.conformance.trust === m.conformance.trust;
    if (!same)
      throw new HostError(
        ErrorCode.AUTH_ENDPOINT_UNTRUSTED,
        `endpoint ${m.endpoint_id} advertises CL2+ but its manifest carries no matching conformance claim`,
        { ...details, reason: 'claim_missing', descriptor: d.conformance, manifest: m.conformance },
        { remediation: 'The endpoint must carry its conformance claim in the manifest (HOST-073).' },
      );
  }
  if (opts.expectedEndpointId && opts.expectedEndpointId !== m.endpoint_id)
    throw new HostError(
      ErrorCode.AUTH_ENDPOINT_UNTRUSTED,
      `endpoint at ${source} says it is ${m.endpoint_id}, expected ${opts.expectedEndpointId}`,
      { ...details, reason: 'endpoint_id_mismatch', expected: opts.expectedEndpointId, actual: m.endpoint_id },
      { remediation: 'Re-run discovery and check the endpoint configuration.' },
    );
  return m;
}
