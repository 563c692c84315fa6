/**
 * The disclosure of a session (HOST-003, 013, 015, 050): before the first capability call of a session scope on a
 * device, the caller's surface is shown MHS.SAFETY.NOT_CERTIFIED, the device's mode and its fidelity gaps, and one
 * `disclosure.shown` entry records that it was. This is the one place that decides whether a session has been
 * disclosed; each surface (CLI, gateway, workflow run, console) only renders what it is handed.
 */
import { jcs } from '../core/index.js';
import type { Ledger } from '../ledger/ledger-types.js';
import { SAFETY_STATEMENT } from '../mhs/presentation.js';
import type { Manifest } from '../mhs/wire-types.js';
import type { CallPrincipal } from './call-types.js';

/** What a surface is shown, and what the ledger records, before a session's first call on a device. */
export interface SessionDisclosure {
  /** Where it was shown: `cli.invoke`, `cli.run-task`, `cli.agent`, `gateway`, `workflow`, `console`, `api`. */
  surface: string;
  /** The engine's session scope (task id, agent run, MCP session, workflow run, or `adhoc`). */
  scope: string;
  endpoint_id: string;
  connector_id: string;
  manifest_digest: string;
  device_id: string;
  instance_id: string;
  display_name: string;
  mode: Manifest['devices'][number]['mode'];
  risk_class: Manifest['devices'][number]['risk_class'];
  safety_notice: 'MHS.SAFETY.NOT_CERTIFIED';
  safety_statement: string;
  determinism_kind: string;
  /** In full, inline (HOST-015); empty when the manifest declares none. */
  fidelity_gaps: string[];
  principal: CallPrincipal;
}

/** How a caller takes part: the surface it renders on, and how it shows the disclosure before the call goes on. */
export interface DisclosureRequest {
  surface: string;
  /** Awaited before the call proceeds; a throw refuses the call (nothing is sent). */
  show?: (d: SessionDisclosure) => void | Promise<void>;
}

/** The endpoint a call goes to, as far as a disclosure needs it. */
export interface DisclosedEndpoint {
  endpointId: string;
  connectorId: string;
  manifest: Manifest;
}

/** The session disclosure as lines of text for a terminal or a model's context. */
export function sessionDisclosureText(d: SessionDisclosure): string {
  const gaps = d.fidelity_gaps.length ? d.fidelity_gaps.join('; ') : 'none declared';
  return [
    `DISCLOSURE ${d.endpoint_id}/${d.device_id} (${d.display_name}): ${SAFETY_STATEMENT}`,
    `  mode: ${d.mode.toUpperCase()}; risk class: ${d.risk_class}; determinism: ${d.determinism_kind}`,
    `  fidelity gaps: ${gaps}`,
  ].join('\n');
}

/** The disclosure of `deviceId` of `ep` for a session scope, or undefined for a device the manifest lacks. */
export function disclosureOf(
  ep: DisclosedEndpoint,
  deviceId: string,
  at: { surface: string; scope: string; principal: CallPrincipal },
): SessionDisclosure | undefined {
  const d = ep.manifest.devices.find((x) => x.device_id === deviceId);
  if (!d) return undefined;
  return {
    surface: at.surface,
    scope: at.scope,
    endpoint_id: ep.endpointId,
    connector_id: ep.connectorId,
    manifest_digest: ep.manifest.manifest_digest,
    device_id: d.device_id,
    instance_id: d.instance_id,
    display_name: d.display_name,
    mode: d.mode,
    risk_class: d.risk_class,
    safety_notice: 'MHS.SAFETY.NOT_CERTIFIED',
    safety_statement: SAFETY_STATEMENT,
    determinism_kind: d.determinism.kind,
    fidelity_gaps: [...(d.fidelity?.gaps ?? [])],
    principal: at.principal,
  };
}

/**
 * Which sessions have been disclosed. A session is the scope, endpoint, device, manifest digest and principal: a
 * changed manifest (other mode or gaps) or another principal is disclosed again.
 */
export class SessionDisclosures {
  private readonly done = new Map<string, Promise<void>>();

  constructor(
    private readonly ledger: Ledger,
    private readonly defaultPrincipal: CallPrincipal,
    /** Sessions remembered; the oldest is forgotten past this (it would be disclosed again, never less). */
    private readonly capacity = 10_000,
  ) {}

  /**
   * Before a call of `scope` on `deviceId`: the first call of the session records `disclosure.shown` and has
   * `req.show` render it; later calls wait for that and go on. Returns the disclosure this call made, if any.
   * A failed append or render refuses this call and leaves the session undisclosed (the next call tries again).
   */
  async before(
    ep: DisclosedEndpoint,
    deviceId: string,
    o: { scope: string; principal?: CallPrincipal; runId?: string; nodeId?: string; request?: DisclosureRequest },
  ): Promise<SessionDisclosure | undefined> {
    const principal = o.principal ?? this.defaultPrincipal;
    const d = disclosureOf(ep, deviceId, { surface: o.request?.surface ?? 'api', scope: o.scope, principal });
    if (!d) return undefined;
    const key = jcs([o.scope, ep.endpointId, deviceId, ep.manifest.manifest_digest, principal.kind, principal.id]);
    const earlier = this.done.get(key);
    if (earlier) {
      await earlier;
      return undefined;
    }
    const show = async (): Promise<void> => {
      await this.ledger.append({
        kind: 'disclosure.shown',
        ...d,
        ...(o.runId ? { run_id: o.runId } : {}),
        ...(o.nodeId ? { node_id: o.nodeId } : {}),
      });
      await o.request?.show?.(d);
    };
    const p = show();
    this.done.set(key, p);
    if (this.done.size > this.capacity) this.done.delete(this.done.keys().next().value!);
    try {
      await p;
    } catch (err) {
      this.done.delete(key);
      throw err;
    }
    return d;
  }
}
