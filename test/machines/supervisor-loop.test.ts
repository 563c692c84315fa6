// Guarantees (RFC 0037 §"Execution loop" step 2, RFC 0039 §A, dispatch-config fanOutPolicy): the routing of one
// supervisor decision, as data. Each row gives a decision, the floor and the fan-out policy, the effects the
// turn asks for in order, the outcomes fed back, and the final state: a decision below the floor is escalated
// before anything else (and never executed when dropped), terminate ends the loop without effects, ask-user
// asks, next-worker dispatches unless the fan-out is refused, and an absent confidence never escalates.
// Pure: decisions through initialTransition()/transition(), nothing executed.
import { describe, expect, it } from 'vitest';
import { initialTransition, transition } from 'xstate';
import { supervisorTurnMachine } from '../../machines/supervisor-loop.js';
import type { TurnDecision, TurnEvent } from '../../machines/supervisor-loop.js';

type Row = [string, TurnDecision, 'sequential' | 'reject', TurnEvent[], string[], string];

const W = (ids: string[], confidence?: number): TurnDecision => ({
  kind: 'next-worker',
  nextWorkerIds: ids,
  ...(confidence !== undefined ? { confidence } : {}),
});

const ROWS: Row[] = [
  ['terminate', { kind: 'terminate', reason: 'goal-reached' }, 'sequential', [], [], 'terminated'],
  ['next-worker', W(['a']), 'sequential', [{ type: 'workers.settled' }], ['dispatch'], 'dispatched'],
  ['next-worker at the floor', W(['a'], 0.5), 'sequential', [{ type: 'workers.settled' }], ['dispatch'], 'dispatched'],
  ['fan-out sequential', W(['a', 'b']), 'sequential', [{ type: 'workers.settled' }], ['dispatch'], 'dispatched'],
  ['fan-out refused', W(['a', 'b']), 'reject', [], ['refuse'], 'refused'],
  ['single worker under reject', W(['a']), 'reject', [{ type: 'workers.settled' }], ['dispatch'], 'dispatched'],
  ['ask-user', { kind: 'ask-user', prompt: 'which?' }, 'sequential', [{ type: 'answered' }], ['ask'], 'answered'],
  [
    'low confidence confirmed',
    W(['a'], 0.3),
    'sequential',
    [{ type: 'escalation.confirmed' }, { type: 'workers.settled' }],
    ['escalate', 'dispatch'],
    'dispatched',
  ],
  ['low confidence dropped', W(['a'], 0.3), 'sequential', [{ type: 'escalation.dropped' }], ['escalate'], 'dropped'],
  [
    'low-confidence terminate confirmed',
    { kind: 'terminate', confidence: 0.1 },
    'sequential',
    [{ type: 'escalation.confirmed' }],
    ['escalate'],
    'terminated',
  ],
];

function run(decision: TurnDecision, fanOutPolicy: 'sequential' | 'reject', feed: TurnEvent[], floor = 0.5) {
  let [s, actions] = initialTransition(supervisorTurnMachine, { decision, floor, fanOutPolicy });
  const effects = actions.map((a) => a.type);
  for (const ev of feed) {
    [s, actions] = transition(supervisorTurnMachine, s, ev);
    effects.push(...actions.map((a) => a.type));
  }
  return {
    state: s.value as string,
    done: s.status === 'done',
    effects: effects.filter((t) => !t.startsWith('xstate.')),
  };
}

describe('supervisor turn routing', () => {
  it.each(ROWS)('%s', (_name, decision, policy, feed, effects, end) => {
    const r = run(decision, policy, feed);
    expect(r.effects).toEqual(effects);
    expect(r.state).toBe(end);
    expect(r.done).toBe(true);
  });

  it('an operator floor above 0.5 escalates what the spec floor would not', () => {
    expect(run(W(['a'], 0.6), 'sequential', [], 0.8).effects).toEqual(['escalate']);
    expect(run(W(['a'], 0.6), 'sequential', [{ type: 'workers.settled' }], 0.5).state).toBe('dispatched');
  });

  it('an outcome the state does not expect changes nothing', () => {
    const [s] = initialTransition(supervisorTurnMachine, {
      decision: W(['a']),
      floor: 0.5,
      fanOutPolicy: 'sequential',
    });
    const [same, acts] = transition(supervisorTurnMachine, s, { type: 'answered' });
    expect(same.value).toBe('dispatching');
    expect(acts).toEqual([]);
  });
});
