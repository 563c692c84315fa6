// Anything added here is API.
export type {
  ModelFinish,
  ModelMessage,
  ModelProvider,
  ModelRequest,
  ModelTurn,
  ModelUsage,
  OutputFormat,
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
export {
  MAX_TEMPERATURE,
  MODEL_PROVIDERS,
  checkBaseUrl,
  isModelProvider,
  parseModelSpec,
} from './providers/model-spec.js';
export type { ModelProviderId, ModelSpec } from './providers/model-spec.js';
export { createModelProvider } from './providers/create-model-provider.js';
export type { ModelCallOptions, ModelEnv } from './providers/create-model-provider.js';
export { OpenAIChatProvider } from './providers/openai-provider.js';
export { AnthropicProvider } from './providers/anthropic-provider.js';
export { modelError, scrubKey } from './providers/model-errors.js';
export type { ModelCallContext, SdkErrorClasses } from './providers/model-errors.js';
export { DEFAULT_MAX_TOKENS, DEFAULT_MODEL_RETRIES, DEFAULT_MODEL_TIMEOUT_MS } from './providers/provider-options.js';
export type { NetworkProviderOptions } from './providers/provider-options.js';
export { LLM_CACHE_KEY_RECIPE, llmCacheKey, parseLlmCacheKeyInput, semanticRequest } from './llm-cache-key.js';
export type { CacheKeyMessage, CacheKeyTool, LlmCacheKeyInput } from './llm-cache-key.js';
