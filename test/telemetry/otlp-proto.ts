/**
 * Decodes OTLP `http/protobuf` trace export bodies with protobufjs, from the fields of the public
 * opentelemetry-proto definitions (collector/trace/v1, trace/v1, common/v1, resource/v1; field numbers as
 * published) that the tests read; protobufjs skips the others.
 */
import protobuf from 'protobufjs';
import { flatten } from './otlp-spans.js';
import type { ReceivedSpan } from './otlp-spans.js';

const PROTO = `
syntax = "proto3";
package otlp;
message AnyValue {
  oneof value {
    string string_value = 1;
    bool bool_value = 2;
    int64 int_value = 3;
    double double_value = 4;
  }
}
message KeyValue { string key = 1; AnyValue value = 2; }
message Resource { repeated KeyValue attributes = 1; }
message InstrumentationScope { string name = 1; string version = 2; }
message Span {
  bytes trace_id = 1;
  bytes span_id = 2;
  string trace_state = 3;
  bytes parent_span_id = 4;
  string name = 5;
  int32 kind = 6;
  repeated KeyValue attributes = 9;
}
message ScopeSpans { InstrumentationScope scope = 1; repeated Span spans = 2; }
message ResourceSpans { Resource resource = 1; repeated ScopeSpans scope_spans = 2; }
message ExportTraceServiceRequest { repeated ResourceSpans resource_spans = 1; }
`;

const Request = protobuf.parse(PROTO).root.lookupType('otlp.ExportTraceServiceRequest');

const hex = (b: unknown) => (b instanceof Uint8Array ? Buffer.from(b).toString('hex') : '');

/** The spans of one `ExportTraceServiceRequest` in protobuf encoding. */
export function decodeProtobufTraces(body: Buffer): ReceivedSpan[] {
  const req = Request.toObject(Request.decode(body), { longs: String, oneofs: false }) as Parameters<typeof flatten>[0];
  for (const rs of req.resourceSpans ?? [])
    for (const ss of rs.scopeSpans ?? [])
      for (const s of ss.spans ?? []) {
        s.traceId = hex(s.traceId);
        s.spanId = hex(s.spanId);
        s.parentSpanId = hex(s.parentSpanId);
      }
  return flatten(req);
}
