// Guarantees (HOST-001, HOST-002): the conformance report places every MHS-009 requirement at the level the
// profile's traceability table (§10) gives it, a level is satisfied only when every MUST requirement up to it passes,
// and a run without the report of a CL3+ endpoint is labelled a self-test. The report is built from a real vitest
// JSON run and from runs described as data; the CLI refuses malformed input with stable codes.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ErrorCode } from '../../src/core/index.js';
import { HOST_REQUIREMENTS, NOT_EXERCISED } from '../../src/conformance/host-requirements.js';
import { buildConformanceReport } from '../../src/conformance/report.js';
import { parseVitestReport } from '../../src/conformance/test-results.js';
import type { TestOutcome } from '../../src/conformance/test-results.js';
import { cli } from '../helpers/mhs-host.js';
import { REPO_ROOT } from '../helpers/sim.js';

const host = { name: 'mhs-host', version: 'test' };
const dir = () => mkdtempSync(join(tmpdir(), 'mhs-conf-'));

/** A vitest JSON report with one test per (id, status). */
function vitestJson(tests: Array<[id: string, status: 'passed' | 'failed' | 'skipped']>): string {
  return JSON.stringify({
    numTotalTests: tests.length,
    testResults: [
      {
        name: '/repo/test/x.test.ts',
        assertionResults: tests.map(([id, status], i) => ({ fullName: `suite ${id}: case ${i}`, status })),
      },
    ],
  });
}

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
  it('HOST-001: every exercised requirement passing satisfies CL1…CL5', () => {
    const r = report(parseVitestReport(vitestJson(exercised.map((id) => [id, 'passed']))));
    expect(r.highest_satisfied_level).toBe(5);
    expect(r.summary.fail + r.summary.not_tested).toBe(0);
    expect(r.requirements.filter((q) => q.status === 'pass').map((q) => q.id)).toEqual(exercised);
  });

  it('HOST-001: a failing CL3 requirement (HOST-041, approvals) blocks CL3 and above, not CL1 or CL2', () => {
    const tests = exercised.map((id): [string, 'passed' | 'failed'] => [id, id === 'HOST-041' ? 'failed' : 'passed']);
    const r = report(parseVitestReport(vitestJson(tests)));
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
    const r = report(parseVitestReport(vitestJson(tests)));
    expect(r.requirements.find((q) => q.id === 'HOST-036')).toMatchObject({ status: 'not_tested', level: 2 });
    expect(r.highest_satisfied_level).toBe(1);
  });

  it('HOST-002: labelled a self-test unless an endpoint with a CL3+ report was tested', () => {
    const tests = parseVitestReport(vitestJson(exercised.map((id) => [id, 'passed'])));
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
    const json = JSON.parse(readFileSync(join(d, 'host-conformance.json'), 'utf8'));
    expect(json.test_basis.kind).toBe('self-test');
    expect(json.requirements).toHaveLength(Object.keys(HOST_REQUIREMENTS).length);
    expect(readFileSync(join(d, 'host-conformance.md'), 'utf8')).toContain('Test basis: self-test');
    // Only the coverage suite ran: most requirements are untested, so not even CL1 can be claimed.
    expect(json.highest_satisfied_level).toBeNull();
    expect((await cli(['conformance-report', '--results', results, '--out', d, '--require-level', '1'])).code).toBe(1);

    writeFileSync(join(d, 'bad.json'), '{"testResults": 3}');
    const bad = await cli(['conformance-report', '--results', join(d, 'bad.json'), '--out', d]);
    expect(bad.stderr).toContain(ErrorCode.HOST_CONFIG_INVALID);
    writeFileSync(join(d, 'ep.json'), JSON.stringify({ endpoint_id: 'x', level: 9, report: 'r' }));
    const badEp = await cli(['conformance-report', '--results', results, '--endpoint-report', join(d, 'ep.json')]);
    expect(badEp.stderr).toContain(ErrorCode.HOST_CONFIG_INVALID);
    const badLevel = await cli(['conformance-report', '--results', results, '--require-level', '7']);
    expect(badLevel.stderr).toContain(ErrorCode.VALIDATION_ERROR);
  }, 120_000);
});
