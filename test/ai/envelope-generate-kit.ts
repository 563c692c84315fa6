/**
 * What the tests of `serve --model` behind ctx.aiEnvelope share: a node that generates one `vendor.mhs.summary`
 * envelope, and a local model server (test/helpers/wire-server.ts) with an envelopes file naming that kind, opened
 * before the file's tests and closed after them.
 */
import { rmSync, writeFileSync } from 'node:fs';
import { afterAll, beforeAll } from 'vitest';
import type { NodeModule } from '../../src/openwop/node-registry.js';
import { tempDbFile } from '../openwop/service-test-kit.js';
import { startWireServer } from '../helpers/wire-server.js';
import type { WireServer } from '../helpers/wire-server.js';

export const SUMMARY = { type: 'object', required: ['title'], properties: { title: { type: 'string' } } };

/** `test.generate`: one `ctx.aiEnvelope.generate` of a `vendor.mhs.summary`; outputs its payload. */
export const genNode: NodeModule = {
  typeId: 'test.generate',
  requires: ['aiEnvelope'],
  async execute(ctx) {
    const result = await ctx.aiEnvelope!.generate({
      systemPrompt: 'Summarise.',
      envelopeType: 'vendor.mhs.summary',
      userMessage: 'pumps',
      idempotencyKey: 'k1',
    });
    return { outputs: { payload: result.payload } };
  },
};

/** The model server and envelopes file of the calling test file. */
export function useModelServer(): { server(): WireServer; envelopesFile: string } {
  let srv: WireServer | undefined;
  const envelopesFile = `${tempDbFile('mhs-envelopes-')}.json`;
  beforeAll(async () => {
    srv = await startWireServer();
    writeFileSync(envelopesFile, JSON.stringify({ 'vendor.mhs.summary': SUMMARY }));
  });
  afterAll(async () => {
    await srv?.close();
    rmSync(envelopesFile, { force: true });
  });
  return { server: () => srv!, envelopesFile };
}
