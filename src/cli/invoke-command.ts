import { userInfo } from 'node:os';
import { Command, InvalidArgumentError } from 'commander';
import { ErrorCode, HostError } from '../core/index.js';
import { sessionDisclosureText } from '../engine/index.js';
import type { CallPrincipal } from '../engine/call-types.js';
import { openCliRuntime, withRuntimeOptions } from './cli-runtime.js';
import type { RuntimeFlags } from './cli-runtime.js';

function jsonObject(v: string): Record<string, unknown> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(v);
  } catch {
    throw new InvalidArgumentError('expected a JSON object');
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed))
    throw new InvalidArgumentError('expected a JSON object');
  return parsed as Record<string, unknown>;
}

/** Who asks when a person runs `mhs-host invoke`: the OS user, so an approval says it came from the CLI (issue 18). */
function cliPrincipal(): CallPrincipal {
  let user = 'unknown';
  try {
    user = userInfo().username;
  } catch {
    // No passwd entry for this uid (some containers): the CLI is still named.
  }
  return { kind: 'human', id: `cli:${user}`, name: `${user} (mhs-host invoke)` };
}

/**
 * `mhs-host invoke <endpoint> <device> <capability> --input JSON`: one governed call (architecture.md steps
 * 1-7) on an enabled connector, decided by the same policy gate as `serve`; prints the device's disclosure
 * (NOT_CERTIFIED, mode, fidelity gaps; HOST-003) to stderr before the call, then the full receipt
 * (HOST-033) and exits 0 only when it completed. A call that needs a human approval prints the approval
 * (stderr) and waits for an operator's decision (`mhs-host approvals`, or the console) up to
 * `--approval-timeout`. With `--enable-composition` (experimental, HOST-084) the capability may be
 * `mhs.composition.run` with a composition as input: one approval, one receipt per step plus the composition's.
 */
export function invokeCommand(): Command {
  const cmd = new Command('invoke')
    .description('Send one governed capability call and print its full receipt')
    .argument('<endpoint>', 'connector id or endpoint id (see `mhs-host endpoints list`)')
    .argument('<device>', 'device id')
    .argument('<capability>', 'capability id')
    .option('--input <json>', 'capability input (a JSON object; any _mhs is ignored)', jsonObject, {})
    .option('--deadline-ms <ms>', 'MHS deadline_ms (default: the binding max_duration_ms)', (v) => Number(v))
    .option('--expected-revision <n>', 'refuse unless the device is at this revision', (v) => Number(v))
    .option(
      '--enable-composition',
      'experimental (HOST-084): allow capability mhs.composition.run, input {"steps":[{device_id,capability_id,input}]}',
    );
  return withRuntimeOptions(cmd).action(
    async (
      endpoint: string,
      device: string,
      capability: string,
      o: RuntimeFlags & {
        input: Record<string, unknown>;
        deadlineMs?: number;
        expectedRevision?: number;
        enableComposition?: boolean;
      },
    ) => {
      const rt = await openCliRuntime(
        o,
        o.enableComposition ? { runtime: { engine: { experimentalComposition: true } } } : {},
      );
      try {
        const ep = await rt.connectEndpoint(endpoint);
        const res = await rt.engine.invoke({
          endpointId: ep.endpointId,
          deviceId: device,
          capabilityId: capability,
          input: o.input,
          principal: cliPrincipal(),
          ...(o.deadlineMs !== undefined ? { deadlineMs: o.deadlineMs } : {}),
          ...(o.expectedRevision !== undefined ? { expectedRevision: o.expectedRevision } : {}),
          // HOST-003: shown before the call is sent; stderr, as stdout is the receipt alone.
          disclosure: {
            surface: 'cli.invoke',
            show: (d) => void process.stderr.write(`${sessionDisclosureText(d)}\n`),
          },
        });
        process.stdout.write(`${JSON.stringify(res.receipt, null, 2)}\n`);
        process.stderr.write(
          `command ${res.commandId}: ${res.receipt.status}${res.outcome === 'final' ? '' : ` (${res.outcome}: device gate stays shut until reconciled)`}\n`,
        );
        if (res.receipt.error)
          process.stderr.write(`  ${res.receipt.error.mhs_code}: ${res.receipt.error.remediation}\n`);
        if (res.receipt.status !== 'completed') process.exitCode = 1;
      } catch (err) {
        if (err instanceof HostError && err.code === ErrorCode.OUTCOME_UNKNOWN)
          process.stdout.write(`${JSON.stringify({ error: err.toWire() }, null, 2)}\n`);
        throw err;
      } finally {
        await rt.close();
      }
    },
  );
}
