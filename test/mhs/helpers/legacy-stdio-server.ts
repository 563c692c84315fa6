// A 2025-era-only stdio MCP server of the kind some SDKs produce: it exits on any request before
// `initialize` (here the `server/discover` probe). Serves `mhs__inspect` with the sample manifest.
import { McpServer, fromJsonSchema } from '@modelcontextprotocol/server';
import { StdioServerTransport } from '@modelcontextprotocol/server/stdio';
import { sampleManifest } from './fake-endpoint.js';

const transport = new StdioServerTransport();
const server = new McpServer({ name: 'legacy-only', version: '1' });
const manifest = sampleManifest();
server.registerTool('mhs__inspect', { inputSchema: fromJsonSchema({ type: 'object' }) }, async () => ({
  content: [{ type: 'text' as const, text: JSON.stringify(manifest) }],
  structuredContent: manifest as unknown as Record<string, unknown>,
}));
await server.connect(transport);
const deliver = transport.onmessage;
transport.onmessage = (message) => {
  if ((message as { method?: string }).method === 'server/discover') process.exit(3);
  deliver?.(message);
};
