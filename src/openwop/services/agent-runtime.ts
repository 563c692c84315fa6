import { ErrorCode, H, isoAt, sha256Hex } from '../../core/index.js';
import { NodeFailure } from '../node-registry.js';
import type { NodeContext } from '../node-registry.js';
import { openwopSchemas, schemaId } from '../schemas.js';
import type { RunEvent, RunEventInput } from '../types.js';
import type { EnvelopeModel, EnvelopeOutputFormat } from './ai-envelope-model.js';
import { choiceFormat, VOTE_FORMAT } from './agent-runtime-formats.js';
import type { AgentRefLike, AgentRuntimeSurface } from './agent-runtime-surface.js';
import { modelEffect } from './model-effect.js';
import { usageEvents } from './provider-usage.js';
import { recallCheckpoint } from './recorded.js';

/** A manifest agent the runtime can spawn (agent-manifest.schema.json: agentId, persona, modelClass, ...). */
export interface RuntimeManifest {
  agentId: string;
  persona: string;
  modelClass: string;
  systemPrompt?: string;
  [k: string]: unknown;
}

/** What the agent runtime works with. */
export interface AgentRuntimeDeps {
  /** Asked for delegation choices and consensus votes (scripted by default). */
  model: EnvelopeModel;
  /** Installed manifest agents by agentId. */
  manifests: ReadonlyMap<string, RuntimeManifest>;
  /** The run's whole event log (records of other nodes: spawned instances, delegations). */
  runEvents(runId: string): Promise<RunEvent[]>;
  /** Most instances spawned per run. */
  maxInstancesPerRun: number;
}

interface Instance {
  agentInstanceId: string;
  agentId: string;
  spawnedAt: string;
}

const PREFIX = 'agentRuntime:';
/** Upper bound on consensus rounds (each round asks every participant once). */
const MAX_ROUNDS = 10;

function fail(code: string, message: string, details: Record<string, unknown> = {}): NodeFailure {
  return new NodeFailure(code, message, details);
}

/** Records of one operation kind anywhere in the run (checkpoint values named `agentRuntime:<op>:*`). */
function records<T>(events: readonly RunEvent[], op: string): T[] {
  const out: T[] = [];
  for (const e of events) {
    const f = e.payload.fields as { checkpoint?: string; value?: { result?: T } } | undefined;
    if (e.type === 'log.appended' && f?.checkpoint?.startsWith(`${PREFIX}${op}:`) && f.value?.result)
      out.push(f.value.result);
  }
  return out;
}

function key(req: { idempotencyKey?: unknown }): string {
  if (typeof req?.idempotencyKey !== 'string' || !req.idempotencyKey)
    throw fail(ErrorCode.VALIDATION_ERROR, 'idempotencyKey is required', { path: '/idempotencyKey' });
  return req.idempotencyKey;
}

function agentRefs(list: unknown, path: string): AgentRefLike[] {
  if (!Array.isArray(list) || !list.length)
    throw fail(ErrorCode.VALIDATION_ERROR, `${path} must be a non-empty AgentRef list`, { path });
  list.forEach((r, i) => {
    const errors = openwopSchemas().check(schemaId('agent-ref'), r);
    if (errors.length) throw fail(ErrorCode.VALIDATION_ERROR, `${path}/${i} is not an AgentRef`, { path, errors });
  });
  return list as AgentRefLike[];
}

/** JSON from the model's final text (or undefined), and the call's `provider.usage` event when metered. */
async function ask(
  ctx: NodeContext,
  model: EnvelopeModel,
  name: string,
  system: string,
  user: string,
  output?: EnvelopeOutputFormat,
): Promise<{ value: unknown; usage: RunEventInput[]; cacheKey?: string }> {
  const messages = [
    { role: 'system' as const, content: system },
    { role: 'user' as const, content: user },
  ];
  let r: Awaited<ReturnType<EnvelopeModel['next']>>;
  let chunks: RunEventInput[];
  try {
    ({ reply: r, chunks } = await modelEffect(ctx, name, { model: model.name, messages, output }, (onText, sampling) =>
      model.next({ messages, tools: [], signal: ctx.signal, onText, ...(output ? { output } : {}), ...sampling }),
    ));
  } catch (err) {
    if (err instanceof NodeFailure) throw err; // the effect guard's refusal, not the provider's
    throw fail(ErrorCode.PROVIDER_UNAVAILABLE, `model ${model.name} failed`, {
      provider: model.name,
      cause: err instanceof Error ? err.message : String(err),
    });
  }
  const text = r.kind === 'final' ? r.text : (r.text ?? '');
  // The streamed text's chunks go into the same batch as the answer's record (output-stream.ts).
  const usage = [...chunks, ...usageEvents(ctx, model, { messages, tools: [] }, r)];
  const key = r.cacheKey ? { cacheKey: r.cacheKey } : {};
  try {
    return { value: JSON.parse(text) as unknown, usage, ...key };
  } catch {
    return { value: undefined, usage, ...key };
  }
}

/**
 * The `ctx.agentRuntime` surface of one node execution. Each operation runs once per idempotency key: its result
 * (and every model answer it used) is recorded in the run's event log before it is returned, so a resumed or
 * replayed node gets the recorded result without acting or asking the model again.
 */
export function agentRuntimeSurface(ctx: NodeContext, deps: AgentRuntimeDeps): AgentRuntimeSurface {
  /** Runs `work` once for `op:key`; a second call with another request under the same key is a conflict. */
  async function once<T>(op: string, req: unknown, work: (name: string) => Promise<T>): Promise<T> {
    const k = key(req as { idempotencyKey?: unknown });
    const name = `${PREFIX}${op}:${k}`;
    const digest = H(req);
    const prior = recallCheckpoint(ctx, name);
    if (prior.found) {
      const v = prior.value as { request: string; result: T };
      if (v.request !== digest)
        throw fail(ErrorCode.CONFLICT, `idempotencyKey ${k} was used for another ${op}`, { idempotencyKey: k });
      return v.result;
    }
    const result = await work(name);
    await ctx.checkpoint(name, () => ({ request: digest, result }));
    return result;
  }
  /**
   * A model answer recorded under `name` (never asked again on resume), appended in one batch with `also(answer)`,
   * so the record and the events it implies are in the log together or not at all.
   */
  async function recorded(
    name: string,
    system: string,
    user: string,
    also: (v: unknown) => RunEventInput[] = () => [],
    output?: EnvelopeOutputFormat,
  ): Promise<unknown> {
    const prior = recallCheckpoint(ctx, name);
    if (prior.found) return prior.value;
    const answer = await ask(ctx, deps.model, name, system, user, output);
    const v = answer.value ?? null;
    await ctx.emit([
      ...answer.usage,
      {
        type: 'log.appended',
        payload: {
          level: 'debug',
          message: `checkpoint ${name}`,
          nodeId: ctx.node.id,
          fields: { checkpoint: name, value: v, ...(answer.cacheKey ? { cacheKey: answer.cacheKey } : {}) },
        },
      },
      ...also(v),
    ]);
    return v;
  }
  const now = async (name: string): Promise<string> => isoAt(await ctx.checkpoint(`${name}:at`, () => ctx.clock.now()));
  const idFor = (prefix: string, name: string): string =>
    `${prefix}_${sha256Hex(`${ctx.runId}:${ctx.node.id}:${ctx.activation}:${name}`).slice(0, 24)}`;
  const known = async (): Promise<Set<string>> => {
    const ids = new Set<string>(deps.manifests.keys());
    for (const i of records<Instance>(await deps.runEvents(ctx.runId), 'spawn')) {
      ids.add(i.agentInstanceId);
      ids.add(i.agentId);
    }
    return ids;
  };

  return {
    spawn: (req) =>
      once('spawn', req, async (name) => {
        let agentId: string;
        if (typeof req.manifestId === 'string') {
          if (!deps.manifests.has(req.manifestId))
            throw fail(ErrorCode.AGENT_NOT_FOUND, `no installed agent ${req.manifestId}`, { agentId: req.manifestId });
          agentId = req.manifestId;
        } else if (req.agentRef !== undefined) {
          agentId = agentRefs([req.agentRef], '/agentRef')[0]!.agentId;
        } else throw fail(ErrorCode.VALIDATION_ERROR, 'spawn needs manifestId or agentRef', { path: '/manifestId' });
        const spawned = records<Instance>(await deps.runEvents(ctx.runId), 'spawn').length;
        if (spawned >= deps.maxInstancesPerRun)
          throw fail(ErrorCode.AGENT_SPAWN_QUOTA_EXHAUSTED, `more than ${deps.maxInstancesPerRun} agents in one run`, {
            limit: deps.maxInstancesPerRun,
          });
        const instance: Instance = { agentInstanceId: idFor('agi', name), agentId, spawnedAt: await now(name) };
        return instance;
      }).then((i) => ({ agentInstanceId: i.agentInstanceId, spawnedAt: i.spawnedAt })),

    messageSend: (req) =>
      once('message', req, async (name) => {
        const ids = await known();
        for (const [path, id] of [
          ['/fromAgentId', req.fromAgentId],
          ['/toAgentId', req.toAgentId],
        ] as const) {
          if (typeof id !== 'string' || !ids.has(id))
            throw fail(ErrorCode.AGENT_NOT_FOUND, `${String(id)} is not an agent of this run`, { agentId: id, path });
        }
        if (typeof req.channel !== 'string' || !req.channel)
          throw fail(ErrorCode.VALIDATION_ERROR, 'channel is required', { path: '/channel' });
        return { messageId: idFor('msg', name), sentAt: await now(name) };
      }),

    delegate: (req) =>
      once('delegate', req, async (name) => {
        const agents = agentRefs(req.agents, '/agents');
        if (typeof req.task !== 'string' || !req.task)
          throw fail(ErrorCode.VALIDATION_ERROR, 'task is required', { path: '/task' });
        const ids = agents.map((a) => a.agentId);
        let selected: string;
        let confidence: number | undefined;
        if (req.strategy === 'load-balanced') {
          // Fewest earlier delegations in this run wins; ties go to the first listed.
          const past = records<{ selectedAgentId: string }>(await deps.runEvents(ctx.runId), 'delegate');
          const load = (id: string): number => past.filter((d) => d.selectedAgentId === id).length;
          selected = ids.reduce((best, id) => (load(id) < load(best) ? id : best), ids[0]!);
        } else {
          const a = (await recorded(
            `${name}:choice`,
            'Choose the agent best suited to the task. Reply with JSON {"agentId": string, "confidence": number}.',
            JSON.stringify({ task: req.task, agents }),
            undefined,
            choiceFormat(ids),
          )) as { agentId?: unknown; confidence?: unknown } | null;
          if (typeof a?.agentId !== 'string' || !ids.includes(a.agentId))
            throw fail(ErrorCode.AGENT_NOT_FOUND, 'the model chose no listed agent', { choice: a?.agentId ?? null });
          selected = a.agentId;
          if (typeof a.confidence === 'number' && a.confidence >= 0 && a.confidence <= 1) confidence = a.confidence;
        }
        const threshold = typeof req.escalationThreshold === 'number' ? req.escalationThreshold : undefined;
        const escalated = threshold !== undefined && confidence !== undefined && confidence < threshold;
        return {
          selectedAgentId: selected,
          delegationId: idFor('dlg', name),
          escalated,
          ...(confidence !== undefined ? { confidence } : {}),
        };
      }),

    consensus: (req) =>
      once('consensus', req, async (name) => {
        const participants = agentRefs(req.participants, '/participants');
        if (typeof req.proposal !== 'object' || req.proposal === null)
          throw fail(ErrorCode.VALIDATION_ERROR, 'proposal must be an object', { path: '/proposal' });
        const threshold = req.threshold ?? 0.5;
        if (typeof threshold !== 'number' || !(threshold > 0 && threshold <= 1))
          throw fail(ErrorCode.VALIDATION_ERROR, 'threshold must be in (0, 1]', { path: '/threshold' });
        const maxRounds = req.maxRounds ?? 3;
        if (!Number.isInteger(maxRounds) || maxRounds < 1 || maxRounds > MAX_ROUNDS)
          throw fail(ErrorCode.VALIDATION_ERROR, `maxRounds must be 1-${MAX_ROUNDS}`, { path: '/maxRounds' });
        let proposal: unknown = req.proposal;
        let votes: Record<string, unknown> = {};
        for (let round = 1; round <= maxRounds; round++) {
          const previous = votes;
          votes = {};
          let accepts = 0;
          let amendment: unknown;
          for (const p of participants) {
            const persona = deps.manifests.get(p.agentId);
            const voteOf = (x: unknown): 'accept' | 'reject' =>
              (x as { vote?: unknown } | null)?.vote === 'accept' ? 'accept' : 'reject';
            const v = (await recorded(
              `${name}:r${round}:${p.agentId}`,
              `${persona?.systemPrompt ?? `You are ${persona?.persona ?? p.name ?? p.agentId}.`} ` +
                'Vote on the proposal. Reply with JSON {"vote": "accept" | "reject", "amendment"?: object}.',
              JSON.stringify({ proposal, round, previousVotes: previous }),
              (x) => [
                {
                  type: 'agent.decided',
                  payload: { agentId: p.agentId, decision: { consensus: name, round, vote: voteOf(x) } },
                },
              ],
              VOTE_FORMAT,
            )) as { vote?: unknown; amendment?: unknown } | null;
            const vote = voteOf(v);
            votes[p.agentId] = vote;
            if (vote === 'accept') accepts++;
            else if (amendment === undefined && v && typeof v.amendment === 'object') amendment = v.amendment;
          }
          if (accepts / participants.length >= threshold)
            return { converged: true, rounds: round, agreement: proposal, votes };
          if (amendment !== undefined) proposal = amendment;
        }
        return { converged: false, rounds: maxRounds, votes };
      }),
  };
}
