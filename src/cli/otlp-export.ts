/**
 * OTLP span export for the process entry points (`serve`, `demo`, `run-task`; architecture.md: the SDK is set
 * up in `src/cli/` alone). It starts only when the standard environment names an OTLP endpoint
 * (`OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` or `OTEL_EXPORTER_OTLP_ENDPOINT`); everything else (protocol
 * `http/protobuf` | `http/json` | `grpc`, headers, timeout, `OTEL_SERVICE_NAME`, `OTEL_RESOURCE_ATTRIBUTES`,
 * sampler, batch sizes, `OTEL_TRACES_EXPORTER`, `OTEL_SDK_DISABLED`) is read by the OpenTelemetry SDK itself.
 * Unset: the SDK is not even loaded, no exporter exists and nothing is sent.
 */
import { ErrorCode, HostError } from '../core/index.js';

/** A started export; `shutdown` flushes the spans still batched and stops it. */
export interface OtlpExport {
  shutdown(): Promise<void>;
}

/** Whether `env` names an OTLP endpoint for traces. */
export function otlpTracesConfigured(env: NodeJS.ProcessEnv = process.env): boolean {
  return Boolean(env['OTEL_EXPORTER_OTLP_TRACES_ENDPOINT']?.trim() || env['OTEL_EXPORTER_OTLP_ENDPOINT']?.trim());
}

/**
 * Starts exporting the process's spans (task, command, MCP call, ledger commit, run, node) when the environment
 * asks for it; call before the host runtime is opened, whose tracers are chosen then. Null when not configured.
 * Export failures never reach the host (the SDK drops the batch); a misconfigured SDK is `MHS.HOST.CONFIG_INVALID`.
 */
export async function startOtlpExport(): Promise<OtlpExport | null> {
  if (!otlpTracesConfigured()) return null;
  const { NodeSDK, resources } = await import('@opentelemetry/sdk-node');
  try {
    const sdk = new NodeSDK({
      // The service is `mhs-host` unless OTEL_SERVICE_NAME / OTEL_RESOURCE_ATTRIBUTES (detected over it) say otherwise.
      resource: resources.defaultResource().merge(resources.resourceFromAttributes({ 'service.name': 'mhs-host' })),
      // Traces only: no metric reader, log processor or instrumentation of libraries.
      metricReaders: [],
      logRecordProcessors: [],
      instrumentations: [],
    });
    sdk.start();
    return { shutdown: () => sdk.shutdown() };
  } catch (err) {
    throw new HostError(
      ErrorCode.HOST_CONFIG_INVALID,
      'the OpenTelemetry SDK refused the OTEL_* configuration',
      {},
      { cause: err, remediation: 'Check the OTEL_EXPORTER_OTLP_* variables, or unset them to export nothing.' },
    );
  }
}

/** A rejection handler that stops `otlp` (flushing what it holds) and rethrows, for a command failing to start. */
export function shutdownAndThrow(otlp: OtlpExport | null): (err: unknown) => Promise<never> {
  return async (err) => {
    await otlp?.shutdown();
    throw err;
  };
}
