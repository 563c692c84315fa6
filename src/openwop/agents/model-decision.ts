/**
 * The supervisor's decision from a model (issue 15): when `core.orchestrator.supervisor` has no mock plan and the host
 * has a model, the model is asked for one `OrchestratorDecision` (orchestrator-decision.schema.json, with
 * `confidence`) through its structured output. Config: `workers` (the worker workflow ids it may dispatch; required
 * to dispatch), `systemPrompt` (the goal), `maxTokens`.
 */
import { ErrorCode } from '../../core/index.js';
import type { NodeContext } from '../node-registry.js';
import { openwopSchemas, schemaId } from '../schemas.js';
import type { EnvelopeModel, EnvelopeOutputFormat } from '../services/ai-envelope-model.js';
import { askStructured } from '../services/structured-ask.js';
import type { OrchestratorDecision } from './dispatch-turn.js';

/** Invalid answers re-asked before the supervisor fails `envelope_validation_failed`. */
const DECISION_ROUNDS = 2;

/** The worker ids of a supervisor config. */
export function workersOf(config: Record<string, unknown>): string[] {
  return Array.isArray(config.workers) ? config.workers.filter((w): w is string => typeof w === 'string') : [];
}

/**
 * The decision schema a provider is given: one flat object (object root, no `oneOf`) whose `kind` selects the
 * fields; `nextWorkerIds` is limited to the configured workers and `confidence` is asked for. The host validates
 * the answer against the real schema.
 */
export function decisionFormat(workers: readonly string[]): EnvelopeOutputFormat {
  return {
    name: 'orchestrator_decision',
    schema: {
      type: 'object',
      required: ['kind', 'confidence'],
      properties: {
        kind: { type: 'string', enum: workers.length ? ['next-worker', 'ask-user', 'terminate'] : ['terminate'] },
        nextWorkerIds: { type: 'array', minItems: 1, items: { type: 'string', enum: [...workers] } },
        prompt: { type: 'string' },
        reason: { type: 'string' },
        confidence: { type: 'number', minimum: 0, maximum: 1 },
      },
      additionalProperties: false,
    },
  };
}

function problems(value: unknown, workers: readonly string[]): string[] {
  const issues = openwopSchemas()
    .check(schemaId('orchestrator-decision'), value)
    .map((i) => `${i.path} ${i.message}`);
  if (issues.length) return issues;
  const ids = (value as { nextWorkerIds?: string[] }).nextWorkerIds ?? [];
  return ids.filter((id) => !workers.includes(id)).map((id) => `/nextWorkerIds: ${JSON.stringify(id)} is no worker`);
}

const SYSTEM = (goal: string, workers: readonly string[]) =>
  [
    'You are the supervisor of a workflow run. Decide the next step as one OrchestratorDecision JSON object:',
    '{"kind": "next-worker", "nextWorkerIds": [<worker id>], "confidence": <0..1>} to run a worker,',
    '{"kind": "terminate", "reason": "...", "confidence": <0..1>} when the goal is reached or cannot be,',
    '{"kind": "ask-user", "prompt": "..."} to ask the operator.',
    `Workers: ${workers.length ? workers.join(', ') : '(none: terminate)'}.`,
    goal,
  ]
    .filter(Boolean)
    .join('\n');

/** What the model sees of the run: the turn, the inputs, the variables and the other nodes' latest outputs. */
function runState(ctx: NodeContext): string {
  return JSON.stringify({
    turn: ctx.activation,
    inputs: ctx.inputs,
    variables: ctx.variables,
    outputs: ctx.nodeOutputs ?? {},
  });
}

/**
 * Asks `model` for this activation's decision (each call recorded: a resumed supervisor asks nothing again).
 * @throws NodeFailure `envelope_validation_failed`, `envelope_refusal`, `envelope_truncation_unrecoverable`,
 * `provider_unavailable`.
 */
export async function modelDecision(ctx: NodeContext, model: EnvelopeModel): Promise<OrchestratorDecision> {
  const c = ctx.node.config;
  const workers = workersOf(c);
  const { value } = await askStructured(ctx, model, {
    key: 'orchestrator:model',
    system: SYSTEM(typeof c.systemPrompt === 'string' ? c.systemPrompt : '', workers),
    user: runState(ctx),
    output: decisionFormat(workers),
    rounds: DECISION_ROUNDS,
    ...(typeof c.maxTokens === 'number' ? { maxTokens: c.maxTokens } : {}),
    check: (v) => problems(v, workers),
    invalidCode: ErrorCode.ENVELOPE_VALIDATION_FAILED,
  });
  return value as OrchestratorDecision;
}
