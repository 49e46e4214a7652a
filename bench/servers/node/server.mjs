// The benchmark server on the TypeScript SDK 1.x (@modelcontextprotocol/sdk's McpServer): the
// `node` column of scripts/bench. 1.x speaks the 2025 (legacy) era only.
//
//   node server.mjs [--workload items|empty] [--transport stdio|http] [--host H] [--port P]
//
// Run from .bench/node/ (scripts/bench copies it there, beside node_modules). Over HTTP it is the
// SDK's sessionful Streamable HTTP wiring on node:http: an `initialize` POST creates a
// StreamableHTTPServerTransport (and an McpServer) for a new session, later requests are routed
// to theirs by Mcp-Session-Id, at http://HOST:PORT/mcp.
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';

import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
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
    await build().connect(new StdioServerTransport());
} else {
    const sessions = new Map();
    const http = createServer(async (req, res) => {
        if (new URL(req.url, 'http://x').pathname !== '/mcp') {
            res.writeHead(404).end();
            return;
        }
        const id = req.headers['mcp-session-id'];
        let transport = id ? sessions.get(id) : undefined;
        if (!transport && req.method === 'POST' && !id) {
            const chunks = [];
            for await (const chunk of req) chunks.push(chunk);
            let body;
            try {
                body = JSON.parse(Buffer.concat(chunks).toString());
            } catch {
                body = undefined;
            }
            if (isInitializeRequest(body)) {
                transport = new StreamableHTTPServerTransport({
                    sessionIdGenerator: () => randomUUID(),
                    onsessioninitialized: sid => sessions.set(sid, transport)
                });
                transport.onclose = () => transport.sessionId && sessions.delete(transport.sessionId);
                await build().connect(transport);
                await transport.handleRequest(req, res, body);
                return;
            }
        }
        if (!transport) {
            res.writeHead(400, { 'content-type': 'application/json' }).end(
                JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message: 'Bad Request: no valid session' }, id: null })
            );
            return;
        }
        await transport.handleRequest(req, res);
    });
    http.listen(config.port, config.host);
}
