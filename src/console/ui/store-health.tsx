// HOST-093: a store failure is shown to the operator while it lasts (pushed as a `ledger.status` event).
import type { StoreStatus } from './types.js';

export function StoreHealth({ status }: { status: StoreStatus | undefined }) {
  const down = status?.state === 'unavailable';
  return (
    <p id="store-health" class="alert" role="alert" hidden={!down} data-state={status?.state ?? 'unknown'}>
      {down
        ? `Ledger store unavailable since ${status.since}: ${status.last_error?.code ?? ''} ${status.last_error?.message ?? ''}. New commands are refused until the store recovers.`
        : ''}
    </p>
  );
}
