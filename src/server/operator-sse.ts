import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Clock, TimerHandle } from '../core/index.js';
import type { OperatorEvents } from '../policy/operator-events.js';
import type { DeviceFeed } from './device-feed.js';

/**
 * Streams operator events as Server-Sent Events (`event: <type>`, `id`, JSON `data`) with a
 * keep-alive comment, until the client goes away. The stream starts with an `event: hello`. With a `feed`, every
 * change of the live device state is pushed as `event: devices` with `{endpoints}` (issue 18 item 1).
 */
export function openSse(
  req: FastifyRequest,
  reply: FastifyReply,
  events: OperatorEvents,
  clock: Clock,
  keepAliveMs: number,
  feed?: DeviceFeed,
): void {
  reply.hijack();
  const res = reply.raw;
  res.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-store',
    connection: 'keep-alive',
    'x-accel-buffering': 'no',
  });
  res.write(`event: hello\ndata: ${JSON.stringify({ at: clock.now() })}\n\n`);
  let timer: TimerHandle | undefined;
  const arm = () => {
    timer = clock.setTimeout(() => {
      res.write(': keep-alive\n\n');
      arm();
    }, keepAliveMs);
  };
  arm();
  const off = events.subscribe((e) => {
    res.write(`event: ${e.type}\nid: ${e.id}\ndata: ${JSON.stringify(e.data)}\n\n`);
  });
  const offFeed = feed?.subscribe((endpoints) => {
    res.write(`event: devices\ndata: ${JSON.stringify({ endpoints })}\n\n`);
  });
  const close = () => {
    off();
    offFeed?.();
    if (timer) clock.clearTimeout(timer);
  };
  req.raw.once('close', close);
  res.once('close', close);
}
