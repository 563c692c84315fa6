import { closeSync, fstatSync, fsync, openSync, statSync } from 'node:fs';

/** Flushes a file descriptor to stable storage (fsync(2)); the default runs on libuv's thread pool. */
export type FsyncFn = (fd: number) => Promise<void>;

const threadPoolFsync: FsyncFn = (fd) =>
  new Promise((resolve, reject) => fsync(fd, (err) => (err ? reject(err) : resolve())));

/**
 * The fsync of a SQLite write-ahead log, off the event loop. With `synchronous=NORMAL` in WAL mode SQLite writes
 * each commit's frames without syncing them; syncing the `-wal` file after the commit is exactly what
 * `synchronous=FULL` does inside COMMIT (sqlite.org/pragma.html#pragma_synchronous), so the commit is as durable,
 * but the event loop keeps running while the disk works. One fsync covers every commit written before it.
 */
export class WalSync {
  private fd: number | null = null;
  private ino = -1;
  /** fsyncs issued so far. */
  syncs = 0;

  constructor(
    private readonly walPath: string,
    private readonly fsyncFn: FsyncFn = threadPoolFsync,
  ) {}

  /** Resolves once everything committed to the WAL before the call is on stable storage. */
  async sync(): Promise<void> {
    const fd = this.current();
    if (fd === null) return;
    this.syncs++;
    await this.fsyncFn(fd);
  }

  /**
   * The descriptor of the WAL file now at the path (SQLite may have replaced it while no connection had it open);
   * null when there is none yet: SQLite creates it with the first write, so nothing is waiting in it.
   */
  private current(): number | null {
    let ino: number;
    try {
      ino = statSync(this.walPath).ino;
    } catch (err) {
      if ((err as { code?: string }).code === 'ENOENT') return null;
      throw err;
    }
    if (this.fd !== null && ino === this.ino) return this.fd;
    this.close();
    this.fd = openSync(this.walPath, 'r+');
    this.ino = fstatSync(this.fd).ino;
    return this.fd;
  }

  close(): void {
    if (this.fd !== null) closeSync(this.fd);
    this.fd = null;
    this.ino = -1;
  }
}
