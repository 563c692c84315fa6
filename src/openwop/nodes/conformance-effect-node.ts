/**
 * The effect fixture the v2 effect seams drive (api/seams-v2.yaml `fireEffectSeam`, `forceEffectTransportRetry`):
 * one run of {@link EFFECT_POST_WORKFLOW} POSTs to the URL it is started with through the host's `http.remote-run`
 * sender (effects/http-effect.ts, the one `mhs.remoteRun` sends with): a Layer-2 effect claimed through the node's
 * effect guard, keyed by its activity recipe, retried once at the transport layer under that key. A peer of
 * `mhs.remoteRun` must be configured by the operator, so the seams name their destination here instead. Installed
 * with the test seams only.
 */
import { postHttpEffect } from '../effects/http-effect.js';
import { NodeFailure } from '../node-registry.js';
import type { NodeModule } from '../node-registry.js';
import type { ServiceFamily } from '../service-family.js';

/** The workflow the effect seams run: `inputs.url` is where its one effect goes. */
export const EFFECT_POST_WORKFLOW = 'conformance-effect-post';

/** `core.conformance.effect-post`: one `http.remote-run` effect to the run's `url` variable. Side-effecting. */
export const effectPostNode: NodeModule = {
  typeId: 'core.conformance.effect-post',
  async execute(ctx) {
    const raw = ctx.variables.url;
    let url: URL;
    try {
      url = new URL(String(raw));
    } catch {
      throw new NodeFailure('validation_error', 'the effect destination is not a URL', { url: raw ?? null });
    }
    const providerKey = `conformance:${ctx.runId}:${ctx.node.id}:${ctx.activation}`;
    try {
      const res = await postHttpEffect(ctx.effects, {
        name: 'post',
        url,
        headers: {},
        body: { runId: ctx.runId, nodeId: ctx.node.id },
        providerKey,
        request: { url: url.href },
        signal: ctx.signal,
      });
      return { outputs: { status: res.status } };
    } catch (err) {
      if (err instanceof NodeFailure) throw err;
      throw new NodeFailure('external_call_failed', `${url.origin} could not be reached`, {
        cause: err instanceof Error ? err.message : String(err),
      });
    }
  },
};

const WORKFLOW = {
  id: EFFECT_POST_WORKFLOW,
  name: 'Conformance: one http.remote-run effect',
  version: '1.0',
  nodes: [
    {
      id: 'post',
      typeId: effectPostNode.typeId,
      name: 'Post',
      position: { x: 0, y: 0 },
      config: {},
      inputs: {},
    },
  ],
  edges: [],
  triggers: [{ id: 'manual', type: 'manual', enabled: true }],
  variables: [{ name: 'url', type: 'string', description: 'Where the effect is sent.', required: true }],
  metadata: { tags: ['conformance'] },
  settings: {},
};

/** The effect fixture (node and workflow); it advertises nothing. */
export function conformanceEffectFamily(): ServiceFamily {
  return {
    name: 'conformanceEffects',
    capabilities: () => ({}),
    nodes: [effectPostNode],
    workflows: () => [WORKFLOW],
  };
}
