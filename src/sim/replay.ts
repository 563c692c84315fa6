/**
 * Replay mode (wire contract §10): each capability call is matched to the next recorded final
 * receipt of that device by capability and input_digest; nothing touches a device.
 */
import { ErrorCode, HostError } from '../core/index.js';
import type { EvidenceBundle, Receipt } from '../mhs/wire-types.js';

const FINAL = new Set(['completed', 'rejected', 'failed', 'unknown']);

type Recorded = Omit<Receipt, 'evidence' | 'replayed'>;

/** Per-device cursors over the recorded receipts of a bundle. */
export class ReplayCursor {
  private readonly queues = new Map<string, Recorded[]>();

  constructor(bundle: EvidenceBundle) {
    if (!bundle || !Array.isArray(bundle.entries)) {
      throw new HostError(ErrorCode.HOST_CONFIG_INVALID, 'replay bundle has no entries', {});
    }
    for (const e of bundle.entries) {
      if (e.kind !== 'receipt') continue;
      const r = e.body as unknown as Recorded;
      if (!FINAL.has(r.status)) continue;
      const q = this.queues.get(r.device_id) ?? [];
      q.push(r);
      this.queues.set(r.device_id, q);
    }
  }

  /**
   * Takes the next recorded receipt when it matches; otherwise returns the divergence error
   * `MHS.REPLAY.DIVERGED` with `details.expected` (the cursor does not move).
   */
  next(deviceId: string, capabilityId: string, inputDigest: string): Recorded | HostError {
    const q = this.queues.get(deviceId) ?? [];
    const head = q[0];
    if (!head || head.capability_id !== capabilityId || head.input_digest !== inputDigest) {
      return new HostError(ErrorCode.REPLAY_DIVERGED, 'the call does not match the next recorded receipt', {
        expected: head ? { capability_id: head.capability_id, input_digest: head.input_digest } : null,
        actual: { capability_id: capabilityId, input_digest: inputDigest },
      });
    }
    q.shift();
    return head;
  }
}
