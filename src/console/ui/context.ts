// What every panel shares: the signed-in identity, the status line and one way to run an operator action.
import { createContext } from 'preact';
import { useContext } from 'preact/hooks';
import type { Who } from './types.js';

export interface ConsoleCtx {
  who: Who;
  isOperator: boolean;
  /** Runs an operator action: "label: done" or "label: refused (code): message" on the status line, then a refresh. */
  act(label: string, fn: () => Promise<unknown>): Promise<void>;
}

export const Ctx = createContext<ConsoleCtx | null>(null);

export function useConsole(): ConsoleCtx {
  const c = useContext(Ctx);
  if (!c) throw new Error('outside the signed-in console');
  return c;
}

/** The first 12 characters of a digest (the binding stays the full digest, shown in `title`). */
export const short = (d: unknown): string => (typeof d === 'string' ? d.slice(0, 12) : '');
