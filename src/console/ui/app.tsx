// The operator console: sign-in, then the devices panel first, approvals, runs, hosts, decisions, receipts, permits,
// ledger.
import { useCallback, useEffect, useMemo, useState } from 'preact/hooks';
import { api, refusal, setToken } from './api.js';
import { ApprovalCard } from './approval-card.js';
import { Ctx } from './context.js';
import type { ConsoleCtx } from './context.js';
import { DevicesPanel } from './devices-panel.js';
import { HostsPanel } from './hosts-panel.js';
import { LedgerPanel } from './ledger-panel.js';
import { Decisions, Permits, Receipts } from './record-tables.js';
import { RunsPanel } from './runs-panel.js';
import { SignIn } from './sign-in.js';
import { StoreHealth } from './store-health.js';
import type { Who } from './types.js';
import { useConsoleData } from './use-console-data.js';

const KEY = 'mhs-token';
const SECTIONS = [
  ['h-devices', 'Devices'],
  ['h-approvals', 'Approvals'],
  ['h-runs', 'Runs'],
  ['h-hosts', 'Hosts'],
  ['h-decisions', 'Decisions'],
  ['h-receipts', 'Receipts'],
  ['h-permits', 'Permits'],
  ['h-ledger', 'Ledger'],
] as const;

export function App() {
  const [who, setWho] = useState<Who | null>(null);
  const [status, setStatus] = useState<{ text: string; kind: string }>({ text: '', kind: '' });
  const [ready, setReady] = useState(false);
  const say = useCallback((text: string, kind = '') => setStatus({ text, kind }), []);
  const onError = useCallback((e: unknown) => say(`Refresh failed (${refusal(e)})`, 'error'), [say]);
  const { data, live, tick, refresh, refreshDevices } = useConsoleData(who !== null, onError);

  const signIn = useCallback(
    async (token: string) => {
      setToken(token);
      let me: Who;
      try {
        me = await api<Who>('GET', '/whoami');
      } catch (e) {
        setWho(null);
        say(`Sign-in failed (${refusal(e)})`, 'error');
        return;
      }
      sessionStorage.setItem(KEY, token);
      say('');
      setReady(false);
      await Promise.all([refresh(), refreshDevices()]).catch(onError);
      setWho(me);
      setReady(true);
    },
    [refresh, refreshDevices, say, onError],
  );

  useEffect(() => {
    const t = sessionStorage.getItem(KEY);
    if (t) void signIn(t);
  }, [signIn]);
  useEffect(() => {
    document.body.dataset.ready = String(ready);
  }, [ready]);

  const ctx = useMemo<ConsoleCtx | null>(
    () =>
      who && {
        who,
        isOperator: who.role === 'operator',
        async act(label, fn) {
          try {
            await fn();
            await refresh().catch(onError);
            say(`${label}: done`, 'ok');
          } catch (e) {
            say(`${label}: refused (${refusal(e)}): ${(e as Error).message}`, 'error');
            await refresh().catch(onError);
          }
        },
      },
    [who, refresh, say, onError],
  );

  return (
    <>
      <header>
        <h1>mhs-host operator console</h1>
        <p class="notice" id="safety-banner">
          <strong>MHS.SAFETY.NOT_CERTIFIED</strong>: MHS is not a safety channel. Hardware safety (guards, interlocks,
          physical emergency stops) remains with the installation.
        </p>
        <SignIn
          who={who}
          onSignIn={(t) => void signIn(t)}
          onSignOut={() => {
            sessionStorage.removeItem(KEY);
            location.reload();
          }}
        />
        <p id="status" role="status" aria-live="polite" class={status.kind}>
          {status.text}
        </p>
        <StoreHealth status={data.store} />
        {ctx ? (
          <nav aria-label="Sections">
            {SECTIONS.map(([id, name]) => (
              <a key={id} href={`#${id}`}>
                {name}
              </a>
            ))}
          </nav>
        ) : null}
      </header>
      {ctx ? (
        <Ctx.Provider value={ctx}>
          <main id="app">
            <section aria-labelledby="h-devices">
              <h2 id="h-devices">Devices</h2>
              <DevicesPanel data={data.endpoints} live={live} />
            </section>
            <section aria-labelledby="h-approvals">
              <h2 id="h-approvals">Pending approvals</h2>
              {data.pending.length ? null : <p id="no-approvals">No approval is waiting.</p>}
              <div id="approvals">
                {data.pending.map((a) => (
                  <ApprovalCard
                    key={a.approval_id}
                    a={a}
                    live={live
                      .get(data.endpoints?.endpoints.find((e) => e.endpoint_id === a.endpoint_id)?.connector_id ?? '')
                      ?.devices.find((d) => d.device_id === a.device_id)}
                  />
                ))}
              </div>
            </section>
            <section aria-labelledby="h-runs">
              <h2 id="h-runs">Runs</h2>
              <RunsPanel tick={tick} />
            </section>
            <section aria-labelledby="h-hosts">
              <h2 id="h-hosts">Host processes</h2>
              <HostsPanel tick={tick} />
            </section>
            <section aria-labelledby="h-decisions">
              <h2 id="h-decisions">Recent decisions</h2>
              <Decisions list={data.decided} entries={data.approvalEntries} />
            </section>
            <section aria-labelledby="h-receipts">
              <h2 id="h-receipts">Recent receipts</h2>
              <Receipts entries={data.receipts} />
            </section>
            <section aria-labelledby="h-permits">
              <h2 id="h-permits">Outstanding permits</h2>
              <Permits list={data.permits} />
            </section>
            <section aria-labelledby="h-ledger">
              <h2 id="h-ledger">Ledger</h2>
              <LedgerPanel entries={data.ledger} onVerified={() => void refresh().catch(onError)} />
            </section>
          </main>
        </Ctx.Provider>
      ) : null}
    </>
  );
}
