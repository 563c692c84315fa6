import type { HostError } from '../core/index.js';
import { toHostError } from '../core/index.js';
import type { DurableLedger } from '../ledger/ledger-types.js';
import type { CallEnv } from './call-types.js';
import type { EndpointActor } from './endpoint-actor.js';
import { reconcileCommand } from './reconcile.js';
import { restoreCommand } from './command-actor.js';
import { gateOwnership, unknownEntry, unsettledCommand } from './recovery.js';

/**
 * HOST-091 for a long-running host: a device gate in the store held by a command whose host process is gone (it
 * crashed after the intent) is taken over by this engine, which records the command `command.unknown` and
 * reconciles it in the background, so the device reopens without an operator.
 */
export class OrphanAdopter {
  private readonly adopting = new Set<string>();

  constructor(
    private readonly env: CallEnv,
    private readonly onError?: (err: HostError) => void,
  ) {}

  /**
   * Given the details of a `MHS.HOST.DEVICE_GATE_CLOSED` from the store, starts the takeover when the holder's
   * process is known to be gone. Returns whether the command is being (or already is) reconciled here.
   */
  async adopt(ep: EndpointActor, held: Record<string, unknown>): Promise<boolean> {
    const commandId = String(held.command_id);
    if (held.durable !== true || typeof held.owner !== 'string') return false;
    if ((await gateOwnership(this.env.ledger).running(held.owner)) !== false) return false;
    if (this.adopting.has(commandId) || this.env.pending.has(commandId)) return true;
    this.adopting.add(commandId);
    void this.takeOver(ep, commandId, held.owner)
      .catch((e: unknown) => this.onError?.(toHostError(e)))
      .finally(() => this.adopting.delete(commandId));
    return true;
  }

  /**
   * Issue 19, an endpoint lease taken over from `former`: every device gate of this endpoint that `former` holds in
   * the store is taken over and its command recorded unknown and reconciled by `command_id` (HOST-091), before this
   * returns, whether `former` is gone or only paused (it lost the endpoint: its fence refuses any new intent).
   */
  async adoptFrom(ep: EndpointActor, former: string): Promise<void> {
    const d = this.env.ledger as Partial<DurableLedger>;
    if (typeof d.deviceGates !== 'function') return;
    for (const g of await d.deviceGates(ep.endpointId)) {
      if (g.owner !== former || this.adopting.has(g.command_id) || this.env.pending.has(g.command_id)) continue;
      this.adopting.add(g.command_id);
      try {
        await this.takeOver(ep, g.command_id, former);
      } finally {
        this.adopting.delete(g.command_id);
      }
    }
  }

  /**
   * A command this engine does not track that a caller wants settled (a run resumed here after its process died):
   * taken over like {@link adopt} when its gate's process is gone, and reconciled before this returns.
   */
  async adoptById(ep: EndpointActor, commandId: string): Promise<void> {
    const d = this.env.ledger as Partial<DurableLedger>;
    if (typeof d.deviceGates !== 'function' || this.env.pending.has(commandId)) return;
    const g = (await d.deviceGates(ep.endpointId)).find((x) => x.command_id === commandId);
    if (!g || (await gateOwnership(this.env.ledger).running(g.owner)) !== false) return;
    if (this.adopting.has(commandId)) return;
    this.adopting.add(commandId);
    try {
      await this.takeOver(ep, commandId, g.owner);
    } finally {
      this.adopting.delete(commandId);
    }
  }

  private async takeOver(ep: EndpointActor, commandId: string, owner: string): Promise<void> {
    const { env } = this;
    const p = unsettledCommand(await env.ledger.byCommand(commandId));
    if (!p || p.endpointId !== ep.endpointId) return;
    // Of several live processes that find the same orphan, only the one that takes the gate over reconciles it.
    const d = env.ledger as Partial<DurableLedger>;
    if (typeof d.takeOverGate === 'function' && !(await d.takeOverGate(commandId, owner))) return;
    const { effects } = restoreCommand(env, p, ep, 'owner_gone');
    if (effects.some((f) => f.type === 'recordUnknown'))
      await env.ledger.append(unknownEntry(p, 'owner_gone', { owner }));
    await reconcileCommand(env, ep, p);
  }
}
