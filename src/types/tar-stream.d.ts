// The part of tar-stream 2.2.0 (no bundled types) that the evidence package download uses.
declare module 'tar-stream' {
  import type { Readable } from 'node:stream';

  export interface Headers {
    name: string;
    size?: number;
    mode?: number;
    mtime?: Date;
    type?: 'file' | 'directory';
  }

  export interface Pack extends Readable {
    entry(headers: Headers, buffer: Buffer | string, callback?: (err?: Error | null) => void): unknown;
    finalize(): void;
  }

  export function pack(): Pack;
}
