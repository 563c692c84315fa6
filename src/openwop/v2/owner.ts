import { V2_TENANT } from './ids.js';

/** `subject.schema.json` (v2 identity.md §1.1): the owner of a run. */
export interface V2Subject {
  issuer: string;
  subjectId: string;
  tenant: string;
  lane: 'api-key';
  kind: 'user';
}

/** `RunSnapshot.owner` and `run.started.payload.owner` (v2 runs.md §Snapshot). */
export interface V2Owner {
  tenant: string;
  subject: V2Subject;
}

/** The key realm of this host's bearer tokens: the `api-key` lane's trust root (identity.md §2.2). */
export const API_KEY_ISSUER = 'urn:mhs-host:api-key';

/**
 * The owner of a run from the token principal that created it. A run with no recorded principal (created by the
 * local CLI) reads with the legacy subject rule (identity.md §1.2: `urn:openwop:legacy`, `api-key`, `user`). Both
 * are derived from the stored row, so the same run always reads the same owner.
 */
export function ownerOf(principal: string | null | undefined): V2Owner {
  const subject: V2Subject = principal
    ? { issuer: API_KEY_ISSUER, subjectId: principal, tenant: V2_TENANT, lane: 'api-key', kind: 'user' }
    : { issuer: 'urn:openwop:legacy', subjectId: 'legacy', tenant: V2_TENANT, lane: 'api-key', kind: 'user' };
  return { tenant: V2_TENANT, subject };
}
