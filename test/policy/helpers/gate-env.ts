// A policy gate over a real SQLite store and the real ledger, plus helpers to await its events.
import { RealClock } from '../../../src/core/index.js';
import type { Clock } from '../../../src/core/index.js';
import { openLedger } from '../../../src/ledger/index.js';
import type { Db } from '../../../src/ledger/db.js';
import type { Ledger, LedgerEntry } from '../../../src/ledger/ledger-types.js';
import type { ApprovalRequest } from '../../../src/policy/approval-rules.js';
import { createOperatorEvents } from '../../../src/policy/operator-events.js';
import type { OperatorEvents } from '../../../src/policy/operator-events.js';
import { createPolicyGate } from '../../../src/policy/policy-gate.js';
import type { PolicyGate, PolicyGateDeps } from '../../../src/policy/policy-gate.js';
import { DEFAULT_POLICY } from '../../../src/policy/policy-config.js';
import { openTestDb } from './test-db.js';

export interface GateEnv {
  db: Db;
  ledger: Ledger;
  events: OperatorEvents;
  gate: PolicyGate;
  clock: Clock;
  /** Resolves with the next approval request the gate creates. */
  nextRequest(): Promise<ApprovalRequest>;
  approvals(): Promise<LedgerEntry[]>;
  close(): Promise<void>;
}

export async function gateEnv(over: Partial<PolicyGateDeps> = {}): Promise<GateEnv> {
  const clock = over.clock ?? new RealClock();
  const db = over.db ?? (await openTestDb());
  const ledger = over.ledger ?? (await openLedger(db, { clock }));
  const events = over.events ?? createOperatorEvents();
  const gate = createPolicyGate({ db, ledger, clock, events, policy: DEFAULT_POLICY, ...over });
  return {
    db,
    ledger,
    events,
    gate,
    clock,
    nextRequest: () =>
      new Promise((resolve) => {
        const off = events.subscribe((e) => {
          if (e.type === 'approval.requested') {
            off();
            resolve(e.data.approval as ApprovalRequest);
          }
        });
      }),
    approvals: async () => (await ledger.range(0)).filter((e) => e.kind === 'approval'),
    close: () => db.close(),
  };
}

export const alice = { kind: 'human' as const, id: 'tok_alice', name: 'alice' };
export const bob = { kind: 'human' as const, id: 'tok_bob', name: 'bob' };
