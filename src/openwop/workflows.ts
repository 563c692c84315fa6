import { readFileSync, readdirSync } from 'node:fs';
import { basename, join } from 'node:path';
import { ErrorCode, HostError } from '../core/index.js';
import type { NodeRegistry } from './node-registry.js';
import { openwopSchemas, schemaId } from './schemas.js';
import type { SchemaIssue } from './schemas.js';
import type { OpenwopStore } from './store.js';
import type { WorkflowDefinition } from './types.js';
import type { Db } from '../ledger/db.js';
import type { WorkflowVersion } from './workflow-versions.js';

/** Problems that make a definition unrunnable on this host, each with a JSON Pointer path. */
export function checkRunnable(def: WorkflowDefinition, registry: NodeRegistry): SchemaIssue[] {
  const issues: SchemaIssue[] = [];
  const ids = new Map<string, number>();
  def.nodes.forEach((n, i) => {
    if (ids.has(n.id)) issues.push({ path: `/nodes/${i}/id`, message: `duplicate node id ${n.id}`, keyword: 'unique' });
    ids.set(n.id, i);
    if (!registry.has(n.typeId)) {
      issues.push({
        path: `/nodes/${i}/typeId`,
        message: `node typeId ${n.typeId} is not registered on this host`,
        keyword: 'typeId',
      });
      return;
    }
    for (const p of registry.get(n.typeId).validate?.(n) ?? []) {
      issues.push({ path: `/nodes/${i}${p.path}`, message: p.message, keyword: 'config' });
    }
  });
  def.edges.forEach((e, i) => {
    if (!ids.has(e.sourceNodeId))
      issues.push({ path: `/edges/${i}/sourceNodeId`, message: `no node ${e.sourceNodeId}`, keyword: 'edge' });
    if (!ids.has(e.targetNodeId))
      issues.push({ path: `/edges/${i}/targetNodeId`, message: `no node ${e.targetNodeId}`, keyword: 'edge' });
  });
  return issues;
}

/**
 * Validates a definition against workflow-definition.schema.json and this host's node registry.
 * Raises `validation_error` whose `details.errors[]` name each offending path.
 */
export function validateWorkflow(def: unknown, registry: NodeRegistry): WorkflowDefinition {
  const schemaIssues = openwopSchemas().check(schemaId('workflow-definition'), def);
  if (schemaIssues.length) {
    throw new HostError(
      ErrorCode.VALIDATION_ERROR,
      'workflow definition does not match workflow-definition.schema.json',
      {
        errors: schemaIssues,
      },
    );
  }
  const wf = def as WorkflowDefinition;
  const issues = checkRunnable(wf, registry);
  if (issues.length) {
    throw new HostError(ErrorCode.VALIDATION_ERROR, 'workflow definition cannot run on this host', { errors: issues });
  }
  return wf;
}

/** Writes the ledger entry of a registration made by a principal, in the transaction that stores the version. */
export type WorkflowRecorder = (t: Db, v: WorkflowVersion, who: WorkflowPrincipal) => Promise<void>;

/** Who registers a definition (a token's identity). */
export interface WorkflowPrincipal {
  id: string;
  name: string;
  role: string;
}

/** Registered definitions: validated, stored durably as versions (workflow-versions.ts), and listed for discovery. */
export class WorkflowCatalog {
  /** Set by the host when a ledger is present: registrations by a principal are recorded (issue 20). */
  recorder: WorkflowRecorder | undefined;

  constructor(
    private readonly store: OpenwopStore,
    private readonly registry: NodeRegistry,
  ) {}

  /** Validates and stores `def` (a new version when it differs from the current one of its id). */
  async register(def: unknown, source = 'api'): Promise<WorkflowDefinition> {
    return (await this.registerAs(def, source, null)).workflow;
  }

  /**
   * Validates and stores `def` on behalf of `principal` (an operator's token; null for the host's own start-up
   * registrations). A new version by a principal is recorded with the recorder in the same transaction.
   */
  async registerAs(
    def: unknown,
    source: string,
    principal: WorkflowPrincipal | null,
  ): Promise<{ workflow: WorkflowDefinition; version: WorkflowVersion }> {
    const workflow = validateWorkflow(def, this.registry);
    const recorder = principal !== null ? this.recorder : undefined;
    const version = await this.store.putWorkflow(workflow, source, {
      principal: principal?.id ?? null,
      ...(recorder && principal ? { record: (t: Db, v: WorkflowVersion) => recorder(t, v, principal) } : {}),
    });
    return { workflow, version };
  }

  get(id: string): Promise<WorkflowDefinition | undefined> {
    return this.store.getWorkflow(id);
  }

  list(): ReturnType<OpenwopStore['listWorkflows']> {
    return this.store.listWorkflows();
  }

  /**
   * Registers every `*.json` definition in `dir`. Files that fail validation are reported in
   * `refused` (with the errors) and do not stop the others.
   */
  async loadDir(
    dir: string,
    source: string,
  ): Promise<{ loaded: string[]; refused: Array<{ file: string; errors: unknown }> }> {
    const loaded: string[] = [];
    const refused: Array<{ file: string; errors: unknown }> = [];
    let files: string[];
    try {
      files = readdirSync(dir)
        .filter((f) => f.endsWith('.json'))
        .sort();
    } catch {
      return { loaded, refused };
    }
    for (const f of files) {
      try {
        const wf = await this.register(
          JSON.parse(readFileSync(join(dir, f), 'utf8')) as unknown,
          `${source}:${basename(f)}`,
        );
        loaded.push(wf.id);
      } catch (err) {
        refused.push({ file: f, errors: err instanceof HostError ? (err.details.errors ?? err.message) : String(err) });
      }
    }
    return { loaded, refused };
  }
}
