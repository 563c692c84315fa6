import { ErrorCode, H, isoAt, sha256Hex } from '../../core/index.js';
import { emitOnce } from '../agents/emit-once.js';
import { NodeFailure } from '../node-registry.js';
import type { NodeContext } from '../node-registry.js';
import type { AiEnvelopeRequest, AiEnvelopeResult } from './ai-envelope-surface.js';
import type { EnvelopeModel, EnvelopeModelMessage } from './ai-envelope-model.js';
import type { EnvelopeCatalog } from './envelope-validation.js';
import type { RunEventInput } from '../types.js';
import type { SchemaIssue } from '../schemas.js';
import { envelopeOutputFormat } from './envelope-output-format.js';
import { attempted, breachTruncation, exhausted, issueText, TRUNCATION_MULTIPLIER } from './envelope-reliability.js';
import type { RetryReason } from './envelope-reliability.js';
import { modelIds, recordedCall } from './model-call.js';
import { addUsage } from './provider-usage.js';
import type { ModelUsage } from './provider-usage.js';
import { recallCheckpoint } from './recorded.js';

/** The engine limits `generate` enforces (advertised under `limits`). */
export interface EnvelopeLimits {
  /** `clarification.request`s per generation lifted to a clarification interrupt; one more breaches. */
  clarificationRounds: number;
  /** Invalid answers and `schema.request`s per generation before the node fails. */
  schemaRounds: number;
  /** Envelopes one model turn may carry (a JSON array answer). */
  envelopesPerTurn: number;
}

interface Recorded {
  request: string;
  result: AiEnvelopeResult;
  /** Clarification interrupts the generation took: a resumed node takes them again (same ordinals, same answers). */
  clarifications?: number;
}

/** The output budget doubled on a first truncation when neither the request nor the provider's usage gives one. */
const DEFAULT_BUDGET = 4096;

const FORMAT = (kind: string): string =>
  `Reply with exactly one JSON object {"type": "${kind}", "payload": <payload>} and nothing else. ` +
  'If you cannot, reply {"type": "error", "payload": {"code": "...", "message": "..."}}.';

function requestProblems(r: AiEnvelopeRequest): string[] {
  const out: string[] = [];
  if (typeof r?.systemPrompt !== 'string') out.push('/systemPrompt');
  if (typeof r?.envelopeType !== 'string' || !r.envelopeType) out.push('/envelopeType');
  if (typeof r?.idempotencyKey !== 'string' || !r.idempotencyKey) out.push('/idempotencyKey');
  if (r?.userMessage !== undefined && typeof r.userMessage !== 'string') out.push('/userMessage');
  return out;
}

function parseAnswer(text: string): { ok: true; items: unknown[] } | { ok: false; reason: string } {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return { ok: false, reason: 'the answer is not JSON' };
  }
  return { ok: true, items: Array.isArray(v) ? v : [v] };
}

/**
 * One `ctx.aiEnvelope.generate` (host-capabilities.md §host.aiEnvelope, ai-envelope.md production flow): asks the
 * model for an envelope of `envelopeType`, validates shape, kind and payload, answers `schema.request` with the
 * kind's schema, re-asks after an invalid answer up to `schemaRounds`, and returns the accepted envelope. Every
 * model answer and the result are checkpointed in the run's event log, so a resumed or replayed node gets the
 * recorded envelope without calling the model again. The result's `usage` is the sum of the generation's metered
 * model calls (the figures of their `provider.usage` events; absent when none was metered) and is recorded with it.
 */
export async function generateEnvelope(
  ctx: NodeContext,
  deps: { model: EnvelopeModel; catalog: EnvelopeCatalog; limits: EnvelopeLimits },
  request: AiEnvelopeRequest,
): Promise<AiEnvelopeResult> {
  const bad = requestProblems(request);
  if (bad.length)
    throw new NodeFailure(ErrorCode.VALIDATION_ERROR, 'aiEnvelope.generate request is invalid', { paths: bad });
  const { envelopeType, idempotencyKey } = request;
  if (!deps.catalog.has(envelopeType)) {
    throw new NodeFailure(ErrorCode.UNKNOWN_ENVELOPE_KIND, `${envelopeType} is not in supportedEnvelopes`, {
      envelopeType,
    });
  }
  const requestDigest = H(request);
  const key = `aiEnvelope:${idempotencyKey}`;
  const prior = recall<Recorded>(ctx, key);
  if (prior) {
    if (prior.request !== requestDigest) {
      throw new NodeFailure(
        ErrorCode.ENVELOPE_CORRELATION_CONFLICT,
        `idempotencyKey ${idempotencyKey} was used for another request`,
        {
          idempotencyKey,
        },
      );
    }
    // Interrupts are numbered per node activation: the node's later interrupts keep their numbers only if the
    // recorded clarifications are taken again (each returns its recorded answer at once).
    for (let i = 0; i < (prior.clarifications ?? 0); i++) await ctx.interrupt({ kind: 'clarification', data: {} });
    return prior.result;
  }
  let correlationId = `${ctx.runId}:${ctx.node.id}:${ctx.activation}:${idempotencyKey}`;
  if (correlationId.length > 128) correlationId = `sha256:${sha256Hex(correlationId)}`;
  const messages: EnvelopeModelMessage[] = [
    { role: 'system', content: `${request.systemPrompt}\n\n${FORMAT(envelopeType)}` },
    { role: 'user', content: request.userMessage ?? '' },
  ];
  let schemaRounds = 0;
  let clarifications = 0;
  let usage: ModelUsage | undefined;
  let maxTokens = request.maxTokens;
  let retry: RunEventInput[] = [];
  const output = envelopeOutputFormat(deps.catalog, envelopeType);
  const breach = async (kind: 'schema' | 'clarification' | 'envelopes', limit: number, observed: number) => {
    await ctx.emit([{ type: 'cap.breached', payload: { kind, limit, observed, nodeId: ctx.node.id } }]);
    return new NodeFailure(ErrorCode.CAP_BREACHED, `aiEnvelope ${kind} limit ${limit} exceeded`, { kind, limit });
  };
  // Every turn either returns, consumes a schema round, or is a schema.response ack (bounded by the same budget).
  for (let turn = 0; turn <= 2 * deps.limits.schemaRounds + deps.limits.clarificationRounds + 1; turn++) {
    const call = { messages, output, ...(maxTokens !== undefined ? { maxTokens } : {}) };
    const a = await recordedCall(ctx, deps.model, `${key}:turn:${turn}`, call, retry);
    retry = [];
    usage = addUsage(usage, a.usage);
    if (a.finish === 'refusal') {
      // RFC 0033 §D: never retried (envelope.refusal is in the answer's batch); a terminal failure (RFC 0032 §B.2).
      await exhausted(ctx, turn + 1, 'refusal', 'the provider refused the call');
      throw new NodeFailure(ErrorCode.ENVELOPE_REFUSAL, 'the model refused the generation', {
        ...modelIds(deps.model),
        envelopeType,
      });
    }
    if (a.finish === 'length') {
      // RFC 0033 §B: the same conversation again with twice the budget, no corrective fragment.
      schemaRounds++;
      if (schemaRounds > deps.limits.schemaRounds) {
        await exhausted(ctx, turn + 1, 'truncation', 'the answer was cut off by the token budget');
        throw await breachTruncation(ctx, deps.limits.schemaRounds, schemaRounds, envelopeType);
      }
      maxTokens = TRUNCATION_MULTIPLIER * (maxTokens ?? a.usage?.outputTokens ?? DEFAULT_BUDGET);
      retry = [attempted(ctx, turn + 2, 'truncation', null)];
      continue;
    }
    const answer = a.text;
    messages.push({ role: 'assistant', content: answer, toolCalls: [] });
    const parsed = parseAnswer(answer);
    let problem: { reason: RetryReason; text: string } | undefined;
    let issues: SchemaIssue[] = [];
    if (parsed.ok && parsed.items.length > deps.limits.envelopesPerTurn) {
      throw await breach('envelopes', deps.limits.envelopesPerTurn, parsed.items.length);
    }
    if (!parsed.ok) problem = { reason: 'parse-error', text: parsed.reason };
    else {
      const raw = parsed.items[0] as { type?: unknown; payload?: unknown; schemaVersion?: unknown } | undefined;
      const envelope: Record<string, unknown> = {
        type: raw?.type,
        envelopeId: `env_${sha256Hex(correlationId).slice(0, 26)}`,
        correlationId,
        nodeId: ctx.node.id,
        payload: raw?.payload,
        meta: {
          source: 'ai-generation',
          ts: isoAt(await ctx.checkpoint(`${key}:ts`, () => ctx.clock.now())),
          ...(ctx.traceparent ? { traceparent: ctx.traceparent } : {}),
        },
        ...(raw?.schemaVersion !== undefined ? { schemaVersion: raw.schemaVersion } : {}),
      };
      issues = deps.catalog.check(envelope);
      const type = String(envelope.type);
      if (!issues.length && type === 'clarification.request') {
        // ai-envelope.md: lifted to a `clarification` interrupt (durable: a resumed node gets the recorded answer).
        clarifications++;
        if (clarifications > deps.limits.clarificationRounds)
          throw await breach('clarification', deps.limits.clarificationRounds, clarifications);
        const outcome = await ctx.interrupt({
          kind: 'clarification',
          data: envelope.payload as Record<string, unknown>,
        });
        if (outcome.timedOut) throw new NodeFailure('clarification_timeout', 'the clarification was not answered', {});
        messages.push({ role: 'user', content: `Answers to your questions: ${JSON.stringify(outcome.resumeValue)}` });
        continue;
      }
      if (!issues.length && type === 'schema.response') continue; // side-channel ack: ask again
      if (!issues.length && type === 'schema.request') {
        schemaRounds++;
        if (schemaRounds > deps.limits.schemaRounds)
          throw await breach('schema', deps.limits.schemaRounds, schemaRounds);
        const asked = String((envelope.payload as { envelopeType: string }).envelopeType);
        const schema = deps.catalog.payloadSchema(asked);
        messages.push({
          role: 'user',
          content: schema
            ? `Payload JSON Schema of ${asked}: ${JSON.stringify(schema)}`
            : `${asked} is not a supported envelope kind (unknown_envelope_kind).`,
        });
        continue;
      }
      if (!issues.length && type !== envelopeType && type !== 'error')
        problem = { reason: 'type-mismatch', text: `the envelope type is not ${envelopeType}` };
      if (!issues.length && !problem) {
        const result: AiEnvelopeResult = {
          envelopeType: type,
          payload: envelope.payload,
          envelopeId: String(envelope.envelopeId),
          ...(usage ? { usage } : {}),
          model: deps.model.name,
          envelope,
        };
        if (type === 'error') {
          await ctx.emit([
            {
              type: 'log.appended',
              payload: {
                level: 'error',
                message: 'model returned an error envelope',
                nodeId: ctx.node.id,
                fields: { envelope },
              },
            },
          ]);
        }
        await ctx.checkpoint(key, (): Recorded => ({ request: requestDigest, result, clarifications }));
        return result;
      }
      problem ??= { reason: 'schema-violation', text: `the envelope does not validate: ${issueText(issues)}` };
    }
    schemaRounds++;
    if (schemaRounds > deps.limits.schemaRounds) {
      // ai-envelope.md §Schema-violation path (RFC 0033 §C): exhausted + cap.breached {kind: schema}, `envelope_invalid`.
      await exhausted(ctx, turn + 1, problem.reason, problem.text);
      await emitOnce(ctx, {
        type: 'cap.breached',
        payload: { kind: 'schema', limit: deps.limits.schemaRounds, observed: schemaRounds, nodeId: ctx.node.id },
      });
      throw new NodeFailure(ErrorCode.ENVELOPE_INVALID, `no valid ${envelopeType} envelope: ${problem.text}`, {
        envelopeType,
        rounds: schemaRounds,
        errors: issues,
      });
    }
    // RFC 0033 §C: a host-authored corrective fragment from the validator's output, no budget increase.
    messages.push({ role: 'user', content: `Your answer was refused (${problem.text}). ${FORMAT(envelopeType)}` });
    retry = [attempted(ctx, turn + 2, problem.reason, problem.text)];
  }
  throw new NodeFailure(ErrorCode.ENVELOPE_INVALID, `no valid ${envelopeType} envelope`, { envelopeType });
}

function recall<T>(ctx: NodeContext, name: string): T | undefined {
  const r = recallCheckpoint(ctx, name);
  return r.found ? (r.value as T) : undefined;
}
