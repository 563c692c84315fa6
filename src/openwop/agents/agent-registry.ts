import { ErrorCode, isoAt } from '../../core/index.js';
import type { Clock } from '../../core/index.js';
import { appendOnlyDdl, migrate } from '../../ledger/index.js';
import type { Db } from '../../ledger/index.js';
import { compareSemver } from '../services/prompt-refs.js';
import type { RefusedPack, ResolvedAgent, ResolvedPack } from './agent-packs.js';

/**
 * Installed agent packs: one append-only row per `name@version` holding the resolved pack (prompts and handoff
 * schemas pinned at install), so a restarted host rebuilds the same registry without the pack folder.
 */
const TABLES = `
CREATE TABLE IF NOT EXISTS openwop_agent_packs (
  name TEXT NOT NULL,
  version TEXT NOT NULL,
  digest TEXT NOT NULL,
  pack TEXT NOT NULL,
  source TEXT NOT NULL,
  installed_at TEXT NOT NULL,
  PRIMARY KEY (name, version)
);
`;

/** An installed agent: the resolved agent and the pack it came from. */
export interface InstalledAgent extends ResolvedAgent {
  pack: { name: string; version: string };
}

/**
 * The host's AgentRegistry (RFC 0003 §ImplNotes `installAgents`, RFC 0070): append-only, durable in the host's Db.
 * The agents of a pack are those of its highest installed version.
 */
export class AgentRegistry {
  private readonly packs = new Map<string, ResolvedPack>();
  private readonly agents = new Map<string, InstalledAgent>();

  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
  ) {}

  /** Creates the table (migration `openwop.agentPacks.v1`) and loads every installed pack. */
  async init(): Promise<void> {
    await migrate(
      this.db,
      'openwop.agentPacks.v1',
      (dialect) => `${TABLES}\n${appendOnlyDdl(dialect, 'openwop_agent_packs')}`,
    );
    const rows = await this.db.all<{ pack: string }>('SELECT pack FROM openwop_agent_packs');
    for (const r of rows) this.index(JSON.parse(r.pack) as ResolvedPack);
  }

  private index(p: ResolvedPack): void {
    const prev = this.packs.get(p.name);
    if (prev && compareSemver(prev.version, p.version) >= 0) return;
    for (const a of prev?.agents ?? []) this.agents.delete(a.manifest.agentId);
    this.packs.set(p.name, p);
    for (const a of p.agents) this.agents.set(a.manifest.agentId, { ...a, pack: { name: p.name, version: p.version } });
  }

  /**
   * Installs a resolved pack (idempotent for the same content). Refused, with nothing stored: the same
   * `name@version` with other content, or an agentId that another pack installed (`agent_pack_conflict`).
   */
  async install(p: ResolvedPack, source: string): Promise<{ ok: true } | { ok: false; refused: RefusedPack }> {
    const conflict = (details: Record<string, unknown>): { ok: false; refused: RefusedPack } => ({
      ok: false,
      refused: { pack: p.name, code: ErrorCode.AGENT_PACK_CONFLICT, details: { version: p.version, ...details } },
    });
    for (const a of p.agents) {
      const owner = this.agents.get(a.manifest.agentId)?.pack.name;
      if (owner && owner !== p.name) return conflict({ agentId: a.manifest.agentId, installedBy: owner });
    }
    const row = await this.db.get<{ digest: string }>(
      'SELECT digest FROM openwop_agent_packs WHERE name = ? AND version = ?',
      [p.name, p.version],
    );
    if (row) return row.digest === p.digest ? { ok: true } : conflict({ cause: 'version already installed' });
    await this.db.run(
      'INSERT INTO openwop_agent_packs (name, version, digest, pack, source, installed_at) VALUES (?, ?, ?, ?, ?, ?)',
      [p.name, p.version, p.digest, JSON.stringify(p), source, isoAt(this.clock.now())],
    );
    this.index(p);
    return { ok: true };
  }

  get(agentId: string): InstalledAgent | undefined {
    return this.agents.get(agentId);
  }

  has(agentId: string): boolean {
    return this.agents.has(agentId);
  }

  /** Every installed agent, by agentId. */
  list(): InstalledAgent[] {
    return [...this.agents.values()].sort((a, b) => (a.manifest.agentId < b.manifest.agentId ? -1 : 1));
  }

  /** Installed packs (`name@version` of the version in use). */
  installedPacks(): string[] {
    return [...this.packs.values()].map((p) => `${p.name}@${p.version}`).sort();
  }
}
