import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { getPath } from './expressions.js';
import type { NodeRegistry } from './node-registry.js';
import { MAX_CONVERSATION_PARTICIPANTS } from './nodes/conversation-gate.js';
import { openwopDir } from './schemas.js';
import { ENGINE_VERSION, EVENT_LOG_SCHEMA_VERSION } from './store.js';
import type { WorkflowDefinition } from './types.js';
import { checkRunnable, validateWorkflow } from './workflows.js';

/** Host limits that the engine enforces (advertised under `limits`). */
export interface HostLimits {
  maxNodeExecutions: number;
  maxRequestBodyBytes: number;
  /**
   * Wall-clock ceiling per run in ms (RFC 0058; ≥ 1000 per the schema): every run ends `run_timeout` once it has run
   * this long, whatever it waits on, and a run's `runTimeoutMs` above it is clamped to it.
   */
  maxRunDurationMs: number;
}

/** The default {@link HostLimits.maxRunDurationMs}: 7 days, below the 2^31 - 1 ms a Node timer can hold. */
export const DEFAULT_MAX_RUN_DURATION_MS = 7 * 24 * 60 * 60 * 1000;

/**
 * The capability families this host advertises at the document root, and only those: each one has
 * a behaviour check in test/openwop/capabilities.test.ts (a family without a check is not listed).
 */
export function baseCapabilities(limits: HostLimits, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    protocolVersion: '1.0',
    // No AI envelopes unless the aiEnvelope family is installed (it replaces the catalog and these limits).
    supportedEnvelopes: [],
    schemaVersions: {},
    limits: {
      clarificationRounds: 0,
      schemaRounds: 0,
      envelopesPerTurn: 0,
      maxNodeExecutions: limits.maxNodeExecutions,
      maxRequestBodyBytes: limits.maxRequestBodyBytes,
      maxRunDurationMs: limits.maxRunDurationMs,
    },
    implementation: { name: 'mhs-host', version: '0.1.0', vendor: 'mhs-host' },
    engineVersion: Number(ENGINE_VERSION),
    eventLogSchemaVersion: EVENT_LOG_SCHEMA_VERSION,
    supportedTransports: ['rest'],
    subWorkflow: { inputMapping: true },
    idempotency: { crossRegion: 'single-region' },
    // core.conversationGate (RFC 0005) with the multi-party roster (RFC 0101/0239): nodes/conversation-gate.ts.
    // `conversationPrimitive` stays unclaimed: it also promises the conversation.start/close suspend variants.
    multiPartyConversation: { supported: true, maxParticipants: MAX_CONVERSATION_PARTICIPANTS },
    ...extra,
  };
}

/** True when `caps` satisfies a `metadata.requiresCapability` path; `x.version-N` means `x.version >= N`. */
export function capabilityMet(caps: Record<string, unknown>, req: string): boolean {
  const min = /^(.*\.version)-(\d+)$/.exec(req);
  if (min) {
    const v = getPath({ capabilities: caps }, min[1]!);
    return typeof v === 'number' && v >= Number(min[2]);
  }
  return Boolean(getPath({ capabilities: caps }, req));
}

/**
 * True when a fixture can run here: valid, every typeId registered, every
 * `metadata.requiresCapability` advertised in `caps`, and no node pinned to an agent unless the host
 * advertises `agents.supported`.
 */
export function fixtureRunnable(
  def: WorkflowDefinition,
  registry: NodeRegistry,
  caps: Record<string, unknown>,
): boolean {
  if (checkRunnable(def, registry).length) return false;
  const req = def.metadata?.requiresCapability;
  if (typeof req === 'string' && !capabilityMet(caps, req)) return false;
  const agents = caps.agents as { supported?: unknown } | undefined;
  return agents?.supported === true || !def.nodes.some((n) => n.agent !== undefined);
}

/** The vendored conformance fixtures (`vendor/openwop/fixtures`) that this host can run, validated. */
export function runnableFixtures(registry: NodeRegistry, caps: Record<string, unknown>): WorkflowDefinition[] {
  const dir = join(openwopDir(), 'fixtures');
  const out: WorkflowDefinition[] = [];
  for (const f of readdirSync(dir)
    .filter((x) => x.endsWith('.json'))
    .sort()) {
    let def: WorkflowDefinition;
    try {
      def = validateWorkflow(JSON.parse(readFileSync(join(dir, f), 'utf8')), registry);
    } catch {
      continue;
    }
    if (fixtureRunnable(def, registry, caps)) out.push(def);
  }
  return out;
}
