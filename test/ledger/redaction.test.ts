// Redaction and secrets (HOST-056): entries lose credentials (secret-named keys, Bearer/Basic
// values) wherever they appear, adapter redaction paths (JSON Pointers from the manifest) blank
// the named inputs for that endpoint only, receipts stay verbatim inside their wrapper (HOST-052),
// the transcript is scrubbed too, and no secret reaches any file of an exported package.
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { H, SimulatedClock } from '../../src/core/index.js';
import {
  REDACTED,
  exportPackage,
  openArtifacts,
  openLedger,
  receiptEntry,
  redactPaths,
  scrubSecrets,
} from '../../src/ledger/index.js';
import { ENDPOINT, openStore, sampleEndpointChain, tempDir } from './helpers.js';

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups.splice(0)) c();
});

const SECRETS = ['tok-live-123456789', 'hunter2-pass', 'sk_test_abcdefghijk', 'eyJhbGciOiJIUzI1NiJ9.payload'];

describe('redaction and secrets', () => {
  it('HOST-056: scrubSecrets removes credentials by key and by Bearer value, anywhere in the tree', () => {
    const out = scrubSecrets({
      headers: { Authorization: `Bearer ${SECRETS[3]}`, 'X-Api-Key': SECRETS[2] },
      nested: [{ password: SECRETS[1] }, { note: `use Bearer ${SECRETS[0]} here` }],
      token_id: 'tok_01J',
      secret: null,
    });
    expect(out).toEqual({
      headers: { Authorization: REDACTED, 'X-Api-Key': REDACTED },
      nested: [{ password: REDACTED }, { note: `use Bearer ${REDACTED} here` }],
      token_id: 'tok_01J',
      secret: null,
    });
  });

  it('issue 20: credentials spelled out in free text are removed, the words around them kept', () => {
    const pem = '-----BEGIN PRIVATE KEY-----\nMC4CAQAwBQYDK2VwBCIEIB\n-----END PRIVATE KEY-----';
    const out = scrubSecrets({
      note: `login with password=${SECRETS[1]} then run`,
      cfg: `{"api_key": "${SECRETS[2]}", "rate": 5}`,
      yaml: `token: ${SECRETS[0]}`,
      key: `here is ${pem} ok`,
      aws: 'id AKIAIOSFODNN7EXAMPLE used',
      model: 'OPENAI sk-proj-abcdefghijklmnopqrstuvwx here',
      plain: 'the token is sent only to that endpoint; password rules: 8 characters',
    }) as Record<string, string>;
    for (const v of Object.values(out)) for (const secret of SECRETS) expect(v).not.toContain(secret);
    expect(out.note).toBe(`login with password=${REDACTED} then run`);
    expect(out.cfg).toBe(`{"api_key": ${REDACTED}, "rate": 5}`);
    expect(out.yaml).toBe(`token: ${REDACTED}`);
    expect(out.key).toBe(`here is ${REDACTED} ok`);
    expect(out.aws).toBe(`id ${REDACTED} used`);
    expect(out.model).toBe(`OPENAI ${REDACTED} here`);
    // Prose that merely names a credential is left as it is.
    expect(out.plain).toBe('the token is sent only to that endpoint; password rules: 8 characters');
  });

  it('redactPaths follows RFC 6901 pointers, with escapes and a * wildcard', () => {
    const doc = { input: { operator_note: 'n', 'a/b': 1, list: [{ pin: 1 }, { pin: 2 }] }, keep: 1 };
    redactPaths(doc, ['/input/operator_note', '/input/a~1b', '/input/list/*/pin', '/missing/path']);
    expect(doc).toEqual({
      input: { operator_note: REDACTED, 'a/b': REDACTED, list: [{ pin: REDACTED }, { pin: REDACTED }] },
      keep: 1,
    });
  });

  it('HOST-056: ledger entries are redacted per endpoint and never hold credentials; receipts stay verbatim', async () => {
    const t = tempDir();
    cleanups.push(t.cleanup);
    const clock = new SimulatedClock();
    const { db } = await openStore(join(t.dir, 'host.db'), clock);
    const ledger = await openLedger(db, { clock, redaction: { 'mhs://other': ['/input/ticks'] } });
    ledger.setRedaction(ENDPOINT, ['/input/operator_note']);
    const a = await ledger.append({
      kind: 'tool_call',
      command_id: 'cmd_1',
      endpoint_id: ENDPOINT,
      input: { ticks: 3, operator_note: 'call Bob at home' },
      transport: { authorization: `Bearer ${SECRETS[0]}`, password: SECRETS[1] },
    });
    expect(a['input']).toEqual({ ticks: 3, operator_note: REDACTED });
    expect(a['transport']).toEqual({ authorization: REDACTED, password: REDACTED });
    const b = await ledger.append({ kind: 'tool_call', endpoint_id: 'mhs://third', input: { operator_note: 'kept' } });
    expect(b['input']).toEqual({ operator_note: 'kept' });
    const c = await ledger.append({ kind: 'command.intent', endpoint_id: 'mhs://other', input: { ticks: 3 } });
    expect(c['input']).toEqual({ ticks: REDACTED });
    // What was stored is what was returned (the stored line is the sealed entry).
    expect((await ledger.byCommand('cmd_1'))[0]).toEqual(a);

    // HOST-052: the receipt is kept byte-for-byte in its wrapper, endpoint digest as it came.
    const { receipts, bundle } = sampleEndpointChain(1);
    const receipt: Record<string, unknown> = { ...receipts[0], output: { token: 'not-a-credential-but-kept' } };
    const r = await ledger.append(
      receiptEntry(receipt, { received_at: '2026-01-01T00:00:00.000Z', traceparent: '00-abc-def-01' }),
    );
    expect(H(r['receipt'])).toBe(H(receipt));
    expect(r).toMatchObject({
      source: 'mhs',
      received_at: '2026-01-01T00:00:00.000Z',
      command_id: 'cmd_1',
      endpoint_evidence: receipt['evidence'],
    });

    const artifacts = await openArtifacts(db, { clock });
    await artifacts.putEvidenceBundle(bundle);
    await artifacts.appendTranscript({
      kind: 'tool_call',
      session_id: 'ses_1',
      arguments: { api_key: SECRETS[2], q: `Bearer ${SECRETS[3]}` },
    });
    const [item] = await artifacts.transcript();
    expect(item).toMatchObject({ arguments: { api_key: REDACTED, q: `Bearer ${REDACTED}` }, seq: 1 });

    const pkg = join(t.dir, 'pkg');
    await exportPackage({ db, outDir: pkg, clock });
    const files = (function walk(d: string): string[] {
      return readdirSync(d).flatMap((n) => (statSync(join(d, n)).isDirectory() ? walk(join(d, n)) : [join(d, n)]));
    })(pkg);
    for (const f of files) {
      const text = readFileSync(f, 'utf8');
      for (const s of SECRETS) expect(text, f).not.toContain(s);
      expect(text).not.toContain('call Bob at home');
    }
    await db.close();
  });
});
