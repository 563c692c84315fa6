import { Command } from 'commander';
import { ErrorCode, HostError } from '../core/index.js';
import type { AgentScript } from '../ai/agent-script.js';
import { runAgent } from '../ai/agent-loop.js';
import type { AgentEvent } from '../ai/agent-loop.js';
import type { ModelProvider } from '../ai/model-provider.js';
import { ScriptedProvider } from '../ai/scripted-provider.js';
import { sessionDisclosureText } from '../engine/index.js';
import { badFlag, openCliRuntime, withRuntimeOptions } from './cli-runtime.js';
import type { RuntimeFlags } from './cli-runtime.js';
import { modelSpecOf, providerOf, withModelOptions } from './model-flags.js';
import type { ModelFlags } from './model-flags.js';

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
    else if (e.type === 'reply') {
      const tokens = e.usage ? `, ${e.usage.inputTokens} in / ${e.usage.outputTokens} out tokens` : '';
      out(`  model: ${e.kind === 'final' ? 'final answer' : `${e.calls} tool call(s)`}${tokens}`);
      if (e.text && e.kind === 'tool_calls') out(`  assistant: ${e.text}`);
    } else if (e.type === 'tool_call') out(`→ ${e.call.name} ${JSON.stringify(e.call.arguments)}`);
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

type AgentFlags = RuntimeFlags &
  ModelFlags & { script?: string; prompt?: string; endpoint: string[]; maxTurns?: number };

/** The model a run uses and what it brings: `--script FILE` or `--model scripted:FILE`, else a network model. */
function chooseModel(o: AgentFlags): { provider: ModelProvider; script?: AgentScript } {
  const spec = modelSpecOf(o);
  if (o.script !== undefined && spec) throw badFlag('--script', 'give --script or --model, not both');
  if (o.script === undefined && !spec)
    throw new HostError(
      ErrorCode.HOST_MODEL_CONFIG,
      'agent needs --script <file> or --model <provider>:<model>',
      {},
      {
        remediation:
          'e.g. --script examples/agent-thermostat.json (offline), or --model openai:gpt-4.1 --prompt "..." (docs/models.md).',
      },
    );
  // One factory for every model: `--script FILE` is `--model scripted:FILE`.
  const provider = providerOf(spec ?? { provider: 'scripted', model: o.script! }, o, process.env);
  return provider instanceof ScriptedProvider ? { provider, script: provider.script } : { provider };
}

/**
 * `mhs-host agent (--script FILE | --model PROVIDER:MODEL --prompt TASK)`: runs a model (the deterministic scripted
 * model, or a real one through its official SDK, docs/models.md) against the generated tool surface of the given
 * endpoints (HOST-030), every capability call through the governed path with the policy gate, printing each turn,
 * tool call and full result, then the final answer. Exits 0 when the model gave its final message.
 * @throws HostError `MHS.HOST.MODEL_CONFIG` (no or bad model), `MHS.HOST.AGENT_SCRIPT_INVALID`, `MHS.HOST.MODEL_*`
 * (the provider failed), `validation_error` (bad flags).
 */
export function agentCommand(): Command {
  return withModelOptions(
    withRuntimeOptions(
      new Command('agent')
        .description(
          'Run a model (scripted or real) against the endpoints through the governed path, printing full receipts',
        )
        .option('--script <file>', 'agent script JSON for the scripted model (see docs/agent.md)')
        .option('--prompt <task>', 'the task given to the model (default the script "prompt")')
        .option(
          '--endpoint <ref>',
          'connector id or endpoint id to attach (repeatable; default the script "endpoints")',
          collect,
          [],
        )
        .option('--max-turns <n>', 'most model turns (default the script max_turns, else 20)', positiveInt),
    ),
  ).action(async (o: AgentFlags) => {
    const { provider, script } = chooseModel(o);
    const refs = o.endpoint.length ? o.endpoint : (script?.endpoints ?? []);
    if (!refs.length)
      throw badFlag('--endpoint', script ? 'no endpoint given and the script names none' : 'required with --model');
    const prompt = o.prompt ?? script?.prompt;
    if (prompt === undefined && !script) throw badFlag('--prompt', 'required with --model');
    const out = (l: string) => void process.stdout.write(`${l}\n`);
    const rt = await openCliRuntime(o);
    try {
      out(`model ${provider.name}`);
      for (const ref of refs) out(`endpoint ${(await rt.connectEndpoint(ref)).endpointId} attached`);
      const result = await runAgent({
        provider,
        engine: rt.engine,
        ledger: rt.ledger,
        transcript: rt.artifacts,
        clock: rt.clock,
        maxTurns: o.maxTurns ?? script?.max_turns ?? 20,
        ...(prompt !== undefined ? { prompt } : {}),
        onEvent: printer(out),
        // HOST-003: each device's disclosure, before the run's first call on it.
        disclosure: { surface: 'cli.agent', show: (d) => out(sessionDisclosureText(d)) },
      });
      const errors = result.calls.filter((c) => c.isError).length;
      const tokens = result.usage ? `, ${result.usage.inputTokens} in / ${result.usage.outputTokens} out tokens` : '';
      out(
        `agent run ${result.runId}: ${result.stopReason} after ${result.turns} turns, ${result.calls.length} tool calls (${errors} errors)${tokens}; transcript session ${result.runId}`,
      );
      if (result.stopReason !== 'final') process.exitCode = 1;
    } finally {
      await rt.close();
    }
  });
}
