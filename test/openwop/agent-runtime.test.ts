// Guarantees (RFC 0144 §agentRuntime): spawn, delegate, consensus and messageSend run once per idempotency key,
// record their results (and every model answer) in the run's event log, keep working across nodes of one run, and
// after a host restart return the recorded result without asking the model again; bad input fails with stable
// codes. The family advertises agentRuntime (and the agents.manifestRuntime it implies) only when told the host
// meets manifestRuntime; otherwise it binds nothing and a node requiring it fails host_capability_missing.
import { describe, expect, it } from 'vitest';
import type { NodeContext, NodeModule } from '../../src/openwop/node-registry.js';
import type { ServiceFamily } from '../../src/openwop/service-family.js';
import type { EnvelopeModel } from '../../src/openwop/services/ai-envelope-model.js';
import { createAgentRuntimeFamily } from '../../src/openwop/services/agent-runtime-family.js';
import type { AgentRuntimeFamily } from '../../src/openwop/services/agent-runtime-family.js';
import type { WorkflowDefinition } from '../../src/openwop/types.js';
import {
  HOLD,
  HostFixture,
  clock,
  closedAfterEach,
  expectValidCapabilities,
  expectValidEvents,
  oneNode,
  runToTerminal,
  startUntilAsked,
} from './service-test-kit.js';

type Answer = (system: string, user: Record<string, unknown>) => unknown;

class FnModel implements EnvelopeModel {
  readonly name = 'fn';
  calls = 0;
  constructor(private readonly answer: Answer) {}
  async next(req: Parameters<EnvelopeModel['next']>[0]) {
    this.calls++;
    const [sys, user] = req.messages;
    const text = JSON.stringify(
      this.answer(String(sys!.content), JSON.parse(String(user!.content)) as Record<string, unknown>),
    );
    return { kind: 'final' as const, text };
  }
}

const MANIFESTS = [
  {
    agentId: 'vendor.mhs.lab.planner',
    persona: 'Planner',
    modelClass: 'reasoning',
    systemPrompt: 'You plan lab runs.',
  },
  { agentId: 'vendor.mhs.lab.critic', persona: 'Critic', modelClass: 'reasoning', systemPrompt: 'You are the critic.' },
  { agentId: 'Bad', persona: '', modelClass: 'nope' },
];

/** Runs the operations in `config.ops` in order through ctx.agentRuntime and outputs their results. */
const opsNode: NodeModule = {
  typeId: 'test.agents',
  requires: ['agentRuntime'],
  async execute(ctx) {
    const results: unknown[] = [];
    const ops = (ctx.node.config.ops ?? []) as Array<{
      op: 'spawn' | 'delegate' | 'consensus' | 'messageSend';
      req: never;
    }>;
    for (const { op, req } of ops) results.push(await ctx.agentRuntime![op](req));
    if (ctx.node.config.hold) await ctx.interrupt(HOLD);
    return { outputs: { results } };
  },
};

const fixtures = closedAfterEach<HostFixture>();

/** A host whose test family binds the surface without advertising it (the real family does not bind unadvertised). */
async function start(models: Array<() => EnvelopeModel>, opts: { advertise?: boolean; bindForTest?: boolean } = {}) {
  let fam!: AgentRuntimeFamily;
  let opened = 0;
  const fx = new HostFixture(async (db) => {
    const model = (models[opened] ?? models.at(-1)!)();
    opened++;
    fam = createAgentRuntimeFamily({
      db,
      clock,
      model,
      manifests: MANIFESTS,
      maxInstancesPerRun: 3,
      manifestRuntimeMet: opts.advertise === true,
    });
    const families: ServiceFamily[] = [fam];
    if (opts.bindForTest !== false && !opts.advertise)
      families.push({
        name: 'agentRuntime-test',
        capabilities: () => ({}),
        bind: (ctx: NodeContext) => ({ agentRuntime: fam.surfaceFor(ctx) }),
      });
    return { families, nodes: [opsNode] };
  });
  fixtures.push(fx);
  await fx.open();
  return { fx, fam: () => fam };
}

async function run(fx: HostFixture, wf: WorkflowDefinition) {
  await fx.host.catalog.register(wf);
  const r = await runToTerminal(fx.host, wf.id);
  const outputs = r.events
    .filter((e) => e.type === 'node.completed')
    .map((e) => (e.payload.outputs as { results: unknown[] }).results);
  return { ...r, outputs };
}

const ops = (id: string, list: unknown[], extra: Record<string, unknown> = {}): WorkflowDefinition =>
  oneNode(id, { typeId: 'test.agents', config: { ops: list, ...extra } });

describe('agentRuntime family (RFC 0144 §agentRuntime)', () => {
  it('is not advertised or bound without manifestRuntime: a node requiring it fails host_capability_missing', async () => {
    const { fx, fam } = await start([() => new FnModel(() => ({}))], { bindForTest: false });
    const doc = expectValidCapabilities(fx.host);
    expect(doc.agentRuntime).toBeUndefined();
    expect(doc.agents).toBeUndefined();
    expect(fam().refused.map((r) => r.index)).toEqual([2]);
    const r = await run(fx, ops('none', []));
    expect([r.status, r.code]).toEqual(['failed', 'host_capability_missing']);
  });

  it('advertises agentRuntime with the agents.manifestRuntime it implies when told the host meets it', async () => {
    const { fx } = await start([() => new FnModel(() => ({}))], { advertise: true });
    const doc = expectValidCapabilities(fx.host);
    expect(doc.agentRuntime).toEqual({ supported: true });
    expect(doc.agents).toEqual({ manifestRuntime: { supported: true } });
    const r = await run(
      fx,
      ops('adv', [{ op: 'spawn', req: { manifestId: 'vendor.mhs.lab.planner', idempotencyKey: 's' } }]),
    );
    expect(r.status).toBe('completed');
  });

  it('spawns agents once per key, sends messages between them across nodes, and refuses unknown agents', async () => {
    const { fx } = await start([() => new FnModel(() => ({}))]);
    const wf = ops('spawn-msg', [
      { op: 'spawn', req: { manifestId: 'vendor.mhs.lab.planner', idempotencyKey: 'a' } },
      { op: 'spawn', req: { manifestId: 'vendor.mhs.lab.planner', idempotencyKey: 'a' } },
      { op: 'spawn', req: { agentRef: { agentId: 'host:helper' }, idempotencyKey: 'b' } },
    ]);
    wf.nodes.push({
      id: 'm',
      typeId: 'test.agents',
      name: 'm',
      position: { x: 0, y: 0 },
      inputs: {},
      config: {
        ops: [
          {
            op: 'messageSend',
            req: {
              fromAgentId: 'host:helper',
              toAgentId: 'vendor.mhs.lab.critic',
              channel: 'message',
              content: { hi: 1 },
              idempotencyKey: 'm1',
            },
          },
        ],
      },
    });
    wf.edges.push({ id: 'e', sourceNodeId: 'n', targetNodeId: 'm' });
    const r = await run(fx, wf);
    expect(r.status).toBe('completed');
    const [spawns, msgs] = r.outputs as [
      Array<{ agentInstanceId: string; spawnedAt: string }>,
      Array<{ messageId: string }>,
    ];
    expect(spawns[0]).toEqual(spawns[1]);
    expect(spawns[0]!.agentInstanceId).not.toEqual(spawns[2]!.agentInstanceId);
    expect(msgs[0]!.messageId).toMatch(/^msg_/);
  });

  it.each([
    [
      'an unknown manifest',
      [{ op: 'spawn', req: { manifestId: 'vendor.mhs.none', idempotencyKey: 'x' } }],
      'agent_not_found',
    ],
    [
      'a message to an agent outside the run',
      [
        {
          op: 'messageSend',
          req: {
            fromAgentId: 'vendor.mhs.lab.planner',
            toAgentId: 'host:ghost',
            channel: 'message',
            content: 1,
            idempotencyKey: 'x',
          },
        },
      ],
      'agent_not_found',
    ],
    [
      'a fourth spawn (quota 3)',
      ['a', 'b', 'c', 'd'].map((k) => ({
        op: 'spawn',
        req: { manifestId: 'vendor.mhs.lab.planner', idempotencyKey: k },
      })),
      'agent_spawn_quota_exhausted',
    ],
    ['a missing idempotencyKey', [{ op: 'spawn', req: { manifestId: 'vendor.mhs.lab.planner' } }], 'validation_error'],
    [
      'one key for two requests',
      [
        { op: 'spawn', req: { manifestId: 'vendor.mhs.lab.planner', idempotencyKey: 'k' } },
        { op: 'spawn', req: { manifestId: 'vendor.mhs.lab.critic', idempotencyKey: 'k' } },
      ],
      'conflict',
    ],
    [
      'a consensus threshold above 1',
      [
        {
          op: 'consensus',
          req: { proposal: {}, participants: [{ agentId: 'host:one' }], threshold: 2, idempotencyKey: 'x' },
        },
      ],
      'validation_error',
    ],
    [
      'a delegate without agents',
      [{ op: 'delegate', req: { task: 't', agents: [], idempotencyKey: 'x' } }],
      'validation_error',
    ],
  ])('refuses %s with a stable code', async (_what, list, code) => {
    const { fx } = await start([() => new FnModel(() => ({}))]);
    const r = await run(fx, ops('bad', list));
    expect([r.status, r.code]).toEqual(['failed', code]);
  });

  it('delegates by the model choice (escalated below the threshold) or by load', async () => {
    const model = new FnModel(() => ({ agentId: 'vendor.mhs.lab.critic', confidence: 0.4 }));
    const { fx } = await start([() => model]);
    const agents = [{ agentId: 'vendor.mhs.lab.planner' }, { agentId: 'vendor.mhs.lab.critic' }];
    const r = await run(
      fx,
      ops('delegate', [
        { op: 'delegate', req: { task: 'review', agents, escalationThreshold: 0.7, idempotencyKey: 'd0' } },
        ...['d1', 'd2', 'd3'].map((k) => ({
          op: 'delegate',
          req: { task: 'x', agents, strategy: 'load-balanced', idempotencyKey: k },
        })),
      ]),
    );
    expect(r.status).toBe('completed');
    const res = r.outputs[0] as Array<{ selectedAgentId: string; escalated: boolean; confidence?: number }>;
    expect(res[0]).toMatchObject({ selectedAgentId: 'vendor.mhs.lab.critic', escalated: true, confidence: 0.4 });
    expect(res.slice(1).map((d) => d.selectedAgentId)).toEqual([
      'vendor.mhs.lab.planner',
      'vendor.mhs.lab.planner',
      'vendor.mhs.lab.critic',
    ]);
    expect(model.calls).toBe(1);
  });

  const council: Answer = (system, user) =>
    system.startsWith('You are the critic.') && user.round === 1
      ? { vote: 'reject', amendment: { plan: 'slower' } }
      : { vote: 'accept' };
  const consensusOp = {
    op: 'consensus',
    req: {
      proposal: { plan: 'fast' },
      participants: [{ agentId: 'vendor.mhs.lab.planner' }, { agentId: 'vendor.mhs.lab.critic' }],
      threshold: 1,
      maxRounds: 3,
      idempotencyKey: 'c',
    },
  };

  it('reaches consensus over rounds, adopting an amendment; every vote is an agent.decided event', async () => {
    const model = new FnModel(council);
    const { fx } = await start([() => model]);
    const r = await run(fx, ops('consensus', [consensusOp]));
    expect(r.status).toBe('completed');
    expect(r.outputs[0]![0]).toEqual({
      converged: true,
      rounds: 2,
      agreement: { plan: 'slower' },
      votes: { 'vendor.mhs.lab.planner': 'accept', 'vendor.mhs.lab.critic': 'accept' },
    });
    expect(r.events.filter((e) => e.type === 'agent.decided')).toHaveLength(4);
    expect(model.calls).toBe(4);
  });

  it('reports no convergence after maxRounds', async () => {
    const { fx } = await start([() => new FnModel(() => ({ vote: 'reject' }))]);
    const r = await run(fx, ops('no-consensus', [{ ...consensusOp, req: { ...consensusOp.req, maxRounds: 2 } }]));
    expect(r.outputs[0]![0]).toMatchObject({ converged: false, rounds: 2 });
  });

  it('after a host restart mid-node returns the recorded results without asking the model again', async () => {
    const first = new FnModel(council);
    const second = new FnModel(() => {
      throw new Error('the restarted host must not ask the model');
    });
    const models = [() => first, () => second];
    const { fx } = await start(models);
    await fx.host.catalog.register(
      ops(
        'restart',
        [{ op: 'spawn', req: { manifestId: 'vendor.mhs.lab.planner', idempotencyKey: 's' } }, consensusOp],
        { hold: true },
      ),
    );
    const { runId } = await startUntilAsked(fx.host, 'restart');
    const before = (await fx.host.store.events(runId)).filter((e) => e.type === 'agent.decided').length;
    expect(await fx.restartAndResolve(runId, { action: 'accept' })).toBe('completed');
    const events = await expectValidEvents(fx.host, runId);
    expect(events.filter((e) => e.type === 'agent.decided')).toHaveLength(before);
    expect([first.calls, second.calls]).toEqual([4, 0]);
    const out = events.find((e) => e.type === 'node.completed')!.payload.outputs as { results: unknown[] };
    expect(out.results[1]).toMatchObject({ converged: true, rounds: 2 });
  });
});
