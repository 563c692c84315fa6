/**
 * Host artifact cache of manifests and device profiles (HOST-012), keyed by
 * `(endpoint_id, device_id, instance_id, manifest_digest)`, so a changed manifest is detectable and
 * evidence can reference the exact profile the model saw.
 */
import { jcs } from '../core/index.js';
import type { DeviceProfile, Manifest } from './wire-types.js';

/** The four-part key of a cached device profile. */
export interface ProfileKey {
  endpoint_id: string;
  device_id: string;
  instance_id: string;
  manifest_digest: string;
}

/** Result of {@link ManifestCache.put}. */
export interface PutResult {
  /** True when the endpoint had another digest before. */
  changed: boolean;
  previousDigest: string | null;
  keys: ProfileKey[];
}

/** A cached profile; `manifest_digest` may be missing on entries restored from old storage. */
export interface CachedProfile {
  key: ProfileKey;
  profile: DeviceProfile;
}

/** Canonical string form of a key (JCS of the four fields). */
export function profileKeyString(k: ProfileKey): string {
  return jcs([k.endpoint_id, k.device_id, k.instance_id, k.manifest_digest]);
}

/** In-memory cache; a durable store can be layered on with {@link ManifestCache.restore}. */
export class ManifestCache {
  private readonly profiles = new Map<string, CachedProfile>();
  private readonly manifests = new Map<string, Manifest>();
  private readonly current = new Map<string, string>();

  /** Caches every device profile of an admitted manifest and reports whether it changed. */
  put(manifest: Manifest): PutResult {
    const previousDigest = this.current.get(manifest.endpoint_id) ?? null;
    const keys = manifest.devices.map((d) => ({
      endpoint_id: manifest.endpoint_id,
      device_id: d.device_id,
      instance_id: d.instance_id,
      manifest_digest: manifest.manifest_digest,
    }));
    manifest.devices.forEach((profile, i) => {
      const key = keys[i]!;
      this.profiles.set(profileKeyString(key), { key, profile });
    });
    this.manifests.set(manifest.manifest_digest, manifest);
    this.current.set(manifest.endpoint_id, manifest.manifest_digest);
    return { changed: previousDigest !== null && previousDigest !== manifest.manifest_digest, previousDigest, keys };
  }

  /** Restores entries from storage as-is (possibly without a digest; see {@link profileForSession}). */
  restore(
    entries: Array<{ key: Partial<ProfileKey> & { endpoint_id: string; device_id: string }; profile: DeviceProfile }>,
  ): void {
    for (const e of entries) {
      const key = {
        endpoint_id: e.key.endpoint_id,
        device_id: e.key.device_id,
        instance_id: e.key.instance_id ?? e.profile.instance_id,
        manifest_digest: e.key.manifest_digest ?? '',
      };
      this.profiles.set(profileKeyString(key), { key, profile: e.profile });
    }
  }

  /** The digest currently cached for an endpoint. */
  currentDigest(endpointId: string): string | null {
    return this.current.get(endpointId) ?? null;
  }

  /** The manifest with a digest. */
  manifest(digest: string): Manifest | undefined {
    return this.manifests.get(digest);
  }

  /** Exact lookup by the four-part key. */
  get(key: ProfileKey): DeviceProfile | undefined {
    return this.profiles.get(profileKeyString(key))?.profile;
  }

  /**
   * The profile to use when opening a session on a device (HOST-012): the entry of the endpoint's
   * current digest. Entries without a digest are discarded here, never used.
   */
  profileForSession(endpointId: string, deviceId: string): CachedProfile | undefined {
    for (const [k, e] of this.profiles)
      if (e.key.endpoint_id === endpointId && e.key.device_id === deviceId && !e.key.manifest_digest)
        this.profiles.delete(k);
    const digest = this.current.get(endpointId);
    if (!digest) return undefined;
    for (const e of this.profiles.values())
      if (e.key.endpoint_id === endpointId && e.key.device_id === deviceId && e.key.manifest_digest === digest)
        return e;
    return undefined;
  }

  /** Number of cached profiles. */
  size(): number {
    return this.profiles.size;
  }
}
