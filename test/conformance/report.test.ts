// Guarantees (HOST-001, HOST-002, HOST-083): the conformance report places every MHS-009 requirement at the level
// the profile's traceability table (§10) gives it, a level is satisfied only when every MUST requirement up to it
// passes in a test that exercises the host (a requirement whose passing tests exercise only the simulator is
// `simulator_only` and blocks), composition (HOST-084) is not testable against the profile (reserved in 0.9; the
// host's experimental form is this project's own) so CL5 is never claimed, and a run without the
// report of a CL3+ endpoint is labelled a self-test. `mhs-host conformance claim` writes the registry claim that
// points at the report (its digest), claims exactly the level the report holds and states the test basis. Reports
// are built from a real vitest JSON run and from runs described as data; the CLI refuses malformed input with
// stable codes.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ErrorCode, H } from '../../src/core/index.js';
import { HOST_REQUIREMENTS, NOT_EXERCISED } from '../../src/conformance/host-requirements.js';
import { buildConformanceReport } from '../../src/conformance/report.js';
import { parseVitestReport } from '../../src/conformance/test-results.js';
import type { TestOutcome } from '../../src/conformance/test-results.js';
import { cli } from '../helpers/mhs-host.js';
import { REPO_ROOT } from '../helpers/sim.js';

const host = { name: 'mhs-host', version: 'test' };
const dir = () => mkdtempSync(join(tmpdir(), 'mhs-conf-'));

/** A vitest JSON report with one test per (id, status), in `file`. */
function vitestJson(
  tests: Array<[id: string, status: 'passed' | 'failed' | 'skipped']>,
  file = '/repo/test/x.test.ts',
): string {
  return JSON.stringify({
    numTotalTests: tests.length,
    testResults: [
      {
        name: file,
        assertionResults: tests.map(([id, status], i) => ({ fullName: `suite ${id}: case ${i}`, status })),
      },
    ],
  });
}

/** Tests of a run described as data, every file exercising the host. */
const onHost = (json: string) => parseVitestReport(json, '', () => 'host');

const exercised = Object.keys(HOST_REQUIREMENTS).filter((id) => !(id in NOT_EXERCISED));
const report = (
  tests: TestOutcome[],
  endpointReports?: Parameters<typeof buildConformanceReport>[0]['endpointReports'],
) =>
  buildConformanceReport({
    tests,
    host,
    generatedAt: '2026-11-30T00:00:00.000Z',
    ...(endpointReports ? { endpointReports } : {}),
  });

describe('conformance report', () => {
  it('HOST-001: every exercised requirement passing satisfies CL1…CL4; CL5 is blocked by composition, not testable', () => {
    const r = report(onHost(vitestJson(exercised.map((id) => [id, 'passed']))));
    expect(r.highest_satisfied_level).toBe(4);
    expect(r.levels[4]).toEqual({ level: 5, satisfied: false, blocking: ['HOST-084'] });
    expect(r.requirements.find((q) => q.id === 'HOST-084')).toMatchObject({ status: 'not_testable', level: 5 });
    expect(r.statement).toBe('CL4 holds; CL5 is not satisfied (blocked by HOST-084).');
    expect(r.summary.fail + r.summary.not_tested + r.summary.simulator_only).toBe(0);
    expect(r.requirements.filter((q) => q.status === 'pass').map((q) => q.id)).toEqual(exercised);
  });

  it('HOST-001: a MUST whose passing tests exercise only the simulator is simulator_only and blocks its level', () => {
    const hostRun = JSON.parse(vitestJson(exercised.filter((id) => id !== 'HOST-090').map((id) => [id, 'passed'])));
    const simRun = JSON.parse(vitestJson([['HOST-090', 'passed']], '/repo/test/sim/policy.test.ts'));
    const both = JSON.stringify({ testResults: [...hostRun.testResults, ...simRun.testResults] });
    const r = report(parseVitestReport(both, '/repo', (f) => (f.startsWith('test/sim/') ? 'simulator' : 'host')));
    expect(r.requirements.find((q) => q.id === 'HOST-090')).toMatchObject({
      status: 'simulator_only',
      tests: [{ file: 'test/sim/policy.test.ts', basis: 'simulator', status: 'passed' }],
    });
    expect(r.levels[0]!.blocking).toEqual(['HOST-090']);
    expect(r.highest_satisfied_level).toBeNull();
    // Tests whose basis nobody determined never count as the host either.
    expect(report(parseVitestReport(vitestJson(exercised.map((id) => [id, 'passed'])))).highest_satisfied_level).toBe(
      null,
    );
  });

  it('HOST-001: a failing CL3 requirement (HOST-041, approvals) blocks CL3 and above, not CL1 or CL2', () => {
    const tests = exercised.map((id): [string, 'passed' | 'failed'] => [id, id === 'HOST-041' ? 'failed' : 'passed']);
    const r = report(onHost(vitestJson(tests)));
    expect(r.levels.map((l) => [l.level, l.satisfied])).toEqual([
      [1, true],
      [2, true],
      [3, false],
      [4, false],
      [5, false],
    ]);
    expect(r.levels[2]!.blocking).toEqual(['HOST-041']);
    expect(r.highest_satisfied_level).toBe(2);
  });

  it('HOST-001: a requirement cited only by skipped tests is not tested and blocks its level', () => {
    const tests = exercised.map((id): [string, 'passed' | 'skipped'] => [id, id === 'HOST-036' ? 'skipped' : 'passed']);
    const r = report(onHost(vitestJson(tests)));
    expect(r.requirements.find((q) => q.id === 'HOST-036')).toMatchObject({ status: 'not_tested', level: 2 });
    expect(r.highest_satisfied_level).toBe(1);
  });

  it('HOST-002: labelled a self-test unless an endpoint with a CL3+ report was tested', () => {
    const tests = onHost(vitestJson(exercised.map((id) => [id, 'passed'])));
    expect(report(tests).test_basis.kind).toBe('self-test');
    expect(report(tests).test_basis.note).toMatch(/SELF-TEST/);
    const cl2 = { endpoint_id: 'mhs://lab/a', level: 2, report: 'sha256:aa' };
    expect(report(tests, [cl2]).test_basis.kind).toBe('self-test');
    const cl3 = { endpoint_id: 'mhs://lab/b', level: 3, report: 'https://lab.example/b.json' };
    expect(report(tests, [cl2, cl3]).test_basis).toMatchObject({ kind: 'endpoint-tested', endpoints: [cl3] });
  });

  it('HOST-001 HOST-002: the CLI builds the report from a real vitest run and refuses bad input', async () => {
    const d = dir();
    const results = join(d, 'vitest.json');
    const vitest = spawn(
      process.execPath,
      ['node_modules/vitest/vitest.mjs', 'run', 'test/requirements', '--reporter=json', `--outputFile=${results}`],
      { cwd: REPO_ROOT, stdio: 'ignore' },
    );
    expect(await new Promise((res) => vitest.on('exit', res))).toBe(0);
    const ok = await cli(['conformance-report', '--results', results, '--out', d]);
    expect(ok.code, ok.stderr).toBe(0);
    expect(ok.stdout).toMatch(/^self-test: /);
    expect(ok.stdout).toContain('No level holds: CL1 is not satisfied');
    const json = JSON.parse(readFileSync(join(d, 'host-conformance.json'), 'utf8'));
    expect(json.test_basis.kind).toBe('self-test');
    expect(json.requirements).toHaveLength(Object.keys(HOST_REQUIREMENTS).length);
    expect(readFileSync(join(d, 'host-conformance.md'), 'utf8')).toContain('Test basis: self-test');
    // Only the coverage suite ran: most requirements are untested, so not even CL1 can be claimed.
    expect(json.highest_satisfied_level).toBeNull();
    expect((await cli(['conformance-report', '--results', results, '--out', d, '--require-level', '1'])).code).toBe(1);

    // HOST-083: the claim points at that report, claims no level (none holds) and says self-test.
    const claimed = await cli([
      'conformance',
      'claim',
      '--report',
      join(d, 'host-conformance.json'),
      '--out',
      join(d, 'claim.json'),
    ]);
    expect(claimed.code, claimed.stderr).toBe(0);
    const claim = JSON.parse(readFileSync(join(d, 'claim.json'), 'utf8'));
    expect(claim).toMatchObject({
      subject: { kind: 'host', name: 'mhs-host' },
      profile: 'MHS-009',
      conformance: {
        level: null,
        trust: 'self',
        report_ref: join(d, 'host-conformance.json'),
        report_digest: H(JSON.parse(readFileSync(join(d, 'host-conformance.json'), 'utf8'))),
      },
      test_basis: 'self-test',
    });
    expect(claim.not_claimed.map((l: { level: string }) => l.level)).toEqual(['CL1', 'CL2', 'CL3', 'CL4', 'CL5']);

    writeFileSync(join(d, 'bad.json'), '{"testResults": 3}');
    const bad = await cli(['conformance-report', '--results', join(d, 'bad.json'), '--out', d]);
    expect(bad.stderr).toContain(ErrorCode.HOST_CONFIG_INVALID);
    writeFileSync(join(d, 'ep.json'), JSON.stringify({ endpoint_id: 'x', level: 9, report: 'r' }));
    const badEp = await cli(['conformance-report', '--results', results, '--endpoint-report', join(d, 'ep.json')]);
    expect(badEp.stderr).toContain(ErrorCode.HOST_CONFIG_INVALID);
    const badLevel = await cli(['conformance-report', '--results', results, '--require-level', '7']);
    expect(badLevel.stderr).toContain(ErrorCode.VALIDATION_ERROR);
    const badClaim = await cli(['conformance', 'claim', '--report', join(d, 'bad.json'), '--out', join(d, 'c.json')]);
    expect(badClaim.code).not.toBe(0);
    expect(badClaim.stderr).toContain(ErrorCode.HOST_CONFIG_INVALID);
  }, 120_000);

  it('HOST-083 HOST-002: the claim of a CL4 report claims CL4, not CL5, and an endpoint-tested basis names its endpoints', async () => {
    const d = dir();
    const cl3 = { endpoint_id: 'mhs://lab/b', level: 3, report: 'https://lab.example/b.json' };
    const r = report(onHost(vitestJson(exercised.map((id) => [id, 'passed']))), [cl3]);
    writeFileSync(join(d, 'report.json'), JSON.stringify(r));
    const out = join(d, 'claim.json');
    const res = await cli([
      'conformance',
      'claim',
      '--report',
      join(d, 'report.json'),
      '--report-ref',
      'https://host.example/conformance.json',
      '--out',
      out,
    ]);
    expect(res.code, res.stderr).toBe(0);
    expect(res.stdout).toMatch(/^claim CL4 \(endpoint-tested/);
    const claim = JSON.parse(readFileSync(out, 'utf8'));
    expect(claim).toMatchObject({
      conformance: { level: 'CL4', report_ref: 'https://host.example/conformance.json', report_digest: H(r) },
      test_basis: 'endpoint-tested',
      endpoints: [cl3],
      not_claimed: [{ level: 'CL5', blocking: ['HOST-084'] }],
    });
  }, 60_000);
});
