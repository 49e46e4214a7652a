// The benchmark server on the TypeScript SDK 2.x (@modelcontextprotocol/server's McpServer): the
// `node2` column of scripts/bench. 2.x speaks both eras, with its defaults: over stdio,
// serveStdio pins each connection to the era its opening picks (initialize or server/discover);
// over HTTP, createMcpHandler serves 2026-07-28 requests and answers the 2025 (legacy) era
// statelessly (legacy: 'stateless', the default: a fresh instance per request, no Mcp-Session-Id),
// wrapped for node:http by @modelcontextprotocol/node's toNodeHandler, at http://HOST:PORT/mcp.
//
//   node server2.mjs [--workload items|empty] [--transport stdio|http] [--host H] [--port P]
//
// Run from .bench/node/ (scripts/bench copies it there, beside node_modules).
import { createServer } from 'node:http';

import { toNodeHandler } from '@modelcontextprotocol/node';
import { createMcpHandler, McpServer } from '@modelcontextprotocol/server';
import { serveStdio } from '@modelcontextprotocol/server/stdio';
import * as z from 'zod';

import { getItems, itemsTool, loadConfig } from './workload.mjs';

const config = loadConfig();

function build() {
    const server = new McpServer({ name: 'bench', version: '1.0.0' });
    const tool = server.registerTool('get_items', itemsTool(z), getItems);
    if (config.workload === 'empty') {
        // No tools, but tools/list answered (with none), as every other column's empty server does:
        // McpServer installs its tools/list handler with the first tool, and keeps it when it goes.
        tool.remove();
    }
    return server;
}

if (config.transport === 'stdio') {
    serveStdio(build);
} else {
    const handler = toNodeHandler(createMcpHandler(build));
    const http = createServer((req, res) => {
        if (new URL(req.url, 'http://x').pathname !== '/mcp') {
            res.writeHead(404).end();
            return;
        }
        handler(req, res);
    });
    http.listen(config.port, config.host);
}
