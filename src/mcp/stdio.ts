import { realpathSync } from 'node:fs';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { PdfeditApi } from './api.js';
import { createMcpServer } from './server.js';

export interface StdioOptions {
  baseUrl: string;
  key: string;
  /** The folder local paths are confined to. */
  allowDir: string;
}

/** `pdfedit mcp`: the MCP server on stdin/stdout, until stdin closes. */
export async function runStdio(opts: StdioOptions): Promise<void> {
  const api = new PdfeditApi({ baseUrl: opts.baseUrl, key: opts.key });
  const server = createMcpServer({ api, local: { root: realpathSync(opts.allowDir), uploads: new Map() } });
  const transport = new StdioServerTransport();
  const closed = new Promise<void>((resolve) => {
    transport.onclose = () => resolve();
    process.stdin.once('end', () => resolve());
  });
  await server.connect(transport);
  await closed;
  await server.close();
}
