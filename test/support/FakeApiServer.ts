/**
 * What the fake servers of the hosted APIs (FakeAnthropicServer, FakeResponsesServer) share:
 * a request read and recorded, and a server on a free port of 127.0.0.1 that counts the
 * answers a client closed early and, when closed, drops every connection it holds.
 */
import * as http from "node:http"
import type { AddressInfo, Socket } from "node:net"

/** A request as the fake server received it. */
export interface RecordedRequest {
  readonly method: string
  /** The path, without its query. */
  readonly path: string
  readonly headers: http.IncomingHttpHeaders
  /** The body, parsed when it is JSON, else as text; undefined when empty. */
  readonly body: any
  /** The body's size in bytes as received. */
  readonly bytes: number
}

export const readRequest = async (req: http.IncomingMessage): Promise<RecordedRequest> => {
  const chunks: Array<Buffer> = []
  for await (const chunk of req) chunks.push(chunk as Buffer)
  const raw = Buffer.concat(chunks)
  let body: any = undefined
  try {
    body = raw.length === 0 ? undefined : JSON.parse(raw.toString("utf8"))
  } catch {
    body = raw.toString("utf8")
  }
  const path = (req.url ?? "/").split("?")[0]
  return { method: req.method ?? "GET", path, headers: req.headers, body, bytes: raw.length }
}

export interface ListeningServer {
  /** The base URL, `/v1` included. */
  readonly url: string
  /** How many answers the client closed before the server had finished them. */
  readonly aborted: () => number
  readonly close: () => Promise<void>
}

/** `handle` served on a free port of 127.0.0.1. */
export const listen = async (
  handle: (req: http.IncomingMessage, res: http.ServerResponse) => Promise<unknown>
): Promise<ListeningServer> => {
  const sockets = new Set<Socket>()
  let aborted = 0
  let closing = false
  const server = http.createServer((req, res) => {
    res.on("close", () => {
      if (!res.writableEnded && !closing) aborted++
    })
    void handle(req, res)
  })
  server.on("connection", (socket) => {
    sockets.add(socket)
    socket.on("close", () => sockets.delete(socket))
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const port = (server.address() as AddressInfo).port
  return {
    url: `http://127.0.0.1:${port}/v1`,
    aborted: () => aborted,
    close: () =>
      new Promise<void>((resolve) => {
        closing = true
        for (const socket of sockets) socket.destroy()
        server.close(() => resolve())
      })
  }
}
