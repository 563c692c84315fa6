import { readFileSync } from 'node:fs';
import { Command } from 'commander';
import { ErrorCode, HostError } from '../core/index.js';
import { sessionDisclosureText } from '../engine/index.js';
import type { TaskProgress, TaskResult, TaskSpec } from '../engine/index.js';
import { openCliRuntime, withRuntimeOptions } from './cli-runtime.js';
import type { RuntimeFlags } from './cli-runtime.js';
import { shutdownAndThrow, startOtlpExport } from './otlp-export.js';

/** Prints live per-endpoint progress lines and each step's full receipt (HOST-033). */
export function progressPrinter(out: (line: string) => void, opts: { receipts?: boolean } = {}) {
  return (p: TaskProgress): void => {
    if (p.type === 'step.start')
      out(
        `[${p.step.endpoint}] step ${p.index} ${p.step.device} ${p.step.capability} ${JSON.stringify(p.step.input)} …`,
      );
    else if (p.type === 'step.done') {
      const r = p.result;
      const what = r.receipt
        ? `${r.receipt.status} rev ${r.receipt.revisions.before}→${r.receipt.revisions.after} ${r.commandId}`
        : r.status === 'skipped'
          ? 'skipped (an earlier step on this endpoint did not complete)'
          : `${r.error?.mhs_code ?? r.status}${r.commandId ? ` ${r.commandId}` : ''}`;
      out(`[${r.step.endpoint}] step ${r.index} → ${what}`);
      if (r.receipt?.error) out(`    ${r.receipt.error.mhs_code}: ${r.receipt.error.remediation}`);
      if (r.error && !r.receipt) out(`    ${r.error.remediation}`);
      if (opts.receipts !== false && r.receipt) out(`    receipt ${JSON.stringify(r.receipt)}`);
    } else out(`[${p.endpointId}] done (${p.ok ? 'all steps completed' : 'stopped'})`);
  };
}

/** Reads and checks a task file `{name?, steps:[{endpoint, device, capability, input}]}`. */
export function readTaskFile(file: string): TaskSpec {
  let spec: unknown;
  try {
    spec = JSON.parse(readFileSync(file, 'utf8'));
  } catch (err) {
    throw new HostError(ErrorCode.HOST_CONFIG_INVALID, `cannot read task file ${file}`, { file }, { cause: err });
  }
  if (!spec || typeof spec !== 'object' || Array.isArray(spec))
    throw new HostError(
      ErrorCode.HOST_CONFIG_INVALID,
      `task file ${file} must hold a JSON object {name?, steps: [...]}`,
      { file, found: spec === null ? 'null' : Array.isArray(spec) ? 'array' : typeof spec },
      { remediation: 'Write the task as {"steps": [{"endpoint", "device", "capability", "input"}]}.' },
    );
  const steps = (spec as { steps?: unknown }).steps;
  if (!Array.isArray(steps) || !steps.length)
    throw new HostError(ErrorCode.HOST_CONFIG_INVALID, `task file ${file} has no steps`, { file });
  steps.forEach((s: unknown, i) => {
    const st = s as Record<string, unknown>;
    for (const k of ['endpoint', 'device', 'capability'])
      if (typeof st?.[k] !== 'string')
        throw new HostError(ErrorCode.HOST_CONFIG_INVALID, `task file ${file}: step ${i} needs a string "${k}"`, {
          file,
          step: i,
        });
    if (st.input !== undefined && (typeof st.input !== 'object' || st.input === null || Array.isArray(st.input)))
      throw new HostError(ErrorCode.HOST_CONFIG_INVALID, `task file ${file}: step ${i} input must be an object`, {
        file,
        step: i,
      });
    st.input ??= {};
  });
  return spec as TaskSpec;
}

/** Prints the task summary; returns true when every step completed. */
export function printTaskSummary(out: (line: string) => void, r: TaskResult): boolean {
  out(`task ${r.taskId}: ${r.ok ? 'completed' : 'incomplete'}; parent_action seq ${r.parentSeq}..${r.endSeq}`);
  out(`traceparent ${r.traceparent}`);
  return r.ok;
}

/**
 * `mhs-host run-task FILE`: a multi-endpoint task (HOST-080, 081) with live per-endpoint progress, decided by
 * the same policy gate as `serve`; a step that needs a human approval prints it (stderr) and waits.
 */
export function runTaskCommand(): Command {
  const cmd = new Command('run-task')
    .description('Run a multi-endpoint task file through the governed call path, printing progress and receipts')
    .argument('<file>', 'task JSON: {"name"?, "steps":[{"endpoint","device","capability","input"}]}')
    .option('--no-receipts', 'print progress lines only, not the full receipts');
  return withRuntimeOptions(cmd).action(async (file: string, o: RuntimeFlags & { receipts: boolean }) => {
    const spec = readTaskFile(file);
    // Spans go out over OTLP when OTEL_* says so (docs/observability.md), flushed before the command returns.
    const otlp = await startOtlpExport();
    const rt = await openCliRuntime(o).catch(shutdownAndThrow(otlp));
    const out = (l: string) => void process.stdout.write(`${l}\n`);
    try {
      const ids = new Map<string, string>();
      for (const ref of new Set(spec.steps.map((s) => s.endpoint)))
        ids.set(ref, (await rt.connectEndpoint(ref)).endpointId);
      const steps = spec.steps.map((s) => ({ ...s, endpoint: ids.get(s.endpoint) ?? s.endpoint }));
      const result = await rt.engine.runTask(
        { ...spec, steps },
        {
          onProgress: progressPrinter(out, { receipts: o.receipts }),
          // HOST-003: each device's disclosure, before the task's first call on it.
          disclosure: { surface: 'cli.run-task', show: (d) => out(sessionDisclosureText(d)) },
        },
      );
      if (!printTaskSummary(out, result)) process.exitCode = 1;
    } finally {
      await rt.close();
      await otlp?.shutdown();
    }
  });
}
