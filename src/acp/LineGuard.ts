/**
 * In front of the SDK's line reader: a line longer than the limit would make the SDK end
 * the connection (and mm acp with it). Such a line is dropped here instead, as it arrives,
 * never held whole; the editor gets a JSON-RPC error for it when its id can be read, and
 * every other line passes through untouched.
 */

/** The SDK's own default limit for one incoming message (DEFAULT_MAX_MESSAGE_BYTES). */
export const MAX_LINE_BYTES = 32 * 1024 * 1024

/** How much of a dropped line is kept to find its id. */
const HEAD_KEPT = 64 * 1024

const NEWLINE = 0x0a

export interface DroppedLine {
  /** The request's id, when the start of the line shows one (a number or a string). */
  readonly id: number | string | undefined
  readonly bytes: number
}

/**
 * The `id` of a JSON-RPC request from the start of its text: only a key of the top-level
 * object counts, and not when the message is a response (`result` or `error` before it).
 */
export const idOfHead = (head: string): number | string | undefined => {
  let depth = 0
  let i = 0
  const n = head.length
  let expectKey = false
  while (i < n) {
    const c = head[i]
    if (c === "\"") {
      const start = i
      i++
      while (i < n && head[i] !== "\"") i += head[i] === "\\" ? 2 : 1
      if (i >= n) return undefined
      const key = head.slice(start, i + 1)
      i++
      if (depth === 1 && expectKey) {
        let j = i
        while (j < n && /\s/.test(head[j])) j++
        if (head[j] !== ":") return undefined
        j++
        while (j < n && /\s/.test(head[j])) j++
        if (key === "\"result\"" || key === "\"error\"") return undefined
        if (key === "\"id\"") {
          const value = /^(-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?|"(?:[^"\\]|\\.)*")\s*[,}]/.exec(head.slice(j, j + 1024))
          if (value === null) return undefined
          try {
            const id: unknown = JSON.parse(value[1])
            return typeof id === "number" || typeof id === "string" ? id : undefined
          } catch {
            return undefined
          }
        }
        i = j
        expectKey = false
        continue
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
  return undefined
}

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

  const drop = (): void => {
    const head = dropping!.head.toString("utf8")
    onDropped({ id: idOfHead(head), bytes: dropping!.bytes })
    dropping = undefined
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
            if (dropping !== undefined) drop()
            else {
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
        if (dropping !== undefined) drop()
        else if (pendingBytes > 0) controller.enqueue(new Uint8Array(Buffer.concat(pending)))
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
