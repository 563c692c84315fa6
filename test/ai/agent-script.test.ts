// Guarantees: agent scripts are validated with ajv before anything runs; every malformed script (not JSON, wrong
// shape, a turn that is neither tool calls nor final, bad `$ref` or `{{...}}` syntax) is refused with
// MHS.HOST.AGENT_SCRIPT_INVALID and the offending paths, never a crash; the scripted provider is deterministic:
// its turn is the number of assistant messages so far and references resolve against the tool results in the
// conversation; the bundled example script is valid.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { ErrorCode } from '../../src/core/index.js';
import { loadAgentScript, parseAgentScript, resolveRef } from '../../src/ai/agent-script.js';
import type { ModelMessage } from '../../src/ai/model-provider.js';
import { SCRIPT_END, ScriptedProvider } from '../../src/ai/scripted-provider.js';
import { REPO_ROOT } from '../helpers/sim.js';

const dir = mkdtempSync(join(tmpdir(), 'mhs-script-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const code = (fn: () => unknown): unknown => {
  try {
    fn();
    return 'no error';
  } catch (e) {
    return (e as { code?: unknown }).code;
  }
};

describe('agent scripts', () => {
  test('malformed scripts are refused with MHS.HOST.AGENT_SCRIPT_INVALID', () => {
    const bad: unknown[] = [
      null,
      [],
      {},
      { turns: [] },
      { turns: [{}] },
      { turns: [{ final: 'x', tool_calls: [{ tool: 'a' }] }] },
      { turns: [{ tool_calls: [] }] },
      { turns: [{ tool_calls: [{ arguments: {} }] }] },
      { turns: [{ tool_calls: [{ tool: 'a', arguments: [] }] }] },
      { turns: [{ final: 'x' }], max_turns: 0 },
      { turns: [{ final: 'x' }], extra: true },
      { turns: [{ tool_calls: [{ tool: 'a', arguments: { x: { $ref: 'results[0]' } } }] }] },
      { turns: [{ tool_calls: [{ tool: 'a', arguments: { x: { $ref: 'result[0]', y: 1 } } }] }] },
      { turns: [{ final: 'state {{receipt.state_hash}}' }] },
    ];
    for (const raw of bad)
      expect(
        code(() => parseAgentScript(raw)),
        JSON.stringify(raw),
      ).toBe(ErrorCode.HOST_AGENT_SCRIPT_INVALID);
    const file = join(dir, 'broken.json');
    writeFileSync(file, '{"turns": [');
    expect(code(() => loadAgentScript(file))).toBe(ErrorCode.HOST_AGENT_SCRIPT_INVALID);
    expect(code(() => loadAgentScript(join(dir, 'missing.json')))).toBe(ErrorCode.HOST_AGENT_SCRIPT_INVALID);
    const err = (() => {
      try {
        return parseAgentScript({ turns: [{ tool_calls: [{ tool: 'a', arguments: { x: { $ref: 'nope' } } }] }] });
      } catch (e) {
        return e as { details: { issues: Array<{ path: string }> } };
      }
    })();
    expect((err as { details: { issues: Array<{ path: string }> } }).details.issues[0]!.path).toBe(
      '/turns/0/tool_calls/0/arguments/x',
    );
  });

  test('references resolve against results; a missing one is MHS.HOST.AGENT_SCRIPT_INVALID', () => {
    const results = [{ receipt: { state_hash: 'abc', effects: [{ kind: 'heated' }] } }, { value: 2 }];
    expect(resolveRef('result[0].receipt.state_hash', results)).toBe('abc');
    expect(resolveRef('result[0].receipt.effects[0].kind', results)).toBe('heated');
    expect(resolveRef('result[-1].value', results)).toBe(2);
    expect(code(() => resolveRef('result[2].value', results))).toBe(ErrorCode.HOST_AGENT_SCRIPT_INVALID);
    expect(code(() => resolveRef('result[0].receipt.missing', results))).toBe(ErrorCode.HOST_AGENT_SCRIPT_INVALID);
  });

  test('the scripted provider is deterministic: turn = assistant messages so far, refs from tool results', async () => {
    const p = new ScriptedProvider(
      parseAgentScript({
        turns: [
          { tool_calls: [{ tool: 'mhs__read', arguments: { device_id: 'thermostat' } }] },
          { tool_calls: [{ tool: 'x', id: 'mine', arguments: { h: { $ref: 'result[0].state_hash' } } }] },
          { final: 'hash {{result[-1].state_hash}}' },
        ],
      }),
    );
    const msgs: ModelMessage[] = [{ role: 'user', content: 'go' }];
    const first = await p.next({ messages: msgs, tools: [] });
    expect(first).toEqual({
      kind: 'tool_calls',
      calls: [{ id: 'call_0_0', name: 'mhs__read', arguments: { device_id: 'thermostat' } }],
      cacheKey: expect.stringMatching(/^[0-9a-f]{64}$/),
    });
    expect(await p.next({ messages: msgs, tools: [] })).toEqual(first);
    msgs.push({ role: 'assistant', content: null, toolCalls: first.kind === 'tool_calls' ? first.calls : [] });
    msgs.push({
      role: 'tool',
      toolCallId: 'call_0_0',
      name: 'mhs__read',
      isError: false,
      content: { state_hash: 'h1' },
    });
    expect(await p.next({ messages: msgs, tools: [] })).toEqual({
      kind: 'tool_calls',
      calls: [{ id: 'mine', name: 'x', arguments: { h: 'h1' } }],
      cacheKey: expect.stringMatching(/^[0-9a-f]{64}$/),
    });
    msgs.push({ role: 'assistant', content: null, toolCalls: [] });
    expect(await p.next({ messages: msgs, tools: [] })).toEqual({
      kind: 'final',
      text: 'hash h1',
      cacheKey: expect.stringMatching(/^[0-9a-f]{64}$/),
    });
    msgs.push({ role: 'assistant', content: 'hash h1', toolCalls: [] });
    expect(await p.next({ messages: msgs, tools: [] })).toEqual({
      kind: 'final',
      text: SCRIPT_END,
      cacheKey: expect.stringMatching(/^[0-9a-f]{64}$/),
    });
  });

  test('the bundled example script is valid', () => {
    const s = loadAgentScript(join(REPO_ROOT, 'examples/agent-thermostat.json'));
    expect(s.endpoints).toEqual(['mhs-demo-thermostat']);
    expect(s.turns.at(-1)).toHaveProperty('final');
  });
});
