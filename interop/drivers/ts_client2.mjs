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
//
// --phase tasks: the Client itself has no task API, so tasks go through the SDK's tasks package
// @modelcontextprotocol/ext-tasks (pinned next to the client): createTaskSessionFromClient(client,
// ...) -> session.callTool() -> ToolExecution (settle({onEvent}) for the task statuses and the
// outcome, cancel()), session.task(id).snapshot() (tasks/get), session.cancelTask(), session.listTasks().
// The session picks the form from what the Client negotiated:
//   * 2026-07-28 (modern): the `io.modelcontextprotocol/tasks` extension. The package builds every
//     tools/call / tasks/get / tasks/update / tasks/cancel request itself (per-request capability,
//     `_meta` envelope from `v2RequestFraming`, Mcp-Name) and needs `rawDispatch`, "the host
//     coordinator that owns request IDs and response matching", because the Client's request()
//     rejects `resultType: "task"` (see interop/README.md, "Tasks"). rawDispatch() below only
//     stamps `jsonrpc`/`id` on the package's request, sends it on the Client's own transport and
//     hands back the response with that id. Questions arrive inlined in tasks/get (`inputRequests`)
//     and are answered by the session's onInputRequest handler through tasks/update.
//   * 2025-11-25 (legacy): the package sends `task: {}` (for an "optional" tool only with
//     task.preference 'prefer') and polls tasks/get, then tasks/result, through the Client's own
//     request(). Questions are server requests (elicitation/create with related-task), answered by
//     the Client's own elicitation/create handler: the package's onInputRequest routing drops a
//     question that arrives right behind the CreateTaskResult. The package sends tasks/result only
//     after a terminal status; over HTTP the question reaches the client on its GET stream, which
//     the Client keeps open (interop/README.md, "Tasks").
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { createTaskSessionFromClient } from '@modelcontextprotocol/ext-tasks/client';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  parseDriverArgs, serverCommand, loadPlan, err, dumpResult, dumpTools, emit, withDeadline,
  newTasksDoc, scenario,
} from './_common.mjs';

const a = parseDriverArgs(['auto', 'legacy', '2026-07-28'], 'auto');
const plan = loadPlan(a.plan);
const versionOf = (specifier, up) => { // the installed package.json, `up` levels above the entry file
  let dir = fileURLToPath(import.meta.resolve(specifier));
  for (let i = 0; i < up; i++) dir = dirname(dir);
  return JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')).version;
};
const libVersion = versionOf('@modelcontextprotocol/client', 2);
const tasksPhase = a.phase === 'tasks';

const doc = {
  client: 'ts-client2', library: '@modelcontextprotocol/client', library_version: libVersion, mode: a.mode,
  transport: a.transport, negotiated_protocol_version: null,
  connect: { ok: false }, list_tools: { ok: false }, phase: a.phase,
};
if (tasksPhase) {
  doc.tasks_library = '@modelcontextprotocol/ext-tasks';
  doc.tasks_library_version = versionOf('@modelcontextprotocol/ext-tasks/client', 3);
  doc.tasks = newTasksDoc('@modelcontextprotocol/ext-tasks createTaskSessionFromClient (callTool, settle, cancel, task().snapshot, cancelTask, listTasks)');
} else doc.calls = [];

const clientInfo = { name: 'toolkit-interop-ts-client2', version: '0.0.0' };
// Tasks phase: declare form elicitation (purge_archive asks a question through its task).
const capabilities = tasksPhase ? { elicitation: { form: {} } } : undefined;
const clientOptions = capabilities ? { capabilities } : {};
if (a.mode === 'auto') clientOptions.versionNegotiation = { mode: 'auto' };
else if (a.mode !== 'legacy') clientOptions.versionNegotiation = { mode: { pin: a.mode } };
const opts = { timeout: a.timeoutMs };
const client = new Client(clientInfo, clientOptions);
const elicit = { answer: null, seen: [] };
if (tasksPhase) {
  // 2025-11-25 questions are elicitation/create server requests: the Client's own handler answers
  // them. (2026-07-28 questions never reach it: they are inlined in tasks/get; the check asserts so.)
  client.setRequestHandler('elicitation/create', async (request) => {
    elicit.seen.push(JSON.parse(JSON.stringify(request.params)));
    return elicit.answer ? { action: 'accept', content: elicit.answer } : { action: 'decline' };
  });
}
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
  if (tasksPhase) await runTasks();
  for (const step of tasksPhase ? [] : plan) {
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

// ext-tasks' RawClientDispatch for the 2026-07-28 form: (request, {signal, context}) ->
// {kind: 'result', result} | {kind: 'error', error}. `request` is the package's complete request
// ({method, params} with its framing); this only adds the JSON-RPC id and matches the response.
// The ids are strings ("ext-tasks-N") so they cannot collide with the Client's numeric ids.
function rawDispatcher(log) {
  const pending = new Map();
  let next = 0;
  const deliver = transport.onmessage; // the Client's handler, installed by connect()
  transport.onmessage = (message, extra) => {
    const waiter = message && !Array.isArray(message) && message.method === undefined
      ? pending.get(message.id) : undefined;
    if (waiter === undefined) return deliver?.call(transport, message, extra);
    waiter(message);
    return undefined;
  };
  return (request, options = {}) => new Promise((resolve, reject) => {
    const id = `ext-tasks-${++next}`;
    const entry = { id, method: request?.method };
    log.push(entry);
    const timeoutMs = options.context?.requestTimeoutMs ?? a.timeoutMs;
    let timer;
    const done = () => { pending.delete(id); clearTimeout(timer); options.signal?.removeEventListener('abort', onAbort); };
    const onAbort = () => { done(); entry.aborted = true; reject(options.signal.reason ?? new Error('aborted')); };
    if (options.signal?.aborted) { onAbort(); return; }
    options.signal?.addEventListener('abort', onAbort, { once: true });
    timer = setTimeout(() => { done(); entry.timed_out = true; reject(new Error(`no response to ${request?.method} within ${timeoutMs} ms`)); }, timeoutMs);
    pending.set(id, (message) => {
      done();
      if (message.error !== undefined) {
        entry.error_code = message.error?.code;
        resolve({ kind: 'error', error: message.error });
      } else resolve({ kind: 'result', result: message.result });
    });
    transport.send({ ...request, jsonrpc: '2.0', id }, options.context?.headers ? { headers: options.context.headers } : undefined)
      .catch((e) => { done(); reject(e); });
  });
}

function taskView(v) {
  return v === undefined || v === null ? v : { taskId: v.taskId, status: v.status, statusMessage: v.statusMessage };
}

async function runTasks() {
  const t = doc.tasks;
  const modern = client.getProtocolEra() === 'modern';
  t.form = modern ? '2026-07-28' : '2025-11-25';
  const caps = client.getServerCapabilities() ?? {};
  t.capabilities_tasks = caps.tasks ?? null;
  t.capabilities_extension = caps.extensions?.['io.modelcontextprotocol/tasks'] ?? null;
  t.input_requests = []; // what reached the package's onInputRequest (2026-07-28: from tasks/get inputRequests)
  t.session_errors = [];
  const inputAnswer = { value: null };
  let session;
  try {
    session = createTaskSessionFromClient(client, {
      endpointId: `toolkit-interop-${a.transport}`,
      ...(modern ? {
        rawDispatch: rawDispatcher(t.raw_requests = []),
        v2RequestFraming: { protocolVersion: client.getNegotiatedProtocolVersion(), clientInfo, clientCapabilities: capabilities },
      } : {}),
      onInputRequest: async (request, context) => {
        t.input_requests.push({
          kind: request.kind, params: JSON.parse(JSON.stringify(request.params ?? null)),
          context: { scope: context.scope, delivery: context.delivery, taskId: context.taskId, inputId: context.inputId },
        });
        return inputAnswer.value ? { action: 'accept', content: inputAnswer.value } : { action: 'decline' };
      },
      onError: (e) => { t.session_errors.push(err(e)); },
    });
    t.session_capabilities = { ...session.capabilities };
  } catch (e) {
    t.session_error = err(e);
    for (const k of ['build', 'purge', 'cancel', 'list']) t[k].error = t.session_error;
    return;
  }
  const ms = a.timeoutMs + 5000;
  const callOptions = { task: { preference: 'prefer' }, requestTimeoutMs: a.timeoutMs };
  const snapshot = async (id) => taskView(await session.task(id, { requestTimeoutMs: a.timeoutMs }).snapshot());
  // Start a call, record the execution, settle it (every task event's status goes to rec.statuses).
  const run = async (rec, step, onTask) => {
    const ex = await session.callTool(step.tool, step.arguments ?? {}, callOptions);
    rec.kind = ex.kind;
    if (ex.kind === 'task') {
      rec.task_id = ex.handle.taskId;
      rec.reference = ex.serializeReference();
    }
    const settled = await ex.settle({
      onEvent: async (event) => {
        if (event.type !== 'task') return;
        rec.statuses.push(event.task.status);
        if (onTask) await onTask(ex, event.task);
      },
    });
    const outcome = settled.outcome;
    rec.outcome = outcome.status;
    if (outcome.status === 'completed') rec.result = dumpResult(outcome.result);
    else if (outcome.status === 'failed') rec.outcome_error = err(outcome.error);
    return ex;
  };
  await scenario(t.build, ms, 'build', async (rec) => {
    await run(rec, plan.build);
    if (rec.task_id) rec.final = await snapshot(rec.task_id);
    if (rec.outcome !== 'completed') throw new Error(`outcome ${rec.outcome}: ${rec.outcome_error?.message ?? ''}`);
  }, doc, a.out);
  await scenario(t.purge, ms, 'purge', async (rec) => {
    elicit.answer = plan.purge.answer;
    inputAnswer.value = plan.purge.answer;
    await run(rec, plan.purge);
    rec.elicitations = elicit.seen;
    rec.input_requests = t.input_requests;
    if (rec.task_id) rec.final = await snapshot(rec.task_id);
    if (rec.outcome !== 'completed') throw new Error(`outcome ${rec.outcome}: ${rec.outcome_error?.message ?? ''}`);
  }, doc, a.out);
  await scenario(t.cancel, ms, 'cancel', async (rec) => {
    // Cancel at the first 'working' the execution reports; ToolExecution.cancel() resolves on the
    // server's tasks/cancel answer (the package exposes no result), then tasks/get is polled.
    await run(rec, plan.cancel, async (ex, task) => {
      if (rec.cancel_acked === undefined && task.status === 'working') {
        rec.cancel_acked = false;
        try {
          await ex.cancel();
          rec.cancel_acked = true;
        } catch (e) {
          rec.cancel_error = err(e);
        }
      }
    });
    if (rec.task_id) {
      rec.polled_after_cancel = [];
      for (let i = 0; i < 20; i++) { // tasks/cancel may be eventually consistent (2026-07-28)
        rec.final = await snapshot(rec.task_id);
        rec.polled_after_cancel.push(rec.final.status);
        if (['completed', 'failed', 'cancelled'].includes(rec.final.status)) break;
        await new Promise((r) => setTimeout(r, 250));
      }
      try { // a task in a terminal status: 2025-11-25 says tasks/cancel MUST be rejected with -32602
        await session.cancelTask(rec.task_id);
        rec.recancel = { ok: true };
      } catch (e) {
        rec.recancel = { ok: false, error: err(e) };
      }
    }
  }, doc, a.out);
  if (session.capabilities.inventory === 'server-list') {
    await scenario(t.list, ms, 'list', async (rec) => {
      const ids = [];
      let cursor;
      for (let i = 0; i < 20; i++) {
        const page = await session.listTasks(cursor);
        ids.push(...page.tasks.map((x) => x.taskId));
        cursor = page.nextCursor;
        if (!cursor) break;
      }
      rec.task_ids = ids;
    }, doc, a.out);
  } else {
    t.list = { ok: null, skipped: `session.capabilities.inventory is '${session.capabilities.inventory}' (no tasks/list in this form)` };
  }
  try {
    await withDeadline(session.close(), 10000, 'session.close');
  } catch (e) {
    t.session_close_error = err(e);
  }
}

try {
  await withDeadline(client.close(), 10000, 'close');
} catch (e) {
  doc.close_error = err(e);
}
emit(doc, a.out);
process.exit(0);
