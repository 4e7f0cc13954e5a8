// web_fetch: GET an http or https URL the model names, in mm itself (not in the sandbox), and
// give back its text — HTML as Markdown, JSON and text as they are (WebContent.ts) — after the
// checks of WebRequest.ts (each hop's scheme and address, redirects, size, time). Given to the
// model only when agent.yaml's `webFetch.enabled` says so (Registry.ts); asked per domain
// (approvals/ApprovalScope.ts).
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"

import type { PrivateAllowance } from "../lib/WebAddress"
import { firstLineTitle, stringArg } from "./Describe"
import type { Preview } from "./Preview"
import { failure, type ToolContext, type ToolResult } from "./Tool"
import { defineTool, type ToolRecord } from "./ToolRecord"
import { truncateOutput } from "./Truncate"
import { loadWebLibs, readAnswer } from "./WebContent"
import type { FetchSettings } from "./WebRequest"

export const WEB_FETCH = "web_fetch"

/** agent.yaml's `webFetch`, as far as a fetch reads it. */
export interface WebFetchSettings {
  readonly allowPrivate: PrivateAllowance
  readonly maxBytes: number
  /** Seconds. */
  readonly timeout: number
}

const DEFAULTS: WebFetchSettings = { allowPrivate: false, maxBytes: 5 * 1024 * 1024, timeout: 30 }

/** Why a URL is not one web_fetch takes (not a URL, another scheme, a user or password in it); undefined when it is. */
export const urlProblem = (text: string): string | undefined => {
  let url: URL
  try {
    url = new URL(text)
  } catch {
    return `not an absolute URL: ${firstLineTitle(text)}`
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    return `only http and https URLs are fetched, not ${url.protocol}`
  }
  if (url.username !== "" || url.password !== "") return "a URL with a user name or password is not fetched"
  return undefined
}

/** The host an "always" answer covers for this URL (`docs.python.org`, `[::1]`); undefined when it is no http(s) URL. */
export const hostOf = (text: unknown): string | undefined => {
  if (typeof text !== "string" || urlProblem(text) !== undefined) return undefined
  return new URL(text).hostname
}

/** The one line a fetch that gave no page fails with (a `FetchProblem`'s message is one already). */
const problemLine = (cause: unknown): string =>
  cause instanceof Error && cause.name === "FetchProblem"
    ? cause.message
    : `fetch failed: ${cause instanceof Error ? cause.message.split("\n")[0] : String(cause)}`

const fetchUrl = (url: string, settings: FetchSettings, ctx: ToolContext): Effect.Effect<ToolResult> =>
  Effect.tryPromise({
    try: (signal) => loadWebLibs().then((libs) => libs.fetchPage(new URL(url), settings, signal)).then(readAnswer),
    catch: (cause) => cause
  }).pipe(
    Effect.map((reading): ToolResult => {
      if (reading._tag === "Refused") return failure(reading.line)
      // the head line stays whole; the text keeps its start and end, as other long results do
      const room = Math.max(200, ctx.maxOutput - reading.head.length - 1)
      return { output: `${reading.head}\n${truncateOutput(reading.text, room)}`, failed: false }
    }),
    Effect.catchAll((cause) => Effect.succeed(failure(`${url}: ${problemLine(cause)}`)))
  )

/** The web_fetch tool with these settings (agent.yaml's `webFetch`). */
export const webFetchToolFor = (settings: WebFetchSettings): ToolRecord =>
  defineTool({
    name: WEB_FETCH,
    description: "GET an http(s) URL and return its text: HTML as Markdown, JSON and text as they are; " +
      "other content types are refused. The first line gives the status, the final URL and the size; " +
      "private addresses are refused, long pages cut.",
    parameters: Schema.Struct({
      url: Schema.String.annotations({ description: "the http or https URL to fetch" }).pipe(
        Schema.filter((text) => urlProblem(text) ?? true)
      )
    }),
    access: "network",
    kind: "fetch",
    describe: (args) => {
      const url = stringArg(args, "url")
      return { title: url === undefined ? "" : firstLineTitle(url), locations: [] }
    },
    preview: (input) => {
      const url = stringArg(input, "url")
      const preview: Preview = url === undefined
        ? { _tag: "None" }
        : { _tag: "Command", command: url, timeout: undefined }
      return Effect.succeed(preview)
    },
    run: (args, ctx) => fetchUrl(args.url, settings, ctx)
  })

/** web_fetch with the default settings: what shows a stored call, and the docs' table. */
export const webFetchTool: ToolRecord = webFetchToolFor(DEFAULTS)
