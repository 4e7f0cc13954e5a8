import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"

import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"

import { Changes } from "../../src/changes/Changes"
import { sweepProjectTemps } from "../../src/changes/Checkpoints"
import { defaultConfig } from "../../src/config/ConfigSchema"
import { isTempName } from "../../src/lib/DurableFiles"
import { Keeper } from "../../src/sessions/Keeper"
import { keeperAndChanges } from "../support/layers"
import { deadPid } from "../support/leftTemps"
import { tempDir } from "../support/processes"

const layer = () => {
  const config = { ...defaultConfig(), sessions: { ...defaultConfig().sessions, enabled: true } }
  return keeperAndChanges(config)
}

/** Every temporary file of mm anywhere under `dir`, `.mm/` included. */
const tempsUnder = (dir: string): Array<string> =>
  (fs.readdirSync(dir, { recursive: true }) as Array<string>).filter((name) => isTempName(path.basename(name)))

/** A temporary file that writer `pid` left in `dir`. */
const leftTemp = (dir: string, name: string, pid: number): string => {
  fs.mkdirSync(dir, { recursive: true })
  const file = path.join(dir, `.${name}.${pid}.0badf00d.tmp`)
  fs.writeFileSync(file, "half")
  return file
}

/** Turn 1 rewrote `src/a.txt` and `src/b.txt` ("one" to "two"), recorded as mm's file tools record it. */
const turnOfTwoFiles = (project: string) =>
  Effect.gen(function*() {
    const conversation = yield* Effect.flatMap(Keeper, (keeper) => keeper.open(project, { createFile: "now" }))
    const changes = yield* Changes
    fs.mkdirSync(path.join(project, "src"), { recursive: true })
    for (const name of ["a.txt", "b.txt"]) {
      const file = path.join(project, "src", name)
      fs.writeFileSync(file, "one\n")
      yield* changes.recorder(conversation, { turn: 1, question: "q", toolCallId: name }, () => Effect.void)({
        file,
        content: "two\n"
      })
      fs.writeFileSync(file, "two\n")
    }
    return { conversation, changes }
  })

describe("/undo leaves no temporary file", () => {
  it.effect("when it restores: its temporary files went through .mm/tmp/, left empty", () =>
    Effect.gen(function*() {
      const project = tempDir("mm-undo-litter-")
      const { changes, conversation } = yield* turnOfTwoFiles(project)
      const plan = yield* changes.plan(conversation, 1)
      const report = yield* changes.apply(conversation, plan!, new Set())
      expect(report.restored).toEqual(["src/a.txt", "src/b.txt"])
      expect(fs.readFileSync(path.join(project, "src", "a.txt"), "utf8")).toBe("one\n")
      expect(fs.readdirSync(path.join(project, ".mm", "tmp"))).toEqual([])
      expect(tempsUnder(project)).toEqual([])
    }).pipe(Effect.provide(layer())))

  it.effect("when a file cannot be written: it is left as it is, with no temporary file", () =>
    Effect.gen(function*() {
      const project = tempDir("mm-undo-litter-")
      const { changes, conversation } = yield* turnOfTwoFiles(project)
      const plan = yield* changes.plan(conversation, 1)
      const src = path.join(project, "src")
      try {
        execFileSync("chattr", ["+i", src], { stdio: "pipe" })
      } catch (cause) {
        console.log(`skipped: cannot make a directory immutable here (${String(cause).trim()})`)
        return
      }
      try {
        const report = yield* changes.apply(conversation, plan!, new Set())
        expect(report.left.map((left) => [left.path, left.reason])).toEqual([
          ["src/a.txt", expect.stringMatching(/EPERM|not permitted/)],
          ["src/b.txt", expect.stringMatching(/EPERM|not permitted/)]
        ])
        expect(fs.readFileSync(path.join(src, "a.txt"), "utf8")).toBe("two\n")
        expect(fs.readdirSync(path.join(project, ".mm", "tmp"))).toEqual([])
        expect(tempsUnder(project)).toEqual([])
      } finally {
        execFileSync("chattr", ["-i", src])
      }
    }).pipe(Effect.provide(layer())))
})

describe("the sweep at start", () => {
  it.effect("removes dead writers' temporary files from .mm/tmp/, .mm/checkpoints/ and the project's sessions", () =>
    Effect.gen(function*() {
      const project = tempDir("mm-start-sweep-")
      const elsewhere = tempDir("mm-shared-sessions-")
      const dead = deadPid()
      const gone = [
        leftTemp(path.join(project, ".mm", "tmp"), "a.txt", dead),
        leftTemp(path.join(project, ".mm", "checkpoints"), "0".repeat(64), dead),
        leftTemp(path.join(project, ".mm", "sessions"), "20261130-100000-0123abcd.json", dead)
      ]
      const live = leftTemp(path.join(project, ".mm", "tmp"), "b.txt", process.ppid)
      const removed = yield* sweepProjectTemps(project, path.join(project, ".mm", "sessions"))
      expect(removed).toBe(3)
      expect(gone.filter((file) => fs.existsSync(file))).toEqual([])
      expect(fs.existsSync(live)).toBe(true)
      // a sessions directory outside the project (shared by several) is left to the store's own sweep
      const shared = leftTemp(elsewhere, "20261130-100000-0123abcd.json", dead)
      expect(yield* sweepProjectTemps(project, elsewhere)).toBe(0)
      expect(fs.existsSync(shared)).toBe(true)
      // a project without .mm/: nothing to do, nothing made
      const bare = tempDir("mm-start-sweep-")
      expect(yield* sweepProjectTemps(bare, path.join(bare, ".mm", "sessions"))).toBe(0)
      expect(fs.readdirSync(bare)).toEqual([])
    }))
})
