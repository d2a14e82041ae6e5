// Drives compozy's MCP over Streamable HTTP with the MCP TypeScript SDK, for what streams:
// progress of a waiting compozy__session_prompt (the echo agent's slow turn), progress of an
// upstream server's tool, and an upstream server's elicitation and sampling, answered here.
//
//   node streams.mjs '{"url": "http://127.0.0.1:PORT/mcp"}'
//
// Prints one JSON summary on stdout; any error ends the script with exit status 1.

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";

const config = JSON.parse(process.argv[2]);
const asked = [];

const client = new Client(
  { name: "compozy-ts-streams", version: "0.0.0" },
  { capabilities: { elicitation: { form: {} }, sampling: {} } },
);
client.setRequestHandler(ElicitRequestSchema, async (request) => {
  asked.push(request.params.message);
  return { action: "accept", content: { name: "Grace Hopper" } };
});
client.setRequestHandler(CreateMessageRequestSchema, async () => {
  asked.push("sampling");
  return {
    role: "assistant",
    content: { type: "text", text: "sampled in TypeScript" },
    model: "ts-1",
  };
});

function textOf(result) {
  return result.content.map((block) => block.text ?? "").join("");
}

await client.connect(new StreamableHTTPClientTransport(new URL(config.url)));
try {
  const created = await client.callTool({
    name: "compozy__session_create",
    arguments: { agent_name: "general", provider: "echo" },
  });
  const sessionId = created.structuredContent.session.id;

  const promptProgress = [];
  const turn = await client.callTool(
    {
      name: "compozy__session_prompt",
      arguments: { session_id: sessionId, prompt: "slow 2", wait: true, timeout_seconds: 60 },
    },
    undefined,
    { onprogress: (progress) => promptProgress.push(progress.message ?? null) },
  );

  const upstreamProgress = [];
  const operation = await client.callTool(
    { name: "everything__trigger-long-running-operation", arguments: { duration: 1, steps: 4 } },
    undefined,
    { onprogress: (progress) => upstreamProgress.push([progress.progress, progress.total]) },
  );

  const elicited = await client.callTool({
    name: "everything__trigger-elicitation-request",
    arguments: {},
  });
  const sampled = await client.callTool({
    name: "everything__trigger-sampling-request",
    arguments: { prompt: "hi", maxTokens: 10 },
  });

  process.stdout.write(
    JSON.stringify({
      turn: turn.structuredContent.turn,
      promptProgress,
      operation: textOf(operation),
      upstreamProgress,
      elicited: textOf(elicited),
      sampled: textOf(sampled),
      asked,
    }) + "\n",
  );
} finally {
  await client.close();
}
