// A naive SDK proxy (SPEC §14), as most MCP proxies are built: an SDK Server
// on stdio whose tools/list and tools/call handlers forward to an SDK Client
// connected to the upstream given on the command line.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { getDefaultEnvironment, StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';

const [command, ...args] = process.argv.slice(2);
const upstream = new Client({ name: 'naive-proxy', version: '1.0.0' });
await upstream.connect(new StdioClientTransport({ command, args, env: getDefaultEnvironment() }));
const server = new Server({ name: 'naive-proxy', version: '1.0.0' }, { capabilities: { tools: {} } });
server.setRequestHandler(ListToolsRequestSchema, (request) => upstream.listTools(request.params));
server.setRequestHandler(CallToolRequestSchema, (request) => upstream.callTool(request.params));
await server.connect(new StdioServerTransport());
