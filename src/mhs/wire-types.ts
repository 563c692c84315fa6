/**
 * TypeScript shapes of the MHS endpoint wire contract (`shared/spec/mhs-wire.md`, OpenMHS 0.9).
 * The JSON Schemas that validate them at runtime live in `wire-schemas.ts`.
 */
import type { MhsWireError } from '../core/index.js';

export type Mode = 'simulated' | 'hybrid' | 'hardware';
export type RiskClass = 'R0' | 'R1' | 'R2' | 'R3';
export type ConformanceLevel = 'CL1' | 'CL2' | 'CL3' | 'CL4' | 'CL5';
export type Trust = 'self' | 'verified';
export type ApprovalKind = 'human' | 'policy' | 'dual';
export type EstopKind = 'software' | 'both' | 'hardware';
export type InterlockState = 'closed' | 'open' | 'unknown';
export type ReceiptStatus = 'accepted' | 'running' | 'completed' | 'rejected' | 'failed' | 'unknown';
export type SessionMode = 'live' | 'replay';

/** Statuses after which the device gate may reopen (wire contract §6). */
export const FINAL_STATUSES: ReadonlySet<ReceiptStatus> = new Set(['completed', 'rejected', 'failed']);

/** §2 `GET /.well-known/mhs.json`. */
export interface EndpointDescriptor {
  mhs_version: string;
  endpoint_id: string;
  display_name: string;
  transports: Array<{ kind: 'mcp-http'; url: string } | { kind: 'mcp-stdio'; command: string[] }>;
  auth: { scheme: 'none' | 'local' | 'bearer' };
  manifest_digest: string;
  conformance: ConformanceClaim | null;
}

export interface ConformanceClaim {
  level: ConformanceLevel;
  trust: Trust;
  report_ref?: string | null;
  report_digest?: string | null;
}

/** §3 CapabilityBinding. */
export interface CapabilityBinding {
  capability_id: string;
  summary: string;
  semantic_tags: string[];
  effect: 'read' | 'actuate' | 'configure';
  risk_class: RiskClass;
  resources: string[];
  idempotent: boolean;
  typical_duration_ms: number;
  max_duration_ms: number;
  permit: { required: boolean; ttl_ms: number; approval: ApprovalKind };
  input_schema: Record<string, unknown>;
  output_schema: Record<string, unknown>;
}

/** §3 DeviceProfile. */
export interface DeviceProfile {
  device_id: string;
  instance_id: string;
  display_name: string;
  summary: string;
  mode: Mode;
  risk_class: RiskClass;
  determinism: { kind: 'deterministic' | 'seeded' | 'stochastic' | 'physical'; seed?: number };
  fidelity?: { gaps: string[] };
  estop: { kind: EstopKind; physical_ref: string | null };
  interlocks: Array<{ id: string; state: InterlockState }>;
  resources: string[];
  capabilities: CapabilityBinding[];
}

/** §3 Manifest. */
export interface Manifest {
  mhs_version: string;
  endpoint_id: string;
  manifest_version: number;
  display_name: string;
  safety_notice: 'MHS.SAFETY.NOT_CERTIFIED';
  conformance: ConformanceClaim | null;
  limits: { max_frame_bytes: number; max_deadline_ms: number; receipt_retention_s: number; max_session_ttl_ms: number };
  replay: { supported: boolean };
  redaction: { paths: string[] };
  devices: DeviceProfile[];
  /** Experimental extensions the endpoint serves (this project's; see `composition.ts`). Absent = none. */
  extensions?: { 'mhs.composition.run'?: CompositionExtension };
  manifest_digest: string;
}

/** The manifest's advertisement of the experimental composition method (HOST-084; reserved in OpenMHS 0.9). */
export interface CompositionExtension {
  status: 'experimental';
  /** The projection's tool that runs a composition. */
  tool: string;
  /** Most steps one composition may hold. */
  max_steps: number;
}

/** §4 control fields carried in the optional `_mhs` argument. */
export interface ControlFields {
  session_id?: string;
  command_id?: string;
  permit_id?: string;
  deadline_ms?: number;
  expected_revision?: number;
  resource?: string;
}

export interface Principal {
  kind: 'agent' | 'human' | 'system';
  id?: string;
}

/** §5 Session. */
export interface Session {
  session_id: string;
  endpoint_id: string;
  device_id: string;
  principal: Principal;
  capabilities: string[];
  mode: SessionMode;
  opened_at: string;
  expires_at: string;
  heartbeat_interval_ms: number;
  state: 'open' | 'closed' | 'expired';
}

export interface Effect {
  resource: string;
  kind: string;
  quantity?: { value: number; unit: string };
}

export interface EvidenceLink {
  seq: number;
  prev_digest: string;
  digest: string;
}

/** §6 Receipt. */
export interface Receipt {
  mhs_version: string;
  receipt_id: string;
  command_id: string;
  session_id: string;
  endpoint_id: string;
  device_id: string;
  capability_id: string;
  mode: Mode | 'replay';
  status: ReceiptStatus;
  input_digest: string;
  operation_id: string | null;
  revisions: { before: number; after: number };
  state_hash: string;
  effects: Effect[];
  output: Record<string, unknown> | null;
  error: MhsWireError | null;
  replayed: boolean;
  started_at: string;
  finished_at: string | null;
  evidence: EvidenceLink;
}

/** §7 read result. */
export interface ReadResult {
  device_id: string;
  revision: number;
  state: Record<string, unknown>;
  state_hash: string;
}

/** §7 safety status. */
export interface SafetyStatus {
  device_id: string;
  estop: { kind: EstopKind; engaged: boolean; physical_ref: string | null };
  interlocks: Array<{ id: string; state: InterlockState }>;
  notice: 'MHS.SAFETY.NOT_CERTIFIED';
}

/** §7 Permit. */
export interface Permit {
  permit_id: string;
  session_id: string;
  capability_id: string;
  input_digest: string;
  resource?: string | null;
  expected_revision?: number | null;
  expires_at: string;
  single_use: true;
  state: 'issued' | 'consumed' | 'revoked' | 'expired';
}

/** §9 endpoint evidence entry. */
export interface EvidenceEntry {
  seq: number;
  prev_digest: string;
  ts: string;
  kind: string;
  body: Record<string, unknown>;
  digest: string;
}

/** §9 `mhs__evidence {action:"export"}` result. */
export interface EvidenceBundle {
  endpoint_id: string;
  genesis_digest: string;
  head_digest: string;
  entries: EvidenceEntry[];
}

/** Fixed agent tools (§4, TPT-044) and operator-only tools (CORE-130). */
export const FIXED_TOOLS = [
  'mhs__devices',
  'mhs__inspect',
  'mhs__read',
  'mhs__safety',
  'mhs__operations',
  'mhs__evidence',
  'mhs__estop',
  'mhs__session',
] as const;
export const OPERATOR_TOOLS = ['mhs__permit', 'mhs__reset'] as const;
