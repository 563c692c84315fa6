// Anything added here is API.
export { registerConsole, CONSOLE_FILES } from './register-console.js';
export type { ConsoleDeps } from './register-console.js';
