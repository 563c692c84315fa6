/** Options of a simulated endpoint (one projection process serves one endpoint, wire contract §2). */
import type { Clock } from '../core/index.js';
import type { EvidenceBundle, InterlockState } from '../mhs/wire-types.js';
import type { FamilyDefinition } from './family.js';

/** Fault injection (issue 2 item 5). `true` = every capability call, a number = only the Nth (1-based). */
export interface FaultOptions {
  /** Added latency before every tool call is handled. */
  latencyMs?: number;
  /** Execute the capability, then never answer. */
  dropReply?: true | number;
  /** Accept the capability call and never answer (nothing executes). */
  stall?: true | number;
  /**
   * A slow but conforming endpoint (issue 16): the capability call is never answered and is handled this many ms
   * after it arrived (validated and executed then); until then the endpoint has no record of it.
   */
  executeAfterMs?: number;
  /** Which capability calls `executeAfterMs` applies to: every one, or only the Nth. Default every. */
  executeAfterNth?: true | number;
  /** Close the connection instead of handling any tool call after the first N. */
  closeAfter?: number;
  /** Answer a capability call with a frame over 4 MiB (the receipt plus padding content). */
  oversizeReply?: true | number;
  /**
   * Answer a capability call with a reply holding a lone UTF-16 surrogate (`"\ud800"`, a string JCS cannot
   * encode): in the receipt's `output`, or in the fault's `message` when the call faulted (issue 16 item 3).
   */
  surrogateReply?: true | number;
  /** Store the evidence entry with this seq with a body that no longer matches its digest. */
  corruptEvidence?: number;
}

/** HOST-090 projection policy from `--config FILE`; null = launched without a document. */
export interface ProjectionPolicy {
  enabled: boolean;
  allow_hardware: boolean;
  /** Devices whose e-stop this connector may fire; null = every device. */
  estop_devices: string[] | null;
}

export interface SimOptions {
  families: FamilyDefinition[];
  endpointId: string;
  clock: Clock;
  /** Seed of `seeded` devices and of id generation. */
  seed: number;
  operatorTools: boolean;
  policy: ProjectionPolicy | null;
  faults: FaultOptions;
  /** Divides every modelled duration (tests run slow devices quickly). Default 1. */
  timeScale?: number;
  /** §10 replay bundle; sessions are forced to `mode:"replay"`. */
  replay?: EvidenceBundle;
  /** Initial interlock states, e.g. from `--interlock laser:enclosure_door=open`. */
  interlocks?: Array<{ deviceId: string; id: string; state: InterlockState }>;
  /**
   * Test option `--stand-in-hardware DEVICE`: these devices report `mode:"hardware"`, and their display name,
   * summary and fidelity gaps say they are a simulator standing in for hardware (HOST-003, 013). Default none.
   */
  standInHardware?: string[];
  /**
   * `--enable-composition`: serve the experimental `mhs.composition.run` (tool `mhs__composition_run`, HOST-084)
   * and advertise it, marked experimental, in the manifest and descriptor. Default off: the tool does not exist.
   */
  composition?: boolean;
  /** Transports advertised in the descriptor (§2). */
  transports: Array<{ kind: 'mcp-http'; url: string } | { kind: 'mcp-stdio'; command: string[] }>;
}

/** Manifest limits (§3). */
export const LIMITS = {
  max_frame_bytes: 4 * 1024 * 1024,
  max_deadline_ms: 30_000,
  receipt_retention_s: 86_400,
  max_session_ttl_ms: 600_000,
} as const;
