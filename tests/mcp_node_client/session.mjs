// A session with `kubectl terminating mcp` through the TypeScript SDK's client over stdio: the
// second client, written by others than the Python SDK's authors. Prints one JSON document of
// what it saw, for tests/e2e/test_mcp.py to assert on.
//   node session.mjs COMMAND [ARG...]      (KUBECONFIG from the environment)
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const [command, ...args] = process.argv.slice(2);
const transport = new StdioClientTransport({ command, args, env: process.env, stderr: "inherit" });
const client = new Client({ name: "node-conformance", version: "1.0.0" });
await client.connect(transport);
const seen = {
  server: client.getServerVersion(),
  protocol: transport.protocolVersion ?? null,
  tools: (await client.listTools()).tools,
  resources: (await client.listResources()).resources,
  prompts: (await client.listPrompts()).prompts,
  ping: await client.ping(),
  calls: {},
};
for (const [name, args] of JSON.parse(process.env.MCP_CALLS ?? "[]")) {
  seen.calls[name] = await client.callTool({ name, arguments: args });
}
await client.close();
process.stdout.write(JSON.stringify(seen) + "\n");
