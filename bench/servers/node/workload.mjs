// What the Node benchmark servers serve, and how they are told which workload and transport: the
// same flags and environment as bench/servers/workloads.py (--workload items|empty, --transport
// stdio|http, --host, --port; BENCH_WORKLOAD, BENCH_TRANSPORT, BENCH_HOST, BENCH_PORT).
//
// `items` is workload A: one tool, get_items, returning the same ten items as workloads.py's
// get_items (id, name, price, tags), with an outputSchema, so that its result carries them as
// structuredContent. A JSON object is what structuredContent must be, so the list is wrapped as
// {"result": [...]}, as mcp and fastmcp wrap it; the content block is the list's JSON text.
// `gen500` (500 generated pydantic tools) has no Node counterpart: the list500 and register groups
// say n/a for the Node columns.
import { parseArgs } from 'node:util';

export const ITEMS = Array.from({ length: 10 }, (_, i) => ({
    id: i,
    name: `item-${i}`,
    price: 1.5 * i,
    tags: ['bench', `t${i % 3}`]
}));

export function loadConfig() {
    const { values } = parseArgs({
        options: {
            workload: { type: 'string' },
            transport: { type: 'string' },
            host: { type: 'string' },
            port: { type: 'string' }
        }
    });
    const env = process.env;
    const config = {
        workload: values.workload ?? env.BENCH_WORKLOAD ?? 'items',
        transport: values.transport ?? env.BENCH_TRANSPORT ?? 'stdio',
        host: values.host ?? env.BENCH_HOST ?? '127.0.0.1',
        port: Number(values.port ?? env.BENCH_PORT ?? '8000')
    };
    if (!['items', 'empty'].includes(config.workload)) {
        throw new Error(`workload ${config.workload}: the Node servers serve items and empty only`);
    }
    if (!['stdio', 'http'].includes(config.transport)) {
        throw new Error(`transport ${config.transport}: stdio or http`);
    }
    return config;
}

// The tool's declaration for a given zod: the same in both SDKs (1.x takes a raw shape too, 2.x a
// schema; an object schema suits both).
export function itemsTool(z) {
    const item = z.object({ id: z.number().int(), name: z.string(), price: z.number(), tags: z.array(z.string()) });
    return {
        description: 'Return ten small items.',
        outputSchema: z.object({ result: z.array(item) })
    };
}

export async function getItems() {
    return { content: [{ type: 'text', text: JSON.stringify(ITEMS) }], structuredContent: { result: ITEMS } };
}
