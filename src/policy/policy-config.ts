import { readFileSync } from 'node:fs';
import { lazyValidator } from '../core/lazy-validator.js';
import { ErrorCode, HostError } from '../core/index.js';
import type { RiskClass } from '../mhs/wire-types.js';
import { DEPLOYMENT_SCHEMA, NO_DOCUMENT_DEPLOYMENT, deploymentFromSection } from './deployment-policy.js';
import type { DeploymentPolicy } from './deployment-policy.js';

/** A policy rule that may approve a call without a human, within {@link PolicyConfig.autoApproveUpTo}. */
export interface PolicyRule {
  /** Recorded as the system principal `policy:<id>` (HOST-044). */
  id: string;
  endpoint_id?: string;
  device_id?: string;
  capability_id?: string;
}

/**
 * The host's approval policy, loaded from a trusted operator file, never from a model.
 * Deny by default (HOST-043): anything not explicitly allowed waits for a human or is refused.
 */
export interface PolicyConfig {
  /** Host conformance target; at CL3 and above a policy rule never approves R2+ (HOST-032). */
  conformance: 'CL1' | 'CL2' | 'CL3' | 'CL4' | 'CL5';
  /** Highest risk class a policy rule may approve; `null` disables policy approval. */
  autoApproveUpTo: RiskClass | null;
  /** Calls at or above this risk class need an approval even without `permit.required`. */
  requireApprovalFrom: RiskClass;
  rules: PolicyRule[];
  /** Cap on permit TTLs the host requests (the binding's `ttl_ms` is used when smaller). */
  maxPermitTtlMs: number;
  /** When set, an approval request not decided in this time is refused (never approved: HOST-043). */
  approvalTimeoutMs: number | null;
  /** Devices the trusted e-stop may target (HOST-094). `"*"` matches any device of the endpoint. */
  estopAllow: Array<{ endpoint_id: string; device_id: string }>;
  /**
   * The deployment policy (HOST-090), applied by the engine to every connector before any session opens.
   * Absent = no `deployment` section: {@link NO_DOCUMENT_DEPLOYMENT} (enabled, no hardware).
   */
  deployment?: DeploymentPolicy;
  /** Retention of the host ledger (HOST-056), applied on a schedule by the long-running host; see {@link retentionOf}. */
  retention?: Partial<RetentionPolicy>;
}

/**
 * Retention (HOST-056). The ledger is a hash chain, so only a prefix can go, anchored on a checkpoint: a prefix is
 * pruned when every entry in it is older than `ledger_s` and every endpoint receipt in it older than `receipts_s`.
 * Nothing at or after the first unsettled command's intent is ever pruned (HOST-091).
 */
export interface RetentionPolicy {
  /** Off: nothing is pruned on a schedule (manual `mhs-host ledger prune` still works). */
  enabled: boolean;
  /** How long the host keeps its own entries (s). */
  ledger_s: number;
  /** How long the host keeps the endpoints' receipts it recorded (s). */
  receipts_s: number;
  /** How often the schedule runs (s); each run also appends the checkpoint a later run may prune up to. */
  interval_s: number;
}

/** 90 days for both, checked hourly. */
export const DEFAULT_RETENTION: RetentionPolicy = {
  enabled: true,
  ledger_s: 90 * 86_400,
  receipts_s: 90 * 86_400,
  interval_s: 3_600,
};

/** The retention `cfg` asks for, defaults filled; null when there is no policy (then nothing is pruned). */
export function retentionOf(cfg: PolicyConfig | null | undefined): RetentionPolicy | null {
  if (!cfg) return null;
  return { ...DEFAULT_RETENTION, ...(cfg.retention ?? {}) };
}

export const DEFAULT_POLICY: PolicyConfig = {
  conformance: 'CL5',
  autoApproveUpTo: 'R1',
  requireApprovalFrom: 'R2',
  rules: [],
  maxPermitTtlMs: 300_000,
  approvalTimeoutMs: null,
  estopAllow: [],
};

const RISK = { type: 'string', enum: ['R0', 'R1', 'R2', 'R3'] } as const;
const SCHEMA = {
  type: 'object',
  additionalProperties: false,
  properties: {
    conformance: { type: 'string', enum: ['CL1', 'CL2', 'CL3', 'CL4', 'CL5'] },
    autoApproveUpTo: { oneOf: [RISK, { type: 'null' }] },
    requireApprovalFrom: RISK,
    rules: {
      type: 'array',
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['id'],
        properties: {
          id: { type: 'string', minLength: 1 },
          endpoint_id: { type: 'string' },
          device_id: { type: 'string' },
          capability_id: { type: 'string' },
        },
      },
    },
    maxPermitTtlMs: { type: 'integer', minimum: 1000 },
    approvalTimeoutMs: { oneOf: [{ type: 'integer', minimum: 1 }, { type: 'null' }] },
    estopAllow: {
      type: 'array',
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['endpoint_id', 'device_id'],
        properties: { endpoint_id: { type: 'string' }, device_id: { type: 'string' } },
      },
    },
    deployment: DEPLOYMENT_SCHEMA,
    retention: {
      type: 'object',
      additionalProperties: false,
      properties: {
        enabled: { type: 'boolean' },
        ledger_s: { type: 'integer', minimum: 1 },
        receipts_s: { type: 'integer', minimum: 1 },
        interval_s: { type: 'integer', minimum: 1, maximum: 86_400 },
      },
    },
  },
};

const validate = lazyValidator(SCHEMA, { allErrors: true });

/**
 * Validates a partial policy document and fills defaults. Raises `MHS.HOST.CONFIG_INVALID` with
 * `details.errors` when the document does not match.
 */
export function parsePolicyConfig(doc: unknown): PolicyConfig {
  if (!validate(doc)) {
    const errors = (validate.errors ?? []).map((e) => ({ path: e.instancePath || '/', message: e.message }));
    // The fields in the message too: a CLI prints the message, not the details.
    const where = errors.map((e) => `${e.path} ${e.message ?? 'is invalid'}`).join('; ');
    throw new HostError(ErrorCode.HOST_CONFIG_INVALID, `policy document is invalid: ${where}`, { errors });
  }
  const cfg: PolicyConfig = { ...DEFAULT_POLICY, ...(doc as Partial<PolicyConfig>) };
  // HOST-090: a given section defaults both flags to false; only JSON true enables one.
  if (cfg.deployment) cfg.deployment = deploymentFromSection(cfg.deployment);
  return cfg;
}

/**
 * The deployment policy `cfg` carries: its `deployment` section, or {@link NO_DOCUMENT_DEPLOYMENT} without one;
 * null when there is no policy (unavailable: every deployment decision refuses, HOST-043).
 */
export function deploymentOf(cfg: PolicyConfig | null | undefined): DeploymentPolicy | null {
  if (!cfg) return null;
  return cfg.deployment ? deploymentFromSection(cfg.deployment) : NO_DOCUMENT_DEPLOYMENT;
}

/**
 * Reads and validates a policy document from a trusted file (the operator's, never a model's).
 * Raises `MHS.HOST.CONFIG_INVALID` with `details.path` when it cannot be read or parsed, or with
 * `details.errors` when it does not match.
 */
export function loadPolicyFile(path: string): PolicyConfig {
  let doc: unknown;
  try {
    doc = JSON.parse(readFileSync(path, 'utf8'));
  } catch (err) {
    throw new HostError(ErrorCode.HOST_CONFIG_INVALID, `cannot read policy file ${path}`, { path }, { cause: err });
  }
  return parsePolicyConfig(doc);
}
