/** Opaque handle returned by {@link Clock.setTimeout}. */
export type TimerHandle = { readonly id: number };

/** Time source and timers. Everything time-dependent takes one; nothing reads `Date.now()` directly. */
export interface Clock {
  now(): number;
  setTimeout(fn: () => void, ms: number): TimerHandle;
  clearTimeout(handle: TimerHandle): void;
}

/** RFC 3339 UTC with milliseconds (wire contract §1). */
export function isoAt(ms: number): string {
  return new Date(ms).toISOString();
}

/** The wall clock and Node timers. */
export class RealClock implements Clock {
  private seq = 0;
  private readonly timers = new Map<number, NodeJS.Timeout>();
  now(): number {
    return Date.now();
  }
  setTimeout(fn: () => void, ms: number): TimerHandle {
    const id = ++this.seq;
    const t = setTimeout(() => {
      this.timers.delete(id);
      fn();
    }, ms);
    t.unref?.();
    this.timers.set(id, t);
    return { id };
  }
  clearTimeout(handle: TimerHandle): void {
    const t = this.timers.get(handle.id);
    if (t) clearTimeout(t);
    this.timers.delete(handle.id);
  }
}

/** A clock that only moves when a test calls {@link SimulatedClock.advance} or {@link SimulatedClock.set}. */
export class SimulatedClock implements Clock {
  private seq = 0;
  private readonly due = new Map<number, { at: number; fn: () => void }>();
  constructor(private current = Date.UTC(2026, 0, 1)) {}
  now(): number {
    return this.current;
  }
  setTimeout(fn: () => void, ms: number): TimerHandle {
    const id = ++this.seq;
    this.due.set(id, { at: this.current + Math.max(0, ms), fn });
    return { id };
  }
  clearTimeout(handle: TimerHandle): void {
    this.due.delete(handle.id);
  }
  /** Moves time forward, firing due timers in due order (timers scheduled while firing included). */
  advance(ms: number): void {
    this.set(this.current + ms);
  }
  set(target: number): void {
    for (;;) {
      let next: [number, { at: number; fn: () => void }] | undefined;
      for (const entry of this.due) if (entry[1].at <= target && (!next || entry[1].at < next[1].at)) next = entry;
      if (!next) break;
      this.due.delete(next[0]);
      this.current = Math.max(this.current, next[1].at);
      next[1].fn();
    }
    this.current = Math.max(this.current, target);
  }
  /** Number of timers not yet fired. */
  pending(): number {
    return this.due.size;
  }
}
