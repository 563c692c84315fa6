import { readFileSync } from 'node:fs';
import { Command, InvalidArgumentError } from 'commander';
import { ErrorCode, HostError, RealClock } from '../core/index.js';
import type { EvidenceBundle, InterlockState } from '../mhs/wire-types.js';
import { BUILTIN_FAMILIES } from '../sim/builtin.js';
import type { FaultOptions, SimOptions } from '../sim/sim-options.js';

function int(min: number) {
  return (v: string): number => {
    const n = Number(v);
    if (!Number.isInteger(n) || n < min) throw new InvalidArgumentError(`expected an integer >= ${min}`);
    return n;
  };
}

/** `true` when the flag is given without a value (every call), else the Nth call. */
function nth(v: string | boolean | undefined): true | number | undefined {
  if (v === undefined || v === false) return undefined;
  if (v === true) return true;
  return int(1)(v);
}

function collect(v: string, prev: string[]): string[] {
  return [...prev, v];
}

interface SimFlags {
  stdio?: boolean;
  http?: number;
  host: string;
  operatorTools?: boolean;
  config?: string;
  seed: number;
  endpointId?: string;
  device: string[];
  replay?: string;
  timeScale?: number;
  interlock: string[];
  standInHardware: string[];
  enableComposition?: boolean;
  latencyMs?: number;
  dropReply?: string | boolean;
  stall?: string | boolean;
  executeAfterMs?: number;
  executeAfterNth?: string | boolean;
  closeAfter?: number;
  oversizeReply?: string | boolean;
  surrogateReply?: string | boolean;
  corruptEvidence?: number;
}

function parseInterlock(spec: string): { deviceId: string; id: string; state: InterlockState } {
  const m = /^([^:]+):([^=]+)=(closed|open|unknown)$/.exec(spec);
  if (!m)
    throw new HostError(ErrorCode.HOST_CONFIG_INVALID, `--interlock ${spec}: expected DEVICE:ID=closed|open|unknown`);
  return { deviceId: m[1] as string, id: m[2] as string, state: m[3] as InterlockState };
}

/** `mhs-host sim`: the reference MHS endpoint simulator (issue 2, docs/simulators.md). */
export function simCommand(): Command {
  return new Command('sim')
    .description(`Serve simulated MHS devices as one MCP endpoint (families: ${BUILTIN_FAMILIES.join(', ')})`)
    .argument('[families]', 'comma-separated device families, e.g. thermostat,conveyor', '')
    .option('--stdio', 'serve MCP over stdin/stdout (default)')
    .option('--http <port>', 'serve MCP over Streamable HTTP on PORT (0 = ephemeral) at /mcp', int(0))
    .option('--host <addr>', 'HTTP bind address', '127.0.0.1')
    .option('--operator-tools', 'also expose the operator tools mhs__permit and mhs__reset (CORE-130)')
    .option('--config <file>', 'projection policy {"enabled","allow_hardware","estop_devices"} (HOST-090)')
    .option('--seed <n>', 'seed of seeded devices and ids', int(0), 42)
    .option('--endpoint-id <uri>', 'endpoint id (default mhs://localhost:<port>, or mhs://stdio/<families>)')
    .option('--device <file>', 'load an extra device family definition from FILE (repeatable)', collect, [])
    .option('--replay <bundle>', 'serve in replay mode from an exported evidence bundle (wire contract §10)')
    .option('--time-scale <f>', 'divide modelled durations by F', (v) => Number(v))
    .option('--interlock <spec>', 'initial interlock state DEVICE:ID=closed|open|unknown (repeatable)', collect, [])
    .option(
      '--stand-in-hardware <device>',
      'test option: DEVICE reports mode "hardware", labelled a simulator standing in for hardware (repeatable)',
      collect,
      [],
    )
    .option(
      '--enable-composition',
      'experimental: serve mhs.composition.run (tool mhs__composition_run, HOST-084), advertised as experimental',
    )
    .option('--latency-ms <ms>', 'fault: add latency to every tool call', int(0))
    .option('--drop-reply [n]', 'fault: execute capability calls, then never answer (every call, or only the Nth)')
    .option('--stall [n]', 'fault: accept capability calls and never answer or execute (every, or the Nth)')
    .option(
      '--execute-after-ms <ms>',
      'fault: a slow conforming endpoint: never answer capability calls, execute each MS after it arrived',
      int(0),
    )
    .option('--execute-after-nth <n>', 'apply --execute-after-ms only to the Nth capability call')
    .option('--close-after <n>', 'fault: close the connection instead of handling any tool call after the Nth', int(0))
    .option('--oversize-reply [n]', 'fault: answer capability calls with a frame over 4 MiB (every, or the Nth)')
    .option('--surrogate-reply [n]', 'fault: put a lone UTF-16 surrogate in the reply (every, or the Nth)')
    .option('--corrupt-evidence <seq>', 'fault: store evidence entry SEQ with a body that breaks its link', int(0))
    .action(async (familiesArg: string, flags: SimFlags) => {
      // Loaded here so other subcommands do not pay for the MCP server SDK at startup.
      const [{ loadFamily }, { SimEndpoint }, { loadPolicy }, { serveStdioProjection }] = await Promise.all([
        import('../sim/family.js'),
        import('../sim/endpoint.js'),
        import('../sim/policy.js'),
        import('../sim/stdio-server.js'),
      ]);
      const names = familiesArg.split(',').filter(Boolean);
      const families = [...names, ...flags.device].map(loadFamily);
      if (!families.length) {
        throw new HostError(
          ErrorCode.HOST_CONFIG_INVALID,
          'no device family given',
          {},
          {
            remediation: `mhs-host sim ${BUILTIN_FAMILIES.join(',')}`,
          },
        );
      }
      const faults: FaultOptions = {
        latencyMs: flags.latencyMs,
        dropReply: nth(flags.dropReply),
        stall: nth(flags.stall),
        ...(flags.executeAfterMs !== undefined
          ? { executeAfterMs: flags.executeAfterMs, executeAfterNth: nth(flags.executeAfterNth) ?? true }
          : {}),
        closeAfter: flags.closeAfter,
        oversizeReply: nth(flags.oversizeReply),
        surrogateReply: nth(flags.surrogateReply),
        corruptEvidence: flags.corruptEvidence,
      };
      let replay: EvidenceBundle | undefined;
      if (flags.replay) {
        try {
          replay = JSON.parse(readFileSync(flags.replay, 'utf8')) as EvidenceBundle;
        } catch (err) {
          throw new HostError(
            ErrorCode.HOST_CONFIG_INVALID,
            `cannot read replay bundle ${flags.replay}`,
            {},
            { cause: err },
          );
        }
      }
      const base: Omit<SimOptions, 'endpointId' | 'transports'> = {
        families,
        clock: new RealClock(),
        seed: flags.seed,
        operatorTools: flags.operatorTools === true,
        policy: flags.config ? loadPolicy(flags.config) : null,
        faults,
        timeScale: flags.timeScale,
        replay,
        interlocks: flags.interlock.map(parseInterlock),
        standInHardware: flags.standInHardware,
        composition: flags.enableComposition === true,
      };
      const stdioCommand = [
        'mhs-host',
        'sim',
        [...names].join(','),
        '--stdio',
        ...flags.standInHardware.flatMap((d) => ['--stand-in-hardware', d]),
        ...(flags.enableComposition ? ['--enable-composition'] : []),
      ];
      if (flags.http !== undefined) {
        // Only here: a stdio child does not pay for node:http.
        const { listen, serveHttp } = await import('../sim/http-server.js');
        const server = await listen(flags.host, flags.http);
        const port = (server.address() as { port: number }).port;
        const endpointId = flags.endpointId ?? replay?.endpoint_id ?? `mhs://localhost:${port}`;
        const ep = new SimEndpoint({
          ...base,
          endpointId,
          transports: [
            { kind: 'mcp-http', url: `http://127.0.0.1:${port}/mcp` },
            { kind: 'mcp-stdio', command: stdioCommand },
          ],
        });
        const projection = serveHttp(server, ep);
        process.stderr.write(`listening ${projection.url}\n`);
        const stop = (): void => void projection.close().finally(() => process.exit(0));
        process.once('SIGTERM', stop);
        process.once('SIGINT', stop);
        return;
      }
      const endpointId =
        flags.endpointId ?? replay?.endpoint_id ?? `mhs://stdio/${families.map((f) => f.family).join('+')}`;
      const ep = new SimEndpoint({ ...base, endpointId, transports: [{ kind: 'mcp-stdio', command: stdioCommand }] });
      serveStdioProjection(ep, () => process.exit(0));
    });
}
