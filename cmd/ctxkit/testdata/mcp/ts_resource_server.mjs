// A resource server written with the official TypeScript SDK, serving a few
// documents over stdio.
//
//   node ts_resource_server.mjs SDK_DIR
import { pathToFileURL } from "node:url";
import { join } from "node:path";

const sdkDir = process.argv[2];
const sdk = (p) => import(pathToFileURL(join(sdkDir, "node_modules/@modelcontextprotocol/sdk/dist/esm", p)).href);
const { McpServer } = await sdk("server/mcp.js");
const { StdioServerTransport } = await sdk("server/stdio.js");

const docs = {
  "kb://guides/deploy.md": "# Deploying\n\nDeploys go out from the release branch after the canary has run for an hour.\n",
  "kb://guides/rollback.md": "# Rolling back\n\nTo roll back a bad deploy, revert the release tag and redeploy the previous build; the rollback takes about five minutes.\n",
  "kb://guides/oncall.md": "# On call\n\nThe on-call engineer answers pages within fifteen minutes.\n",
  "kb://notes/lunch.txt": "Lunch is served at noon in the cafeteria.\n",
};
const server = new McpServer({ name: "ts-kb", version: "1.0.0" });
for (const [uri, text] of Object.entries(docs)) {
  server.registerResource(uri.split("/").pop(), uri, { mimeType: uri.endsWith(".md") ? "text/markdown" : "text/plain" },
    async () => ({ contents: [{ uri, text }] }));
}
await server.connect(new StdioServerTransport());
