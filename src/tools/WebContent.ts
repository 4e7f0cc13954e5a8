// What `web_fetch` makes of an answer: HTML as Markdown, JSON and other text as it is (decoded
// with its charset), anything else refused with its content type; the one line that heads the
// result (`200 OK https://final.url (text/html → Markdown, 12.3 kB)`).
import { squashed } from "../lib/OneLine"
import type { Fetched } from "./WebRequest"

/** The media type and charset of a Content-Type header. */
export const contentTypeOf = (header: string): { readonly mime: string; readonly charset: string | undefined } => {
  const [mime, ...params] = header.split(";")
  const charset = params.map((param) => /^\s*charset\s*=\s*"?([^";\s]+)"?/i.exec(param)?.[1]).find((c) =>
    c !== undefined
  )
  return { mime: mime.trim().toLowerCase(), charset }
}

type Kind = "html" | "text" | undefined

const kindOf = (mime: string): Kind => {
  if (mime === "text/html" || mime === "application/xhtml+xml") return "html"
  if (mime.startsWith("text/") || mime === "application/json" || mime.endsWith("+json")) return "text"
  // some servers name JavaScript, XML or YAML this way: text all the same
  if (/^application\/(javascript|ecmascript|xml|yaml|x-yaml|toml|x-sh)$/.test(mime) || mime.endsWith("+xml")) {
    return "text"
  }
  return undefined
}

/** The charset a page names in its first bytes (`<meta charset="…">`), for HTML sent without one. */
const metaCharset = (body: Buffer): string | undefined =>
  /<meta[^>]+charset\s*=\s*["']?([\w-]+)/i.exec(body.subarray(0, 2048).toString("latin1"))?.[1]

/** The body as text, in its charset (UTF-8 when it names none, or one this Node does not know). */
const decodeText = (body: Buffer, charset: string | undefined): string => {
  try {
    return new TextDecoder(charset ?? "utf-8").decode(body)
  } catch {
    return new TextDecoder("utf-8").decode(body)
  }
}

/** `12.3 kB`, `512 B`, `5.0 MB`. */
export const sizeText = (bytes: number): string =>
  bytes < 1000
    ? `${bytes} B`
    : bytes < 1_000_000
    ? `${(bytes / 1000).toFixed(1)} kB`
    : `${(bytes / 1_000_000).toFixed(1)} MB`

/** The head line's status: `200 OK`, `404 Not Found`. */
const statusOf = (fetched: Fetched): string =>
  `${fetched.status}${fetched.statusText === "" ? "" : ` ${fetched.statusText}`}`

/** What the answer gives the model: a failed result's one line, or the head line and the text. */
export type Reading =
  | { readonly _tag: "Text"; readonly head: string; readonly text: string }
  | { readonly _tag: "Refused"; readonly line: string }

const cutNote = (
  fetched: Fetched
): string => (fetched.cut ? `, cut at ${fetched.body.length} bytes (webFetch.maxBytes)` : "")

/** Loads the request and the converter (dist/mm-web.cjs once built) at the first fetch. */
let webLibs: Promise<typeof import("./WebLibs")> | undefined
export const loadWebLibs = (): Promise<typeof import("./WebLibs")> => (webLibs ??= import("./WebLibs"))

/** The answer read for the model: HTML as Markdown, text as it is; a status of 400 or more, or another type, refused. */
export const readAnswer = async (fetched: Fetched): Promise<Reading> => {
  const { charset, mime } = contentTypeOf(fetched.contentType)
  const kind = kindOf(mime)
  const head = `${statusOf(fetched)} ${fetched.url}`
  if (fetched.status >= 400) {
    const start = kind === undefined ? "" : squashed(await asText(fetched, kind, charset), 300)
    return { _tag: "Refused", line: `${head}${start === "" ? "" : `: ${start}`}` }
  }
  if (kind === undefined) {
    return {
      _tag: "Refused",
      line: `${head} is ${mime === "" ? "of no content type" : mime}, not text: only HTML, JSON and text are read`
    }
  }
  const text = await asText(fetched, kind, charset)
  const shown = kind === "html" ? `${mime} → Markdown` : mime
  return { _tag: "Text", head: `${head} (${shown}, ${sizeText(fetched.body.length)}${cutNote(fetched)})`, text }
}

const asText = async (fetched: Fetched, kind: "html" | "text", charset: string | undefined): Promise<string> => {
  if (kind === "text") return decodeText(fetched.body, charset)
  const html = decodeText(fetched.body, charset ?? metaCharset(fetched.body))
  const libs = await loadWebLibs()
  return libs.htmlToMarkdown(html, fetched.url)
}
