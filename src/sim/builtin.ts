/** Names of the bundled device families (`src/sim/devices/<name>.json`). No imports: the CLI reads it cheaply. */
export const BUILTIN_FAMILIES = ['thermostat', 'conveyor', 'liquid-handler', 'laser'] as const;
