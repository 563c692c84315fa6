import { getPath } from '../openwop/expressions.js';

/**
 * Capability names the conformance toggle may switch, with the path of the flag in this host's v1 discovery document.
 * Only these are honoured (by the envelope/accept seam and the sample workflow registration seam); the document
 * itself keeps advertising what the host implements, as in the reference host (host-sample-test-seams.md).
 */
const HONOURED: Readonly<Record<string, string>> = {
  // RFC 0022 §C: registration refuses non-empty dispatch mappings when the flag is not claimed.
  'agents.dispatchMapping': 'agents.dispatchMapping',
  // RFC 0022 §C: the same for core.subWorkflow input/output mappings.
  'subWorkflow.inputMapping': 'subWorkflow.inputMapping',
  // ai-envelope.md §"Capability handshake integration": the capability gate stacks above the contract gates.
  'host.aiEnvelope.supported': 'aiEnvelope.supported',
};

/**
 * The process-local overlay of the conformance capability toggle (`POST /v1/host/sample/test/capability-toggle`):
 * a name set here reads as its overlay value, any other as the discovery document says. Names the host does not
 * honour are kept (so a probe answers 200) and change nothing.
 */
export class CapabilityOverlay {
  private readonly values = new Map<string, boolean>();

  /** Sets `name` to `value`, or removes its entry (back to the advertised value) when `value` is undefined. */
  set(name: string, value: boolean | undefined): void {
    if (value === undefined) this.values.delete(name);
    else this.values.set(name, value);
  }

  reset(): void {
    this.values.clear();
  }

  snapshot(): Record<string, boolean> {
    return Object.fromEntries(this.values);
  }

  /** The effective value of a flag: the overlay's, else whether `doc` advertises it as `true`. */
  resolve(name: string, doc: Record<string, unknown>): boolean {
    const set = this.values.get(name);
    if (set !== undefined) return set;
    const path = HONOURED[name] ?? name;
    return getPath(doc, path) === true;
  }
}
