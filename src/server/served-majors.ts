import { PREFERRED_VERSION, VERSION_OF } from '../openwop/v2/index.js';
import type { Major } from '../openwop/v2/index.js';

/** The OpenWOP majors this server serves: 1 always, 2 unless `openwopV2: false` (v2 versioning.md §1.2). */
export function servedMajors(o: { openwopV2?: boolean | undefined }): Major[] {
  return o.openwopV2 === false ? [1] : [1, 2];
}

/**
 * The v1 discovery document with the additive version-negotiation fields (v2 versioning.md §1.1, RFC 0179 §A):
 * `protocolVersions` lists every `<major>.<minor>` the server serves, as the 406 refusal lists them, and
 * `preferredVersion` is the header-less default, a 1.x member through the overlap (equal to `protocolVersion` on a
 * single-major host). The v1 capabilities schema admits additional root properties.
 */
export function withServedVersions(doc: Record<string, unknown>, served: readonly Major[]): Record<string, unknown> {
  const { protocolVersion, ...rest } = doc;
  return {
    protocolVersion,
    protocolVersions: served.map((m) => VERSION_OF[m]),
    preferredVersion: PREFERRED_VERSION,
    ...rest,
  };
}
