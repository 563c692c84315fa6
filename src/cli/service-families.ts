import { readFileSync } from 'node:fs';
import { ErrorCode, HostError } from '../core/index.js';
import type { Clock } from '../core/index.js';
import { ScriptedProvider, loadAgentScript } from '../ai/index.js';
import type { Db } from '../ledger/index.js';
import type { ServiceFamily } from '../openwop/service-family.js';
import { createAiEnvelopeFamily } from '../openwop/services/ai-envelope-family.js';
import { agentsFamily } from '../openwop/agents/agents-family.js';
import { createMcpFamily } from '../openwop/services/mcp-family.js';
import { loadMcpServersConfig } from '../openwop/services/mcp-servers-config.js';
import { createPromptLibraryFamily } from '../openwop/services/prompt-library-family.js';

/** The `serve` flags that install host service families (RFC 0144). */
export interface FamilyFlags {
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
}

/**
 * Builds the families the flags ask for, always with the multi-agent execution model (agents); writes refused
 * template files to `warn`. agentRuntime is not offered:
 * advertising it implies agents.manifestRuntime, which this host does not meet yet.
 * @throws HostError `MHS.HOST.CONFIG_INVALID` (bad folder, envelopes file or observability),
 * `MHS.HOST.AGENT_SCRIPT_INVALID` (bad script).
 */
export async function buildServiceFamilies(
  flags: FamilyFlags,
  db: Db,
  clock: Clock,
  warn: (line: string) => void,
): Promise<ServiceFamily[]> {
  // Every file is read and validated before any family touches the store: a bad one is refused whole.
  const mcpConfig = flags.mcpServers ? loadMcpServersConfig(flags.mcpServers) : undefined;
  const out: ServiceFamily[] = [agentsFamily()];
  if (mcpConfig) out.push(createMcpFamily({ config: mcpConfig, clock }));
  if (flags.prompts) {
    const obs = flags.promptObservability ?? 'hashed';
    if (obs !== 'hashed' && obs !== 'full')
      throw new HostError(ErrorCode.HOST_CONFIG_INVALID, '--prompt-observability must be hashed or full', { obs });
    const family = await createPromptLibraryFamily({
      db,
      clock,
      observability: obs,
      ...(typeof flags.prompts === 'string' ? { dirs: [flags.prompts] } : {}),
    });
    for (const r of family.seeded.refused) warn(`prompt template ${r.file} not loaded: ${r.code}`);
    out.push(family);
  }
  if (flags.aiScript) {
    let envelopes: Record<string, object> = {};
    if (flags.envelopes) {
      try {
        envelopes = JSON.parse(readFileSync(flags.envelopes, 'utf8')) as Record<string, object>;
      } catch (err) {
        throw new HostError(ErrorCode.HOST_CONFIG_INVALID, `cannot read ${flags.envelopes}`, {}, { cause: err });
      }
    }
    out.push(createAiEnvelopeFamily({ model: new ScriptedProvider(loadAgentScript(flags.aiScript)), envelopes }));
  }
  return out;
}
