import { Ajv2020 } from 'ajv/dist/2020.js';
import type { ErrorObject, ValidateFunction } from 'ajv';

/** A JSON Schema check: true when `data` is valid; `errors` holds the last call's errors (null when valid). */
export interface LazyValidator {
  (data: unknown): boolean;
  errors?: ErrorObject[] | null;
}

const shared = new Map<boolean, Ajv2020>();

/**
 * A validator compiled on its first call, on one Ajv instance per `allErrors` setting shared by every caller: a module
 * that declares its request checks loads without compiling anything (each Ajv instance and compile costs tens of ms
 * of CPU at every start of every process that imports it, used or not).
 */
export function lazyValidator(schema: object, opts: { allErrors?: boolean } = {}): LazyValidator {
  let v: ValidateFunction | undefined;
  const check: LazyValidator = (data) => {
    if (!v) {
      const all = opts.allErrors === true;
      let ajv = shared.get(all);
      if (!ajv) shared.set(all, (ajv = new Ajv2020({ strict: false, allErrors: all })));
      v = ajv.compile(schema);
    }
    const ok = v(data) as boolean;
    check.errors = v.errors ?? null;
    return ok;
  };
  return check;
}
