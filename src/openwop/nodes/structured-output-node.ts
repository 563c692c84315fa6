import { Ajv2020 } from 'ajv/dist/2020.js';
import type { ValidateFunction } from 'ajv';
import { ErrorCode, HostError, jcs, isJsonObject } from '../../core/index.js';
import { NodeFailure } from '../node-registry.js';
import type { NodeContext, NodeModule } from '../node-registry.js';
import type { RecordedExecution } from '../replay-outcomes.js';

/**
 * What the conformance `mock` provider answers to one call: a JSON value, or a refusal (RFC 0032 §B.3). A refusal's
 * text is dropped: it would be checkpointed into the log, and this host has no redaction pipeline for it.
 */
export type MockAnswer = { kind: 'value'; value: unknown } | { kind: 'refusal' };

/** The most entries one program may hold (a test programs a handful). */
export const MAX_PROGRAM_ENTRIES = 100;

/**
 * Reads one program entry (host-sample-test-seams.md §5 and the RFC 0032 mock shape): a refusal is
 * `{stopReason: 'safety', refusalText?}` or `{mode: 'refusal', refusalReason?}`; a valid answer is
 * `{mode: 'envelope', envelope}`, `{envelope}`, `{content: '<JSON text>'}`, or the JSON object itself.
 */
export function parseProgramEntry(entry: unknown, index: number): MockAnswer {
  const bad = (message: string) =>
    new HostError(ErrorCode.VALIDATION_ERROR, message, { errors: [{ path: `/program/${index}`, message }] });
  if (!isJsonObject(entry)) throw bad('a program entry is an object');
  if (entry.stopReason === 'safety' || entry.mode === 'refusal' || typeof entry.refusalText === 'string')
    return { kind: 'refusal' };
  if ('envelope' in entry) return { kind: 'value', value: entry.envelope };
  if (typeof entry.content === 'string') {
    try {
      return { kind: 'value', value: JSON.parse(entry.content) as unknown };
    } catch {
      // Unparseable text is still an answer: the node fails it as an invalid envelope.
      return { kind: 'value', value: entry.content };
    }
  }
  return { kind: 'value', value: entry };
}

/**
 * The conformance `mock` provider's programs (`POST /v1/host/sample/test/mock-ai/program`): one queue of answers per
 * node id, consumed in order across runs (the original run takes entry 0, its replay entry 1). A new program replaces
 * the node's queue. In memory: programs are test staging, not run state.
 */
export class MockAiPrograms {
  private readonly queues = new Map<string, MockAnswer[]>();

  /** Replaces `nodeId`'s program; raises `validation_error` (nothing changed) for a bad entry. */
  program(nodeId: string, entries: readonly unknown[]): number {
    const parsed = entries.map((e, i) => parseProgramEntry(e, i));
    this.queues.set(nodeId, parsed);
    return parsed.length;
  }

  /** The next programmed answer for `nodeId`, or undefined when none is left. */
  next(nodeId: string): MockAnswer | undefined {
    return this.queues.get(nodeId)?.shift();
  }
}

/** A minimal instance of `schema` (required properties only): the unprogrammed mock's deterministic answer. */
export function minimalInstance(schema: unknown): unknown {
  if (!isJsonObject(schema)) return {};
  if ('const' in schema) return schema.const;
  if (Array.isArray(schema.enum) && schema.enum.length) return schema.enum[0];
  const type = Array.isArray(schema.type) ? (schema.type[0] as unknown) : schema.type;
  switch (type) {
    case 'boolean':
      return true;
    case 'integer':
    case 'number':
      return typeof schema.minimum === 'number' ? schema.minimum : 0;
    case 'string':
      return 'x'.repeat(typeof schema.minLength === 'number' ? schema.minLength : 0);
    case 'array':
      return [];
    case 'null':
      return null;
    default: {
      const props = isJsonObject(schema.properties) ? schema.properties : {};
      const required = Array.isArray(schema.required) ? (schema.required as string[]) : [];
      return Object.fromEntries(required.map((k) => [k, minimalInstance(props[k])]));
    }
  }
}

/** Problems of `value` against `schema` (paths and validator messages; empty when valid). */
export function outputSchemaProblems(schema: unknown, value: unknown): string[] {
  const v = validatorFor(schema);
  if (v(value)) return [];
  return (v.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message ?? 'invalid'}`);
}

type EnvelopeKind = 'valid' | 'refusal' | 'invalid';

const ajv = new Ajv2020({ strict: false, allErrors: true });
const compiled = new Map<string, ValidateFunction>();

function validatorFor(schema: unknown): ValidateFunction {
  const key = jcs(schema as Record<string, unknown>);
  let v = compiled.get(key);
  if (!v) {
    v = ajv.compile(schema as Record<string, unknown>);
    if (compiled.size >= 1000) compiled.clear();
    compiled.set(key, v);
  }
  return v;
}

function kindOf(answer: MockAnswer, schema: unknown): EnvelopeKind {
  if (answer.kind === 'refusal') return 'refusal';
  return validatorFor(schema)(answer.value) ? 'valid' : 'invalid';
}

/** The envelope kind the source recorded for one execution: completed = valid, failed `envelope_refusal` = refusal. */
function recordedKind(rec: RecordedExecution | undefined): 'valid' | 'refusal' | undefined {
  const o = rec?.outcome;
  if (o?.kind === 'completed') return 'valid';
  if (o?.kind === 'failed' && o.error.code === ErrorCode.ENVELOPE_REFUSAL) return 'refusal';
  return undefined;
}

/** Asks the mock once for this execution; the answer is checkpointed, so a restarted node gets the same one. */
function ask(ctx: NodeContext, programs: MockAiPrograms, name: string): Promise<MockAnswer> {
  const schema = ctx.node.config.outputSchema;
  return ctx.checkpoint<MockAnswer>(
    name,
    () => programs.next(ctx.node.id) ?? { kind: 'value', value: minimalInstance(schema) },
  );
}

/**
 * `core.ai.structuredOutput` against the conformance `mock` provider (config `provider: 'mock'`, `model`,
 * `outputSchema`; input `messages`): the answer must validate against `outputSchema` (output `{output}`), else the
 * node fails `envelope_invalid`; a refusal appends `envelope.refusal` and fails `envelope_refusal`, never retried
 * (RFC 0032 §B.3). Unprogrammed, the mock answers the schema's minimal instance. No `provider.usage`: no tokens.
 *
 * In a replay fork the node is side-effecting (resolved from the source's recorded outcome), but first the model is
 * asked again (RFC 0041 §B): when the replay's answer is a refusal where the source's was valid, or the reverse, the
 * node appends `replay.divergedAtRefusal` and fails `replay_diverged_at_refusal` instead of substituting either one.
 */
export function structuredOutputNode(programs: MockAiPrograms): NodeModule {
  return {
    typeId: 'core.ai.structuredOutput',
    validate(node) {
      const c = node.config;
      const errors: Array<{ path: string; message: string }> = [];
      // Another provider runs only on a host model (structured-output-model.ts); else it fails at execution.
      if (typeof c.provider !== 'string' || !c.provider)
        errors.push({ path: '/config/provider', message: "'mock' or a provider id" });
      if (typeof c.model !== 'string' || !c.model) errors.push({ path: '/config/model', message: 'model is required' });
      if (!isJsonObject(c.outputSchema)) errors.push({ path: '/config/outputSchema', message: 'a JSON Schema object' });
      else
        try {
          validatorFor(c.outputSchema);
        } catch (err) {
          errors.push({ path: '/config/outputSchema', message: (err as Error).message });
        }
      return errors;
    },
    async execute(ctx) {
      const { provider, model, outputSchema } = ctx.node.config as {
        provider: string;
        model: string;
        outputSchema: unknown;
      };
      if (!Array.isArray(ctx.inputs.messages))
        throw new NodeFailure(ErrorCode.VALIDATION_ERROR, 'input messages must be an array', { input: 'messages' });
      if (provider !== 'mock')
        throw new NodeFailure(ErrorCode.PROVIDER_UNAVAILABLE, `this host has no model for provider ${provider}`, {
          provider,
          model,
        });
      const answer = await ask(ctx, programs, 'mock-ai:answer');
      if (answer.kind === 'refusal') {
        // refusalText is not echoed: this host has no redaction pipeline for it (envelope-refusal-no-prompt-leak).
        await ctx.emit([
          { type: 'envelope.refusal', payload: { nodeId: ctx.node.id, provider, model, refusalText: null } },
        ]);
        throw new NodeFailure(ErrorCode.ENVELOPE_REFUSAL, 'the model refused the call', { provider, model });
      }
      const validate = validatorFor(outputSchema);
      if (!validate(answer.value))
        throw new NodeFailure(ErrorCode.ENVELOPE_INVALID, 'the answer does not match outputSchema', {
          provider,
          model,
          errors: validate.errors ?? [],
        });
      return { outputs: { output: answer.value } };
    },
    async replayCheck(ctx, rec, sourceRunId) {
      const original = recordedKind(rec);
      // Refusal divergence is checked for the conformance mock only (a real model is not asked twice).
      if (ctx.node.config.provider !== 'mock' || original === undefined || !rec?.outcome) return;
      // Checkpointed under the source's name: the replay's log.appended matches the source's (RFC 0041 §C).
      const replay = kindOf(await ask(ctx, programs, 'mock-ai:answer'), ctx.node.config.outputSchema);
      if (replay === 'invalid' || replay === original) return;
      const diverged = {
        sourceRunId,
        atSequence: rec.outcome.sequence,
        originalEventId: rec.outcome.eventId,
        nodeId: ctx.node.id,
        originalEnvelopeKind: original,
        replayEnvelopeKind: replay,
      };
      await ctx.emit([{ type: 'replay.divergedAtRefusal', payload: diverged }]);
      throw new NodeFailure(
        ErrorCode.REPLAY_DIVERGED_AT_REFUSAL,
        `the replay's answer is ${replay} where the source's was ${original}`,
        diverged,
      );
    },
  };
}
