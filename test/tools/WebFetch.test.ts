import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as http from "node:http"
import * as https from "node:https"
import type { AddressInfo } from "node:net"
import * as zlib from "node:zlib"

import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"

import { FileAccessDisk } from "../../src/tools/FileAccess"
import type { ToolResult } from "../../src/tools/Tool"
import { type WebFetchSettings, webFetchToolFor } from "../../src/tools/WebFetch"
import { tempDir } from "../support/processes"
import { until } from "../support/until"

/** What the test server saw: each request's path and headers, and whether the big answer's client went away. */
interface Seen {
  readonly requests: Array<{ readonly path: string; readonly headers: http.IncomingHttpHeaders }>
  bigClosed: boolean
  bigSent: number
}

const PAGE = `<!doctype html><html><head><title>T</title><style>body { color: red }</style>
<script>var secret = "script text"</script></head>
<body><nav><a href="/home">Site menu</a></nav><header>Banner text</header>
<main><h1>Getting started</h1><p>Read the <a href="https://example.org/guide">guide</a> first.</p>
<h2>Install</h2><pre><code class="language-sh">npm install thing
thing --help</code></pre></main>
<footer>Footer text</footer></body></html>`

const BIG = 50 * 1024 * 1024

const seen: Seen = { requests: [], bigClosed: false, bigSent: 0 }
let server: http.Server
let base = ""

const route = (request: http.IncomingMessage, response: http.ServerResponse): void => {
  const url = new URL(request.url ?? "/", base)
  seen.requests.push({ path: url.pathname, headers: request.headers })
  const hop = /^\/hop\/(\d+)$/.exec(url.pathname)
  if (hop !== null) {
    const n = Number(hop[1])
    response.writeHead(302, { location: n === 0 ? "/page" : `/hop/${n - 1}` }).end()
    return
  }
  switch (url.pathname) {
    case "/page":
      response.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(PAGE)
      return
    case "/gzip":
      response.writeHead(200, { "content-type": "text/plain", "content-encoding": "gzip" })
        .end(zlib.gzipSync("packed text\n"))
      return
    case "/latin1":
      response.writeHead(200, { "content-type": "text/plain; charset=iso-8859-1" }).end(
        Buffer.from([0x63, 0x61, 0x66, 0xe9])
      )
      return
    case "/data.json":
      response.writeHead(200, { "content-type": "application/json" }).end("{\"a\": [1, 2],\n \"b\": \"x\"}")
      return
    case "/image.png":
      response.writeHead(200, { "content-type": "image/png" }).end(Buffer.from([0x89, 0x50, 0x4e, 0x47]))
      return
    case "/missing":
      response.writeHead(404, { "content-type": "text/plain" }).end("no such page here")
      return
    case "/to-private":
      response.writeHead(301, { location: "http://10.0.0.1/secret" }).end()
      return
    case "/to-loopback6":
      response.writeHead(302, { location: `http://[::1]:${url.port || "80"}/page` }).end()
      return
    case "/to-www":
      response.writeHead(302, { location: `http://www.localhost:${url.port || "80"}/page` }).end()
      return
    case "/to-other-host":
      response.writeHead(302, { location: `http://localhost:${url.port || "80"}/page` }).end()
      return
    case "/to-file":
      response.writeHead(302, { location: "file:///etc/passwd" }).end()
      return
    case "/slow":
      // headers, then nothing: only the timeout ends it
      response.writeHead(200, { "content-type": "text/plain" })
      response.write("start\n")
      return
    case "/big": {
      response.writeHead(200, { "content-type": "text/plain" })
      const chunk = Buffer.alloc(64 * 1024, "x")
      response.on("close", () => {
        seen.bigClosed = true
      })
      const pump = (): void => {
        while (seen.bigSent < BIG && !response.destroyed) {
          seen.bigSent += chunk.length
          if (!response.write(chunk)) {
            response.once("drain", pump)
            return
          }
        }
        if (!response.destroyed) response.end()
      }
      pump()
      return
    }
    default:
      response.writeHead(500).end()
  }
}

beforeAll(async () => {
  server = http.createServer(route)
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
})

afterAll(async () => {
  server.closeAllConnections()
  await new Promise((resolve) => server.close(resolve))
})

const SETTINGS: WebFetchSettings = { allowPrivate: ["127.0.0.1"], maxBytes: 5 * 1024 * 1024, timeout: 30 }

const fetchWith = (url: string, settings: Partial<WebFetchSettings> = {}, maxOutput = 16_000) =>
  Effect.gen(function*() {
    const prepared = webFetchToolFor({ ...SETTINGS, ...settings }).prepare(JSON.stringify({ url }))
    if (Either.isLeft(prepared)) return { output: `(refused) ${prepared.left}`, failed: true } as ToolResult
    return yield* prepared.right.run({ cwd: process.cwd(), maxOutput }).pipe(Effect.provide(FileAccessDisk))
  })

describe("web_fetch", () => {
  it.effect("gives an HTML page's main content as Markdown: headings, links and a code block", () =>
    Effect.gen(function*() {
      const result = yield* fetchWith(`${base}/page`)
      expect(result.failed).toBe(false)
      const [head, ...rest] = result.output.split("\n")
      expect(head).toMatch(new RegExp(`^200 OK ${base}/page \\(text/html → Markdown, \\d+ B\\)$`))
      const text = rest.join("\n")
      expect(text).toContain("# Getting started")
      expect(text).toContain("## Install")
      expect(text).toContain("[guide](https://example.org/guide)")
      expect(text).toContain("```sh\nnpm install thing\nthing --help\n```")
      for (const dropped of ["Site menu", "Banner text", "Footer text", "script text", "color: red"]) {
        expect(text).not.toContain(dropped)
      }
    }))

  it.effect("gives JSON and text as they are, decoded with their charset and encoding", () =>
    Effect.gen(function*() {
      expect((yield* fetchWith(`${base}/data.json`)).output).toBe(
        `200 OK ${base}/data.json (application/json, 24 B)\n{"a": [1, 2],\n "b": "x"}`
      )
      expect((yield* fetchWith(`${base}/latin1`)).output).toMatch(/\ncafé$/)
      expect((yield* fetchWith(`${base}/gzip`)).output).toMatch(/\npacked text\n$/)
    }))

  it.effect("refuses what is not text, and says a 404 in one line with the body's start", () =>
    Effect.gen(function*() {
      expect(yield* fetchWith(`${base}/image.png`)).toEqual({
        output: `200 OK ${base}/image.png is image/png, not text: only HTML, JSON and text are read`,
        failed: true
      })
      expect(yield* fetchWith(`${base}/missing`)).toEqual({
        output: `404 Not Found ${base}/missing: no such page here`,
        failed: true
      })
    }))

  it.effect("follows a chain of redirects, and refuses a sixth", () =>
    Effect.gen(function*() {
      const five = yield* fetchWith(`${base}/hop/4`)
      expect(five.output.split("\n")[0]).toMatch(new RegExp(`^200 OK ${base}/page `))
      const before = seen.requests.length
      const six = yield* fetchWith(`${base}/hop/5`)
      expect(six).toEqual({
        output: `${base}/hop/5: more than 5 redirects; the last one led to /page`,
        failed: true
      })
      // the sixth location was never asked for
      expect(seen.requests.slice(before).map((request) => request.path)).toEqual([
        "/hop/5",
        "/hop/4",
        "/hop/3",
        "/hop/2",
        "/hop/1",
        "/hop/0"
      ])
    }))

  it.effect("refuses a redirect to another private address, an IPv6 loopback or another scheme", () =>
    Effect.gen(function*() {
      const private10 = yield* fetchWith(`${base}/to-private`)
      expect(private10).toEqual({
        output: `${base}/to-private: redirected to http://10.0.0.1/secret: 10.0.0.1 is a private address, ` +
          "not reached unless webFetch.allowPrivate allows it",
        failed: true
      })
      const loopback6 = yield* fetchWith(`${base}/to-loopback6`)
      expect(loopback6.failed).toBe(true)
      expect(loopback6.output).toContain("::1 is a loopback address, not reached unless webFetch.allowPrivate")
      expect((yield* fetchWith(`${base}/to-file`)).output).toContain(
        "redirected to file:///etc/passwd: only http and https URLs are fetched, not file:"
      )
    }))

  it.effect("does not follow a redirect to another host: the model is told the URL, whose host is asked for", () =>
    Effect.gen(function*() {
      const port = new URL(base).port
      expect(yield* fetchWith(`${base}/to-other-host`)).toEqual({
        output: `${base}/to-other-host: redirected to http://localhost:${port}/page, on another host: ` +
          "not followed; fetch that URL to read it (its host is asked for)",
        failed: true
      })
      // adding or dropping www. stays on the site: followed (it may then not resolve here)
      const www = yield* fetchWith(`http://localhost:${port}/to-www`)
      expect(www.output).not.toContain("on another host")
      expect(www.output).toMatch(/www\.localhost/)
    }))

  it.effect("refuses loopback without allowPrivate, and a named host that resolves to it", () =>
    Effect.gen(function*() {
      const port = new URL(base).port
      const before = seen.requests.length
      expect((yield* fetchWith(`${base}/page`, { allowPrivate: false })).output).toBe(
        `${base}/page: 127.0.0.1 is a loopback address, not reached unless webFetch.allowPrivate allows it`
      )
      const named = yield* fetchWith(`http://localhost:${port}/page`, { allowPrivate: false })
      expect(named.failed).toBe(true)
      expect(named.output).toMatch(/localhost \((127\.0\.0\.1|::1)\) is a loopback address/)
      // no request reached the server for either
      expect(seen.requests.length).toBe(before)
    }))

  it.effect("allowPrivate takes CIDR ranges, and true for every address", () =>
    Effect.gen(function*() {
      for (const allowPrivate of [["127.0.0.0/8"], ["::ffff:127.0.0.0/104"], true] as const) {
        expect((yield* fetchWith(`${base}/data.json`, { allowPrivate })).failed).toBe(false)
      }
      expect((yield* fetchWith(`${base}/data.json`, { allowPrivate: ["10.0.0.0/8", "::1"] })).output).toContain(
        "127.0.0.1 is a loopback address"
      )
    }))

  it.effect("refuses other schemes and credentials before anything is sent", () =>
    Effect.gen(function*() {
      expect((yield* fetchWith("file:///etc/passwd")).output).toBe(
        "(refused) parameter \"url\": only http and https URLs are fetched, not file:"
      )
      expect((yield* fetchWith(`http://me:pw@127.0.0.1:1/`)).output).toBe(
        "(refused) parameter \"url\": a URL with a user name or password is not fetched"
      )
      expect((yield* fetchWith("not a url")).output).toBe("(refused) parameter \"url\": not an absolute URL: not a url")
    }))

  it.effect("cuts a 50 MB answer at maxBytes and stops reading it", () =>
    Effect.gen(function*() {
      const result = yield* fetchWith(`${base}/big`, { maxBytes: 1_000_000 }, 2000)
      expect(result.failed).toBe(false)
      expect(result.output.split("\n")[0]).toBe(
        `200 OK ${base}/big (text/plain, 1.0 MB, cut at 1000000 bytes (webFetch.maxBytes))`
      )
      expect(result.output).toMatch(/characters cut/)
      yield* Effect.promise(() => until(() => seen.bigClosed, "the server to see the client go"))
      expect(seen.bigSent).toBeLessThan(BIG)
    }))

  it.effect("says when the whole fetch took longer than its timeout", () =>
    Effect.gen(function*() {
      expect(yield* fetchWith(`${base}/slow`, { timeout: 0.5 })).toEqual({
        output: `${base}/slow: timed out after 0.5 s (webFetch.timeout)`,
        failed: true
      })
    }))

  it.effect("says a refused connection and an unknown host in one line", () =>
    Effect.gen(function*() {
      const closed = http.createServer()
      yield* Effect.promise(() => new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve)))
      const port = (closed.address() as AddressInfo).port
      yield* Effect.promise(() => new Promise((resolve) => closed.close(resolve)))
      expect(yield* fetchWith(`http://127.0.0.1:${port}/`)).toEqual({
        output: `http://127.0.0.1:${port}/: 127.0.0.1:${port} refused the connection`,
        failed: true
      })
      const unknown = yield* fetchWith("http://no-such-host.invalid/")
      expect(unknown).toEqual({
        output: "http://no-such-host.invalid/: cannot resolve no-such-host.invalid",
        failed: true
      })
    }))

  it.effect("sends no cookie, no authorization, and says it is mm", () =>
    Effect.gen(function*() {
      yield* fetchWith(`${base}/data.json`)
      const last = seen.requests[seen.requests.length - 1].headers
      expect(last.cookie).toBeUndefined()
      expect(last.authorization).toBeUndefined()
      expect(last["user-agent"]).toMatch(/^mm\/\S+$/)
      expect(last.accept).toMatch(/^text\/markdown, text\/html/)
    }))

  it.effect("over https: a certificate it cannot trust is one line, and a refused address is never connected to", () =>
    Effect.gen(function*() {
      // a self-signed certificate, made for this test
      const dir = tempDir("mm-web-tls-")
      execFileSync("openssl", [
        "req",
        "-x509",
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:prime256v1",
        "-nodes",
        "-keyout",
        `${dir}/key.pem`,
        "-out",
        `${dir}/cert.pem`,
        "-days",
        "2",
        "-subj",
        "/CN=localhost"
      ], { stdio: "ignore" })
      let connections = 0
      const tls = https.createServer(
        { key: fs.readFileSync(`${dir}/key.pem`), cert: fs.readFileSync(`${dir}/cert.pem`) },
        (_request, response) => response.end("secret")
      )
      tls.on("connection", () => connections++)
      yield* Effect.promise(() => new Promise<void>((resolve) => tls.listen(0, "127.0.0.1", resolve)))
      const port = (tls.address() as AddressInfo).port
      const untrusted = yield* fetchWith(`https://127.0.0.1:${port}/`)
      expect(untrusted.failed).toBe(true)
      expect(untrusted.output).toMatch(
        new RegExp(`^https://127\\.0\\.0\\.1:${port}/: 127\\.0\\.0\\.1:${port}: self-signed certificate`)
      )
      expect(untrusted.output).not.toContain("\n")
      expect(connections).toBe(1)
      const refused = yield* fetchWith(`https://localhost:${port}/`, { allowPrivate: false })
      expect(refused.output).toMatch(/localhost \((127\.0\.0\.1|::1)\) is a loopback address/)
      expect(connections).toBe(1)
      tls.closeAllConnections()
      yield* Effect.promise(() => new Promise((resolve) => tls.close(resolve)))
    }))
})
