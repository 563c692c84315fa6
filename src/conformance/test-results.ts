/**
 * Reads a vitest JSON report (`vitest run --reporter=json --outputFile=FILE`): every test with its file, full name
 * and status, and the HOST requirement ids its name cites (`HOST-091: ...`, `HOST-013/065: ...`).
 */
import { Ajv2020 } from 'ajv/dist/2020.js';
import { ErrorCode, HostError } from '../core/index.js';
import type { TestBasis } from './test-basis.js';

/** One test of the run. */
export interface TestOutcome {
  file: string;
  name: string;
  status: 'passed' | 'failed' | 'skipped';
  cites: string[];
  /** What the test's file exercises (test-basis.ts); unknown counts as not the host. */
  basis?: TestBasis;
}

const SCHEMA = {
  type: 'object',
  required: ['testResults'],
  properties: {
    testResults: {
      type: 'array',
      items: {
        type: 'object',
        required: ['name', 'assertionResults'],
        properties: {
          name: { type: 'string' },
          assertionResults: {
            type: 'array',
            items: {
              type: 'object',
              required: ['fullName', 'status'],
              properties: { fullName: { type: 'string' }, status: { type: 'string' } },
            },
          },
        },
      },
    },
  },
} as const;

const validate = new Ajv2020({ allErrors: true }).compile(SCHEMA);

/** The ids cited in a test name. */
export function citedIds(name: string): string[] {
  const out = new Set<string>();
  for (const m of name.matchAll(/HOST-(0\d\d(?:\/0\d\d)*)/g)) for (const n of m[1]!.split('/')) out.add(`HOST-${n}`);
  return [...out];
}

/**
 * Parses the JSON text of a vitest report; anything else is `MHS.HOST.CONFIG_INVALID` with the schema errors.
 * `basisOf` tells what each test file (path relative to `root`) exercises.
 */
export function parseVitestReport(text: string, root = '', basisOf?: (file: string) => TestBasis): TestOutcome[] {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (err) {
    throw new HostError(ErrorCode.HOST_CONFIG_INVALID, 'test results are not JSON', {}, { cause: err });
  }
  if (!validate(doc))
    throw new HostError(
      ErrorCode.HOST_CONFIG_INVALID,
      'test results are not a vitest JSON report',
      { errors: validate.errors },
      { remediation: 'Produce them with: npx vitest run --reporter=json --outputFile=FILE' },
    );
  const report = doc as {
    testResults: Array<{ name: string; assertionResults: Array<{ fullName: string; status: string }> }>;
  };
  return report.testResults.flatMap((f) => {
    const file = root && f.name.startsWith(root) ? f.name.slice(root.length).replace(/^\//, '') : f.name;
    const basis = basisOf?.(file);
    return f.assertionResults.map((t): TestOutcome => ({
      file,
      name: t.fullName,
      status: t.status === 'passed' ? 'passed' : t.status === 'failed' ? 'failed' : 'skipped',
      cites: citedIds(t.fullName),
      ...(basis ? { basis } : {}),
    }));
  });
}
