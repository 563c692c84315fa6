// Issue 18 item 3 (approvals with context): what the command does in plain words, the allowed input ranges from the
// binding's input JSON Schema in the stored manifest, and the wait limit; all from host records, never model text.
import type { Approval, InputLine } from './types.js';

/** What `GET /approvals` adds to each approval (src/server/operator-routes.ts, `approvalContext`). */
export interface ApprovalContextFields {
  input_schema?: Record<string, unknown> | null;
  wait_limit?: { timeout_ms: number; expires_at: string; remaining_ms: number; source: string } | null;
}

export type ApprovalWithContext = Approval & ApprovalContextFields;

interface FieldSchema {
  type?: unknown;
  minimum?: unknown;
  maximum?: unknown;
  exclusiveMinimum?: unknown;
  exclusiveMaximum?: unknown;
  enum?: unknown;
  'x-unit'?: unknown;
  description?: unknown;
  properties?: Record<string, FieldSchema>;
  items?: FieldSchema;
}

/** The allowed range of one input field as the manifest declares it. */
export interface FieldRange {
  min?: { value: number; exclusive: boolean };
  max?: { value: number; exclusive: boolean };
  enum?: unknown[];
  unit?: string;
}

/** The schema of one input line's path (`a.b`, `list[0]`), or undefined. */
export function fieldSchema(schema: Record<string, unknown> | null | undefined, path: string): FieldSchema | undefined {
  let s: FieldSchema | undefined = schema ?? undefined;
  for (const part of path.split('.')) {
    const m = /^([^[]*)((?:\[\d+\])*)$/.exec(part);
    if (!m) return undefined;
    if (m[1]) s = s?.properties?.[m[1]];
    const depth = (m[2] ?? '').split('[').length - 1;
    for (let i = 0; i < depth; i++) s = s?.items;
  }
  return s;
}

const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);

/** min/max (inclusive or exclusive), enum and unit of a field; undefined when the schema declares none of them. */
export function rangeOf(s: FieldSchema | undefined): FieldRange | undefined {
  if (!s) return undefined;
  const r: FieldRange = {};
  const exMin = num(s.exclusiveMinimum);
  const min = num(s.minimum);
  if (exMin !== undefined) r.min = { value: exMin, exclusive: true };
  else if (min !== undefined) r.min = { value: min, exclusive: false };
  const exMax = num(s.exclusiveMaximum);
  const max = num(s.maximum);
  if (exMax !== undefined) r.max = { value: exMax, exclusive: true };
  else if (max !== undefined) r.max = { value: max, exclusive: false };
  if (Array.isArray(s.enum)) r.enum = s.enum;
  if (typeof s['x-unit'] === 'string') r.unit = s['x-unit'];
  return r.min || r.max || r.enum ? r : undefined;
}

/** The range in words, e.g. `more than 0 and at most 1000 uL`, `one of "slow", "fast"`. */
export function rangeText(r: FieldRange | undefined): string {
  if (!r) return 'no range declared';
  const unit = r.unit ? ` ${r.unit}` : '';
  const parts: string[] = [];
  if (r.min) parts.push(`${r.min.exclusive ? 'more than' : 'at least'} ${r.min.value}`);
  if (r.max) parts.push(`${r.max.exclusive ? 'less than' : 'at most'} ${r.max.value}`);
  const bounds = parts.length ? `${parts.join(' and ')}${unit}` : '';
  const choices = r.enum ? `one of ${r.enum.map((e) => JSON.stringify(e)).join(', ')}` : '';
  return [bounds, choices].filter(Boolean).join('; ');
}

/** Why a requested value is outside the declared range, in words; null when it is inside (or nothing is declared). */
export function outOfRange(line: InputLine, r: FieldRange | undefined): string | null {
  if (!r) return null;
  let v: unknown;
  try {
    v = JSON.parse(line.value);
  } catch {
    return null;
  }
  if (r.enum && !r.enum.some((e) => JSON.stringify(e) === JSON.stringify(v))) return 'not one of the allowed values';
  const n = num(v);
  if (n === undefined) return null;
  const unit = r.unit ? ` ${r.unit}` : '';
  if (r.min && (r.min.exclusive ? n <= r.min.value : n < r.min.value)) {
    return `below the allowed minimum (${r.min.exclusive ? 'more than' : 'at least'} ${r.min.value}${unit})`;
  }
  if (r.max && (r.max.exclusive ? n >= r.max.value : n > r.max.value)) {
    return `above the allowed maximum (${r.max.exclusive ? 'less than' : 'at most'} ${r.max.value}${unit})`;
  }
  return null;
}

/** The top-level field of an input line's path (`a` of `a.b`, `list` of `list[0]`). */
const fieldOf = (path: string): string => /^[^.[]*/.exec(path)![0];

/**
 * Input lines in headline order: the fields the binding's input schema lists as `required` first, in the schema's
 * order (lines of one field in their own order), then the rest alphabetically by path (issue 18 item 4).
 */
export function headlineOrder(input: InputLine[], schema: Record<string, unknown> | null | undefined): InputLine[] {
  const required = Array.isArray(schema?.required)
    ? (schema.required as unknown[]).filter((r) => typeof r === 'string')
    : [];
  const rank = (l: InputLine) => {
    const i = required.indexOf(fieldOf(l.path));
    return i < 0 ? required.length : i;
  };
  return input
    .map((l, i) => ({ l, i }))
    .sort((a, b) => {
      const r = rank(a.l) - rank(b.l);
      if (r) return r;
      if (rank(a.l) < required.length) return a.i - b.i;
      return a.l.path < b.l.path ? -1 : a.l.path > b.l.path ? 1 : a.i - b.i;
    })
    .map((x) => x.l);
}

/**
 * The headline: the capability's summary from the manifest, the key input values (up to three, in
 * {@link headlineOrder}, with their meaning or field name and unit) and the device, e.g. `Aspirate a volume from
 * the source well into the tip: Volume to aspirate 50 uL, on Single-channel liquid handler`.
 */
export function headline(a: ApprovalWithContext): string {
  const v = a.view ?? {};
  const what =
    (v.capability?.summary ?? '').trim().replace(/\.$/, '') || (v.capability?.capability_id ?? a.capability_id);
  const input = headlineOrder(v.input ?? [], a.input_schema);
  const shown = input
    .slice(0, 3)
    .map((l) => `${l.description ?? l.path} ${l.value}${l.unit ? ` ${l.unit}` : ''}`)
    .join(', ');
  const more = input.length > 3 ? ` and ${input.length - 3} more` : '';
  const on = v.device?.display_name ?? a.device_id;
  return `${what}${shown ? `: ${shown}${more}` : ''}, on ${on}`;
}

/** Remaining time in words (`9 min 40 s left`, `passed 2 min 0 s ago`), from the host's count at the last refresh. */
export function remainingText(ms: number): string {
  const abs = Math.abs(ms);
  const min = Math.floor(abs / 60_000);
  const s = Math.floor((abs % 60_000) / 1000);
  const span = min ? `${min} min ${s} s` : `${s} s`;
  return ms >= 0 ? `${span} left` : `passed ${span} ago`;
}
