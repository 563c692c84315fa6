import type { FastifyInstance } from 'fastify';
import { ErrorCode, HostError, isJsonObject } from '../core/index.js';
import { callerOf } from './auth.js';
import type { CapabilityOverlay } from './capability-overlay.js';
import { V1_SEAMS } from './seam-mount.js';
import type { SeamMount } from './seam-mount.js';

/** The seam's path (conformance `lib/host-toggle.ts`; RFC 0022 §C refusal cases). */
export const CAPABILITY_TOGGLE_SEAM_PATH = `${V1_SEAMS.prefix}/test/capability-toggle`;

/**
 * `POST /v1/host/sample/test/capability-toggle`: `{name, value: true | false}` sets an overlay entry, `{name, value:
 * null}` removes it, `{reset: true}` clears every entry; 200 `{overlay, set: {name, value}}` or `{overlay, reset:
 * true}`. A missing name or a value other than a boolean or null is 400 `invalid_argument` (`details.path`). Mounted
 * under `mount.prefix` (the same path under the v2 seams profile).
 */
export function registerCapabilityToggleSeam(
  app: FastifyInstance,
  overlay: CapabilityOverlay,
  mount: SeamMount = V1_SEAMS,
): void {
  app.post(`${mount.prefix}/test/capability-toggle`, async (req) => {
    callerOf(req);
    const body = isJsonObject(req.body) ? req.body : {};
    if (body.reset === true) {
      overlay.reset();
      return { overlay: overlay.snapshot(), reset: true };
    }
    if (typeof body.name !== 'string' || !body.name)
      throw new HostError(ErrorCode.INVALID_ARGUMENT, 'name is required unless reset is true', { path: '/name' });
    if (body.value !== null && typeof body.value !== 'boolean')
      throw new HostError(ErrorCode.INVALID_ARGUMENT, 'value is a boolean or null', { path: '/value' });
    overlay.set(body.name, body.value ?? undefined);
    return { overlay: overlay.snapshot(), set: { name: body.name, value: body.value } };
  });
}
