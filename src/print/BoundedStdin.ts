import { StringDecoder } from "node:string_decoder"
import * as tty from "node:tty"

import { MAX_FILE_BYTES } from "../tools/Tool"

/**
 * What `mm -p` reads of its stdin: a stream, kept up to a cap and counted past it, so that
 * `cat big.log | mm -p summarize` takes bounded memory whatever the size of the log.
 */

/** About four bytes of text per token. */
const BYTES_PER_TOKEN = 4

/** The share of the context window stdin may take: the rest is for the system prompt, the tools and the answer. */
const WINDOW_SHARE = 0.5

/** The most of stdin kept: the file tools' limit, or stdin's share of the context window, whichever is smaller. */
export const stdinCap = (contextWindow: number): number =>
  Math.max(4096, Math.min(MAX_FILE_BYTES, Math.floor(contextWindow * WINDOW_SHARE * BYTES_PER_TOKEN)))

interface Piped {
  /** The text kept (whole characters only). */
  readonly text: string
  /** Every byte stdin held. */
  readonly total: number
  /** The bytes kept, when fewer than `total`. */
  readonly kept: number
}

const megabytes = (bytes: number): string => {
  const mb = bytes / (1024 * 1024)
  return mb >= 10 ? `${Math.round(mb)} MB` : mb >= 1 ? `${mb.toFixed(1)} MB` : `${Math.ceil(bytes / 1024)} KB`
}

/** The line said when stdin was cut, e.g. `stdin is 200 MB; mm read the first 64 KB`. */
export const cutLine = (piped: Piped): string =>
  `stdin is ${megabytes(piped.total)}; mm read the first ${megabytes(piped.kept)}`

/** What the model is told after the text it got, when stdin was cut. */
export const cutNote = (piped: Piped): string =>
  `[stdin was cut: these are the first ${piped.kept} of its ${piped.total} bytes]`

/** Everything piped into `mm -p` up to `cap` bytes, or undefined when stdin is a terminal. */
const readStdin = (cap: number, stdin: NodeJS.ReadStream = process.stdin): Promise<Piped | undefined> =>
  stdin.isTTY === true
    ? Promise.resolve(undefined)
    : new Promise((resolve) => {
      const chunks: Array<Buffer> = []
      let kept = 0
      let total = 0
      stdin.on("data", (chunk: Buffer) => {
        total += chunk.length
        if (kept >= cap) return
        const part = kept + chunk.length <= cap ? chunk : chunk.subarray(0, cap - kept)
        // a copy: a slice would hold the whole chunk in memory
        chunks.push(part === chunk ? chunk : Buffer.from(part))
        kept += part.length
      })
      const done = () => {
        // a character cut at the cap is left out, not turned into U+FFFD
        const text = new StringDecoder("utf8").write(Buffer.concat(chunks, kept))
        resolve({ text, total, kept })
      }
      stdin.on("end", done)
      stdin.on("error", done)
    })

/** mm's own stdin: nothing when it is a terminal; otherwise read as a stream, as `readStdin` does. */
export const readOwnStdin = (cap: number): Promise<Piped | undefined> =>
  tty.isatty(0) ? Promise.resolve(undefined) : readStdin(cap)
