// Everything the signed-in console shows, re-read when the host announces a change on the event stream; the
// devices panel is replaced by the host's own `devices` pushes (never left to a timed re-read).
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { api, getToken } from './api.js';
import { listen } from './sse.js';
import type { Approval, EndpointsAnswer, LedgerEntry, LiveEndpoint, PermitRow, StoreStatus } from './types.js';

export interface ConsoleData {
  pending: Approval[];
  decided: Approval[];
  permits: PermitRow[];
  endpoints: EndpointsAnswer | null;
  ledger: LedgerEntry[];
  receipts: LedgerEntry[];
  /** `approval` ledger entries: who decided (a denial's denier is only there) and when. */
  approvalEntries: LedgerEntry[];
  store: StoreStatus | undefined;
}

const EMPTY: ConsoleData = {
  pending: [],
  decided: [],
  permits: [],
  endpoints: null,
  ledger: [],
  receipts: [],
  approvalEntries: [],
  store: undefined,
};

const byConnector = (list: LiveEndpoint[]) => new Map(list.map((e) => [e.connector_id, e]));

export function useConsoleData(active: boolean, onError: (e: unknown) => void) {
  const [data, setData] = useState<ConsoleData>(EMPTY);
  const [live, setLive] = useState<Map<string, LiveEndpoint>>(new Map());
  // Bumped on every re-read: panels that read other APIs (runs) re-read with it.
  const [tick, setTick] = useState(0);
  const timer = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);

  const refresh = useCallback(async () => {
    const [pending, decided, permits, endpoints, ledger, receipts, approvalEntries] = await Promise.all([
      api<{ approvals: Approval[] }>('GET', '/approvals?status=pending'),
      api<{ approvals: Approval[] }>('GET', '/approvals?status=approved,denied,consumed,voided,expired&limit=20'),
      api<{ permits: PermitRow[] }>('GET', '/permits'),
      api<EndpointsAnswer>('GET', '/endpoints'),
      api<{ entries: LedgerEntry[]; status?: StoreStatus }>('GET', '/ledger?limit=50'),
      api<{ entries: LedgerEntry[] }>('GET', '/ledger?limit=500&kind=receipt'),
      api<{ entries: LedgerEntry[] }>('GET', '/ledger?limit=500&kind=approval'),
    ]);
    setData({
      pending: pending.approvals,
      decided: decided.approvals,
      permits: permits.permits,
      endpoints,
      ledger: ledger.entries.slice().reverse(),
      receipts: receipts.entries.slice(-10).reverse(),
      approvalEntries: approvalEntries.entries,
      store: ledger.status,
    });
    setTick((t) => t + 1);
  }, []);

  const refreshDevices = useCallback(async () => {
    setLive(byConnector((await api<{ endpoints: LiveEndpoint[] }>('GET', '/devices')).endpoints));
  }, []);

  useEffect(() => {
    if (!active) return;
    const soon = () => {
      clearTimeout(timer.current);
      timer.current = setTimeout(() => refresh().catch(onError), 40);
    };
    const ac = new AbortController();
    const stream = listen(getToken(), ac.signal, (e) => {
      if (e.type === 'devices') setLive(byConnector((e.data as { endpoints: LiveEndpoint[] }).endpoints));
      else if (e.type === 'hello') {
        void refreshDevices().catch(onError);
        soon();
      } else if (e.type === 'ledger.status') {
        setData((d) => ({ ...d, store: e.data as StoreStatus }));
        soon();
      } else soon();
    });
    // Changes without an event (e.g. a peer host process on the same store): re-read every 5 s as well.
    const every = setInterval(soon, 5000);
    return () => {
      ac.abort();
      clearInterval(every);
      clearTimeout(timer.current);
      void stream;
    };
  }, [active, refresh, refreshDevices, onError]);

  return { data, live, tick, refresh, refreshDevices };
}
