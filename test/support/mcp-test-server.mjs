// A real MCP server written with the official SDK, for mm's tests.
//   node mcp-test-server.mjs            speaks MCP on stdin/stdout
//   startHttpServer() (imported)         streamable HTTP on 127.0.0.1, one server per request
//   startSseServer() (imported)          the older HTTP+SSE transport only (a POST to the endpoint is 405)
// Every tool call is appended to $MCP_TEST_LOG (one JSON line), so tests can tell whether a
// call reached the server. MCP_TEST_START=hang|crash misbehaves at start-up. MCP_TEST_TOOLS=N
// declares N more tools (wide_0 …), each with a schema of a few hundred bytes.
import * as fs from "node:fs"
import * as http from "node:http"

import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js"
import { SSEServerTransport } from "@modelcontextprotocol/sdk/server/sse.js"
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js"
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js"
import { z } from "zod"

const log = (entry) => {
  const file = process.env.MCP_TEST_LOG
  if (file) fs.appendFileSync(file, JSON.stringify(entry) + "\n")
}

/** The server's tools; `context` says which transport and which request headers it came with. */
export const makeServer = (context = {}) => {
  const server = new McpServer({ name: "mm-test-server", version: "1.0.0" })
  server.registerTool(
    "echo",
    { description: "Says the text back.", inputSchema: { text: z.string() } },
    async ({ text }) => {
      log({ tool: "echo", text, authorization: context.headers?.authorization })
      return { content: [{ type: "text", text: `echo: ${text}` }] }
    }
  )
  server.registerTool(
    "look",
    {
      description: "Looks at something without changing it.",
      inputSchema: { what: z.string() },
      annotations: { readOnlyHint: true }
    },
    async ({ what }) => {
      log({ tool: "look", what })
      return {
        content: [
          { type: "text", text: `looked at ${what}` },
          { type: "image", data: Buffer.from("not really a png").toString("base64"), mimeType: "image/png" }
        ]
      }
    }
  )
  server.registerTool("fail", { description: "Always fails.", inputSchema: {} }, async () => {
    log({ tool: "fail" })
    return { content: [{ type: "text", text: "it failed on purpose" }], isError: true }
  })
  server.registerTool(
    "sleep",
    { description: "Waits that many seconds.", inputSchema: { seconds: z.number() } },
    async ({ seconds }) => {
      log({ tool: "sleep", seconds })
      await new Promise((resolve) => setTimeout(resolve, seconds * 1000))
      return { content: [{ type: "text", text: `slept ${seconds} s` }] }
    }
  )
  server.registerTool(
    "env",
    { description: "Tells the value of an environment variable of the server.", inputSchema: { name: z.string() } },
    async ({ name }) => {
      log({ tool: "env", name })
      return { content: [{ type: "text", text: `${name}=${process.env[name] ?? "(unset)"}` }] }
    }
  )
  // over streamable HTTP only, where startHttpServer answers its calls itself
  if (context.flood === true) {
    server.registerTool(
      "flood",
      {
        description: "Replies with a text of that many bytes (over HTTP, streamed as it is written).",
        inputSchema: { bytes: z.number(), json: z.boolean().optional() }
      },
      async ({ bytes }) => {
        log({ tool: "flood", bytes })
        return { content: [{ type: "text", text: "x".repeat(bytes) }] }
      }
    )
  }
  const wide = Number(process.env.MCP_TEST_TOOLS ?? 0)
  for (let i = 0; i < wide; i++) {
    server.registerTool(
      `wide_${i}`,
      {
        description: `Tool number ${i} of a server that declares far too many tools.`,
        inputSchema: { query: z.string().describe("What to look up."), limit: z.number().optional() }
      },
      async () => ({ content: [{ type: "text", text: `wide ${i}` }] })
    )
  }
  server.registerTool("crash", { description: "Exits the server.", inputSchema: {} }, async () => {
    log({ tool: "crash" })
    process.stderr.write("crashing on purpose\n")
    setTimeout(() => process.exit(3), 10)
    return new Promise(() => undefined)
  })
  return server
}

/**
 * The reply to a call of `flood`, written piece by piece without ever being held whole: one
 * server-sent event (or a JSON body with `json: true`) whose text has `bytes` bytes. Stops when
 * the client goes away; `floods` counts the bytes it managed to write.
 */
const floodReply = async (res, id, { bytes, json }, floods) => {
  const head = `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":{"content":[{"type":"text","text":"`
  const tail = `"}]}}`
  res.writeHead(200, { "content-type": json ? "application/json" : "text/event-stream" })
  let gone = false
  res.on("close", () => (gone = true))
  const write = (text) => (res.write(text) || gone ? Promise.resolve() : new Promise((resolve) => {
    const done = () => {
      res.off("drain", done)
      res.off("close", done)
      resolve()
    }
    res.on("drain", done)
    res.on("close", done)
  }))
  const piece = "x".repeat(1024 * 1024)
  const record = { bytes: 0 }
  floods.push(record)
  await write(json ? head : `event: message\ndata: ${head}`)
  for (let sent = 0; sent < bytes && !gone; sent += piece.length) {
    await write(piece.slice(0, Math.min(piece.length, bytes - sent)))
    record.bytes = sent
  }
  if (!gone) res.end(json ? tail : `${tail}\n\n`)
}

/** Streamable HTTP on 127.0.0.1 (a fresh server for each request, no session). */
export const startHttpServer = async () => {
  const floods = []
  const httpServer = http.createServer(async (req, res) => {
    const chunks = []
    for await (const chunk of req) chunks.push(chunk)
    const raw = Buffer.concat(chunks).toString("utf8")
    const body = raw === "" ? undefined : JSON.parse(raw)
    if (body?.method === "tools/call" && body.params?.name === "flood") {
      return floodReply(res, body.id, body.params.arguments ?? {}, floods)
    }
    const server = makeServer({ headers: req.headers, flood: true })
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined })
    res.on("close", () => {
      void transport.close()
      void server.close()
    })
    await server.connect(transport)
    await transport.handleRequest(req, res, body)
  })
  await new Promise((resolve) => httpServer.listen(0, "127.0.0.1", resolve))
  const { port } = httpServer.address()
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    floods,
    close: () =>
      new Promise((resolve) => {
        httpServer.closeAllConnections?.()
        httpServer.close(() => resolve())
      })
  }
}

/**
 * The older HTTP+SSE transport on 127.0.0.1: `GET /mcp` opens the event stream, whose first
 * event names where to POST messages. A POST to `/mcp` (what a streamable HTTP client tries
 * first) is answered 405, as such servers do.
 */
export const startSseServer = async () => {
  const sessions = new Map()
  const requests = []
  const httpServer = http.createServer(async (req, res) => {
    const url = new URL(req.url ?? "/", "http://127.0.0.1")
    requests.push(`${req.method} ${url.pathname}`)
    if (req.method === "GET" && url.pathname === "/mcp") {
      const transport = new SSEServerTransport("/messages", res)
      sessions.set(transport.sessionId, transport)
      res.on("close", () => sessions.delete(transport.sessionId))
      await makeServer({ headers: req.headers }).connect(transport)
      return
    }
    if (req.method === "POST" && url.pathname === "/messages") {
      const transport = sessions.get(url.searchParams.get("sessionId"))
      if (transport === undefined) return void res.writeHead(404).end("no such session")
      return void (await transport.handlePostMessage(req, res))
    }
    res.writeHead(405, { Allow: "GET" }).end("method not allowed")
  })
  await new Promise((resolve) => httpServer.listen(0, "127.0.0.1", resolve))
  const { port } = httpServer.address()
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    requests,
    close: () =>
      new Promise((resolve) => {
        httpServer.closeAllConnections?.()
        httpServer.close(() => resolve())
      })
  }
}

const main = async () => {
  if (process.env.MCP_TEST_START === "crash") {
    process.stderr.write("cannot open the database\n")
    process.exit(1)
  }
  if (process.env.MCP_TEST_START === "hang") {
    setInterval(() => undefined, 1000)
    return
  }
  if (process.env.MCP_TEST_PIDFILE) fs.appendFileSync(process.env.MCP_TEST_PIDFILE, `${process.pid}\n`)
  await makeServer().connect(new StdioServerTransport())
}

if (process.argv[1] && import.meta.url === new URL(`file://${process.argv[1]}`).href) void main()
