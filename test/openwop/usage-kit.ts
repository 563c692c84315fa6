// Shared setup for the provider.usage tests (RFC 0026): the scripted provider wrapped to record every call (counted
// across host restarts), the usage events of a log, and a host on a fresh store of one backend (SQLite file or
// PostgreSQL schema) that is closed, then its store removed, after the test.
import { ScriptedProvider, parseAgentScript } from '../../src/ai/index.js';
import type { ModelRequest, ModelTurn } from '../../src/ai/index.js';
import type { Db } from '../../src/ledger/index.js';
import type { NodeModule } from '../../src/openwop/node-registry.js';
import type { ServiceFamily } from '../../src/openwop/service-family.js';
import type { EnvelopeModel } from '../../src/openwop/services/ai-envelope-model.js';
import type { RunEvent } from '../../src/openwop/types.js';
import type { Backend } from '../ledger/helpers.js';
import { HostFixture } from './service-test-kit.js';

/** The scripted provider, recording every request and reply (calls counted across host restarts). */
export class SpyModel implements EnvelopeModel {
  readonly name = 'scripted';
  readonly calls: Array<{ req: ModelRequest; reply: ModelTurn }> = [];
  private readonly inner: ScriptedProvider;
  constructor(script: unknown) {
    this.inner = new ScriptedProvider(parseAgentScript(script));
  }
  get meter() {
    return this.inner.meter;
  }
  async next(req: Parameters<EnvelopeModel['next']>[0]) {
    const reply = await this.inner.next(req as ModelRequest);
    this.calls.push({ req: req as ModelRequest, reply });
    return reply as Awaited<ReturnType<EnvelopeModel['next']>>;
  }
}

/** The `provider.usage` events of a log, in order. */
export const usageOf = (events: readonly RunEvent[]): RunEvent[] => events.filter((e) => e.type === 'provider.usage');

/** Summed `{inputTokens, outputTokens}` of `provider.usage` events. */
export function summed(events: readonly RunEvent[]): { inputTokens: number; outputTokens: number } {
  return usageOf(events).reduce(
    (s, e) => ({
      inputTokens: s.inputTokens + (e.payload.inputTokens as number),
      outputTokens: s.outputTokens + (e.payload.outputTokens as number),
    }),
    { inputTokens: 0, outputTokens: 0 },
  );
}

/**
 * A host fixture (not yet open) on a fresh store of `backend`; pushed onto `list` (a `closedAfterEach` list) as one
 * entry that closes the host, then removes the store.
 */
export async function fixtureOn(
  backend: Backend,
  list: Array<{ close(): Promise<void> }>,
  make: (db: Db) => Promise<{ families?: ServiceFamily[]; nodes?: NodeModule[] }>,
): Promise<HostFixture> {
  const store = await backend.fresh();
  const fx = new HostFixture(make, store.location);
  list.push({
    close: async () => {
      await fx.close();
      await store.cleanup();
    },
  });
  return fx;
}
