import { coreCallPromptNode } from '../nodes/core-call-prompt-node.js';
import type { ServiceFamily } from '../service-family.js';
import { MOCK_PROVIDERS } from './mock-providers.js';

/**
 * The mock provider extension (run-options.md §"Mock provider extension"): `testing.mockProviders` and the AI node
 * the mocks answer (`core.ai.callPrompt`). Installed with the test seams only: mock providers are for test keys,
 * and the test seams are this host's only test mode. The run-create check reads the advertisement
 * (`checkMockProvider`), so what is advertised is what is accepted.
 */
export function mockProviderFamily(): ServiceFamily {
  return {
    name: 'mockProviders',
    capabilities: () => ({ testing: { mockProviders: [...MOCK_PROVIDERS] } }),
    nodes: [coreCallPromptNode],
  };
}
