/**
 * `ctx.promptLibrary` (RFC 0144 §promptLibrary, RFC 0027): `get` returns a pinned version verbatim, so a replayed
 * run resolves the same template, and fails rather than substitute an unpinned one.
 */
export interface PromptLibrarySurface {
  /** `ref` is a PromptRef (`prompt:<id>@<version>`); resolves to the template (prompt-template.schema.json). */
  get(ref: string): Promise<Record<string, unknown>>;
}
