// Anything added here is API.
export type {
  ModelMessage,
  ModelProvider,
  ModelRequest,
  ModelTurn,
  ModelUsage,
  ProviderTool,
  ProviderToolCall,
} from './model-provider.js';
export { ScriptedProvider, SCRIPT_END } from './scripted-provider.js';
export {
  AGENT_SCRIPT_SCHEMA,
  fillTemplate,
  loadAgentScript,
  parseAgentScript,
  resolveRef,
  resolveRefs,
} from './agent-script.js';
export type { AgentScript, ScriptToolCall, ScriptTurn, ScriptUsage } from './agent-script.js';
export { disclosureText, runAgent } from './agent-loop.js';
export type { AgentEvent, AgentOptions, AgentResult } from './agent-loop.js';
