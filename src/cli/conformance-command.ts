import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { lazyValidator } from '../core/lazy-validator.js';
import { Command, Option } from 'commander';
import { ErrorCode, HostError, RealClock, isoAt } from '../core/index.js';
import { buildClaim } from '../conformance/claim.js';
import { buildConformanceReport, reportMarkdown } from '../conformance/report.js';
import type { ConformanceReport, EndpointReportRef } from '../conformance/report.js';
import { TestBasisReader } from '../conformance/test-basis.js';
import { parseVitestReport } from '../conformance/test-results.js';
import { badFlag } from './cli-runtime.js';

const ENDPOINT_REPORT = {
  type: 'object',
  required: ['endpoint_id', 'level', 'report'],
  additionalProperties: false,
  properties: {
    endpoint_id: { type: 'string', minLength: 1 },
    level: { type: 'integer', minimum: 1, maximum: 5 },
    report: { type: 'string', minLength: 1 },
  },
} as const;
const validEndpointReport = lazyValidator(ENDPOINT_REPORT, { allErrors: true });

function readText(flag: string, path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (err) {
    throw badFlag(flag, `cannot read ${path}: ${(err as Error).message}`, { path });
  }
}

function endpointReport(path: string): EndpointReportRef {
  let doc: unknown;
  try {
    doc = JSON.parse(readText('--endpoint-report', path));
  } catch (err) {
    if (err instanceof HostError) throw err;
    throw badFlag('--endpoint-report', `${path} is not JSON`, { path });
  }
  if (!validEndpointReport(doc))
    throw new HostError(
      ErrorCode.HOST_CONFIG_INVALID,
      `--endpoint-report ${path} is not an endpoint report reference`,
      {
        path,
        errors: validEndpointReport.errors,
      },
    );
  return doc as EndpointReportRef;
}

/** What each test file exercises, read from the sources under `root` (the repository the suite ran in). */
function basisReader(root: string): (file: string) => ReturnType<TestBasisReader['of']> {
  const reader = new TestBasisReader((p) => {
    const f = join(root, p);
    return existsSync(f) ? readFileSync(f, 'utf8') : undefined;
  });
  return (file) => reader.of(file);
}

type ReportFlags = { results: string; endpointReport?: string[]; out: string; requireLevel?: number };

/** The options and action of the report command, under either name. */
function reportCommand(name: string): Command {
  return new Command(name)
    .description('Build the MHS-009 host conformance report from a vitest JSON run (npm run conformance)')
    .addOption(new Option('--results <file>', 'vitest JSON report (vitest run --reporter=json)').makeOptionMandatory())
    .addOption(
      new Option(
        '--endpoint-report <file...>',
        'JSON {endpoint_id, level, report} of an endpoint the suite was run against (HOST-002)',
      ),
    )
    .option('--out <dir>', 'write host-conformance.json and host-conformance.md there', 'reports')
    .addOption(
      new Option('--require-level <n>', 'exit 1 unless this level is satisfied').argParser((v) => {
        if (!/^[1-5]$/.test(v)) throw badFlag('--require-level', 'expected a level 1 to 5', { value: v });
        return Number(v);
      }),
    )
    .action((opts: ReportFlags) => {
      const root = resolve('.');
      const tests = parseVitestReport(readText('--results', opts.results), root, basisReader(root));
      const endpointReports = (opts.endpointReport ?? []).map(endpointReport);
      const report = buildConformanceReport({
        tests,
        host: { name: 'mhs-host', version: '0.1.0' },
        generatedAt: isoAt(new RealClock().now()),
        endpointReports,
      });
      mkdirSync(opts.out, { recursive: true });
      writeFileSync(join(opts.out, 'host-conformance.json'), `${JSON.stringify(report, null, 2)}\n`);
      writeFileSync(join(opts.out, 'host-conformance.md'), reportMarkdown(report));
      const s = report.summary;
      process.stdout.write(
        `${report.test_basis.kind}: ${s.pass} pass, ${s.fail} fail, ${s.not_tested} not tested, ` +
          `${s.simulator_only} simulator only, ${s.gap} gap, ` +
          `${s.not_applicable} not applicable, ${s.not_testable} not testable (of ${s.requirements}; ${s.tests} tests)\n` +
          `highest level satisfied: ${report.highest_satisfied_level ? `CL${report.highest_satisfied_level}` : 'none'}\n` +
          `${report.statement}\n`,
      );
      for (const l of report.levels)
        if (!l.satisfied) process.stdout.write(`  CL${l.level} blocked by ${l.blocking.join(', ')}\n`);
      process.stdout.write(`written to ${join(opts.out, 'host-conformance.{json,md}')}\n`);
      if (opts.requireLevel && (report.highest_satisfied_level ?? 0) < opts.requireLevel) process.exitCode = 1;
    });
}

/**
 * `mhs-host conformance-report`: the MHS-009 host conformance report (HOST-001, 002) from a vitest JSON run, written
 * as JSON and Markdown. Labelled a self-test unless an endpoint report at CL3+ is given; a requirement passes only
 * through a passing test that exercises the host (src/conformance/test-basis.ts).
 */
export function conformanceCommand(): Command {
  return reportCommand('conformance-report');
}

const REPORT_SHAPE = {
  type: 'object',
  required: ['profile', 'host', 'generated_at', 'test_basis', 'levels', 'highest_satisfied_level', 'statement'],
  properties: {
    profile: { const: 'MHS-009' },
    host: {
      type: 'object',
      required: ['name', 'version'],
      properties: { name: { type: 'string' }, version: { type: 'string' } },
    },
    generated_at: { type: 'string' },
    test_basis: {
      type: 'object',
      required: ['kind', 'endpoints'],
      properties: { kind: { enum: ['self-test', 'endpoint-tested'] }, endpoints: { type: 'array' } },
    },
    levels: {
      type: 'array',
      items: {
        type: 'object',
        required: ['level', 'satisfied', 'blocking'],
        properties: {
          level: { type: 'integer', minimum: 1, maximum: 5 },
          satisfied: { type: 'boolean' },
          blocking: { type: 'array', items: { type: 'string' } },
        },
      },
    },
    highest_satisfied_level: { oneOf: [{ type: 'integer', minimum: 1, maximum: 5 }, { type: 'null' }] },
    statement: { type: 'string' },
    not_proven: { type: 'array', items: { type: 'string' } },
  },
} as const;
const validReport = lazyValidator(REPORT_SHAPE, { allErrors: true });

function readReport(path: string): ConformanceReport {
  let doc: unknown;
  try {
    doc = JSON.parse(readText('--report', path));
  } catch (err) {
    if (err instanceof HostError) throw err;
    throw badFlag('--report', `${path} is not JSON`, { path });
  }
  if (!validReport(doc))
    throw new HostError(
      ErrorCode.HOST_CONFIG_INVALID,
      `--report ${path} is not a host conformance report`,
      { path, errors: validReport.errors },
      { remediation: 'Build it with: mhs-host conformance report --results FILE (or npm run conformance).' },
    );
  const r = doc as ConformanceReport;
  return { ...r, not_proven: r.not_proven ?? [] };
}

/**
 * `mhs-host conformance claim --report FILE [--report-ref REF] [--out FILE]`: the registry claim document (HOST-083;
 * MHS-007 §4.4 as far as public, see src/conformance/claim.ts) pointing at the report, claiming exactly the level
 * the report holds and saying whether it is a self-test or endpoint-tested.
 */
function claimCommand(): Command {
  return new Command('claim')
    .description('Write the registry claim document (HOST-083) that points at a conformance report')
    .addOption(
      new Option('--report <file>', 'host-conformance.json (mhs-host conformance report)').makeOptionMandatory(),
    )
    .option('--report-ref <ref>', 'where the report is published (URL or path; default the --report path)')
    .option('--out <file>', 'where to write the claim', 'reports/host-claim.json')
    .action((o: { report: string; reportRef?: string; out: string }) => {
      const report = readReport(o.report);
      const claim = buildClaim(report, o.reportRef ?? o.report);
      mkdirSync(dirname(o.out), { recursive: true });
      writeFileSync(o.out, `${JSON.stringify(claim, null, 2)}\n`);
      process.stdout.write(
        `claim ${claim.conformance.level ?? 'no level'} (${claim.test_basis}, trust ${claim.conformance.trust}): ${claim.statement}\n` +
          `report ${claim.conformance.report_ref} digest ${claim.conformance.report_digest}\nwritten to ${o.out}\n`,
      );
    });
}

/** `mhs-host conformance report|claim`. */
export function conformanceGroupCommand(): Command {
  return new Command('conformance')
    .description('The MHS-009 host conformance report and the registry claim that points at it')
    .addCommand(reportCommand('report'))
    .addCommand(claimCommand());
}
