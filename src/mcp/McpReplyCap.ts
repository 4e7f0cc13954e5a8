/**
 * A remote (HTTP) MCP server's replies held to the limit a local one has: the SDK's stdio
 * transport refuses a message over STDIO_DEFAULT_MAX_BUFFER_SIZE (10 MiB), while its HTTP
 * transports read a reply whole (a 300 MB reply took mm to 1 GB). The `fetch` given to both HTTP
 * transports passes each reply through a counter: a JSON reply may hold that many bytes, an event
 * stream that many per event. Past it the reply is cut off (the connection is dropped, nothing
 * more is read) and `onOverflow` is told: a reply on an event stream reaches the SDK only as an
 * `onerror`, so the calls waiting for it are failed from there (McpSdk.ts).
 */
import { STDIO_DEFAULT_MAX_BUFFER_SIZE } from "@modelcontextprotocol/sdk/shared/stdio.js"

const MCP_REPLY_MAX_BYTES = STDIO_DEFAULT_MAX_BUFFER_SIZE

export class ReplyTooLarge extends Error {
  constructor(readonly maxBytes: number) {
    const mib = maxBytes / 1024 / 1024
    super(`reply over ${Number.isInteger(mib) ? `${mib} MiB` : `${maxBytes} bytes`} (the MCP message limit), dropped`)
  }
}

const NEWLINE = 0x0a
const CR = 0x0d

/** Counts the bytes of a reply (`perEvent`: of each server-sent event) and errors past `maxBytes`. */
const counter = (maxBytes: number, perEvent: boolean, onOverflow: (error: ReplyTooLarge) => void) => {
  let bytes = 0
  /** Whether the line being read holds nothing yet (a `\r` aside): a blank line ends an event. */
  let blankSoFar = true
  const overflow = (controller: TransformStreamDefaultController<Uint8Array>) => {
    const error = new ReplyTooLarge(maxBytes)
    onOverflow(error)
    controller.error(error)
  }
  return new TransformStream<Uint8Array, Uint8Array>({
    transform(chunk, controller) {
      if (!perEvent) {
        bytes += chunk.byteLength
        return bytes > maxBytes ? overflow(controller) : controller.enqueue(chunk)
      }
      let from = 0
      for (let at = chunk.indexOf(NEWLINE); at !== -1; at = chunk.indexOf(NEWLINE, from)) {
        const length = at - from
        const blank = blankSoFar && (length === 0 || (length === 1 && chunk[from] === CR))
        bytes = blank ? 0 : bytes + length + 1
        if (bytes > maxBytes) return overflow(controller)
        blankSoFar = true
        from = at + 1
      }
      const rest = chunk.byteLength - from
      if (rest > 0) blankSoFar = blankSoFar && rest === 1 && chunk[from] === CR
      bytes += rest
      return bytes > maxBytes ? overflow(controller) : controller.enqueue(chunk)
    }
  })
}

/** `fetch`, with each successful reply's body counted as it is read (see above). */
export const cappedFetch = (
  onOverflow: (error: ReplyTooLarge) => void,
  maxBytes: number = MCP_REPLY_MAX_BYTES
): typeof fetch =>
async (input, init) => {
  const response = await fetch(input, init)
  if (response.body === null || response.status < 200 || response.status >= 300) return response
  const perEvent = (response.headers.get("content-type") ?? "").toLowerCase().includes("text/event-stream")
  const capped = new Response(response.body.pipeThrough(counter(maxBytes, perEvent, onOverflow)), {
    status: response.status,
    statusText: response.statusText,
    headers: response.headers
  })
  Object.defineProperty(capped, "url", { value: response.url })
  return capped
}
