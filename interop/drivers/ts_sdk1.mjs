// Interop driver for @modelcontextprotocol/sdk@1.32.2 (the legacy 1.x TypeScript SDK).
// Runs from .interop/ts-sdk1/ (copied there by interop/run.py) so it resolves that pinned install.
// Uses the public high-level Client: connect() (initialize, offers 2025-11-25), listTools(),
// callTool() — so the SDK's own zod result parsing and AJV output-schema validation run.
//
// --phase tasks: the 2025-11-25 experimental tasks through the SDK's own API,
// client.experimental.tasks (dist/esm/experimental/tasks/client.js): callToolStream() (which adds
// `task` by itself when the server declares capabilities.tasks.requests.tools.call and the tool's
// execution.taskSupport, polls tasks/get, and calls tasks/result at the end or on input_required),
// getTask(), cancelTask(), listTasks(); questions a task asks reach the Client's
// elicitation/create request handler (capabilities.elicitation declared in that phase only).
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CallToolResultSchema, ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import {
  parseDriverArgs, serverCommand, loadPlan, err, dumpResult, dumpTools, emit, withDeadline, sniffInitializeVersion,
  newTasksDoc, scenario,
} from './_common.mjs';

const a = parseDriverArgs(['legacy'], 'legacy');
const plan = loadPlan(a.plan);
const require = createRequire(import.meta.url);
const pkgDir = dirname(dirname(dirname(dirname(require.resolve('@modelcontextprotocol/sdk/client/index.js')))));
const libVersion = JSON.parse(readFileSync(join(pkgDir, 'package.json'), 'utf8')).version;

const doc = {
  client: 'ts-sdk1', library: '@modelcontextprotocol/sdk', library_version: libVersion, mode: a.mode,
  transport: a.transport, negotiated_protocol_version: null,
  connect: { ok: false }, list_tools: { ok: false }, phase: a.phase,
};
if (a.phase === 'tasks') doc.tasks = newTasksDoc('client.experimental.tasks (callToolStream, getTask, cancelTask, listTasks)');
else doc.calls = [];
const opts = { timeout: a.timeoutMs };
const client = new Client(
  { name: 'toolkit-interop-ts-sdk1', version: '0.0.0' },
  a.phase === 'tasks' ? { capabilities: { elicitation: { form: {} } } } : undefined,
);
const elicit = { answer: null, seen: [] };
if (a.phase === 'tasks') {
  client.setRequestHandler(ElicitRequestSchema, async (request) => {
    elicit.seen.push(JSON.parse(JSON.stringify(request.params)));
    return elicit.answer ? { action: 'accept', content: elicit.answer } : { action: 'decline' };
  });
}
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
  if (a.phase === 'tasks') await runTasks();
  for (const step of a.phase === 'tasks' ? [] : plan) {
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
async function runTasks() {
  const t = doc.tasks;
  const tasks = client.experimental.tasks;
  t.capabilities_tasks = client.getServerCapabilities()?.tasks ?? null;
  const ms = a.timeoutMs + 5000;
  // Drain a callToolStream into rec; onStatus may act on each polled status.
  const drain = async (rec, step, onStatus) => {
    const stream = tasks.callToolStream({ name: step.tool, arguments: step.arguments ?? {} }, CallToolResultSchema, opts);
    for await (const m of stream) {
      if (m.type === 'taskCreated') {
        rec.task_id = m.task.taskId;
        rec.created = m.task;
      } else if (m.type === 'taskStatus') {
        rec.statuses.push(m.task.status);
        if (onStatus) await onStatus(m.task);
      } else if (m.type === 'result') {
        rec.result = dumpResult(m.result);
      } else if (m.type === 'error') {
        rec.stream_error = err(m.error);
      }
    }
    if (rec.task_id === undefined) rec.not_a_task = true; // the SDK did not augment the call
  };
  await scenario(t.build, ms, 'build', async (rec) => {
    await drain(rec, plan.build);
    if (rec.stream_error) throw new Error(`callToolStream ended with error: ${rec.stream_error.message}`);
  }, doc, a.out);
  await scenario(t.purge, ms, 'purge', async (rec) => {
    elicit.answer = plan.purge.answer;
    await drain(rec, plan.purge);
    rec.elicitations = elicit.seen;
    if (rec.task_id) rec.final = await tasks.getTask(rec.task_id, opts);
    if (rec.stream_error) throw new Error(`callToolStream ended with error: ${rec.stream_error.message}`);
  }, doc, a.out);
  await scenario(t.cancel, ms, 'cancel', async (rec) => {
    // Cancel at the first polled status; the stream then ends with the SDK's "was cancelled" error.
    await drain(rec, plan.cancel, async (task) => {
      if (rec.cancel_result === undefined && task.status === 'working') {
        rec.cancel_result = await tasks.cancelTask(task.taskId, opts);
      }
    });
    if (rec.task_id) {
      rec.final = await tasks.getTask(rec.task_id, opts);
      try { // a task in a terminal status: tasks/cancel MUST be rejected with -32602
        rec.recancel = { ok: true, result: await tasks.cancelTask(rec.task_id, opts) };
      } catch (e) {
        rec.recancel = { ok: false, error: err(e) };
      }
    }
  }, doc, a.out);
  await scenario(t.list, ms, 'list', async (rec) => {
    const ids = [];
    let cursor;
    for (let i = 0; i < 20; i++) {
      const page = await tasks.listTasks(cursor, opts);
      ids.push(...page.tasks.map((x) => x.taskId));
      cursor = page.nextCursor;
      if (!cursor) break;
    }
    rec.task_ids = ids;
  }, doc, a.out);
}

try {
  await withDeadline(client.close(), 10000, 'close');
} catch (e) {
  doc.close_error = err(e);
}
emit(doc, a.out);
process.exit(0);
