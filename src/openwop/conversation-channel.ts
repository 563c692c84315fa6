import type { RunEvent, WorkflowDefinition } from './types.js';

/**
 * The run snapshot's `channels` (run-snapshot.schema.json): each channel the workflow declares that a
 * `core.conversationGate` writes to (`config.channel`, default `conversation`) holds that gate's turns in order, one
 * message per `conversation.exchanged` event (`{messageId, conversationId, turnIndex, role, speakerId?, content}`).
 * A fold over the event log, so a restarted or replayed run projects the same transcript. Absent when no gate
 * writes to a declared channel.
 */
export function conversationChannels(
  def: WorkflowDefinition,
  events: readonly RunEvent[],
): { channels?: Record<string, unknown[]> } {
  const declared = def.channels && typeof def.channels === 'object' ? (def.channels as Record<string, unknown>) : {};
  const channelOf = new Map<string, string>();
  for (const n of def.nodes) {
    if (n.typeId !== 'core.conversationGate') continue;
    const name = typeof n.config.channel === 'string' ? n.config.channel : 'conversation';
    if (name in declared) channelOf.set(n.id, name);
  }
  if (channelOf.size === 0) return {};
  const channels: Record<string, unknown[]> = {};
  for (const name of channelOf.values()) channels[name] = [];
  for (const e of events) {
    const name = e.type === 'conversation.exchanged' && e.nodeId ? channelOf.get(e.nodeId) : undefined;
    if (!name) continue;
    const { conversationId, turnIndex, outcome } = e.payload as {
      conversationId: string;
      turnIndex: number;
      outcome?: Record<string, unknown>;
    };
    channels[name]!.push({ messageId: `${conversationId}:${turnIndex}`, conversationId, turnIndex, ...outcome });
  }
  return { channels };
}
