import { runCli } from './cli-run.js';
import type { CommandTable } from './cli-run.js';

/**
 * Each subcommand lives in its own file, loaded only when it runs: a simulator child or a one-shot
 * command does not pay for loading the server, the engine and the MCP client (startup time matters
 * for every spawned endpoint). Add a command with one line here.
 */
const COMMANDS: CommandTable = {
  demo: async () => (await import('./demo-command.js')).demoCommand(),
  invoke: async () => (await import('./invoke-command.js')).invokeCommand(),
  reconcile: async () => (await import('./reconcile-command.js')).reconcileCommand(),
  'run-task': async () => (await import('./run-task-command.js')).runTaskCommand(),
  approvals: async () => (await import('./approvals-command.js')).approvalsCommand(),
  permits: async () => (await import('./permits-command.js')).permitsCommand(),
  estop: async () => (await import('./safety-command.js')).estopCommand(),
  reset: async () => (await import('./safety-command.js')).resetCommand(),
  'estop-allow': async () => (await import('./safety-command.js')).estopAllowCommand(),
  endpoints: async () => (await import('./endpoints-command.js')).endpointsCommand(),
  ledger: async () => (await import('./ledger-command.js')).ledgerCommand(),
  token: async () => (await import('./token-command.js')).tokenCommand(),
  sim: async () => (await import('./sim-command.js')).simCommand(),
  serve: async () => (await import('./serve-command.js')).serveCommand(),
  run: async () => (await import('./run-command.js')).runCommand(),
  agent: async () => (await import('./agent-command.js')).agentCommand(),
  mcp: async () => (await import('./mcp-command.js')).mcpCommand(),
  'conformance-report': async () => (await import('./conformance-command.js')).conformanceCommand(),
  conformance: async () => (await import('./conformance-command.js')).conformanceGroupCommand(),
  replay: async () => (await import('./replay-command.js')).replayCommand(),
  hosts: async () => (await import('./hosts-command.js')).hostsCommand(),
};

runCli(process.argv, COMMANDS);
