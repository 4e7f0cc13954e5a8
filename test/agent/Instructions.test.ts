import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"

import { afterAll, beforeAll, beforeEach, describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"

import { localDate } from "../../src/agent/Environment"
import { configuredSystem } from "../../src/agent/SystemPrompt"
import { DEFAULT_SYSTEM } from "../../src/config/DefaultSystem"
import { gitDirty, gitDirtyWithin } from "../../src/lib/Git"
import { Keeper } from "../../src/sessions/Keeper"
import * as MemorySessionStore from "../../src/sessions/MemorySessionStore"
import { builtinRegistry } from "../../src/tools/Registry"
import { type FakeModelServer, startFakeModelServer } from "../support/FakeModelServer"
import { type ConfigOverrides, coreLayer, runTurn, testConfig } from "../support/layers"
import { tempDir } from "../support/processes"

const git = (cwd: string, ...args: Array<string>) => execFileSync("git", args, { cwd, stdio: "ignore" })

describe("the project's instructions and the environment in the system message", () => {
  let server: FakeModelServer
  const userConfig = tempDir("mm-xdg-")
  beforeAll(async () => {
    server = await startFakeModelServer()
  })
  // the user-level file is read from $XDG_CONFIG_HOME/mm, never from the real home here (after
  // test/support/setup.ts has given the test a directory of its own)
  beforeEach(() => {
    process.env.XDG_CONFIG_HOME = userConfig
  })
  afterAll(() => server.close())

  const layer = (overrides: ConfigOverrides = {}) =>
    coreLayer(testConfig(server.url, { sessions: { enabled: true }, ...overrides }), MemorySessionStore.layer())

  const open = (cwd: string) => Effect.flatMap(Keeper, (keeper) => keeper.open(cwd, { createFile: "later" }))

  /** The system message of the last request the model server received. */
  const lastSystem = (): string => server.completions().at(-1)!.body.messages[0].content as string

  it.live("the user's, the root's and a nested AGENTS.md, in that order, after `system`; the environment lines", () =>
    Effect.gen(function*() {
      const root = tempDir("mm-instr-")
      git(root, "init", "-q", "-b", "trunk")
      fs.mkdirSync(path.join(userConfig, "mm"), { recursive: true })
      fs.writeFileSync(path.join(userConfig, "mm", "AGENTS.md"), "USER RULES: answer in English.\n")
      fs.writeFileSync(path.join(root, "AGENTS.md"), "ROOT RULES: run npm test.\n")
      fs.mkdirSync(path.join(root, "pkg", "sub"), { recursive: true })
      fs.writeFileSync(path.join(root, "pkg", "AGENTS.md"), "PKG RULES: tabs, not spaces.\n")
      const cwd = path.join(root, "pkg", "sub")
      server.push({ text: "ok" })
      yield* runTurn(yield* open(cwd), "hi")
      const system = lastSystem()
      // mm's own prompt, naming the tools after its first line
      expect(system.startsWith(configuredSystem(DEFAULT_SYSTEM, builtinRegistry.sentence))).toBe(true)
      expect(system.split("\n")[1]).toBe(builtinRegistry.sentence)
      const at = (text: string) => system.indexOf(text)
      expect(at(`# Instructions from ~/`)).toBe(-1) // XDG_CONFIG_HOME is not under the home: shown whole
      expect(at(`# Instructions from ${path.join(userConfig, "mm", "AGENTS.md")}\n\nUSER RULES`)).toBeGreaterThan(0)
      // files above the working directory are named by their whole path
      expect(at(`# Instructions from ${root}/AGENTS.md\n\nROOT RULES: run npm test.`)).toBeGreaterThan(at("USER RULES"))
      expect(at(`# Instructions from ${root}/pkg/AGENTS.md\n\nPKG RULES: tabs, not spaces.`)).toBeGreaterThan(
        at("ROOT RULES")
      )
      expect(system).toContain(`- working directory: ${cwd}\n`)
      expect(system).toContain(`- platform: ${process.platform} `)
      expect(system).toContain(`- date: ${localDate(new Date())}\n`)
      expect(system).toMatch(/^- shell: .+ \(the bash tool runs bash\)$/m)
      expect(system).toMatch(/^- git branch: trunk( \(uncommitted changes\))?$/m)
      expect(at("# Environment")).toBeGreaterThan(at("PKG RULES"))
      fs.rmSync(path.join(userConfig, "mm"), { recursive: true })
    }).pipe(Effect.provide(layer())))

  it.live("each turn takes the files as they are now, as a resumed session does", () =>
    Effect.gen(function*() {
      const cwd = tempDir("mm-instr-")
      fs.writeFileSync(path.join(cwd, "AGENTS.md"), "FIRST VERSION\n")
      server.push({ text: "ok" }, { text: "ok again" })
      const conversation = yield* open(cwd)
      yield* runTurn(conversation, "one")
      expect(lastSystem()).toContain("# Instructions from AGENTS.md\n\nFIRST VERSION")
      fs.writeFileSync(path.join(cwd, "AGENTS.md"), "SECOND VERSION, a little longer\n")
      yield* runTurn(conversation, "two")
      expect(lastSystem()).toContain("SECOND VERSION")
      expect(lastSystem()).not.toContain("FIRST VERSION")
      // without a git repository: no branch line
      expect(lastSystem()).not.toContain("git branch")
    }).pipe(Effect.provide(layer())))

  it.live("a resumed session takes the files as they are now, not those of its first turns", () =>
    Effect.gen(function*() {
      const cwd = tempDir("mm-instr-")
      fs.writeFileSync(path.join(cwd, "AGENTS.md"), "OLD RULES\n")
      server.push({ text: "ok" }, { text: "ok again" })
      const first = yield* open(cwd)
      yield* runTurn(first, "one")
      const id = yield* first.id
      fs.writeFileSync(path.join(cwd, "AGENTS.md"), "NEW RULES\n")
      const resumed = yield* Effect.flatMap(Keeper, (keeper) => keeper.load(cwd, id))
      yield* runTurn(resumed, "two")
      const request = server.completions().at(-1)!.body
      expect(request.messages.map((m: { content: string }) => m.content)).toContain("one")
      expect(lastSystem()).toContain("# Instructions from AGENTS.md\n\nNEW RULES")
      expect(JSON.stringify(request.messages)).not.toContain("OLD RULES")
    }).pipe(Effect.provide(layer())))

  it.live("a 200 KB AGENTS.md is cut at 32 KB with one line saying so", () =>
    Effect.gen(function*() {
      const cwd = tempDir("mm-instr-")
      const line = "Keep every function short and name it after what it does.\n"
      fs.writeFileSync(path.join(cwd, "AGENTS.md"), line.repeat(Math.ceil(204800 / line.length)).slice(0, 204800))
      server.push({ text: "ok" })
      yield* runTurn(yield* open(cwd), "hi")
      const system = lastSystem()
      expect(system).toMatch(/^\[AGENTS\.md is 204800 bytes; only its first \d+ bytes are included\]$/m)
      expect(system.length).toBeLessThan(34 * 1024)
      expect(system.length).toBeGreaterThan(31 * 1024)
    }).pipe(Effect.provide(layer())))

  it.live("`instructions` names other files, or turns them off", () =>
    Effect.gen(function*() {
      const cwd = tempDir("mm-instr-")
      fs.writeFileSync(path.join(cwd, "AGENTS.md"), "AGENTS TEXT\n")
      fs.writeFileSync(path.join(cwd, "CLAUDE.md"), "CLAUDE TEXT\n")
      server.push({ text: "ok" })
      yield* Effect.flatMap(open(cwd), (c) => runTurn(c, "hi")).pipe(
        Effect.provide(layer({ instructions: ["CLAUDE.md"] }))
      )
      expect(lastSystem()).toContain("# Instructions from CLAUDE.md\n\nCLAUDE TEXT")
      expect(lastSystem()).not.toContain("AGENTS TEXT")
      server.push({ text: "ok" })
      yield* Effect.flatMap(open(cwd), (c) => runTurn(c, "hi")).pipe(Effect.provide(layer({ instructions: false })))
      expect(lastSystem()).not.toContain("# Instructions")
    }))

  it("git status says whether the tree has uncommitted changes", async () => {
    const root = tempDir("mm-git-")
    git(root, "init", "-q")
    expect(await gitDirty(root)).toBe(false)
    fs.writeFileSync(path.join(root, "new.txt"), "x\n")
    expect(await gitDirty(root)).toBe(true)
    expect(await gitDirty(tempDir("mm-nogit-"))).toBe(undefined)
  })

  it("a git status slower than the wait is not waited for: the turn goes on without it", async () => {
    const root = tempDir("mm-git-")
    git(root, "init", "-q")
    // a git that answers only after it has slept, and leaves a mark when it does
    const bin = tempDir("mm-slow-git-")
    const mark = path.join(bin, "answered")
    fs.writeFileSync(path.join(bin, "git"), `#!/bin/sh\nsleep 3\ntouch ${mark}\necho " M file"\n`, { mode: 0o755 })
    const saved = process.env.PATH
    process.env.PATH = `${bin}:${saved}`
    try {
      expect(await gitDirtyWithin(root, 50)).toBe(undefined)
      expect(fs.existsSync(mark)).toBe(false)
    } finally {
      process.env.PATH = saved
    }
  })
})
