// Shared plumbing for the JavaScript interop drivers. Same command line and output document
// as interop/drivers/_common.py (see there). The runner copies this file next to each driver
// inside .interop/ts-*/ so that the drivers resolve the pinned node_modules of that directory.
import { parseArgs } from 'node:util';
import { readFileSync, renameSync, writeFileSync } from 'node:fs';

export function parseDriverArgs(modes, defaultMode) {
  const { values } = parseArgs({
    options: {
      transport: { type: 'string' },
      command: { type: 'string' },
      cwd: { type: 'string' },
      'server-env': { type: 'string', multiple: true, default: [] },
      url: { type: 'string' },
      mode: { type: 'string', default: defaultMode },
      plan: { type: 'string' },
      phase: { type: 'string', default: 'plan' },
      timeout: { type: 'string', default: '20' },
      out: { type: 'string' },
    },
  });
  const fail = (m) => { process.stderr.write(`driver: ${m}\n`); process.exit(2); };
  if (!['stdio', 'http'].includes(values.transport)) fail('--transport stdio|http is required');
  if (values.transport === 'stdio' && !values.command) fail('--command is required for stdio');
  if (values.transport === 'http' && !values.url) fail('--url is required for http');
  if (!values.plan) fail('--plan is required');
  if (!modes.includes(values.mode)) fail(`--mode must be one of ${modes.join(', ')}`);
  if (!['plan', 'tasks'].includes(values.phase)) fail('--phase must be plan or tasks');
  return { ...values, timeoutMs: Math.round(Number(values.timeout) * 1000) };
}

export function serverCommand(a) {
  const argv = JSON.parse(a.command);
  const env = { ...process.env };
  for (const kv of a['server-env']) {
    const i = kv.indexOf('=');
    env[kv.slice(0, i)] = kv.slice(i + 1);
  }
  return { command: argv[0], args: argv.slice(1), env, cwd: a.cwd };
}

export function loadPlan(path) {
  return JSON.parse(readFileSync(path, 'utf8'));
}

export function err(e) {
  const out = { type: e?.constructor?.name ?? typeof e, message: String(e?.message ?? e).slice(0, 2000) };
  if (typeof e?.code === 'number' || typeof e?.code === 'string') out.code = e.code;
  if (e?.data !== undefined) {
    try { out.data = JSON.parse(JSON.stringify(e.data)); } catch { /* not JSON */ }
  }
  if (e?.stack) out.traceback = String(e.stack).slice(0, 3000);
  return out;
}

export function dumpResult(r) {
  const d = {
    content: r.content,
    structuredContentPresent: Object.prototype.hasOwnProperty.call(r, 'structuredContent') && r.structuredContent !== undefined,
    isError: Boolean(r.isError),
  };
  if (d.structuredContentPresent) d.structuredContent = r.structuredContent;
  if (r._meta !== undefined) d.meta = r._meta;
  return d;
}

// The "tasks" part of a --phase tasks document (see interop/drivers/_common.py).
export function newTasksDoc(api) {
  return {
    api,
    build: { ok: false, statuses: [] },
    purge: { ok: false, statuses: [], elicitations: [] },
    cancel: { ok: false, statuses: [] },
    list: { ok: false },
  };
}

// Run one task scenario: rec.ok / rec.error, bounded by ms; keeps the partial document on disk.
export async function scenario(rec, ms, what, body, doc, out) {
  try {
    await withDeadline(body(rec), ms, what);
    rec.ok = true;
  } catch (e) {
    rec.ok = false;
    rec.error = err(e);
  }
  if (out) emit(doc, out);
}

export function dumpTools(tools) {
  return tools.map((t) => JSON.parse(JSON.stringify(t)));
}

export function emit(doc, out) {
  const text = JSON.stringify(doc, null, 1);
  if (out) { // atomically: the runner may read (or kill us) at any moment
    writeFileSync(out + '.tmp', text);
    renameSync(out + '.tmp', out);
  }
  else process.stdout.write(text + '\n');
}

// Guard against a library call that never settles: reject after ms (the library's own
// request timeout should fire first; this is only a backstop).
export function withDeadline(promise, ms, what) {
  let t;
  const deadline = new Promise((_, reject) => {
    t = setTimeout(() => reject(new Error(`driver deadline: ${what} did not settle within ${ms} ms`)), ms);
  });
  return Promise.race([promise, deadline]).finally(() => clearTimeout(t));
}

// Record the protocolVersion of an initialize result as it passes the transport (read-only:
// the message is handed on untouched). Used where a library has no public getter for it.
export function sniffInitializeVersion(transport, rec) {
  let handler;
  Object.defineProperty(transport, 'onmessage', {
    configurable: true,
    enumerable: true,
    get() { return handler; },
    set(fn) {
      handler = typeof fn === 'function'
        ? (msg, extra) => {
            const v = msg?.result?.protocolVersion;
            if (typeof v === 'string') rec.version = v;
            return fn(msg, extra);
          }
        : fn;
    },
  });
}
