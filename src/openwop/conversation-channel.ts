import type { RunEvent, WorkflowDefinition } from './types.js';

/**
 * The run snapshot's `channels` (run-snapshot.schema.json): each channel the workflow declares that a
 * `core.conversationGate` writes to (`config.channel`, default `conversation`) holds that gate's turns in order, one
 * message per `conversation.exchanged` event (`{messageId, conversationId, turnIndex, role, speakerId?, content}`).
 * A fold over the event log, so a restarted run projects the same transcript, and a replay fork (where the gate
 * resolves from the source's recorded outcome) the source's, message for message (RFC 0005 §G). Absent when no
 * gate writes to a declared channel.
 */
export function conversationChannels(
  def: WorkflowDefinition,
  events: readonly RunEvent[],
): { channels?: Record<string, unknown[]> } {
  const f = new ChannelFold(def);
  for (const e of events) f.apply(e);
  return f.value();
}

/** The transcript of {@link conversationChannels}, folded one event at a time. */
export class ChannelFold {
  private readonly channelOf = new Map<string, string>();
  private readonly channels: Record<string, unknown[]> = {};

  constructor(def: WorkflowDefinition) {
    const declared = def.channels && typeof def.channels === 'object' ? (def.channels as Record<string, unknown>) : {};
    for (const n of def.nodes) {
      if (n.typeId !== 'core.conversationGate') continue;
      const name = typeof n.config.channel === 'string' ? n.config.channel : 'conversation';
      if (name in declared) this.channelOf.set(n.id, name);
    }
    for (const name of this.channelOf.values()) this.channels[name] = [];
  }

  apply(e: RunEvent): void {
    const name = e.nodeId ? this.channelOf.get(e.nodeId) : undefined;
    if (!name) return;
    if (e.type === 'conversation.exchanged') {
      this.channels[name]!.push(message(e.payload.conversationId, e.payload.turnIndex as number, e.payload.outcome));
    } else if (e.type === 'node.completed' && e.payload.replayedFrom !== undefined) {
      // A replay fork resolves the gate from the source's recorded outcome (replay.ts): its transcript is the turns.
      const out = (e.payload.outputs ?? {}) as { conversationId?: unknown; transcript?: unknown };
      if (Array.isArray(out.transcript))
        out.transcript.forEach((t, i) => this.channels[name]!.push(message(out.conversationId, i, t)));
    }
  }

  value(): { channels?: Record<string, unknown[]> } {
    if (this.channelOf.size === 0) return {};
    const channels: Record<string, unknown[]> = {};
    for (const [name, list] of Object.entries(this.channels)) channels[name] = [...list];
    return { channels };
  }
}

function message(conversationId: unknown, turnIndex: number, outcome: unknown): Record<string, unknown> {
  return {
    messageId: `${String(conversationId)}:${turnIndex}`,
    conversationId,
    turnIndex,
    ...(outcome as Record<string, unknown> | undefined),
  };
}
