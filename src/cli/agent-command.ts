import { Command } from 'commander';
import { loadAgentScript } from '../ai/agent-script.js';
import { runAgent } from '../ai/agent-loop.js';
import type { AgentEvent } from '../ai/agent-loop.js';
import { ScriptedProvider } from '../ai/scripted-provider.js';
import { badFlag, openCliRuntime, withRuntimeOptions } from './cli-runtime.js';
import type { RuntimeFlags } from './cli-runtime.js';

function collect(v: string, acc: string[]): string[] {
  return [...acc, v];
}

function positiveInt(v: string): number {
  const n = Number(v);
  if (!/^\d+$/.test(v.trim()) || !Number.isSafeInteger(n) || n < 1)
    throw badFlag('--max-turns', 'expected a positive whole number', { value: v });
  return n;
}

/** Prints each turn, tool call and FULL result (receipt or error with mhs_code; HOST-033, 072). */
function printer(out: (line: string) => void): (e: AgentEvent) => void {
  return (e) => {
    if (e.type === 'turn') out(`turn ${e.index} (${e.tools} tools offered)`);
    else if (e.type === 'tool_call') out(`→ ${e.call.name} ${JSON.stringify(e.call.arguments)}`);
    else if (e.type === 'tool_result') {
      const r = e.result;
      const err = r.result.error as { mhs_code?: string; remediation?: string } | undefined;
      const receipt = r.result.receipt as { status?: string } | undefined;
      const what = r.isError ? `error ${err?.mhs_code}` : receipt ? `receipt ${receipt.status}` : 'ok';
      out(`← ${r.tool}: ${what}${r.commandId ? ` ${r.commandId}` : ''} (ledger seq ${r.ledgerSeq})`);
      if (err?.remediation) out(`    remediation: ${err.remediation}`);
      out(`    ${JSON.stringify(r.result)}`);
    } else out(`final: ${e.text}`);
  };
}

/**
 * `mhs-host agent --script FILE`: runs the deterministic scripted model (the embedded default provider) against
 * the generated tool surface of the given endpoints (HOST-030), every capability call through the governed path
 * with the policy gate, printing each tool call and its full result. Exits 0 when the script reached its final
 * message.
 */
export function agentCommand(): Command {
  return withRuntimeOptions(
    new Command('agent')
      .description('Run the scripted model against the endpoints through the governed path, printing full receipts')
      .requiredOption('--script <file>', 'agent script JSON (see docs/agent.md)')
      .option(
        '--endpoint <ref>',
        'connector id or endpoint id to attach (repeatable; default the script "endpoints")',
        collect,
        [],
      )
      .option('--max-turns <n>', 'most model turns (default the script max_turns, else 20)', positiveInt),
  ).action(async (o: RuntimeFlags & { script: string; endpoint: string[]; maxTurns?: number }) => {
    const script = loadAgentScript(o.script);
    const refs = o.endpoint.length ? o.endpoint : (script.endpoints ?? []);
    if (!refs.length) throw badFlag('--endpoint', 'no endpoint given and the script names none');
    const out = (l: string) => void process.stdout.write(`${l}\n`);
    const rt = await openCliRuntime(o);
    try {
      for (const ref of refs) out(`endpoint ${(await rt.connectEndpoint(ref)).endpointId} attached`);
      const result = await runAgent({
        provider: new ScriptedProvider(script),
        engine: rt.engine,
        ledger: rt.ledger,
        transcript: rt.artifacts,
        clock: rt.clock,
        maxTurns: o.maxTurns ?? script.max_turns ?? 20,
        ...(script.prompt !== undefined ? { prompt: script.prompt } : {}),
        onEvent: printer(out),
      });
      const errors = result.calls.filter((c) => c.isError).length;
      out(
        `agent run ${result.runId}: ${result.stopReason} after ${result.turns} turns, ${result.calls.length} tool calls (${errors} errors); transcript session ${result.runId}`,
      );
      if (result.stopReason !== 'final') process.exitCode = 1;
    } finally {
      await rt.close();
    }
  });
}
