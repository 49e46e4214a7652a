// The Node columns' `import` figure and their probe (scripts/bench copies this beside node_modules):
//
//   node import.mjs node|node2           seconds to import the SDK's McpServer module (fresh process)
//   node import.mjs node|node2 --probe   the SDK package's version, Node's version, the module's path
import { readFileSync } from 'node:fs';

const column = process.argv[2];
const modules = { node: '@modelcontextprotocol/sdk/server/mcp.js', node2: '@modelcontextprotocol/server' };
const packages = { node: '@modelcontextprotocol/sdk', node2: '@modelcontextprotocol/server' };
if (!(column in modules)) {
    console.error(`usage: node import.mjs node|node2 [--probe] (got ${column})`);
    process.exit(2);
}
if (process.argv[3] === '--probe') {
    const url = new URL(`./node_modules/${packages[column]}/package.json`, import.meta.url);
    const { version } = JSON.parse(readFileSync(url, 'utf8'));
    await import(modules[column]);
    console.log(`${packages[column]} ${version}`);
    console.log(`Node ${process.versions.node}`);
    console.log(url.pathname.replace(/package\.json$/, ''));
} else {
    const t = performance.now();
    await import(modules[column]);
    console.log((performance.now() - t) / 1000);
}
