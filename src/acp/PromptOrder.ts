/**
 * The order in which `session/prompt` and `session/cancel` arrived, taken as they come in.
 *
 * The SDK hands messages to their handlers through a chain of awaited steps, and mm's handlers
 * run their work later still, so a prompt that arrives after a burst of cancels can start before
 * some of those cancels are handled: a stale cancel would stop it. Here each prompt gets a number
 * when its line arrives, and each cancel is stamped with the number of the last prompt of its
 * session seen before it (in its `_meta`); a cancel stops a running prompt only when that prompt's
 * number is at or below the stamp.
 */
import type * as acp from "@agentclientprotocol/sdk"

import type { PromptFiber } from "./Connection"

/** The `_meta` key a cancel is stamped with. */
export const PROMPTS_SEEN_KEY = "mm/promptsSeen"

/** Prompts whose handler has not taken their number yet (their params were refused, say) are forgotten past this many. */
const MAX_PENDING = 1024
/** Sessions whose last prompt is remembered (an editor's threads; ids it made up go first past this many). */
const MAX_SESSIONS = 10_000

const NEWLINE = 0x0a
const PROMPT = Buffer.from("\"session/prompt\"")
const CANCEL = Buffer.from("\"session/cancel\"")

export interface PromptOrder {
  /** Numbers the prompts and stamps the cancels of `input`, which passes through otherwise untouched. */
  readonly watch: (input: ReadableStream<Uint8Array>) => ReadableStream<Uint8Array>
  /** The number of the prompt with this JSON-RPC id (taken once); undefined when it was not seen. */
  readonly take: (requestId: unknown) => number | undefined
}

const record = (value: unknown): Record<string, unknown> | undefined =>
  typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined

const parse = (line: string): Record<string, unknown> | undefined => {
  try {
    return record(JSON.parse(line))
  } catch {
    return undefined
  }
}

export const makePromptOrder = (): PromptOrder => {
  let counter = 0
  /** Per session, the number of the last prompt seen. */
  const lastPrompt = new Map<string, number>()
  /** Per request id (JSON), the number of a prompt not yet taken by its handler. */
  const pending = new Map<string, number>()

  /** The line as the SDK is to read it: a cancel stamped, anything else as it came. */
  const seen = (bytes: Buffer): Buffer => {
    if (!bytes.includes(PROMPT) && !bytes.includes(CANCEL)) return bytes
    const stamped = stamp(bytes.toString("utf8"))
    return stamped === undefined ? bytes : Buffer.from(stamped, "utf8")
  }

  const stamp = (line: string): string | undefined => {
    const message = parse(line)
    const params = record(message?.params)
    if (message === undefined || params === undefined || typeof params.sessionId !== "string") return undefined
    if (message.method === "session/prompt" && "id" in message) {
      counter++
      lastPrompt.delete(params.sessionId)
      lastPrompt.set(params.sessionId, counter)
      if (lastPrompt.size > MAX_SESSIONS) lastPrompt.delete(lastPrompt.keys().next().value!)
      pending.set(JSON.stringify(message.id), counter)
      if (pending.size > MAX_PENDING) pending.delete(pending.keys().next().value!)
      return undefined
    }
    if (message.method !== "session/cancel" || "id" in message) return undefined
    const meta = { ...record(params._meta), [PROMPTS_SEEN_KEY]: lastPrompt.get(params.sessionId) ?? 0 }
    return JSON.stringify({ ...message, params: { ...params, _meta: meta } })
  }

  const watch = (input: ReadableStream<Uint8Array>) =>
    input.pipeThrough(
      new TransformStream<Uint8Array, Uint8Array>({
        // the line guard in front passes whole lines (a chunk may hold several), a last partial one only at the end
        transform(chunk, controller) {
          const bytes = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength)
          let from = 0
          const out: Array<Uint8Array> = []
          for (let at = bytes.indexOf(NEWLINE); at !== -1; at = bytes.indexOf(NEWLINE, from)) {
            out.push(seen(bytes.subarray(from, at)), bytes.subarray(at, at + 1))
            from = at + 1
          }
          if (from < bytes.byteLength) out.push(bytes.subarray(from))
          controller.enqueue(new Uint8Array(Buffer.concat(out)))
        }
      })
    )

  const take = (requestId: unknown) => {
    const key = JSON.stringify(requestId)
    const number = pending.get(key)
    pending.delete(key)
    return number
  }
  return { watch, take }
}

/** The number of each running prompt that has one. */
const numbers = new WeakMap<PromptFiber, number>()

export const numberPrompt = (fiber: PromptFiber, number: number | undefined): void => {
  if (number !== undefined) numbers.set(fiber, number)
}

/** Whether a cancel (as stamped by `watch`) applies to the prompt running in its session. */
export const cancelApplies = (params: acp.CancelNotification, running: PromptFiber): boolean => {
  const seenBefore = record(params._meta)?.[PROMPTS_SEEN_KEY]
  const number = numbers.get(running)
  return typeof seenBefore !== "number" || number === undefined || number <= seenBefore
}
