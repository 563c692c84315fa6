/**
 * Runtime state of one simulated device: model state, revision, e-stop, interlocks, and the
 * per-command execution counters read through `mhs__read {resource:"_counters"}` (issue 2 item 5).
 */
import { H, seededRandom } from '../core/index.js';
import type { CapabilityBinding, DeviceProfile, InterlockState } from '../mhs/wire-types.js';
import type { FamilyDefinition } from './family.js';
import { initialState, stateOfResource, type DeviceState } from './physics.js';

/** Resource name of the execution counters. */
export const COUNTERS_RESOURCE = '_counters';
/** The endpoint's attach counters (manifest reads, session opens and heartbeats), read like `_counters`. */
export const ATTACH_COUNTERS_RESOURCE = '_attach_counters';

/** Words every stand-in profile carries (display name, summary, fidelity gap). */
export const STAND_IN_NOTICE = 'simulator standing in for hardware (test option --stand-in-hardware)';

/**
 * A simulated device presented as `mode:"hardware"` for tests of hardware handling; the profile says in words
 * that it is a simulator (HOST-003, 013). No new wire fields: the display name and summary, which hosts show
 * for every mode (fidelity gaps are dropped: hosts show none for hardware, HOST-013).
 */
function standIn(p: DeviceProfile): DeviceProfile {
  const { fidelity: _gaps, ...rest } = p;
  return {
    ...rest,
    mode: 'hardware',
    display_name: `${p.display_name} [${STAND_IN_NOTICE}]`,
    summary: `SIMULATOR STANDING IN FOR HARDWARE, no physical device: ${p.summary}`,
  };
}

export class SimDevice {
  readonly profile: DeviceProfile;
  state: DeviceState;
  revision = 0;
  estopEngaged = false;
  readonly random: () => number;
  private readonly executions = new Map<string, number>();

  constructor(
    readonly def: FamilyDefinition,
    seed: number,
    standInHardware = false,
  ) {
    const profile = structuredClone(def.device);
    if (profile.determinism.kind === 'seeded') profile.determinism.seed = seed;
    this.profile = standInHardware ? standIn(profile) : profile;
    this.state = initialState(def.model);
    this.random = seededRandom(seed);
  }

  get id(): string {
    return this.profile.device_id;
  }

  binding(capabilityId: string): CapabilityBinding | undefined {
    return this.profile.capabilities.find((c) => c.capability_id === capabilityId);
  }

  stateHash(): string {
    return H({ device_id: this.id, revision: this.revision, state: this.state });
  }

  /** Records one real execution of `commandId`. */
  countExecution(commandId: string): void {
    this.executions.set(commandId, (this.executions.get(commandId) ?? 0) + 1);
  }

  /** `{executions: {command_id: n}, total}`. */
  counters(): Record<string, unknown> {
    let total = 0;
    for (const n of this.executions.values()) total += n;
    return { executions: Object.fromEntries(this.executions), total };
  }

  /** Interlocks a capability requires that are not closed (§7, HOST-043: unknown refuses). */
  blockingInterlocks(capabilityId: string): Array<{ id: string; state: InterlockState }> {
    const required = this.def.model.capabilities[capabilityId]?.interlocks;
    return this.profile.interlocks.filter((i) => i.state !== 'closed' && (!required || required.includes(i.id)));
  }

  setInterlock(id: string, state: InterlockState): boolean {
    const lock = this.profile.interlocks.find((i) => i.id === id);
    if (!lock) return false;
    lock.state = state;
    return true;
  }

  read(resource?: string): Record<string, unknown> {
    return stateOfResource(this.def.model, this.state, resource);
  }
}
