/**
 * An OTLP/HTTP trace receiver for tests (a plain node:http server): records every export request and decodes
 * `http/json` bodies (OTLP JSON: hex ids) and `http/protobuf` bodies (with {@link decodeProtobufTraces}) into
 * flat spans.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { decodeProtobufTraces } from './otlp-proto.js';
import { flatten } from './otlp-spans.js';
import type { ReceivedSpan } from './otlp-spans.js';

export type { ReceivedSpan } from './otlp-spans.js';

export interface ReceivedRequest {
  method: string;
  path: string;
  contentType: string;
  body: Buffer;
}

export interface OtlpReceiver {
  url: string;
  port: number;
  requests: ReceivedRequest[];
  /** Every span of every request, decoded by its content type. */
  spans(): ReceivedSpan[];
  close(): Promise<void>;
}

/** Starts a receiver on `port` (0: any free one) that answers every export with success. */
export async function startOtlpReceiver(port = 0, host?: string): Promise<OtlpReceiver> {
  const requests: ReceivedRequest[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const contentType = req.headers['content-type'] ?? '';
      requests.push({ method: req.method ?? '', path: req.url ?? '', contentType, body: Buffer.concat(chunks) });
      // An empty ExportTraceServiceResponse: full success.
      if (contentType.includes('json')) res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      else res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  const bound = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${bound}`,
    port: bound,
    requests,
    spans: () =>
      requests.flatMap((r) =>
        r.contentType.includes('json')
          ? flatten(JSON.parse(r.body.toString('utf8')) as Parameters<typeof flatten>[0])
          : decodeProtobufTraces(r.body),
      ),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
