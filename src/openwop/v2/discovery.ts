import { PREFERRED_VERSION, PROTOCOL_VERSIONS } from './negotiation.js';
import { V2_READ_ERA } from './snapshot-projection.js';

/** `GET /runs` page ceiling, advertised as `runList.maxPageSize`. */
export const RUN_LIST_MAX_PAGE = 200;

/**
 * The closed v2 discovery root (`OpenWOP-Version: 2`; v2 capabilities.md §1, §3): metadata keys and the capability
 * records of families the major-2 surface serves today. Only `runList` is a record: every other family the v1
 * document claims still lacks its v2 projection, and a v2 root advertises only what works (docs/openwop.md, Major 2).
 * No v1 sub-object, no `supported` flags, no `supportedTransports` (§4).
 */
export function v2DiscoveryRoot(v1: Record<string, unknown>): Record<string, unknown> {
  const root: Record<string, unknown> = {
    protocolVersions: [...PROTOCOL_VERSIONS],
    preferredVersion: PREFERRED_VERSION,
    engineVersion: Number(v1.engineVersion ?? 0),
    eventLogSchemaVersion: V2_READ_ERA,
    runList: {
      status: 'stable',
      since: '2.0',
      witness: 'witnessable-gated',
      maxPageSize: RUN_LIST_MAX_PAGE,
      filters: ['workflowId', 'status'],
    },
  };
  if (v1.implementation && typeof v1.implementation === 'object') root.implementation = v1.implementation;
  return root;
}
