/**
 * What the host records about an attached endpoint besides its commands (HOST-050, 051, 054): the disclosure
 * shown to the model when it is attached, and the endpoint's own evidence bundle collected for the export.
 */
import { ErrorCode, H, HostError, toHostError } from '../core/index.js';
import type { Artifacts } from '../ledger/artifacts.js';
import type { Db } from '../ledger/db.js';
import type { Ledger, LedgerEntry } from '../ledger/ledger-types.js';
import { presentEndpoint } from '../mhs/presentation.js';
import type { EvidenceBundle, EvidenceLink } from '../mhs/wire-types.js';
import type { MhsWireError } from '../core/index.js';
import { faultError } from './call-outcome.js';
import type { EndpointHandle } from './endpoint-handle.js';

/** The parts of the artifact store the engine writes (manifests and endpoint evidence bundles). */
export type EngineArtifacts = Pick<Artifacts, 'putManifest' | 'putEvidenceBundle'>;

/** One endpoint evidence bundle collected and stored (HOST-051). */
export interface CollectedEvidence {
  endpointId: string;
  genesisDigest: string;
  headDigest: string;
  entries: number;
  /** Seq of the `evidence.export` ledger entry. */
  seq: number;
}

/**
 * The evidence one task produced on one endpoint (issue 21 item 7): the `{seq, prev_digest, digest}` link of each
 * receipt its steps got, as the endpoint chained it (wire §6, §9). The wire has no ranged `mhs__evidence` export, so
 * a task records only these links (they are in its `receipt` ledger entries, committed with them); the endpoint's
 * bundle is collected once, when it is exported or the engine stops, never per task.
 */
export interface TaskEvidence {
  endpointId: string;
  receipts: Array<{ command_id: string; seq: number; prev_digest: string; digest: string }>;
}

const HEX64 = /^[0-9a-f]{64}$/;

/**
 * Groups the receipt links of a task's steps by endpoint. A step that got a receipt without a well-formed link is
 * an evidence failure of that endpoint (`MHS.EVIDENCE.CHAIN_BROKEN`): the task must not report ok (issue 21).
 */
export function taskEvidence(
  steps: ReadonlyArray<{ step: { endpoint: string }; commandId?: string; receipt?: { evidence?: unknown } }>,
): Array<TaskEvidence | { endpointId: string; error: MhsWireError }> {
  const by = new Map<string, TaskEvidence | { endpointId: string; error: MhsWireError }>();
  for (const s of steps) {
    const id = s.step.endpoint;
    const cur = by.get(id) ?? { endpointId: id, receipts: [] };
    by.set(id, cur);
    if (!s.receipt || 'error' in cur) continue;
    const l = s.receipt.evidence as Partial<EvidenceLink> | undefined;
    if (!l || typeof l.seq !== 'number' || !HEX64.test(String(l.digest)) || !HEX64.test(String(l.prev_digest))) {
      by.set(id, {
        endpointId: id,
        error: new HostError(ErrorCode.EVIDENCE_CHAIN_BROKEN, 'a receipt of this task carries no evidence link', {
          endpoint_id: id,
          command_id: s.commandId ?? null,
        }).toWire(),
      });
      continue;
    }
    cur.receipts.push({
      command_id: s.commandId ?? '',
      seq: l.seq,
      prev_digest: String(l.prev_digest),
      digest: String(l.digest),
    });
  }
  return [...by.values()];
}

/**
 * Stores the manifest (when an artifact store is given) and appends one `disclosure` entry: the mode, risk,
 * determinism and fidelity gaps of every device as presented to the model, with the presentation's digest
 * (HOST-050, HOST-013). A failed append is thrown, never dropped (HOST-093).
 */
export async function recordDisclosure(
  ledger: Ledger,
  artifacts: EngineArtifacts | undefined,
  ep: EndpointHandle,
): Promise<LedgerEntry> {
  const m = ep.manifest;
  if (artifacts) await artifacts.putManifest(m as unknown as Record<string, unknown>);
  const presentation = presentEndpoint(m);
  return ledger.append({
    kind: 'disclosure',
    endpoint_id: m.endpoint_id,
    connector_id: ep.connectorId,
    manifest_digest: m.manifest_digest,
    presentation_digest: H(presentation),
    safety_notice: presentation.safety_notice,
    conformance_level: presentation.conformance_level,
    devices: m.devices.map((d) => ({
      device_id: d.device_id,
      instance_id: d.instance_id,
      mode: d.mode,
      risk_class: d.risk_class,
      determinism_kind: d.determinism.kind,
      fidelity_gaps: [...(d.fidelity?.gaps ?? [])],
    })),
  });
}

function isBundle(v: unknown, endpointId: string): v is EvidenceBundle {
  const b = v as Partial<EvidenceBundle> | null;
  return (
    !!b &&
    b.endpoint_id === endpointId &&
    typeof b.genesis_digest === 'string' &&
    typeof b.head_digest === 'string' &&
    Array.isArray(b.entries)
  );
}

/**
 * Calls `mhs__evidence {action:"export"}` on the endpoint (a read: no gate, no intent; wire §9) and appends
 * `evidence.export {source:"endpoint", endpoint_id, genesis_digest, head_digest, entries}` (HOST-050, 051), storing
 * the bundle verbatim in the entry's transaction. The package export uses each endpoint's latest stored bundle.
 * @throws HostError the endpoint's fault code, `MHS.HOST.INTERNAL` for an answer that is not this endpoint's
 * bundle, the store's `MHS.HOST.LEDGER_UNAVAILABLE`, or `MHS.HOST.ENDPOINT_LEASE_LOST` (nothing appended) when this
 * process no longer holds the endpoint's lease.
 */
export async function collectEndpointEvidence(
  ledger: Ledger,
  artifacts: EngineArtifacts | undefined,
  ep: EndpointHandle,
): Promise<CollectedEvidence> {
  const r = await ep.callTool('mhs__evidence', { action: 'export' }, { timeoutMs: 10_000 }).catch((e: unknown) => {
    throw toHostError(e);
  });
  if (r.isError) throw faultError(r);
  const bundle: unknown = r.structuredContent;
  if (!isBundle(bundle, ep.endpointId))
    throw new HostError(ErrorCode.HOST_INTERNAL, 'mhs__evidence export did not return this endpoint’s bundle', {
      endpoint_id: ep.endpointId,
    });
  // Issue 19: under the endpoint lease, like an intent, and the bundle stored in the entry's transaction after that
  // check: a process that lost the endpoint stores neither the entry nor the bundle (the package export takes each
  // endpoint's latest stored bundle, so a stale holder's copy must not land there).
  const fence = async (t: Db): Promise<void> => {
    await ep.fence?.(t);
    await artifacts?.putEvidenceBundle(bundle, t);
  };
  const [entry] = await ledger.appendBatch(
    [
      {
        kind: 'evidence.export',
        source: 'endpoint',
        endpoint_id: ep.endpointId,
        manifest_digest: ep.manifest.manifest_digest,
        genesis_digest: bundle.genesis_digest,
        head_digest: bundle.head_digest,
        entries: bundle.entries.length,
        stored: !!artifacts,
      },
    ],
    { fence },
  );
  return {
    endpointId: ep.endpointId,
    genesisDigest: bundle.genesis_digest,
    headDigest: bundle.head_digest,
    entries: bundle.entries.length,
    seq: entry!.seq,
  };
}
