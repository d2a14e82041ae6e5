// Drives `compozy proxy` with the MCP TypeScript SDK, over stdio and over Streamable HTTP.
//
//   node check.mjs '{"stdio": {"command": "...", "args": ["proxy"], "env": {...}}, "url": "http://..."}'
//
// Prints one JSON summary on stdout: for each transport, what the proxy answered. The SDK
// validates every response against the protocol schema, so a malformed answer throws; any
// error ends the script with exit status 1 and the error on stderr.

import { isDeepStrictEqual } from "node:util";

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { McpError } from "@modelcontextprotocol/sdk/types.js";

const config = JSON.parse(process.argv[2]);

/** The one text block parses to exactly structuredContent. */
function textIsStructured(result) {
  return (
    result.content.length === 1 &&
    result.content[0].type === "text" &&
    isDeepStrictEqual(JSON.parse(result.content[0].text), result.structuredContent)
  );
}

function view(result) {
  return {
    isError: result.isError ?? false,
    textIsStructured: !result.isError && textIsStructured(result),
    structured: result.structuredContent,
  };
}

async function exercise(transport) {
  let negotiated = null;
  const setProtocolVersion = transport.setProtocolVersion?.bind(transport);
  transport.setProtocolVersion = (version) => {
    negotiated = version;
    setProtocolVersion?.(version);
  };
  const client = new Client({ name: "compozy-ts-check", version: "0.0.0" });
  await client.connect(transport);
  try {
    const tools = [];
    let cursor;
    do {
      const page = await client.listTools(cursor === undefined ? {} : { cursor });
      tools.push(...page.tools);
      cursor = page.nextCursor;
    } while (cursor !== undefined);

    const created = await client.callTool({
      name: "compozy__session_create",
      arguments: { agent_name: "general", name: "TypeScript check" },
    });
    const sessionId = created.structuredContent.session.id;
    const compact = await client.callTool({
      name: "compozy__session_status",
      arguments: { session_id: sessionId },
    });
    const full = await client.callTool({
      name: "compozy__session_status",
      arguments: { session_id: sessionId, result_view: "full" },
    });
    const selectorError = await client.callTool({
      name: "compozy__session_status",
      arguments: { session_id: sessionId, result_view: "detailed" },
    });
    let unknownTool = null;
    try {
      await client.callTool({ name: "compozy__nope", arguments: {} });
    } catch (error) {
      unknownTool = error instanceof McpError ? { code: error.code } : { error: String(error) };
    }
    return {
      protocolVersion: negotiated,
      server: client.getServerVersion(),
      tools: tools.map((tool) => tool.name),
      withOutputSchema: tools.filter((tool) => "outputSchema" in tool).map((tool) => tool.name),
      withResultView: tools
        .filter((tool) => "result_view" in (tool.inputSchema.properties ?? {}))
        .map((tool) => tool.name),
      annotations: Object.fromEntries(tools.map((tool) => [tool.name, tool.annotations])),
      sessionId,
      created: view(created),
      compact: view(compact),
      full: view(full),
      selectorError: {
        ...view(selectorError),
        text: selectorError.content[0]?.text,
      },
      unknownTool,
    };
  } finally {
    await client.close();
  }
}

const summary = {};
if (config.stdio) {
  summary.stdio = await exercise(
    new StdioClientTransport({ ...config.stdio, stderr: "inherit" }),
  );
}
if (config.url) {
  summary.http = await exercise(new StreamableHTTPClientTransport(new URL(config.url)));
}
process.stdout.write(JSON.stringify(summary) + "\n");
