// web_fetch through the built mm: `-p --yes` fetches a page served on 127.0.0.1 (allowed for the
// test through agent.yaml) and the model reads it as Markdown; `-p` alone, with nobody to ask,
// refuses the call before anything is sent.
import * as http from "node:http"
import type { AddressInfo } from "node:net"

import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"

import { type FakeModelServer, startFakeModelServer } from "../../support/FakeModelServer"
import { configFor, runMm, tempProject } from "../../support/MmProcess"

const KEY = "sk-e2e-key-that-must-stay-home"

describe("web_fetch in print mode", () => {
  let model: FakeModelServer
  let pages: http.Server
  let pagesUrl = ""
  const seen: Array<{ readonly url: string; readonly headers: http.IncomingHttpHeaders }> = []
  beforeAll(async () => {
    model = await startFakeModelServer()
    pages = http.createServer((request, response) => {
      seen.push({ url: request.url ?? "", headers: request.headers })
      if (request.url === "/moved") {
        response.writeHead(302, { location: "/docs" }).end()
        return
      }
      response.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(
        "<html><body><nav>menu</nav><main><h1>Widget docs</h1>" +
          "<p>Call <code>widget()</code> with a <a href=\"/name\">name</a>.</p></main></body></html>"
      )
    })
    await new Promise<void>((resolve) => pages.listen(0, "127.0.0.1", resolve))
    pagesUrl = `http://127.0.0.1:${(pages.address() as AddressInfo).port}`
  })
  afterAll(async () => {
    model.close()
    pages.closeAllConnections()
    await new Promise((resolve) => pages.close(resolve))
  })

  const project = () =>
    tempProject(
      configFor(model.url, ["webFetch:", "  enabled: true", "  allowPrivate: [127.0.0.1]"]).map((line) =>
        line.replace("permissions: allow", "permissions: ask").replace(
          "  name: fake-model",
          "  name: fake-model\n  apiKeyEnv: MM_E2E_KEY"
        )
      )
    )

  const toolResults = () =>
    model.completions().at(-1)!.body.messages.filter((m: { role: string }) => m.role === "tool")
      .map((m: { content: string }) => m.content)

  it("with --yes: the page, redirect followed, reaches the model as Markdown, without the key", async () => {
    model.push(
      { toolCalls: [{ id: "f", name: "web_fetch", arguments: { url: `${pagesUrl}/moved` } }] },
      { text: "widget() takes a name" }
    )
    const { code, stdout } = await runMm(project(), [], ["-p", "--yes", "how is widget called?"], { MM_E2E_KEY: KEY })
    expect(code).toBe(0)
    expect(stdout).toBe("widget() takes a name\n")
    expect(toolResults()).toEqual([
      `200 OK ${pagesUrl}/docs (text/html → Markdown, 140 B)\n# Widget docs\n\nCall \`widget()\` with a [name](${pagesUrl}/name).`
    ])
    expect(seen.map((request) => request.url)).toEqual(["/moved", "/docs"])
    for (const { headers } of seen) {
      expect(headers.authorization).toBeUndefined()
      expect(headers.cookie).toBeUndefined()
      expect(JSON.stringify(headers)).not.toContain(KEY)
      expect(headers["user-agent"]).toMatch(/^mm\/\d/)
    }
    // the model's own server did get it
    expect(model.completions().at(-1)!.headers.authorization).toBe(`Bearer ${KEY}`)
  })

  it("without --yes: refused as any call that needs approval, and nothing is fetched", async () => {
    const before = seen.length
    model.push(
      { toolCalls: [{ id: "f", name: "web_fetch", arguments: { url: `${pagesUrl}/docs` } }] },
      { text: "I could not read it" }
    )
    const { code, stdout } = await runMm(project(), [], ["-p", "read the docs"], { MM_E2E_KEY: KEY })
    expect(code).toBe(0)
    expect(stdout).toBe("I could not read it\n")
    expect(toolResults()).toEqual([expect.stringMatching(/^not approved/)])
    expect(seen.length).toBe(before)
  })
})
