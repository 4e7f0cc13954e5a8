/**
 * In front of the SDK's line reader: a line longer than the limit would make the SDK end
 * the connection (and mm acp with it). Such a line is dropped here instead, as it arrives,
 * never held whole: the editor gets a JSON-RPC error for a request when its id can be read,
 * an answer to one of mm's own requests becomes an error answer to it (so the request fails
 * at once), and every other line passes through untouched.
 */

/** The SDK's own default limit for one incoming message (DEFAULT_MAX_MESSAGE_BYTES). */
export const MAX_LINE_BYTES = 32 * 1024 * 1024

/** How much of a dropped line is kept to find its id. */
const HEAD_KEPT = 64 * 1024

const NEWLINE = 0x0a

export interface DroppedLine {
  /** The request's id, when the start of the line shows one (a number or a string). */
  readonly id: number | string | undefined
  /** When the line was the editor's answer to one of mm's own requests: that request's id. */
  readonly answerTo?: number | string
  readonly bytes: number
}

type Id = number | string

const idValue = (text: string): Id | undefined => {
  const value = /^(-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?|"(?:[^"\\]|\\.)*")\s*[,}]/.exec(text)
  if (value === null) return undefined
  try {
    const id: unknown = JSON.parse(value[1])
    return typeof id === "number" || typeof id === "string" ? id : undefined
  } catch {
    return undefined
  }
}

/**
 * The top-level keys of a JSON-RPC message from the start of its text: its `id`, and whether
 * a `result` or an `error` key makes it a response. Keys of nested objects do not count.
 */
const keysOfHead = (head: string): { readonly id: Id | undefined; readonly response: boolean } => {
  let depth = 0
  let i = 0
  const n = head.length
  let expectKey = false
  let id: Id | undefined
  let response = false
  while (i < n) {
    const c = head[i]
    if (c === "\"") {
      const start = i
      i++
      while (i < n && head[i] !== "\"") i += head[i] === "\\" ? 2 : 1
      if (i >= n) break
      const key = head.slice(start, i + 1)
      i++
      if (depth === 1 && expectKey) {
        let j = i
        while (j < n && /\s/.test(head[j])) j++
        if (head[j] !== ":") break
        j++
        while (j < n && /\s/.test(head[j])) j++
        if (key === "\"result\"" || key === "\"error\"") response = true
        if (key === "\"id\"") id = idValue(head.slice(j, j + 1024))
        i = j
        expectKey = false
      }
      continue
    }
    if (c === "{" || c === "[") {
      depth++
      expectKey = c === "{" && depth === 1
    } else if (c === "}" || c === "]") depth--
    else if (c === "," && depth === 1) expectKey = true
    i++
  }
  return { id, response }
}

/**
 * The `id` of a JSON-RPC request from the start of its text: only a key of the top-level
 * object counts, and not when the message is a response (`result` or `error` in it).
 */
export const idOfHead = (head: string): Id | undefined => {
  const keys = keysOfHead(head)
  return keys.response ? undefined : keys.id
}

/** The `id` of a JSON-RPC response (a top-level `result` or `error`) from the start of its text. */
export const answerIdOfHead = (head: string): Id | undefined => {
  const keys = keysOfHead(head)
  return keys.response ? keys.id : undefined
}

/**
 * What the SDK reads in place of a dropped answer to one of mm's requests: an error answer
 * with the same id, so that the request fails at once instead of waiting for its deadline.
 */
const errorAnswer = (id: Id, bytes: number, maxLineBytes: number): Uint8Array =>
  new TextEncoder().encode(
    `${
      JSON.stringify({
        jsonrpc: "2.0",
        id,
        error: { code: -32603, message: `the answer was ${bytes} bytes, over mm's limit of ${maxLineBytes}` }
      })
    }\n`
  )

/**
 * `input` with every line over `maxLineBytes` (newline excluded) taken out; `onDropped` is
 * told of each. Memory held: at most one line of `maxLineBytes`, as the SDK itself holds.
 */
export const guardLines = (
  input: ReadableStream<Uint8Array>,
  onDropped: (line: DroppedLine) => void,
  maxLineBytes: number = MAX_LINE_BYTES
): ReadableStream<Uint8Array> => {
  /** Bytes of the line being read, when it is still within the limit. */
  let pending: Array<Uint8Array> = []
  let pendingBytes = 0
  /** Set while a line over the limit is being skipped. */
  let dropping: { head: Buffer; bytes: number } | undefined

  /** Tells of the line dropped; returns the error answer the SDK reads instead when it answered mm. */
  const drop = (): Uint8Array | undefined => {
    const head = dropping!.head.toString("utf8")
    const { bytes } = dropping!
    dropping = undefined
    const answerTo = answerIdOfHead(head)
    onDropped(answerTo === undefined ? { id: idOfHead(head), bytes } : { id: undefined, answerTo, bytes })
    return answerTo === undefined ? undefined : errorAnswer(answerTo, bytes, maxLineBytes)
  }

  const take = (part: Uint8Array): void => {
    if (dropping !== undefined) {
      if (dropping.head.length < HEAD_KEPT) {
        dropping.head = Buffer.concat([dropping.head, part.subarray(0, HEAD_KEPT - dropping.head.length)])
      }
      dropping.bytes += part.byteLength
      return
    }
    if (pendingBytes + part.byteLength <= maxLineBytes) {
      pending.push(part)
      pendingBytes += part.byteLength
      return
    }
    const all = Buffer.concat([...pending, part])
    dropping = { head: Buffer.from(all.subarray(0, HEAD_KEPT)), bytes: all.byteLength }
    pending = []
    pendingBytes = 0
  }

  let reader: ReadableStreamDefaultReader<Uint8Array> | undefined
  return new ReadableStream<Uint8Array>({
    async start(controller) {
      reader = input.getReader()
      try {
        while (true) {
          const { value, done } = await reader.read()
          if (done) break
          if (value === undefined || value.byteLength === 0) continue
          const out: Array<Uint8Array> = []
          let from = 0
          for (let at = value.indexOf(NEWLINE); at !== -1; at = value.indexOf(NEWLINE, from)) {
            take(value.subarray(from, at))
            if (dropping !== undefined) {
              const instead = drop()
              if (instead !== undefined) out.push(instead)
            } else {
              out.push(...pending, value.subarray(at, at + 1))
              pending = []
              pendingBytes = 0
            }
            from = at + 1
          }
          if (from < value.byteLength) take(value.subarray(from))
          // a line within the limit passes as soon as it is whole; copies, since the source may reuse its buffer
          if (out.length > 0) controller.enqueue(new Uint8Array(Buffer.concat(out)))
        }
        if (dropping !== undefined) {
          const instead = drop()
          if (instead !== undefined) controller.enqueue(instead)
        } else if (pendingBytes > 0) controller.enqueue(new Uint8Array(Buffer.concat(pending)))
        controller.close()
      } catch (error) {
        controller.error(error)
      } finally {
        reader.releaseLock()
        reader = undefined
      }
    },
    cancel(reason) {
      return reader !== undefined ? reader.cancel(reason) : input.cancel(reason)
    }
  })
}
