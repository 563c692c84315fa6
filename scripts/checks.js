#!/usr/bin/env node
// The static checks of `npm test` (typecheck, lint, format), run side by side: each is one single-threaded
// process, so on a 2-core machine they take about half their sequential time. Each one's output is printed
// whole when it ends; the exit code is non-zero when any check failed.
import { spawn } from 'node:child_process';
import { Buffer } from 'node:buffer';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import process from 'node:process';
import { fileURLToPath } from 'node:url';

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const bin = (name) => path.join(root, 'node_modules', '.bin', name);
const FORMATTED = ['src/**/*.ts', 'src/**/*.tsx', 'machines/**/*.ts', 'test/**/*.ts', 'bench/**/*.ts'];

const checks = [
  { name: 'typecheck', cmd: bin('tsc'), args: ['--noEmit'] },
  { name: 'eslint', cmd: bin('eslint'), args: ['.'] },
  { name: 'prettier', cmd: bin('prettier'), args: ['--check', '--no-error-on-unmatched-pattern', ...FORMATTED] },
];

function run({ name, cmd, args }) {
  const started = performance.now();
  return new Promise((resolve) => {
    const child = spawn(cmd, args, { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
    const out = [];
    child.stdout.on('data', (b) => out.push(b));
    child.stderr.on('data', (b) => out.push(b));
    const finish = (code, error) => {
      const secs = ((performance.now() - started) / 1000).toFixed(1);
      const text = Buffer.concat(out).toString('utf8').trimEnd();
      process.stdout.write(`\n── ${name}: ${code === 0 ? 'ok' : 'FAILED'} (${secs} s)\n${text ? `${text}\n` : ''}`);
      if (error) process.stdout.write(`${error.message}\n`);
      resolve(code === 0);
    };
    child.on('error', (error) => finish(1, error));
    child.on('close', (code) => finish(code ?? 1));
  });
}

const results = await Promise.all(checks.map(run));
const failed = checks.filter((_, i) => !results[i]).map((c) => c.name);
if (failed.length) {
  process.stdout.write(`\nchecks failed: ${failed.join(', ')}\n`);
  process.exit(1);
}
process.stdout.write('\nchecks ok: typecheck, eslint, prettier\n');
