#!/usr/bin/env node
// Loads the TypeScript CLI in this same process (no build step, signals reach the real process).
import { register } from 'tsx/esm/api';

register();
await import('../src/cli/main.ts');
