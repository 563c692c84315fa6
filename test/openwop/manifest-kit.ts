// Shared set-up of the agent-manifest runtime tests: a folder of agent packs (good and bad, one per refusal code)
// and a supervisor ⇄ dispatch workflow that dispatches a manifest agent by its agentId.
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { WorkflowDefinition } from '../../src/openwop/types.js';

export const SECRET = 'sk-live-4f9c2e7d1b';
export const ANALYST = 'vendor.acme.lab.analyst';
export const STRICT = 'vendor.acme.lab.strict';
export const WRITER = 'vendor.acme.lib.writer';

const TASK_SCHEMA = {
  $schema: 'https://json-schema.org/draft/2020-12/schema',
  type: 'object',
  required: ['sample'],
  properties: { sample: { type: 'string', minLength: 1 } },
};
const RETURN_SCHEMA = {
  $schema: 'https://json-schema.org/draft/2020-12/schema',
  type: 'object',
  required: ['verdict'],
  properties: { verdict: { enum: ['pass', 'fail'] } },
};

function pack(name: string, agents: unknown[]): Record<string, unknown> {
  return {
    name,
    version: '1.0.0',
    engines: { openwop: '>=1.1.0' },
    runtime: { language: 'remote', entry: 'https://packs.example/remote' },
    agents,
  };
}

function write(root: string, files: Record<string, unknown>): void {
  for (const [rel, v] of Object.entries(files)) {
    const p = join(root, rel);
    mkdirSync(join(p, '..'), { recursive: true });
    writeFileSync(p, typeof v === 'string' ? v : JSON.stringify(v, null, 2));
  }
}

/** A packs folder: two good packs and one bad pack per refusal code (folder names sort good ones first). */
export function packsDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'mhs-packs-'));
  write(join(dir, 'a-lab'), {
    'pack.json': pack('vendor.acme.lab', [
      {
        agentId: ANALYST,
        persona: 'Sample Analyst',
        modelClass: 'reasoning',
        systemPromptRef: 'prompts/analyst.md',
        toolAllowlist: ['openwop:echo', 'vendor.test:credential'],
        handoff: { taskSchemaRef: 'schemas/task.schema.json', returnSchemaRef: 'schemas/return.schema.json' },
      },
      {
        agentId: STRICT,
        persona: 'Strict Analyst',
        modelClass: 'classification',
        systemPrompt: 'STRICT: you judge samples.',
        handoff: { taskSchemaRef: 'schemas/task.schema.json', returnSchemaRef: 'schemas/return.schema.json' },
      },
    ]),
    'prompts/analyst.md': 'ANALYST: you analyse lab samples and answer JSON.',
    'schemas/task.schema.json': TASK_SCHEMA,
    'schemas/return.schema.json': RETURN_SCHEMA,
  });
  write(join(dir, 'b-lib'), {
    'pack.json': withPeers(
      pack('vendor.acme.lib', [
        {
          agentId: WRITER,
          persona: 'Writer',
          modelClass: 'writing',
          systemPromptRef: 'prompt:conformance.prompt.writer-system',
        },
      ]),
      { 'agents.manifestRuntime': 'supported' },
    ),
  });
  const bad = (folder: string, agent: Record<string, unknown>, extra: Record<string, unknown> = {}): void =>
    write(join(dir, folder), {
      'pack.json': pack(`vendor.bad.${folder.replace(/[^a-z]/g, '')}`, [
        { persona: 'Bad', modelClass: 'general', systemPrompt: 'x', ...agent },
      ]),
      ...extra,
    });
  write(join(dir, 'x-schema'), { 'pack.json': { name: 'vendor.bad.schema', version: '1.0.0', agents: [] } });
  bad('x-namespace', { agentId: 'vendor.other.pack.agent' });
  bad('x-traversal', {
    agentId: 'vendor.bad.xtraversal.a',
    systemPrompt: undefined,
    systemPromptRef: '../a-lab/prompts/analyst.md',
  });
  bad('x-library', {
    agentId: 'vendor.bad.xlibrary.a',
    systemPrompt: undefined,
    systemPromptRef: 'prompt:no.such.prompt@1.0.0',
  });
  bad(
    'x-handoff',
    { agentId: 'vendor.bad.xhandoff.a', handoff: { taskSchemaRef: 'schemas/task.json' } },
    { 'schemas/task.json': '{ not json' },
  );
  bad('x-memory', { agentId: 'vendor.bad.xmemory.a', memoryShape: { longTerm: true } });
  write(join(dir, 'x-peer'), {
    'pack.json': withPeers(
      pack('vendor.bad.xpeer', [
        { agentId: 'vendor.bad.xpeer.a', persona: 'P', modelClass: 'general', systemPrompt: 'x' },
      ]),
      {
        'openwop.agents.memoryBackends': '>=longTerm',
      },
    ),
  });
  return dir;
}

function withPeers(p: Record<string, unknown>, peerDependencies: Record<string, string>): Record<string, unknown> {
  return { ...p, peerDependencies };
}

/** The refusal code expected for each bad pack folder. */
export const EXPECTED_REFUSALS: Record<string, string> = {
  'x-schema': 'agent_pack_invalid',
  'vendor.bad.xnamespace': 'agent_pack_namespace_violation',
  'vendor.bad.xtraversal': 'agent_prompt_unresolved',
  'vendor.bad.xlibrary': 'agent_prompt_unresolved',
  'vendor.bad.xhandoff': 'agent_handoff_schema_invalid',
  'vendor.bad.xmemory': 'unsupported_capability',
  'vendor.bad.xpeer': 'unsupported_capability',
};

/** Supervisor dispatches `workers` (one turn each), then terminates; the dispatch maps sample → task, result → verdict. */
export function dispatchWorkflow(id: string, workers: string[], sample: unknown): WorkflowDefinition {
  return {
    id,
    name: id,
    version: '1',
    nodes: [
      {
        id: 'supervisor',
        typeId: 'core.orchestrator.supervisor',
        name: 'supervisor',
        position: { x: 0, y: 0 },
        config: {
          mockDispatchPlan: [
            ...workers.map((w) => ({ kind: 'next-worker', nextWorkerIds: [w] })),
            { kind: 'terminate', reason: 'goal-reached' },
          ],
        },
        inputs: {},
      },
      {
        id: 'dispatch',
        typeId: 'core.dispatch',
        name: 'dispatch',
        position: { x: 200, y: 0 },
        config: { inputMapping: { sample: 'sample' }, outputMapping: { verdict: 'result' } },
        inputs: {},
      },
    ],
    edges: [
      { id: 'e1', sourceNodeId: 'supervisor', targetNodeId: 'dispatch' },
      { id: 'e2', sourceNodeId: 'dispatch', targetNodeId: 'supervisor' },
    ],
    triggers: [{ id: 'manual', type: 'manual' }],
    variables: [
      { name: 'sample', type: typeof sample === 'string' ? 'string' : 'number', defaultValue: sample },
      { name: 'verdict', type: 'object', defaultValue: null },
    ],
    metadata: {},
    settings: {},
  } as unknown as WorkflowDefinition;
}
