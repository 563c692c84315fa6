// Guarantees (RFC 0037 §"Handoff state machine", §"Transition events"): the handoff machine is pure and its
// transitions are exactly the spec table, given here as data: each allowed (state, event) pair moves to the
// table's state and emits one `core.workflowChain.event` record whose phase and causing phase are the table's;
// every other pair is refused (no state change, nothing emitted). Over random event sequences the emitted
// records form one causation chain starting at the supervisor's decision, `output.harvested` fires only after
// `child.completed` and only with a non-empty outputMapping, and failed / cancelled children are never harvested.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { initialTransition, transition } from 'xstate';
import type { AnyMachineSnapshot } from 'xstate';
import { eventForPhase, handoffMachine, TRANSITIONS } from '../../machines/handoff.js';
import type { ChainRecord, HandoffEvent, HandoffState } from '../../machines/handoff.js';
import { openwopSchemas, schemaId } from '../../src/openwop/schemas.js';

const EVENTS: Record<HandoffEvent['type'], HandoffEvent> = {
  'handoff.begin': { type: 'handoff.begin' },
  'handoff.created': { type: 'handoff.created', childRunId: 'run_child' },
  'handoff.createFailed': { type: 'handoff.createFailed', error: { code: 'not_found', message: 'no such workflow' } },
  'handoff.childCompleted': { type: 'handoff.childCompleted' },
  'handoff.childFailed': { type: 'handoff.childFailed', error: { code: 'boom', message: 'child failed' } },
  'handoff.childCancelled': { type: 'handoff.childCancelled', error: { code: 'cancelled', message: 'cancelled' } },
  'handoff.harvested': { type: 'handoff.harvested', keys: ['parentResult'] },
};

/** The spec table: [from, event, mapping?, to, phase, causedBy]. */
const TABLE: Array<[HandoffState, HandoffEvent['type'], boolean | null, HandoffState, string, string]> = [
  ['pending', 'handoff.begin', null, 'dispatching', 'dispatch.began', 'decided'],
  ['dispatching', 'handoff.created', null, 'running', 'dispatch.succeeded', 'dispatch.began'],
  ['dispatching', 'handoff.createFailed', null, 'failed', 'dispatch.failed', 'dispatch.began'],
  ['running', 'handoff.childCompleted', true, 'harvesting', 'child.completed', 'dispatch.succeeded'],
  ['running', 'handoff.childCompleted', false, 'completed', 'child.completed', 'dispatch.succeeded'],
  ['running', 'handoff.childFailed', null, 'failed', 'child.failed', 'dispatch.succeeded'],
  ['running', 'handoff.childCancelled', null, 'cancelled', 'child.cancelled', 'dispatch.succeeded'],
  ['harvesting', 'handoff.harvested', true, 'harvested', 'output.harvested', 'child.completed'],
];

/** Events that lead from `pending` to each state. */
const PATH: Record<HandoffState, Array<HandoffEvent['type']>> = {
  pending: [],
  dispatching: ['handoff.begin'],
  running: ['handoff.begin', 'handoff.created'],
  harvesting: ['handoff.begin', 'handoff.created', 'handoff.childCompleted'],
  completed: ['handoff.begin', 'handoff.created', 'handoff.childCompleted'],
  harvested: ['handoff.begin', 'handoff.created', 'handoff.childCompleted', 'handoff.harvested'],
  failed: ['handoff.begin', 'handoff.createFailed'],
  cancelled: ['handoff.begin', 'handoff.created', 'handoff.childCancelled'],
};

function at(state: HandoffState, hasOutputMapping: boolean): AnyMachineSnapshot {
  let [s] = initialTransition(handoffMachine, { workerId: 'worker-wf', parentRunId: 'run_parent', hasOutputMapping });
  for (const t of PATH[state]) [s] = transition(handoffMachine, s, EVENTS[t]);
  expect(s.value).toBe(state);
  return s;
}

function step(s: AnyMachineSnapshot, ev: HandoffEvent): { next: AnyMachineSnapshot; records: ChainRecord[] } {
  const [next, actions] = transition(handoffMachine, s as never, ev);
  return { next, records: actions.filter((a) => a.type === 'chain').map((a) => a.params as ChainRecord) };
}

describe('handoff machine (RFC 0037)', () => {
  it.each(TABLE)('%s --%s (mapping %s)--> %s emits %s caused by %s', (from, ev, mapping, to, phase, causedBy) => {
    const s = at(from, mapping ?? true);
    const { next, records } = step(s, EVENTS[ev]);
    expect(next.value).toBe(to);
    expect(records).toHaveLength(1);
    expect(records[0]).toMatchObject({
      phase,
      causedBy,
      payload: { phase, workerId: 'worker-wf', parentRunId: 'run_parent' },
    });
    expect(TRANSITIONS[ev]).toEqual({ phase, causedBy });
    // Every record is a valid core.workflowChain.event payload; childRunId only once the child exists.
    expect(
      openwopSchemas().check(`${schemaId('run-event-payloads')}#/$defs/coreWorkflowChainEvent`, records[0]!.payload),
    ).toEqual([]);
    expect('childRunId' in records[0]!.payload).toBe(phase !== 'dispatch.began' && phase !== 'dispatch.failed');
    // The phase maps back to the same machine event (how a resumed dispatch replays its chain).
    expect(eventForPhase(records[0]!.phase, records[0]!.payload).type).toBe(ev);
  });

  it('refuses every (state, event) pair the table does not list: no transition, nothing emitted', () => {
    const states = Object.keys(PATH) as HandoffState[];
    let refused = 0;
    for (const from of states)
      for (const mapping of [true, false]) {
        if ((from === 'harvesting' || from === 'harvested') && !mapping) continue;
        if (from === 'completed' && mapping) continue;
        for (const ev of Object.keys(EVENTS) as Array<HandoffEvent['type']>) {
          if (TABLE.some(([f, e, m]) => f === from && e === ev && (m === null || m === mapping))) continue;
          const s = at(from, mapping);
          const { next, records } = step(s, EVENTS[ev]);
          expect(next.value).toBe(from);
          expect(records).toEqual([]);
          refused++;
        }
      }
    expect(refused).toBeGreaterThan(40);
  });

  it('final states are completed, harvested, failed and cancelled', () => {
    for (const st of ['completed', 'harvested', 'failed', 'cancelled'] as const) {
      expect(at(st, st !== 'completed').status).toBe('done');
    }
    for (const st of ['pending', 'dispatching', 'running', 'harvesting'] as const)
      expect(at(st, true).status).toBe('active');
  });

  it('any event sequence yields one causation chain from the decision; harvest only after completion with a mapping', () => {
    const evArb = fc.constantFrom(...(Object.keys(EVENTS) as Array<HandoffEvent['type']>));
    fc.assert(
      fc.property(fc.boolean(), fc.array(evArb, { maxLength: 12 }), (mapping, seq) => {
        let [s] = initialTransition(handoffMachine, { workerId: 'w-1', parentRunId: 'r-1', hasOutputMapping: mapping });
        const emitted: ChainRecord[] = [];
        for (const t of seq) {
          const r = step(s, EVENTS[t]);
          s = r.next;
          emitted.push(...r.records);
        }
        emitted.forEach((rec, i) => expect(rec.causedBy).toBe(i === 0 ? 'decided' : emitted[i - 1]!.phase));
        const phases = emitted.map((r) => r.phase);
        if (phases.includes('output.harvested')) {
          expect(mapping).toBe(true);
          expect(phases.slice(-2)).toEqual(['child.completed', 'output.harvested']);
        }
        if (phases.some((p) => p === 'child.failed' || p === 'child.cancelled' || p === 'dispatch.failed'))
          expect(phases).not.toContain('output.harvested');
        expect(emitted.length).toBeLessThanOrEqual(4);
      }),
      { numRuns: 300 },
    );
  });
});
