// Interop driver for @modelcontextprotocol/client@2.4.0 (the 2.x TypeScript client).
// Runs from .interop/ts-client2/ (copied there by interop/run.py) so it resolves that pinned install.
// Uses the public high-level Client: connect(), listTools(), callTool() — so the library's own
// result parsing and AJV output-schema validation run.
//
// --mode auto    ClientOptions.versionNegotiation = {mode: 'auto'}: probe server/discover and use the
//                modern era (2026-07-28) when the server offers it (on stdio the SDK probes on a
//                disposable sibling process spawned from the same command).
// --mode legacy  no versionNegotiation option: the library DEFAULT in 2.4.0, a plain initialize
//                handshake offering 2025-11-25.
// --mode 2026-07-28  versionNegotiation = {mode: {pin: '2026-07-28'}}.
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import {
  parseDriverArgs, serverCommand, loadPlan, err, dumpResult, dumpTools, emit, withDeadline,
} from './_common.mjs';

const a = parseDriverArgs(['auto', 'legacy', '2026-07-28'], 'auto');
if (a.phase !== 'plan') { // see interop/README.md, "Tasks"
  process.stderr.write('ts_client2: @modelcontextprotocol/client 2.4.0 has no task API (neither form)\n');
  process.exit(2);
}
const plan = loadPlan(a.plan);
const require = createRequire(import.meta.url);
const pkgDir = dirname(dirname(require.resolve('@modelcontextprotocol/client')));
const libVersion = JSON.parse(readFileSync(join(pkgDir, 'package.json'), 'utf8')).version;

const doc = {
  client: 'ts-client2', library: '@modelcontextprotocol/client', library_version: libVersion, mode: a.mode,
  transport: a.transport, negotiated_protocol_version: null,
  connect: { ok: false }, list_tools: { ok: false }, calls: [],
};
const clientOptions = {};
if (a.mode === 'auto') clientOptions.versionNegotiation = { mode: 'auto' };
else if (a.mode !== 'legacy') clientOptions.versionNegotiation = { mode: { pin: a.mode } };
const opts = { timeout: a.timeoutMs };
const client = new Client({ name: 'toolkit-interop-ts-client2', version: '0.0.0' }, clientOptions);
const transport = a.transport === 'stdio'
  ? new StdioClientTransport({ ...serverCommand(a), stderr: 'inherit' })
  : new StreamableHTTPClientTransport(new URL(a.url));

try {
  await withDeadline(client.connect(transport, opts), a.timeoutMs * 2, 'connect');
  doc.connect = { ok: true };
  doc.negotiated_protocol_version = client.getNegotiatedProtocolVersion() ?? null;
  doc.era = client.getProtocolEra?.() ?? null;
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
        client.callTool({ name: step.tool, arguments: step.arguments ?? {} }, opts),
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
