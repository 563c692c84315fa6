/**
 * The run-id index of governed MHS commands (migration `openwop.run-effects.mhs-index.v1`): a database trigger on the
 * host ledger's `ledger_entries` copies every `command.intent` that carries a run and node id into
 * `openwop_run_effects` in the intent's own transaction, so the index commits with the claim (no crash window) and the
 * ledger writer adds no index of its own (ledger-schema.ts keeps `ledger_entries` lean). The migration fills the index
 * from the intents a store already holds, once, when an existing store is opened. The command's state stays the
 * ledger's (run-effects.ts reads it by command id).
 */
import { migrate } from '../../ledger/index.js';
import type { Db } from '../../ledger/index.js';
import { ensureRunEffects } from './effect-records.js';

const COLUMNS = 'run_id, node_id, effect_id, attempt, seam, provider_key, state, claimed_at, at';

const SQLITE_RUN = `json_extract(line, '$.run_id')`;
const SQLITE_NODE = `json_extract(line, '$.node_id')`;
const SQLITE_TEXT = `json_type(line, '$.run_id') = 'text' AND json_type(line, '$.node_id') = 'text'`;

const SQLITE_DDL = `CREATE TRIGGER openwop_run_effects_mhs AFTER INSERT ON ledger_entries
WHEN NEW.kind = 'command.intent' AND NEW.command_id IS NOT NULL
  AND json_type(NEW.line, '$.run_id') = 'text' AND json_type(NEW.line, '$.node_id') = 'text'
BEGIN
  INSERT OR IGNORE INTO openwop_run_effects (${COLUMNS})
  VALUES (json_extract(NEW.line, '$.run_id'), json_extract(NEW.line, '$.node_id'), NEW.command_id, 1,
          'mhs.governed-call', NEW.command_id, 'claimed', NEW.ts, NEW.ts);
END;`;

const PG_DDL = `CREATE OR REPLACE FUNCTION openwop_run_effects_mhs() RETURNS trigger LANGUAGE plpgsql AS $fx$
DECLARE e jsonb := NEW.line::jsonb;
BEGIN
  IF NEW.command_id IS NOT NULL AND jsonb_typeof(e->'run_id') = 'string' AND jsonb_typeof(e->'node_id') = 'string' THEN
    INSERT INTO openwop_run_effects (${COLUMNS})
    VALUES (e->>'run_id', e->>'node_id', NEW.command_id, 1, 'mhs.governed-call', NEW.command_id, 'claimed', NEW.ts, NEW.ts)
    ON CONFLICT (effect_id, attempt) DO NOTHING;
  END IF;
  RETURN NULL;
END
$fx$;
CREATE TRIGGER openwop_run_effects_mhs AFTER INSERT ON ledger_entries
FOR EACH ROW WHEN (NEW.kind = 'command.intent') EXECUTE FUNCTION openwop_run_effects_mhs();`;

/** The intents already in the ledger, in ledger order (the claim order of the index). */
async function backfill(t: Db): Promise<void> {
  if (t.dialect === 'sqlite') {
    await t.run(
      `INSERT OR IGNORE INTO openwop_run_effects (${COLUMNS})
       SELECT ${SQLITE_RUN}, ${SQLITE_NODE}, command_id, 1, 'mhs.governed-call', command_id, 'claimed', ts, ts
       FROM ledger_entries
       WHERE kind = 'command.intent' AND command_id IS NOT NULL AND ${SQLITE_TEXT}
       ORDER BY seq`,
    );
    return;
  }
  await t.run(
    `INSERT INTO openwop_run_effects (${COLUMNS})
     SELECT line::jsonb->>'run_id', line::jsonb->>'node_id', command_id, 1, 'mhs.governed-call', command_id,
            'claimed', ts, ts
     FROM ledger_entries
     WHERE kind = 'command.intent' AND command_id IS NOT NULL
       AND jsonb_typeof(line::jsonb->'run_id') = 'string' AND jsonb_typeof(line::jsonb->'node_id') = 'string'
     ORDER BY seq
     ON CONFLICT (effect_id, attempt) DO NOTHING`,
  );
}

/**
 * Installs the MHS part of the effect index on a store whose host ledger is open (`ledger_entries` exists), and fills
 * it from the ledger's existing intents; a no-op once applied. Rejects with the driver's error; nothing is kept then.
 */
export async function ensureMhsEffectIndex(db: Db): Promise<void> {
  await ensureRunEffects(db);
  await migrate(db, 'openwop.run-effects.mhs-index.v1', { sqlite: SQLITE_DDL, postgres: PG_DDL }, backfill);
}
