// Guarantees (issue 18 item 5): the commands timeline gives each intent one span, ended by its first final receipt,
// its `command.not_sent` or a reconciliation that found it not executed; a command whose outcome was recorded
// unknown stays open and says so; entries of no known intent are ignored.
import { describe, expect, it } from 'vitest';
import { commandSpans } from '../../src/console/ui/command-spans.js';
import type { LedgerEntry } from '../../src/console/ui/types.js';

let seq = 0;
const at = (s: number) => new Date(Date.UTC(2026, 0, 31, 9, 0, s)).toISOString();
const entry = (kind: string, command_id: string, s: number, extra: Record<string, unknown> = {}): LedgerEntry => ({
  seq: seq++,
  ts: at(s),
  kind,
  command_id,
  ...extra,
});

describe('commandSpans', () => {
  it('spans intent to outcome for each kind of ending', () => {
    const spans = commandSpans([
      entry('command.intent', 'a', 0, { capability_id: 'cap.x' }),
      entry('receipt', 'a', 1, { receipt: { status: 'running' } }),
      entry('receipt', 'a', 3, { receipt: { status: 'completed' } }),
      entry('command.intent', 'b', 4, { capability_id: 'cap.y' }),
      entry('command.not_sent', 'b', 5),
      entry('command.intent', 'c', 6, { capability_id: 'cap.x' }),
      entry('command.unknown', 'c', 7),
      entry('command.intent', 'd', 8, { capability_id: 'cap.x' }),
      entry('command.unknown', 'd', 9),
      entry('reconcile', 'd', 10, { outcome: 'not_executed' }),
      entry('command.intent', 'e', 11, { capability_id: 'cap.x' }),
      entry('receipt', 'e', 12, { receipt: { status: 'failed' } }),
      entry('receipt', 'e', 13, { receipt: { status: 'completed' } }),
      entry('receipt', 'zz', 14, { receipt: { status: 'completed' } }),
      entry('command.intent', 'f', 15, { capability_id: 'cap.x' }),
    ]);
    const ms = (s: number) => Date.parse(at(s));
    expect(spans.map((s) => [s.command_id, s.outcome, s.start, s.end])).toEqual([
      ['a', 'completed', ms(0), ms(3)],
      ['b', 'not_sent', ms(4), ms(5)],
      ['c', 'unknown', ms(6), null],
      ['d', 'not_executed', ms(8), ms(10)],
      ['e', 'failed', ms(11), ms(12)],
      ['f', 'running', ms(15), null],
    ]);
  });
});
