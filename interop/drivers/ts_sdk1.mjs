// Interop driver for @modelcontextprotocol/sdk@1.32.2 (the legacy 1.x TypeScript SDK).
// Runs from .interop/ts-sdk1/ (copied there by interop/run.py) so it resolves that pinned install.
// Uses the public high-level Client: connect() (initialize, offers 2025-11-25), listTools(),
// callTool() — so the SDK's own zod result parsing and AJV output-schema validation run.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import {
  parseDriverArgs, serverCommand, loadPlan, err, dumpResult, dumpTools, emit, withDeadline, sniffInitializeVersion,
} from './_common.mjs';

const a = parseDriverArgs(['legacy'], 'legacy');
const plan = loadPlan(a.plan);
const require = createRequire(import.meta.url);
const pkgDir = dirname(dirname(dirname(dirname(require.resolve('@modelcontextprotocol/sdk/client/index.js')))));
const libVersion = JSON.parse(readFileSync(join(pkgDir, 'package.json'), 'utf8')).version;

const doc = {
  client: 'ts-sdk1', library: '@modelcontextprotocol/sdk', library_version: libVersion, mode: a.mode,
  transport: a.transport, negotiated_protocol_version: null,
  connect: { ok: false }, list_tools: { ok: false }, calls: [],
};
const opts = { timeout: a.timeoutMs };
const client = new Client({ name: 'toolkit-interop-ts-sdk1', version: '0.0.0' });
const transport = a.transport === 'stdio'
  ? new StdioClientTransport({ ...serverCommand(a), stderr: 'inherit' })
  : new StreamableHTTPClientTransport(new URL(a.url));
const seen = {};
sniffInitializeVersion(transport, seen);

try {
  await withDeadline(client.connect(transport, opts), a.timeoutMs * 2, 'connect');
  doc.connect = { ok: true };
  doc.negotiated_protocol_version = seen.version ?? null;
} catch (e) {
  doc.connect = { ok: false, error: err(e) };
}
if (doc.connect.ok) {
  try {
    const listed = await withDeadline(client.listTools(undefined, opts), a.timeoutMs + 5000, 'listTools');
    doc.list_tools = { ok: true, tools: dumpTools(listed.tools) };
  } catch (e) {
    doc.list_tools = { ok: false, error: err(e) };
  }
  if (a.out) emit(doc, a.out);
  for (const step of plan) {
    const entry = { tool: step.tool, arguments: step.arguments ?? {} };
    try {
      const r = await withDeadline(
        client.callTool({ name: step.tool, arguments: step.arguments ?? {} }, undefined, opts),
        a.timeoutMs + 5000, `callTool ${step.tool}`);
      entry.ok = true;
      entry.result = dumpResult(r);
    } catch (e) {
      entry.ok = false;
      entry.error = err(e);
    }
    doc.calls.push(entry);
    if (a.out) emit(doc, a.out); // keep a partial document on disk in case the runner has to kill us
  }
}
try {
  await withDeadline(client.close(), 10000, 'close');
} catch (e) {
  doc.close_error = err(e);
}
emit(doc, a.out);
process.exit(0);
