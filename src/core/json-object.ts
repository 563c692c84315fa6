/** True for a JSON object (not null, not an array): the shape every request body and config document starts as. */
export function isJsonObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
