import { Ajv2020 } from 'ajv/dist/2020.js';
import type { ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { ErrorCode, HostError, createIdFactory, isoAt } from '../core/index.js';
import type { IdFactory } from '../core/index.js';
import type { OpenwopStore } from './store.js';
import type { RunStatus, WorkflowDefinition } from './types.js';

const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ?? addFormatsModule) as (
  ajv: Ajv2020,
) => void;

/**
 * The request body of `seedEra2EventLog` (api/seams-v2.yaml, openwop/openwop @ 032b7c4ea6bb, operation
 * `POST /conformance/seams/sample/event-log/seed`), as published.
 */
const SEED_BODY_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: ['eventLogSchemaVersion', 'status', 'events'],
  properties: {
    eventLogSchemaVersion: { const: 2 },
    status: { type: 'string', enum: ['running', 'completed', 'failed', 'cancelled'] },
    events: {
      type: 'array',
      minItems: 1,
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['type', 'sequence', 'payload'],
        properties: {
          type: { type: 'string' },
          sequence: { type: 'integer', minimum: 0 },
          payload: { type: 'object' },
          timestamp: { type: 'string', format: 'date-time' },
          causationId: { type: 'string' },
        },
      },
    },
  },
} as const;

/** One seeded row, in the v1 vocabulary it is stored in. */
export interface SeedEvent {
  type: string;
  sequence: number;
  payload: Record<string, unknown>;
  timestamp?: string;
  causationId?: string;
}

/** A validated seed request. */
export interface Era2Seed {
  eventLogSchemaVersion: 2;
  status: Extract<RunStatus, 'running' | 'completed' | 'failed' | 'cancelled'>;
  events: SeedEvent[];
}

/** The workflow a seeded log names when its `run.started` names none (or none is registered). */
const SEEDED_WORKFLOW = 'era2-seeded';

let validate: ValidateFunction | undefined;

/**
 * Checks a seed body against the published request schema and that its sequences are distinct (one row per
 * sequence, persistence.md); raises `validation_error` with `details.errors[{path, message}]`, nothing written.
 */
export function parseEra2Seed(body: unknown): Era2Seed {
  if (!validate) {
    const ajv = new Ajv2020({ allErrors: true, strict: false });
    addFormats(ajv);
    validate = ajv.compile(SEED_BODY_SCHEMA);
  }
  if (!validate(body)) {
    const errors = (validate.errors ?? []).map((e) => ({ path: e.instancePath || '/', message: e.message ?? '' }));
    throw new HostError(ErrorCode.VALIDATION_ERROR, 'the event-log seed body is not valid (api/seams-v2.yaml)', {
      errors,
    });
  }
  const seed = body as Era2Seed;
  const seen = new Set<number>();
  seed.events.forEach((e, i) => {
    if (seen.has(e.sequence))
      throw new HostError(ErrorCode.VALIDATION_ERROR, `sequence ${e.sequence} appears twice in the seed`, {
        errors: [{ path: `/events/${i}/sequence`, message: 'each sequence at most once' }],
      });
    seen.add(e.sequence);
  });
  return seed;
}

function placeholder(id: string): WorkflowDefinition {
  return { id, name: id, version: '0', nodes: [], edges: [], triggers: [], variables: [], metadata: {}, settings: {} };
}

/**
 * Persists a run whose log is the seed's rows verbatim (RFC 0176 §A; the `seedEra2EventLog` seam): the given `type`
 * strings (no translation at write time, no check against the v1 event schema: the point is what the v2 read
 * projection makes of them), the given sequences, payloads, timestamps (else now) and causation ids; a fresh event id
 * per row. The run row holds the seed's `status`, no principal (so it reads with the legacy owner, identity.md §1.2)
 * and no era stamp (so it reads as era 2, event-log-era.ts; the one creation path that does not stamp 3). Its
 * definition is the registered workflow its `run.started` names, else an empty one. A `running` seed is not driven by
 * this process (no actor; a restart's recovery may pick it up). One transaction: the run and its rows, or nothing.
 */
export async function seedEra2Run(
  store: OpenwopStore,
  seed: Era2Seed,
  ids: IdFactory = createIdFactory(store.clock),
): Promise<string> {
  await store.init();
  const rows = [...seed.events].sort((a, b) => a.sequence - b.sequence);
  const now = isoAt(store.clock.now());
  const started = rows.find((e) => e.type === 'run.started');
  const named = started?.payload.workflowId;
  const workflowId = typeof named === 'string' && named ? named : SEEDED_WORKFLOW;
  const def = (await store.getWorkflow(workflowId)) ?? placeholder(workflowId);
  const terminal = seed.status !== 'running';
  const runId = store.newRunId();
  const at = (e: SeedEvent | undefined): string | null => (e ? (e.timestamp ?? now) : null);
  await store.db.tx(async (t) => {
    await t.run(
      `INSERT INTO openwop_runs (run_id, workflow_id, workflow_version, definition, status, parent_run_id, parent_node_id,
        inputs, variables, tags, metadata, configurable, principal, idempotency_key, request_digest, traceparent, error,
        created_at, started_at, completed_at, last_seq)
       VALUES (?, ?, ?, ?, ?, NULL, NULL, '{}', '{}', '[]', ?, '{}', NULL, NULL, NULL, NULL, NULL, ?, ?, ?, ?)`,
      [
        runId,
        def.id,
        def.version,
        JSON.stringify(def),
        seed.status,
        JSON.stringify({ seededEra: seed.eventLogSchemaVersion }),
        at(rows[0]) ?? now,
        at(started),
        terminal ? at(rows.at(-1)) : null,
        rows.at(-1)!.sequence,
      ],
    );
    for (const e of rows)
      await t.run(
        'INSERT INTO openwop_events (run_id, sequence, event_id, type, node_id, causation_id, ts, payload) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
        [
          runId,
          e.sequence,
          ids.next('event'),
          e.type,
          null,
          e.causationId ?? null,
          e.timestamp ?? now,
          JSON.stringify(e.payload),
        ],
      );
  });
  return runId;
}
