// Shapes of the operator API's answers, as far as the console reads them (docs/operator.md).

export interface Who {
  id: string;
  name: string;
  role: 'operator' | 'client' | 'agent';
}

export interface Estop {
  kind: 'software' | 'hardware' | 'both';
  physical_ref?: string | null;
  statement?: string;
}

export interface InputLine {
  path: string;
  value: string;
  unit?: string;
  description?: string;
}

export interface ApprovalView {
  endpoint_id?: string;
  device?: { device_id?: string; display_name?: string; mode?: string; risk_class?: string };
  capability?: { capability_id?: string; summary?: string; risk_class?: string; semantic_tags?: string[] };
  input?: InputLine[];
  input_digest?: string;
  input_digest_short?: string;
  resource?: string | null;
  expected_revision?: number | null;
  permit?: { required?: boolean; ttl_ms?: number };
  fidelity_gaps?: string[];
  safety_notice?: string;
  estop?: Estop & { statement?: string };
}

export interface Vote {
  principal: { id: string; name: string };
}

export interface Approval {
  approval_id: string;
  status: string;
  method: string;
  endpoint_id: string;
  device_id: string;
  capability_id: string;
  input_digest: string;
  votes: Vote[];
  principals_needed?: number;
  estop_allowed?: boolean;
  requested_by?: { kind: string; id: string; name?: string } | null;
  run_id?: string | null;
  node_id?: string | null;
  created_at?: string;
  decided_at?: string | null;
  reason?: string | null;
  view?: ApprovalView;
}

export interface PermitRow {
  permit_id: string;
  device_id: string;
  capability_id: string;
  input_digest: string;
  expires_at: string;
}

export interface LedgerEntry {
  seq: number;
  ts: string;
  kind: string;
  digest?: string;
  prev_digest?: string;
  [k: string]: unknown;
}

export interface StoreStatus {
  state: 'available' | 'unavailable';
  since?: string;
  last_error?: { code?: string; message?: string };
}

export interface Attachment {
  state: string;
  attempts: number;
  last_error?: { code: string; message: string; at: string };
  next_attempt_at?: string;
}

export interface DeviceProfile {
  device_id: string;
  display_name: string;
  mode: string;
  risk_class: string;
  estop?: Estop | null;
  estop_allowed?: boolean;
}

export interface EndpointRow {
  endpoint_id: string;
  connector_id: string;
  display_name: string;
  enabled: boolean;
  transport?: string;
  conformance?: string | null;
  trust?: string | null;
  attachment?: Attachment;
  devices: DeviceProfile[];
}

export interface EndpointsAnswer {
  integration: { enabled: boolean };
  endpoints: EndpointRow[];
}

/** `GET /devices` and the `devices` event (src/server/device-feed.ts). */
export interface LiveDevice {
  device_id: string;
  display_name: string;
  mode: string;
  risk_class: string;
  estop: Estop | null;
  estop_allowed: boolean;
  safety: { estop: { engaged: boolean }; interlocks: Array<{ id: string; state: string }> } | { error: string } | null;
  gate: { status: 'open' } | { status: 'shut'; command_id: string; reason: string; since: string };
}

export interface LiveEndpoint {
  endpoint_id: string;
  connector_id: string;
  display_name: string;
  enabled: boolean;
  connection: {
    state: string;
    code?: string;
    reason?: string;
    at?: string;
    attempts?: number;
    next_attempt_at?: string;
  };
  devices: LiveDevice[];
}
