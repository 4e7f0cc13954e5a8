// Reading a file that looks secret is asked even inside the project (issue 43), in every mode
// but allow: the question says why, offers an "always" for that file alone, and what is
// refused never reaches the model.
import * as fs from "node:fs"
import * as path from "node:path"

import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Ref from "effect/Ref"

import { DENIED } from "../../src/agent/ToolCalls"
import type { ApprovalRequest } from "../../src/approvals/Approver"
import type { ApprovalMode } from "../../src/approvals/SessionSettings"
import { Keeper } from "../../src/sessions/Keeper"
import * as MemorySessionStore from "../../src/sessions/MemorySessionStore"
import { type FakeModelServer, lastToolResults, startFakeModelServer } from "../support/FakeModelServer"
import {
  type ConfigOverrides,
  coreLayer,
  runTurn,
  type ScriptedAnswer,
  scriptedApprover,
  testConfig
} from "../support/layers"
import { tempDir } from "../support/processes"

const MARKER = "s3cr3t-marker-0451"

describe("reads of files that look secret", () => {
  let server: FakeModelServer
  beforeAll(async () => {
    server = await startFakeModelServer()
  })
  afterAll(() => server.close())

  const layer = (overrides: ConfigOverrides, answers: Array<ScriptedAnswer>, asked: Array<ApprovalRequest>) =>
    coreLayer(testConfig(server.url, overrides), MemorySessionStore.layer(), scriptedApprover(answers, asked))

  /** A project with a secret, a link to it under a plain name, a file of a `secrets:` glob and a plain file. */
  const project = () => {
    const cwd = tempDir("mm-secret-reads-")
    fs.writeFileSync(path.join(cwd, ".env"), `TOKEN=${MARKER}\n`)
    fs.symlinkSync(".env", path.join(cwd, "notes.txt"))
    fs.writeFileSync(path.join(cwd, "prod.tfvars"), `key = "${MARKER}"\n`)
    fs.writeFileSync(path.join(cwd, "README.md"), "plain\n")
    return cwd
  }

  const reads = [
    { id: "env", name: "read_file", arguments: { path: ".env" } },
    { id: "link", name: "read_file", arguments: { path: "notes.txt" } },
    { id: "glob", name: "read_file", arguments: { path: "prod.tfvars" } },
    { id: "grep", name: "grep", arguments: { pattern: "TOKEN", path: ".env" } },
    { id: "plain", name: "read_file", arguments: { path: "README.md" } }
  ]

  const turn = (mode: ApprovalMode) =>
    Effect.gen(function*() {
      const cwd = project()
      const conversation = yield* Effect.flatMap(Keeper, (keeper) => keeper.open(cwd, { createFile: "later" }))
      yield* Ref.update(conversation.settings, (settings) => ({ ...settings, mode }))
      server.push({ toolCalls: reads }, { text: "done" })
      yield* runTurn(conversation, "read them")
      return { cwd, results: lastToolResults(server) }
    })

  for (const mode of ["ask", "edits", "auto"] as const) {
    it.live(`mode ${mode}: each is asked with why, and a refusal keeps the secret from the model`, () => {
      const asked: Array<ApprovalRequest> = []
      return Effect.gen(function*() {
        const { results } = yield* turn(mode)
        expect(asked.map((request) => [request.toolCallId, request.kind])).toEqual([
          ["env", "read"],
          ["link", "read"],
          ["glob", "read"],
          ["grep", "search"]
        ])
        expect(asked.map((request) => request.preview)).toEqual([
          { _tag: "Secret", reason: "`.env` looks like it holds secrets" },
          { _tag: "Secret", reason: "`notes.txt` leads to `.env`, which looks like it holds secrets" },
          { _tag: "Secret", reason: "`prod.tfvars` looks like it holds secrets" },
          { _tag: "Secret", reason: "`.env` looks like it holds secrets" }
        ])
        for (const id of ["env", "link", "glob", "grep"]) expect(results[id], id).toBe(DENIED)
        expect(results.plain).toBe("plain")
        expect(JSON.stringify(server.completions().at(-1)?.body)).not.toContain(MARKER)
      }).pipe(Effect.provide(layer({ permissions: "ask", secrets: ["*.tfvars"] }, [], asked)))
    })
  }

  it.live("an \"always\" covers that file only, by its real path; the link to it is covered too", () => {
    const asked: Array<ApprovalRequest> = []
    return Effect.gen(function*() {
      const { cwd, results } = yield* turn("ask")
      expect(asked[0].always.map((choice) => choice.scope)).toEqual([
        { _tag: "File", path: fs.realpathSync(path.join(cwd, ".env")) }
      ])
      // .env: always; the link leads to the same file, so it is not asked; prod.tfvars is
      expect(asked.map((request) => request.toolCallId)).toEqual(["env", "glob"])
      expect(results.env).toBe(`TOKEN=${MARKER}`)
      expect(results.link).toBe(`TOKEN=${MARKER}`)
      expect(results.glob).toBe(DENIED)
      expect(results.grep).toBe(`.env:1: TOKEN=${MARKER}`)
    }).pipe(Effect.provide(layer({ permissions: "ask", secrets: ["*.tfvars"] }, ["always", "deny"], asked)))
  })

  it.live("permissions: allow asks nothing", () => {
    const asked: Array<ApprovalRequest> = []
    return Effect.gen(function*() {
      const { results } = yield* turn("ask")
      expect(asked).toEqual([])
      expect(results.env).toBe(`TOKEN=${MARKER}`)
      expect(results.glob).toBe(`key = "${MARKER}"`)
    }).pipe(Effect.provide(layer({ permissions: "allow", secrets: ["*.tfvars"] }, [], asked)))
  })
})
