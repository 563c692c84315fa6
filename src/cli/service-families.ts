import { readFileSync, statSync } from 'node:fs';
import { ErrorCode, HostError } from '../core/index.js';
import type { Clock } from '../core/index.js';
import { ScriptedProvider, loadAgentScript } from '../ai/index.js';
import type { ModelEnv, ModelProvider } from '../ai/index.js';
import type { Db } from '../ledger/index.js';
import type { ServiceFamily } from '../openwop/service-family.js';
import { createAiEnvelopeFamily } from '../openwop/services/ai-envelope-family.js';
import { createAgentRuntimeFamily } from '../openwop/services/agent-runtime-family.js';
import { createManifestRuntimeFamily } from '../openwop/agents/manifest-runtime-family.js';
import type { AgentModel } from '../openwop/agents/manifest-agent-node.js';
import { PromptStore } from '../openwop/services/prompt-store.js';
import { agentsFamily } from '../openwop/agents/agents-family.js';
import { causationFamily, loadPeers } from '../openwop/causation/causation-family.js';
import { createMcpFamily } from '../openwop/services/mcp-family.js';
import { assertNoConnectorServers } from '../openwop/services/mcp-connector-match.js';
import { openConnectorStore } from '../policy/connector-store.js';
import { loadMcpServersConfig } from '../openwop/services/mcp-servers-config.js';
import { createPromptLibraryFamily } from '../openwop/services/prompt-library-family.js';
import { createStructuredOutputFamily } from '../openwop/services/structured-output-family.js';
import { nodeModels, runModels } from './node-models.js';
import { modelSpecOf, providerOf } from './model-flags.js';
import type { ModelFlags } from './model-flags.js';

/** The `serve` flags that install host service families (RFC 0144); `--model` sets the host's default model. */
export interface FamilyFlags extends ModelFlags {
  /** `--prompts [dir]`: true for the built-in templates only, a path to also seed that folder. */
  prompts?: string | boolean;
  /** `--prompt-observability hashed|full`. */
  promptObservability?: string;
  /** `--ai-script <file>`: an agent script played by the scripted provider behind ctx.aiEnvelope. */
  aiScript?: string;
  /** `--envelopes <file>`: JSON object of vendor envelope kind → payload JSON Schema. */
  envelopes?: string;
  /** `--mcp-servers <file>`: MCP servers JSON for ctx.mcp. */
  mcpServers?: string;
  /** `--agent-packs <dir>`: install the agent packs in dir (RFC 0003/0070); advertises manifestRuntime + agentRuntime. */
  agentPacks?: string;
  /** `--agent-script <file>`: the agent script the manifest agents' model plays (default `--ai-script`, else echo). */
  agentScript?: string;
  /** `--peers <file>`: peer hosts `mhs.remoteRun` may start runs on (RFC 0040 cross-host causation). */
  peers?: string;
}

/** This host's identity for the families that need it (RFC 0040). */
export interface FamilyIdentity {
  hostId: string;
  /** This host's discovery URL once it listens. */
  wellKnownUrl: () => string | undefined;
}

/** Where the families report what no caller sees, and the environment they read keys from. */
export interface FamilyHooks {
  /** A `ctx.mcp` server refused as an MHS endpoint at connect or call time (HOST-020; serve logs it). */
  onMcpRefused?: (err: HostError) => void;
  /** Where `--model` reads API keys and base URLs (default `process.env`). */
  env?: ModelEnv;
}

/** The model of manifest agents when no script is given: it answers at once with the task it was handed. */
const ECHO_MODEL: AgentModel = {
  name: 'echo',
  next: (req) => {
    const user = req.messages.find((m) => m.role === 'user');
    return Promise.resolve({ kind: 'final', text: user && 'content' in user ? String(user.content) : '{}' });
  },
};

/**
 * Builds the families the flags ask for, always with the multi-agent execution model (agents); writes refused
 * template files and agent packs to `warn`. With `--agent-packs` the agent-manifest runtime (RFC 0070) and, since
 * the host then meets it, `ctx.agentRuntime` (RFC 0144) are installed and advertised together.
 * `--model` (issue 15) is the host default: ctx.aiEnvelope runs on it when no `--ai-script` is given, and the
 * manifest agents when no `--agent-script` (or `--ai-script`) is given, and the supervisor of a workflow without a
 * mock plan; a script flag still wins for its service.
 * @throws HostError `MHS.HOST.CONFIG_INVALID` (bad folder, agent packs folder, envelopes file or observability),
 * `MHS.HOST.AGENT_SCRIPT_INVALID` (bad script), `MHS.HOST.MODEL_CONFIG` (bad `--model`, missing key or base URL),
 * `MHS.HOST.MCP_SERVER_IS_MHS_ENDPOINT` (an `--mcp-servers` entry names a connector row of the store: HOST-020,
 * the governed call is the only path to a device).
 */
export async function buildServiceFamilies(
  flags: FamilyFlags,
  db: Db,
  clock: Clock,
  warn: (line: string) => void,
  identity?: FamilyIdentity,
  hooks: FamilyHooks = {},
): Promise<ServiceFamily[]> {
  // Every flag and file is checked before any family touches the store: a bad one is refused whole.
  const mcpConfig = flags.mcpServers ? loadMcpServersConfig(flags.mcpServers) : undefined;
  const connectors = mcpConfig ? await openConnectorStore(db, { clock }) : undefined;
  if (mcpConfig && connectors) assertNoConnectorServers(mcpConfig, await connectors.list(), flags.mcpServers);
  const obs = flags.promptObservability ?? 'hashed';
  if (obs !== 'hashed' && obs !== 'full')
    throw new HostError(ErrorCode.HOST_CONFIG_INVALID, '--prompt-observability must be hashed or full', { obs });
  let envelopes: Record<string, object> = {};
  if (flags.envelopes) {
    try {
      envelopes = JSON.parse(readFileSync(flags.envelopes, 'utf8')) as Record<string, object>;
    } catch (err) {
      throw new HostError(ErrorCode.HOST_CONFIG_INVALID, `cannot read ${flags.envelopes}`, {}, { cause: err });
    }
  }
  const aiScript = flags.aiScript ? loadAgentScript(flags.aiScript) : undefined;
  const agentScript = flags.agentScript ? loadAgentScript(flags.agentScript) : aiScript;
  const spec = modelSpecOf(flags);
  const hostModel: ModelProvider | undefined = spec ? providerOf(spec, flags, hooks.env ?? process.env) : undefined;
  if (flags.agentPacks && !statSync(flags.agentPacks, { throwIfNoEntry: false })?.isDirectory())
    throw new HostError(ErrorCode.HOST_CONFIG_INVALID, `--agent-packs ${flags.agentPacks} is not a folder`, {
      dir: flags.agentPacks,
    });

  const peers = flags.peers ? loadPeers(flags.peers) : {};
  // Nodes and requests may name their own model only under --model.
  const modelFor = spec && hostModel ? nodeModels(spec, hostModel, flags, hooks.env ?? process.env) : undefined;
  const runModelOf = modelFor && spec ? runModels(spec, modelFor) : undefined;
  // The supervisor asks the host model (or the run's configurable.model) when a workflow gives no mock plan.
  const out: ServiceFamily[] = [
    agentsFamily({
      ...(identity ? { hostId: identity.hostId } : {}),
      ...(hostModel ? { model: hostModel } : {}),
      ...(runModelOf ? { runModelOf } : {}),
    }),
  ];
  // After agents: its multiAgent.executionModel version 3 wins the merge.
  if (identity) out.push(causationFamily({ hostId: identity.hostId, peers, wellKnownUrl: identity.wellKnownUrl }));
  if (mcpConfig && connectors)
    out.push(
      createMcpFamily({
        config: mcpConfig,
        clock,
        // Rows discovered while serving are checked again at each connect.
        connectorRows: () => connectors.list(),
        ...(hooks.onMcpRefused ? { onRefused: hooks.onMcpRefused } : {}),
      }),
    );
  let promptStore: PromptStore | undefined;
  if (flags.prompts) {
    const family = await createPromptLibraryFamily({
      db,
      clock,
      observability: obs,
      ...(typeof flags.prompts === 'string' ? { dirs: [flags.prompts] } : {}),
    });
    for (const r of family.seeded.refused) warn(`prompt template ${r.file} not loaded: ${r.code}`);
    promptStore = family.store;
    out.push(family);
  }
  const envelopeModel = aiScript ? new ScriptedProvider(aiScript) : hostModel;
  if (envelopeModel)
    out.push(
      createAiEnvelopeFamily({
        model: envelopeModel,
        envelopes,
        ...(modelFor && runModelOf ? { modelFor, runModelOf } : {}),
      }),
    );
  if (modelFor && hostModel) out.push(createStructuredOutputFamily({ modelFor, hostModel }));
  if (flags.agentPacks) {
    const model = agentScript ? new ScriptedProvider(agentScript) : (hostModel ?? ECHO_MODEL);
    if (!promptStore) {
      promptStore = new PromptStore(db, clock);
      await promptStore.init();
    }
    const manifest = await createManifestRuntimeFamily({
      db,
      clock,
      packsDir: flags.agentPacks,
      prompts: promptStore,
      model,
    });
    for (const r of manifest.refused) warn(`agent pack ${r.pack} not installed: ${r.code}`);
    out.push(manifest);
    const manifests = manifest.registry.list().map((a) => a.manifest);
    out.push(createAgentRuntimeFamily({ db, clock, model, manifests, manifestRuntimeMet: true }));
  }
  return out;
}
