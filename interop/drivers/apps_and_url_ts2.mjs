// MCP Apps and URL-mode elicitation through @modelcontextprotocol/client@2.4.0 (the 2.x TypeScript client).
// Against tests/support/apps_url_app.py (tests/test_apps_url_interop.py starts it and copies this
// file into .interop/ts-client2/ so it resolves that pinned install). Self-contained (no _common.mjs).
// Only the public Client API:
//
// * apps: `new Client(info, {capabilities: {extensions: {"io.modelcontextprotocol/ui": {mimeTypes:
//   ["text/html;profile=mcp-app"]}}}})` (ClientCapabilities.extensions of the 2.x core schemas; the
//   client has no MCP Apps helper of its own, and @modelcontextprotocol/ext-apps is an app/host/server
//   package, not installed with the client), getServerCapabilities().extensions, listTools() (the
//   `panel` tool's `_meta.ui`), readResource({uri: "ui://demo/panel"}) (mimeType and `_meta.ui`),
//   callTool panel;
// * URL elicitation: capabilities.elicitation = {form: {}, url: {}} and
//   setRequestHandler('elicitation/create', ...), which plays the user (opens the URL with a GET,
//   accepts); setNotificationHandler('notifications/elicitation/complete', ...); callTool linked
//   (URLElicitationRequired until the URL was opened), again, then callTool connect (ctx.elicit_url).
//   When the library throws -32042 (UrlElicitationRequiredError), the driver opens its URLs and calls again.
//
// --mode auto (versionNegotiation {mode: 'auto'}: 2026-07-28 against toolkit) | legacy (no option: the
// library default, initialize offering 2025-11-25). --transport http --url URL | stdio --command JSON_ARGV
// [--cwd DIR]. --visit no: the user accepts but never opens the page (over stdio the server has none). Writes one JSON document to --out (and stdout).
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const UI = 'io.modelcontextprotocol/ui';
const APP_MIME = 'text/html;profile=mcp-app';

const args = {};
for (let i = 2; i < process.argv.length; i += 2) args[process.argv[i].replace(/^--/, '')] = process.argv[i + 1];
const mode = args.mode ?? 'auto';
const timeoutMs = Number(args.timeout ?? 20) * 1000;

let dir = fileURLToPath(import.meta.resolve('@modelcontextprotocol/client'));
for (let i = 0; i < 2; i++) dir = dirname(dir);
const doc = {
  library: '@modelcontextprotocol/client',
  library_version: JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')).version,
  mode, transport: args.transport, visit: (args.visit ?? 'yes') === 'yes', elicitations: [], notifications: [], visited: [],
};
const err = (e) => ({
  type: e?.constructor?.name ?? typeof e, message: String(e?.message ?? e), code: e?.code, data: e?.data,
});
const emit = () => {
  const text = JSON.stringify(doc, null, 1);
  if (args.out) writeFileSync(args.out, text);
  process.stdout.write(text + '\n');
};

async function visit(url) { // the user opens the URL (in a browser; here a GET); --visit no: never
  if (!doc.visit) {
    doc.visited.push({ url, skipped: true });
    return;
  }
  try {
    const response = await fetch(url);
    doc.visited.push({ url, status: response.status });
  } catch (e) {
    doc.visited.push({ url, error: String(e?.cause?.message ?? e?.message ?? e) });
  }
}

const options = {
  capabilities: { elicitation: { form: {}, url: {} }, extensions: { [UI]: { mimeTypes: [APP_MIME] } } },
};
if (mode === 'auto') options.versionNegotiation = { mode: 'auto' };
const client = new Client({ name: 'toolkit-interop-apps-url', version: '0.0.0' }, options);
client.setRequestHandler('elicitation/create', async (request) => {
  const params = JSON.parse(JSON.stringify(request.params));
  doc.elicitations.push(params);
  if (params.mode === 'url') {
    await visit(params.url);
    return { action: 'accept' };
  }
  return { action: 'decline' };
});
client.setNotificationHandler('notifications/elicitation/complete', (notification) => {
  doc.notifications.push(JSON.parse(JSON.stringify(notification)));
});

let transport;
if (args.transport === 'stdio') {
  const argv = JSON.parse(args.command);
  transport = new StdioClientTransport({ command: argv[0], args: argv.slice(1), cwd: args.cwd, stderr: 'inherit' });
} else {
  transport = new StreamableHTTPClientTransport(new URL(args.url));
}
const opts = { timeout: timeoutMs };
try {
  await client.connect(transport, opts);
  doc.protocol_version = client.getNegotiatedProtocolVersion() ?? null;
  doc.server_extensions = client.getServerCapabilities()?.extensions ?? null;
  const listed = await client.listTools(undefined, opts);
  doc.tools_meta = Object.fromEntries(listed.tools.map((t) => [t.name, t._meta ?? null]));
  try {
    const read = await client.readResource({ uri: 'ui://demo/panel' }, opts);
    const first = read.contents[0];
    doc.resource = { uri: first.uri, mimeType: first.mimeType, _meta: first._meta ?? null, text_length: (first.text ?? '').length };
  } catch (e) {
    doc.resource = { error: err(e) };
  }
  doc.calls = {};
  for (const name of ['panel', 'linked', 'linked (again)', 'connect']) {
    try {
      const r = await client.callTool({ name: name.split(' ')[0], arguments: {} }, opts);
      doc.calls[name] = { ok: true, isError: Boolean(r.isError), content: r.content };
    } catch (e) {
      doc.calls[name] = { ok: false, error: err(e) };
      if (e?.code === -32042) for (const item of e.data?.elicitations ?? []) await visit(item.url);
    }
  }
} catch (e) {
  doc.fatal = err(e);
  doc.stack = String(e?.stack ?? '').slice(0, 3000);
}
emit();
await client.close().catch(() => {});
process.exit(0);
