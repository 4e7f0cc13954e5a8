// The GET behind `web_fetch`, with Node's own http and https (loaded at the first fetch): each
// hop's scheme and address checked (the address through the request's `lookup`, so the one
// checked is the one connected to), redirects followed by hand up to MAX_REDIRECTS, the body
// read up to a byte cap, the whole fetch bounded in time. Nothing of the user's is sent: no
// cookie, no Authorization, no key — only a plain User-Agent and what mm accepts.
import type * as Http from "node:http"
import type * as Https from "node:https"
import type { Readable } from "node:stream"
import type * as Zlib from "node:zlib"

import { VERSION } from "../lib/Version"
import {
  AddressRefused,
  checkedLookup,
  literalAddress,
  type PrivateAllowance,
  refusedLine,
  refusedRange
} from "../lib/WebAddress"

export const MAX_REDIRECTS = 5
/** The longest delay a timer takes: a longer one fires at once. */
const MAX_TIMER_MS = 2 ** 31 - 1

export interface FetchSettings {
  readonly allowPrivate: PrivateAllowance
  /** Bytes of the body read at most (after decompression); the rest is not read. */
  readonly maxBytes: number
  /** Seconds the whole fetch may take, redirects included. */
  readonly timeout: number
}

/** What came back: the final URL, its status, its content type and the body read (cut at the cap). */
export interface Fetched {
  readonly url: string
  readonly status: number
  readonly statusText: string
  readonly contentType: string
  readonly body: Buffer
  /** Set when the body was longer than the cap: the client stopped reading there. */
  readonly cut: boolean
}

/** A fetch that did not give a page; its message is the one line the model reads. */
export class FetchProblem extends Error {
  override readonly name = "FetchProblem"
}

let http: typeof Http | undefined
let https: typeof Https | undefined
let zlib: typeof Zlib | undefined
const nodeHttp = (): typeof Http => (http ??= require("node:http") as typeof Http)
const nodeHttps = (): typeof Https => (https ??= require("node:https") as typeof Https)
const nodeZlib = (): typeof Zlib => (zlib ??= require("node:zlib") as typeof Zlib)

export const HEADERS: Readonly<Record<string, string>> = {
  "user-agent": `mm/${VERSION}`,
  accept:
    "text/markdown, text/html;q=0.9, application/xhtml+xml;q=0.9, text/plain;q=0.8, application/json;q=0.8, */*;q=0.1",
  "accept-encoding": "gzip, deflate, br"
}

/** Why this URL may not be fetched (scheme, credentials, an address refused); undefined when it may. */
export const urlRefusal = (url: URL, allowance: PrivateAllowance): string | undefined => {
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    return `only http and https URLs are fetched, not ${url.protocol.replace(/:$/, "")}:`
  }
  if (url.username !== "" || url.password !== "") return "a URL with a user name or password is not fetched"
  const literal = literalAddress(url.hostname)
  if (literal === undefined) return undefined
  const range = refusedRange(literal, allowance)
  return range === undefined ? undefined : refusedLine(literal, range)
}

/** The body stream, decompressed as the server says it is encoded. */
const decoded = (response: Http.IncomingMessage): Readable => {
  const encoding = (response.headers["content-encoding"] ?? "").trim().toLowerCase()
  const z = encoding === "gzip" || encoding === "deflate" || encoding === "br" ? nodeZlib() : undefined
  if (z === undefined) return response
  const stream = encoding === "gzip"
    ? z.createGunzip()
    : encoding === "deflate"
    ? z.createInflate()
    : z.createBrotliDecompress()
  response.on("error", (error) => stream.destroy(error))
  return response.pipe(stream)
}

/** Reads the body up to `maxBytes`; past it, stops reading and closes the connection. */
const readBody = (response: Http.IncomingMessage, maxBytes: number): Promise<{ body: Buffer; cut: boolean }> =>
  new Promise((resolve, reject) => {
    const chunks: Array<Buffer> = []
    let size = 0
    const stream = decoded(response)
    stream.on("data", (chunk: Buffer) => {
      const room = maxBytes - size
      if (chunk.length <= room) {
        chunks.push(chunk)
        size += chunk.length
        return
      }
      chunks.push(chunk.subarray(0, room))
      stream.destroy()
      response.destroy()
      resolve({ body: Buffer.concat(chunks), cut: true })
    })
    stream.on("end", () => resolve({ body: Buffer.concat(chunks), cut: false }))
    stream.on("error", reject)
    // after "end" or a cut this settles nothing: the promise is settled already
    stream.on("close", () => reject(new FetchProblem("the connection closed before the whole answer came")))
  })

/** One GET, its address checked as it connects: the response, its body not read yet. */
const get = (url: URL, settings: FetchSettings, signal: AbortSignal): Promise<Http.IncomingMessage> =>
  new Promise((resolve, reject) => {
    const client = url.protocol === "https:" ? nodeHttps() : nodeHttp()
    const request = client.request(url, {
      method: "GET",
      headers: HEADERS,
      // a fresh connection each time: a pooled one may lead to an address checked for another name
      agent: false,
      lookup: checkedLookup(settings.allowPrivate) as unknown as Http.RequestOptions["lookup"],
      signal
    })
    request.on("response", resolve)
    request.on("error", reject)
    request.end()
  })

/** The problem a failed request is, in one line. */
const problemOf = (cause: unknown, url: URL, timedOut: boolean, seconds: number): FetchProblem => {
  // the timeout first: what it aborted fails with an AbortError of its own
  if (timedOut) return new FetchProblem(`timed out after ${seconds} s (webFetch.timeout)`)
  if (cause instanceof FetchProblem) return cause
  if (cause instanceof AddressRefused) return new FetchProblem(cause.message)
  const error = cause as NodeJS.ErrnoException
  const host = url.host
  switch (error.code) {
    case "ENOTFOUND":
    case "EAI_AGAIN":
      return new FetchProblem(`cannot resolve ${url.hostname}`)
    case "ECONNREFUSED":
      return new FetchProblem(`${host} refused the connection`)
    case "ECONNRESET":
      return new FetchProblem(`${host} closed the connection`)
    case "ABORT_ERR":
      return new FetchProblem("cancelled")
    default: {
      const message = error instanceof Error ? error.message.split("\n")[0] : String(cause)
      return new FetchProblem(
        `${host}: ${message}${error.code !== undefined && !message.includes(error.code) ? ` (${error.code})` : ""}`
      )
    }
  }
}

const isRedirect = (status: number): boolean =>
  status === 301 || status === 302 || status === 303 || status === 307 || status === 308

/**
 * What a redirect to another host says instead of following it: an "always" answer covers one
 * host, and a page of it must not lead the fetch to a host the user was never asked about.
 */
const otherHost = (url: URL): string =>
  `redirected to ${url.href}, on another host: not followed; fetch that URL to read it (its host is asked for)`

/** A host with its `www.` dropped: `python.org` and `www.python.org` are one site, which redirects between them. */
const siteOf = (hostname: string): string => hostname.replace(/^www\./, "")

/** The hops: each URL checked, each redirect followed by hand, until an answer that is not one. */
const follow = async (where: { url: URL }, settings: FetchSettings, signal: AbortSignal): Promise<Fetched> => {
  const site = siteOf(where.url.hostname)
  for (let hop = 0;; hop++) {
    const url = where.url
    const refused = urlRefusal(url, settings.allowPrivate)
    if (refused !== undefined) throw new FetchProblem(hop === 0 ? refused : `redirected to ${url.href}: ${refused}`)
    // the host the user was asked about: a redirect stays on it, or the model is told where it leads
    if (siteOf(url.hostname) !== site) throw new FetchProblem(otherHost(url))
    const response = await get(url, settings, signal)
    const status = response.statusCode ?? 0
    const location = response.headers.location
    if (isRedirect(status) && location !== undefined) {
      response.destroy()
      if (hop === MAX_REDIRECTS) {
        throw new FetchProblem(`more than ${MAX_REDIRECTS} redirects; the last one led to ${location}`)
      }
      try {
        where.url = new URL(location, url)
      } catch {
        throw new FetchProblem(`redirected to a location that is not a URL: ${location}`)
      }
      continue
    }
    const { body, cut } = await readBody(response, settings.maxBytes)
    return {
      url: url.href,
      status,
      statusText: response.statusMessage ?? "",
      contentType: response.headers["content-type"] ?? "",
      body,
      cut
    }
  }
}

/**
 * GETs `url` and reads its answer, following redirects. Rejects with a `FetchProblem` (one
 * line) for anything that is not an answer: a refused URL or address, DNS, the connection,
 * TLS, too many redirects, the timeout; `signal` cancels it.
 */
export const fetchPage = async (url: URL, settings: FetchSettings, signal: AbortSignal): Promise<Fetched> => {
  const deadline = new AbortController()
  let timedOut = false
  const timer = setTimeout(() => {
    timedOut = true
    deadline.abort()
  }, Math.min(settings.timeout * 1000, MAX_TIMER_MS))
  const cancel = () => deadline.abort()
  signal.addEventListener("abort", cancel)
  // the hop being fetched, which a problem names
  const where = { url }
  try {
    return await follow(where, settings, deadline.signal)
  } catch (cause) {
    throw problemOf(cause, where.url, timedOut, settings.timeout)
  } finally {
    clearTimeout(timer)
    signal.removeEventListener("abort", cancel)
  }
}
