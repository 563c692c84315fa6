import { ErrorCode, HostError } from '../../core/index.js';
import type { NodeContext, NodeModule, NodeResult } from '../node-registry.js';
import type { RunEvent, WorkflowNode } from '../types.js';

/**
 * `multiPartyConversation.maxParticipants` (RFC 0101): the largest roster a `core.conversationGate` may carry. Below
 * the 64-member conformance fixture, so its refusal is witnessed (RFC 0239 §F leg 3).
 */
export const MAX_CONVERSATION_PARTICIPANTS = 16;

/** The only lifecycle this host runs: open, one or more exchanges, close (RFC 0005). */
const LIFECYCLES = new Set(['open-exchange-close']);

/** A recorded turn: `conversation.exchanged.outcome`, and one message of the conversation channel. */
export interface ConversationTurn {
  role: 'agent' | 'user';
  speakerId?: string;
  content: string;
}

/** The configured roster's agent ids, in order (empty when the gate has none). */
export function rosterOf(node: WorkflowNode): string[] {
  const p = node.config.participants;
  if (!Array.isArray(p)) return [];
  return p
    .map((x) => (x && typeof x === 'object' ? (x as { agentId?: unknown }).agentId : undefined))
    .filter((id): id is string => typeof id === 'string');
}

/** `config.maxTurns` (alias `turnCount`): turns before the conversation closes itself; default 1. */
function maxTurnsOf(node: WorkflowNode): number {
  const v = node.config.maxTurns ?? node.config.turnCount;
  return typeof v === 'number' && Number.isInteger(v) && v >= 1 ? v : 1;
}

function configProblems(node: WorkflowNode): Array<{ path: string; message: string }> {
  const c = node.config;
  const out: Array<{ path: string; message: string }> = [];
  if (c.lifecycle !== undefined && !LIFECYCLES.has(c.lifecycle as string))
    out.push({ path: '/config/lifecycle', message: 'lifecycle must be open-exchange-close' });
  if (c.mockAutoResume !== undefined && typeof c.mockAutoResume !== 'boolean')
    out.push({ path: '/config/mockAutoResume', message: 'mockAutoResume must be a boolean' });
  for (const k of ['maxTurns', 'turnCount', 'timeoutMs'] as const) {
    const v = c[k];
    if (v !== undefined && !(typeof v === 'number' && Number.isInteger(v) && v >= 1))
      out.push({ path: `/config/${k}`, message: `${k} must be an integer >= 1` });
  }
  if (c.participants !== undefined) {
    const p = c.participants;
    const ids = rosterOf(node);
    if (!Array.isArray(p) || p.length < 2)
      out.push({ path: '/config/participants', message: 'participants must be an array of at least 2 AgentRefs' });
    else if (ids.length !== p.length || ids.some((id) => id.length < 3 || id.length > 256))
      out.push({ path: '/config/participants', message: 'every participant needs an agentId of 3-256 characters' });
    else if (new Set(ids).size !== ids.length)
      out.push({ path: '/config/participants', message: 'participant agentIds must be unique' });
  }
  return out;
}

const invalid = (path: string, message: string): HostError =>
  new HostError(ErrorCode.VALIDATION_ERROR, message, { path: `/resumeValue${path}` });

/**
 * The turn in a resolution's resume value `{role?, speakerId?, content, close?}`, checked before it is recorded
 * (RFC 0101/0239): an agent turn names its speaker; with a roster, a speaker off it is refused
 * `conversation_speaker_not_participant`. `close: true` alone ends the conversation without a turn.
 */
export function turnOf(roster: readonly string[], value: unknown): { turn?: ConversationTurn; close: boolean } {
  if (!value || typeof value !== 'object' || Array.isArray(value)) throw invalid('', 'a turn must be an object');
  const v = value as Record<string, unknown>;
  if (v.close !== undefined && typeof v.close !== 'boolean') throw invalid('/close', 'close must be a boolean');
  const close = v.close === true;
  if (v.speakerId !== undefined && (typeof v.speakerId !== 'string' || v.speakerId.length === 0))
    throw invalid('/speakerId', 'speakerId must be a non-empty string');
  const speakerId = v.speakerId as string | undefined;
  if (v.role !== undefined && v.role !== 'agent' && v.role !== 'user')
    throw invalid('/role', 'role must be agent or user');
  const role = (v.role as 'agent' | 'user' | undefined) ?? (speakerId !== undefined ? 'agent' : 'user');
  if (role === 'agent' && speakerId === undefined) throw invalid('/speakerId', 'an agent turn needs a speakerId');
  if (speakerId !== undefined && roster.length > 0 && !roster.includes(speakerId)) {
    throw new HostError(
      ErrorCode.CONVERSATION_SPEAKER_NOT_PARTICIPANT,
      `speaker ${speakerId} is not a participant of this conversation`,
      { speakerId },
    );
  }
  if (v.content === undefined && close) return { close };
  if (typeof v.content !== 'string') throw invalid('/content', 'a turn needs content (a string)');
  return { turn: { role, ...(speakerId !== undefined ? { speakerId } : {}), content: v.content }, close };
}

/** The deterministic turn the host's conformance mock supplies for turn `i` (`mockAutoResume: true`). */
function mockTurn(roster: readonly string[], i: number): ConversationTurn {
  return {
    role: 'agent',
    speakerId: roster[i % Math.max(1, roster.length)] ?? 'host:conversation-mock',
    content: 'Mock reply.',
  };
}

const recorded = (history: readonly RunEvent[], type: string, conversationId: string, turnIndex?: number): boolean =>
  history.some(
    (e) =>
      e.type === type &&
      e.payload.conversationId === conversationId &&
      (turnIndex === undefined || e.payload.turnIndex === turnIndex),
  );

/**
 * Runs one conversation: `conversation.opened` (with the roster), then per turn a `conversation.exchange`
 * interrupt whose checked resume value is recorded as `conversation.exchanged` (turnIndex 0, 1, ...), until
 * `maxTurns` turns (reason `max-turns`), a turn with `close: true` (reason `goal-reached`) or a turn not given
 * within `timeoutMs` (reason `timeout`); then `conversation.closed`. Resumable: a restarted node gets its recorded answers back in order and appends only
 * the conversation events its history lacks.
 */
async function converse(ctx: NodeContext): Promise<NodeResult> {
  const c = ctx.node.config;
  const roster = rosterOf(ctx.node);
  const maxTurns = maxTurnsOf(ctx.node);
  const conversationId = `${ctx.runId}:${ctx.node.id}:${ctx.activation}`;
  if (!recorded(ctx.history, 'conversation.opened', conversationId)) {
    const participants = Array.isArray(c.participants) ? c.participants : undefined;
    await ctx.emit([
      {
        type: 'conversation.opened',
        payload: {
          conversationId,
          ...(participants ? { participants } : {}),
          ...(typeof c.title === 'string' ? { title: c.title } : {}),
        },
      },
    ]);
  }
  const transcript: ConversationTurn[] = [];
  let reason = 'max-turns';
  for (let i = 0; i < maxTurns; i++) {
    let step: { turn?: ConversationTurn; close: boolean };
    if (c.mockAutoResume === true) {
      step = { turn: mockTurn(roster, i), close: false };
    } else {
      const outcome = await ctx.interrupt({
        kind: 'conversation.exchange',
        data: {
          conversationId,
          prompt: typeof c.prompt === 'string' && c.prompt.length > 0 ? c.prompt : 'Your turn.',
          turnIndex: i,
        },
        ...(typeof c.timeoutMs === 'number' && c.timeoutMs > 0 ? { timeoutMs: c.timeoutMs } : {}),
        checkResume: (v) => void turnOf(roster, v.resumeValue),
      });
      if (outcome.timedOut) {
        reason = 'timeout';
        break;
      }
      step = turnOf(roster, outcome.resumeValue.resumeValue);
    }
    if (step.turn) {
      transcript.push(step.turn);
      if (!recorded(ctx.history, 'conversation.exchanged', conversationId, i)) {
        await ctx.emit([
          { type: 'conversation.exchanged', payload: { conversationId, turnIndex: i, outcome: step.turn } },
        ]);
      }
    }
    if (step.close) {
      reason = 'goal-reached';
      break;
    }
  }
  if (!recorded(ctx.history, 'conversation.closed', conversationId)) {
    await ctx.emit([
      { type: 'conversation.closed', payload: { conversationId, reason, turnCount: transcript.length } },
    ]);
  }
  return { outputs: { conversationId, turnCount: transcript.length, closeReason: reason, transcript } };
}

/**
 * `core.conversationGate` (RFC 0005; roster RFC 0101/0239): a multi-turn conversation whose turns are resolutions
 * of `conversation.exchange` interrupts (`POST /v1/runs/{runId}/interrupts/{nodeId}` with
 * `{resumeValue: {role?, speakerId?, content, close?}}`), or the host's mock turns under `mockAutoResume: true`.
 * A roster over {@link MAX_CONVERSATION_PARTICIPANTS} refuses run creation (`conversation_roster_exceeded`).
 */
export const conversationGateNode: NodeModule = {
  typeId: 'core.conversationGate',
  validate: configProblems,
  admit(node) {
    const size = rosterOf(node).length;
    if (size > MAX_CONVERSATION_PARTICIPANTS) {
      throw new HostError(
        ErrorCode.CONVERSATION_ROSTER_EXCEEDED,
        `node ${node.id} has ${size} participants; this host allows at most ${MAX_CONVERSATION_PARTICIPANTS}`,
        { maxParticipants: MAX_CONVERSATION_PARTICIPANTS, nodeId: node.id, size },
      );
    }
  },
  execute: converse,
};
