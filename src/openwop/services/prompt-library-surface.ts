/**
 * `ctx.promptLibrary` (RFC 0144 §promptLibrary; host-capabilities.md §host.promptLibrary; RFC 0027): `get`
 * returns the pinned version verbatim, so a replayed run resolves the same template, and fails the node rather
 * than substitute an unpinned one.
 */

/** A PromptTemplate document (prompt-template.schema.json), exactly as stored. */
export type PromptTemplate = {
  templateId: string;
  version: string;
  kind: 'system' | 'user' | 'few-shot' | 'schema-hint';
  text: string;
  variables?: Array<{
    name: string;
    type: string;
    required: boolean;
    source?: 'input' | 'variable' | 'secret' | 'context';
    defaultValue?: unknown;
    [k: string]: unknown;
  }>;
  modelHints?: { envelopeType?: string; [k: string]: unknown };
  [k: string]: unknown;
};

/** What `get` resolves to: the §host.promptLibrary projection plus the stored template verbatim (additive). */
export interface PromptLibraryEntry {
  /** The pinned stringy PromptRef (`prompt:<templateId>@<version>`). */
  promptId: string;
  /** The template body (`text`), unrendered. */
  systemPrompt: string;
  version: string;
  /** `modelHints.envelopeType` when the template is bound to an envelope kind. */
  envelopeType?: string;
  template: PromptTemplate;
}

/** The `ctx.promptLibrary` surface. */
export interface PromptLibrarySurface {
  /**
   * `ref` is a pinned PromptRef (`prompt:<id>@<version>`, prompt-ref.schema.json). Rejects with a `NodeFailure`:
   * `prompt_ref_unpinned` (no `@version`), `prompt_ref_invalid`, `prompt_not_found`, `prompt_version_pinned`.
   */
  get(ref: string): Promise<PromptLibraryEntry>;
}
