/**
 * The MHS-Host conformance report (HOST-001, HOST-002): every MHS-009 requirement with the tests that cite it and
 * their outcome, the levels CL1…CL5 with what blocks each, and the test basis. A requirement passes only through a
 * passing test that exercises the host, not only the simulator (test-basis.ts); a level holds only when every MUST
 * up to it passes or does not apply here. A host tested only against its own
 * simulators is labelled a self-test (HOST-002); it is labelled endpoint-tested only with the report of a CL3+
 * endpoint it was tested against.
 */
import { HOST_REQUIREMENTS, NOT_EXERCISED, SHOULD_ONLY, requirementLevel } from './host-requirements.js';
import type { Level } from './host-requirements.js';
import type { TestBasis } from './test-basis.js';
import type { TestOutcome } from './test-results.js';

/**
 * A requirement's standing in this run. `pass` needs a passing citing test that exercises the host
 * (test-basis.ts); `simulator_only`: its citing tests passed but exercise only the bundled simulator.
 */
export type RequirementStatus =
  'pass' | 'fail' | 'not_tested' | 'simulator_only' | 'gap' | 'not_applicable' | 'not_testable';

/** The conformance report of an endpoint this host was tested against (MHS-001 §3.4). */
export interface EndpointReportRef {
  endpoint_id: string;
  level: number;
  /** Where the endpoint's report is, or its digest. */
  report: string;
}

export interface RequirementResult {
  id: string;
  text: string;
  level: Level;
  strength: 'MUST' | 'SHOULD';
  status: RequirementStatus;
  reason?: string;
  tests: Array<{ file: string; name: string; status: TestOutcome['status']; basis: TestBasis | 'unknown' }>;
}

export interface ConformanceReport {
  profile: 'MHS-009';
  host: { name: string; version: string };
  generated_at: string;
  test_basis: { kind: 'self-test' | 'endpoint-tested'; endpoints: EndpointReportRef[]; note: string };
  summary: Record<RequirementStatus, number> & { requirements: number; tests: number };
  levels: Array<{ level: Level; satisfied: boolean; blocking: string[] }>;
  /** Highest level whose MUST requirements (and those of every lower level) all pass; null when not even CL1. */
  highest_satisfied_level: Level | null;
  /** The level this report supports, in words (what holds and what blocks the next level). */
  statement: string;
  requirements: RequirementResult[];
  not_proven: string[];
}

/** Only a pass counts; a requirement the condition of which does not arise here (not applicable) does not block. */
const BLOCKING: ReadonlySet<RequirementStatus> = new Set([
  'fail',
  'not_tested',
  'simulator_only',
  'gap',
  'not_testable',
]);

function statusOf(id: string, tests: TestOutcome[]): { status: RequirementStatus; reason?: string } {
  if (tests.some((t) => t.status === 'failed')) return { status: 'fail' };
  const passed = tests.filter((t) => t.status === 'passed');
  if (passed.some((t) => t.basis === 'host')) return { status: 'pass' };
  if (passed.length)
    return {
      status: 'simulator_only',
      reason: `every passing citing test exercises only the simulator (or nothing of the host): ${[...new Set(passed.map((t) => t.file))].join(', ')}`,
    };
  const known = NOT_EXERCISED[id];
  if (known) return { status: known.kind, reason: known.reason };
  return {
    status: 'not_tested',
    reason: tests.length ? 'every test citing it was skipped' : 'no test cites it',
  };
}

/** Builds the report from the tests of one run. */
export function buildConformanceReport(o: {
  tests: TestOutcome[];
  host: { name: string; version: string };
  generatedAt: string;
  endpointReports?: EndpointReportRef[];
}): ConformanceReport {
  const requirements: RequirementResult[] = Object.entries(HOST_REQUIREMENTS).map(([id, text]) => {
    const tests = o.tests.filter((t) => t.cites.includes(id));
    return {
      id,
      text,
      level: requirementLevel(id),
      strength: SHOULD_ONLY.has(id) ? 'SHOULD' : 'MUST',
      ...statusOf(id, tests),
      tests: tests.map((t) => ({ file: t.file, name: t.name, status: t.status, basis: t.basis ?? 'unknown' })),
    };
  });
  const levels = ([1, 2, 3, 4, 5] as const).map((level) => {
    const blocking = requirements
      .filter((r) => r.level <= level && r.strength === 'MUST' && BLOCKING.has(r.status))
      .map((r) => r.id);
    return { level, satisfied: blocking.length === 0, blocking };
  });
  let highest: Level | null = null;
  for (const l of levels) {
    if (!l.satisfied) break;
    highest = l.level;
  }
  const qualifying = (o.endpointReports ?? []).filter((e) => e.level >= 3);
  const summary = {
    requirements: requirements.length,
    tests: o.tests.length,
    pass: 0,
    fail: 0,
    not_tested: 0,
    gap: 0,
    not_applicable: 0,
    not_testable: 0,
    simulator_only: 0,
  };
  for (const r of requirements) summary[r.status]++;
  return {
    profile: 'MHS-009',
    host: o.host,
    generated_at: o.generatedAt,
    test_basis: qualifying.length
      ? {
          kind: 'endpoint-tested',
          endpoints: qualifying,
          note: 'tested against the endpoints listed, each with a conformance report at CL3 or higher',
        }
      : {
          kind: 'self-test',
          endpoints: o.endpointReports ?? [],
          note:
            'SELF-TEST (HOST-002): the host was tested only against its bundled simulators' +
            (o.endpointReports?.length ? ' and endpoints without a CL3+ report' : '') +
            ', not against an endpoint with a valid CL3-or-higher report (MHS-001 §3.4).',
        },
    summary,
    levels,
    highest_satisfied_level: highest,
    statement: statementOf(highest, levels),
    requirements,
    not_proven: [
      'that any endpoint is honest or conformant: its own report says that, not this one',
      'that a device is safe: MHS is not a safety channel; a hardware e-stop remains mandatory',
      'the level matrix of MHS-001 §5.2 itself: levels here follow the traceability table of MHS-009 §10',
      'that a test exercising the host exercises the part a requirement names: the basis is per test file, from what it imports and starts',
    ],
  };
}

function statementOf(highest: Level | null, levels: ConformanceReport['levels']): string {
  const next = levels.find((l) => !l.satisfied);
  const blocked = next ? `CL${next.level} is not satisfied (blocked by ${next.blocking.join(', ')})` : '';
  if (highest === null) return `No level holds: ${blocked}.`;
  return next ? `CL${highest} holds; ${blocked}.` : `CL${highest} holds.`;
}

/** The report as Markdown for people. */
export function reportMarkdown(r: ConformanceReport): string {
  const lines = [
    `# ${r.host.name} ${r.host.version}: MHS-009 host conformance report`,
    '',
    `Generated ${r.generated_at}. **Test basis: ${r.test_basis.kind}.** ${r.test_basis.note}`,
    '',
    `Highest level with every MUST requirement passing in a test of the host: ${r.highest_satisfied_level ? `CL${r.highest_satisfied_level}` : 'none'}. ${r.statement}`,
    '',
    '| level | satisfied | blocking |',
    '| --- | --- | --- |',
    ...r.levels.map((l) => `| CL${l.level} | ${l.satisfied ? 'yes' : 'no'} | ${l.blocking.join(', ') || '-'} |`),
    '',
    '| requirement | level | status | tests | note |',
    '| --- | --- | --- | --- | --- |',
    ...r.requirements.map(
      (q) =>
        `| ${q.id} ${q.strength === 'SHOULD' ? '(SHOULD) ' : ''}${q.text} | CL${q.level} | ${q.status} | ${q.tests.length} | ${q.reason ?? ''} |`,
    ),
    '',
    'Not proven by this report:',
    ...r.not_proven.map((n) => `- ${n}`),
    '',
  ];
  return lines.join('\n');
}
