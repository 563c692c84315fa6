// The MCP tool-call node after a host restart: a node resumed with an `agent.toolReturned` already in its history
// completes from that record without calling the tool again; one resumed after `agent.toolCalled` only sends the
// call again (at least once) without recording a second `agent.toolCalled`.
import { describe, expect, it } from 'vitest';
import { RealClock } from '../../src/core/index.js';
import type { NodeContext } from '../../src/openwop/node-registry.js';
import { executeMcpToolCall } from '../../src/openwop/nodes/mcp-nodes.js';
import type { McpSurface } from '../../src/openwop/services/mcp-surface.js';
import type { RunEvent, RunEventInput } from '../../src/openwop/types.js';
import { workflowNode } from './service-test-kit.js';

const RESULT = { content: [{ type: 'text', text: 'recorded' }] };

function event(sequence: number, type: string, payload: Record<string, unknown>): RunEvent {
  return { eventId: `e${sequence}`, runId: 'run_1', sequence, type, payload, timestamp: '2026-01-01T00:00:00Z' };
}

function ctxWith(history: RunEvent[], calls: string[], emitted: RunEventInput[]): NodeContext {
  const mcp: McpSurface = {
    callTool: (serverId, name) => {
      calls.push(`${serverId}/${name}`);
      return Promise.resolve({ content: [{ type: 'text', text: 'fresh' }] });
    },
    listTools: () => Promise.reject(new Error('unused')),
    readResource: () => Promise.reject(new Error('unused')),
    serverHealth: () => Promise.reject(new Error('unused')),
  };
  return {
    runId: 'run_1',
    node: workflowNode({ typeId: 'core.ai.callPrompt', config: { mcp: { tool: 'echo', arguments: { text: 'x' } } } }),
    activation: 1,
    inputs: {},
    variables: {},
    resumed: true,
    history,
    signal: new AbortController().signal,
    clock: new RealClock(),
    traceparent: undefined,
    emit: (events: RunEventInput[]) => {
      emitted.push(...events);
      return Promise.resolve([]);
    },
    mcp,
  } as unknown as NodeContext;
}

describe('executeMcpToolCall on resume', () => {
  it('completes from a recorded agent.toolReturned without calling the tool', async () => {
    const calls: string[] = [];
    const emitted: RunEventInput[] = [];
    const callId = 'run_1:n:1';
    const history = [
      event(1, 'agent.toolCalled', { agentId: 'core.system', toolName: 'echo', callId }),
      event(2, 'agent.toolReturned', { agentId: 'core.system', toolName: 'echo', callId, outcome: RESULT }),
    ];
    const out = await executeMcpToolCall(ctxWith(history, calls, emitted), 'srv');
    expect(calls).toEqual([]);
    expect(emitted).toEqual([]);
    expect(out.outputs?.result).toEqual(RESULT);
    expect(out.outputs?.text).toBe('<UNTRUSTED>recorded</UNTRUSTED>');
  });

  it('sends the call again after agent.toolCalled alone, recording only the return', async () => {
    const calls: string[] = [];
    const emitted: RunEventInput[] = [];
    const history = [event(1, 'agent.toolCalled', { agentId: 'core.system', toolName: 'echo', callId: 'run_1:n:1' })];
    const out = await executeMcpToolCall(ctxWith(history, calls, emitted), 'srv');
    expect(calls).toEqual(['srv/echo']);
    expect(emitted.map((e) => e.type)).toEqual(['agent.toolReturned']);
    expect(out.outputs?.text).toBe('<UNTRUSTED>fresh</UNTRUSTED>');
  });
});
