// web_fetch in a turn of the core, against the scripted model server and a page server of the
// test's own on 127.0.0.1: given to the model only when enabled, asked once per domain, and
// never sending the model's key to the page.
import * as http from "node:http"
import type { AddressInfo } from "node:net"

import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"

import { permissionOptions } from "../../src/acp/AcpApprover"
import type { ApprovalRequest } from "../../src/approvals/Approver"
import { RememberedApprovals } from "../../src/approvals/RememberedApprovals"
import type { AgentConfig } from "../../src/config/ConfigSchema"
import { Keeper } from "../../src/sessions/Keeper"
import * as MemorySessionStore from "../../src/sessions/MemorySessionStore"
import { choicesOf, previewBlock } from "../../src/terminal/ApprovalPrompt"
import { plain } from "../../src/text/Style"
import { type FakeModelServer, startFakeModelServer } from "../support/FakeModelServer"
import { coreLayer, runTurn, type ScriptedAnswer, scriptedApprover, testConfig } from "../support/layers"
import { tempDir } from "../support/processes"

const KEY = "sk-test-key-that-must-stay-home"

describe("web_fetch in a turn", () => {
  let model: FakeModelServer
  let pages: http.Server
  let pagesUrl = ""
  const seen: Array<http.IncomingHttpHeaders> = []
  beforeAll(async () => {
    model = await startFakeModelServer()
    pages = http.createServer((request, response) => {
      seen.push(request.headers)
      response.writeHead(200, { "content-type": "text/html" })
        .end(`<html><body><article><h1>Page ${request.url}</h1><p>Some text.</p></article></body></html>`)
    })
    await new Promise<void>((resolve) => pages.listen(0, "127.0.0.1", resolve))
    pagesUrl = `http://127.0.0.1:${(pages.address() as AddressInfo).port}`
    process.env.MM_WEB_FETCH_TEST_KEY = KEY
  })
  afterAll(async () => {
    model.close()
    pages.closeAllConnections()
    await new Promise((resolve) => pages.close(resolve))
    delete process.env.MM_WEB_FETCH_TEST_KEY
  })

  const config = (enabled: boolean): AgentConfig => {
    const base = testConfig(model.url, { permissions: "ask", model: { apiKeyEnv: "MM_WEB_FETCH_TEST_KEY" } })
    return { ...base, webFetch: { ...base.webFetch, enabled, allowPrivate: ["127.0.0.1"] } }
  }

  const layer = (enabled: boolean, answers: Array<ScriptedAnswer>, asked: Array<ApprovalRequest>) =>
    coreLayer(config(enabled), MemorySessionStore.layer(), scriptedApprover(answers, asked))

  const open = (cwd: string) => Effect.flatMap(Keeper, (keeper) => keeper.open(cwd, { createFile: "later" }))

  const toolNames = (body: { tools?: Array<{ function: { name: string } }> }) =>
    (body.tools ?? []).map((tool) => tool.function.name)

  it.live("enabled: the model is given web_fetch, and an always answer covers the host for the next fetch", () => {
    const asked: Array<ApprovalRequest> = []
    return Effect.gen(function*() {
      const cwd = tempDir("mm-web-turn-")
      model.push(
        { toolCalls: [{ id: "f1", name: "web_fetch", arguments: { url: `${pagesUrl}/one` } }] },
        { toolCalls: [{ id: "f2", name: "web_fetch", arguments: { url: `${pagesUrl}/two` } }] },
        { text: "read both" }
      )
      const before = model.completions().length
      yield* runTurn(yield* open(cwd), "read the two pages")
      const requests = model.completions().slice(before)
      expect(toolNames(requests[0].body)).toContain("web_fetch")
      // the model's server got the key; the page server never did
      expect(requests[0].headers.authorization).toBe(`Bearer ${KEY}`)
      expect(seen).toHaveLength(2)
      for (const headers of seen) {
        expect(headers.authorization).toBeUndefined()
        expect(headers.cookie).toBeUndefined()
        expect(JSON.stringify(headers)).not.toContain(KEY)
      }

      // asked once, for the host, with the URL as its title and preview
      expect(asked).toHaveLength(1)
      expect(asked[0]).toMatchObject({ tool: "web_fetch", access: "network", kind: "fetch", title: `${pagesUrl}/one` })
      expect(asked[0].preview).toEqual({ _tag: "Command", command: `${pagesUrl}/one`, timeout: undefined })
      expect(asked[0].always.map((choice) => [choice.scope, choice.keep, choice.label])).toEqual([
        [{ _tag: "Domain", host: "127.0.0.1" }, "project", "fetch anything from 127.0.0.1"]
      ])
      // the terminal's question and the editor's options name the host
      expect(choicesOf(asked[0]).line).toContain("[a]lways fetch anything from 127.0.0.1")
      expect(previewBlock(asked[0], plain, 200)).toContain(
        "always: any page of 127.0.0.1 (a redirect to another host is not followed)"
      )
      expect(permissionOptions(asked[0]).map((option) => [option.name, option.kind])).toEqual([
        ["Allow once", "allow_once"],
        ["Always allow fetching from 127.0.0.1", "allow_always"],
        ["Reject", "reject_once"]
      ])
      const results = requests.at(-1)!.body.messages.filter((m: { role: string }) => m.role === "tool")
      expect(results.map((m: { content: string }) => m.content.split("\n").slice(0, 3))).toEqual([
        [`200 OK ${pagesUrl}/one (text/html → Markdown, 80 B)`, "# Page /one", ""],
        [`200 OK ${pagesUrl}/two (text/html → Markdown, 80 B)`, "# Page /two", ""]
      ])
      // remembered for the project, as /permissions lists it
      const remembered = yield* Effect.flatMap(RememberedApprovals, (store) => store.read(cwd))
      expect(remembered.scopes).toEqual([{ _tag: "Domain", host: "127.0.0.1" }])
    }).pipe(Effect.provide(layer(true, ["always"], asked)))
  })

  it.live("not enabled: web_fetch is not in the request, and a call of it is an unknown tool", () =>
    Effect.gen(function*() {
      const cwd = tempDir("mm-web-turn-")
      model.push(
        { toolCalls: [{ id: "f1", name: "web_fetch", arguments: { url: `${pagesUrl}/three` } }] },
        { text: "could not" }
      )
      const before = model.completions().length
      const pagesBefore = seen.length
      yield* runTurn(yield* open(cwd), "read the page")
      const requests = model.completions().slice(before)
      expect(toolNames(requests[0].body)).not.toContain("web_fetch")
      expect(JSON.stringify(requests[0].body)).not.toContain("web_fetch")
      const results = requests.at(-1)!.body.messages.filter((m: { role: string }) => m.role === "tool")
      expect(results).toHaveLength(1)
      expect(results[0].content).toMatch(/web_fetch/)
      expect(seen.length).toBe(pagesBefore)
    }).pipe(Effect.provide(layer(false, [], []))))
})
