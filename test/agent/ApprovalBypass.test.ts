// The bypasses of issue 22, through the whole core: each call below ran unasked before, after
// an earlier "always"; now each is asked (the scripted approver refuses it) and nothing lands
// outside the project.
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"

import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"

import type { ApprovalRequest } from "../../src/approvals/Approver"
import { previewLines } from "../../src/approvals/PreviewLines"
import { RememberedApprovals } from "../../src/approvals/RememberedApprovals"
import { Keeper } from "../../src/sessions/Keeper"
import * as MemorySessionStore from "../../src/sessions/MemorySessionStore"
import { type FakeModelServer, startFakeModelServer } from "../support/FakeModelServer"
import { coreLayer, runTurn, type ScriptedAnswer, scriptedApprover, testConfig } from "../support/layers"
import { tempDir } from "../support/processes"

describe("approvals that cannot be talked around", () => {
  let server: FakeModelServer
  beforeAll(async () => {
    server = await startFakeModelServer()
  })
  afterAll(() => server.close())

  const outsideDir = () => fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "mm-elsewhere-")))

  /** One turn of `calls`, answered by `answers`; what was asked, and the tool results. */
  const turn = (
    cwd: string,
    calls: ReadonlyArray<{ name: string; arguments: object }>,
    answers: Array<ScriptedAnswer>
  ) => {
    const asked: Array<ApprovalRequest> = []
    server.push(...calls.map((call, i) => ({ toolCalls: [{ id: `c${i}`, ...call }] })), { text: "done" })
    return Effect.gen(function*() {
      const conversation = yield* Effect.flatMap(Keeper, (keeper) => keeper.open(cwd, { createFile: "later" }))
      const events = yield* runTurn(conversation, "go")
      const results = events.flatMap((e) => (e._tag === "ToolCallFinished" ? [e.output] : []))
      const remembered = (yield* Effect.flatMap(RememberedApprovals, (r) => r.read(cwd))).scopes
      return { asked, results, remembered }
    }).pipe(
      Effect.provide(
        coreLayer(
          testConfig(server.url, { permissions: "ask" }),
          MemorySessionStore.layer(),
          scriptedApprover(answers, asked)
        )
      )
    )
  }

  it.live("an always on ls covers neither desynchronising form", () =>
    Effect.gen(function*() {
      const cwd = tempDir("mm-bypass-")
      const elsewhere = outsideDir()
      const { asked } = yield* turn(cwd, [
        { name: "bash", arguments: { command: "ls" } },
        { name: "bash", arguments: { command: `ls "$\\\n(touch ${elsewhere}/p1)"` } },
        { name: "bash", arguments: { command: `ls $'\\'' ; touch ${elsewhere}/p2 ; echo \\'` } }
      ], ["always", "deny", "deny"])
      expect(asked.map((a) => a.toolCallId)).toEqual(["c0", "c1", "c2"])
      expect(fs.readdirSync(elsewhere)).toEqual([])
      expect(asked[1].always.map((c) => c.label)).toEqual(["run exactly this command", "session only"])
    }))

  it.live("a session-only answer covers its exact line for this conversation and is not remembered", () =>
    Effect.gen(function*() {
      const cwd = tempDir("mm-bypass-")
      const { asked, remembered } = yield* turn(cwd, [
        { name: "bash", arguments: { command: "touch one" } },
        { name: "bash", arguments: { command: "  touch one " } },
        { name: "bash", arguments: { command: "touch one two" } },
        { name: "bash", arguments: { command: "touch three" } }
      ], ["session", "deny", "always"])
      expect(asked.map((a) => a.toolCallId)).toEqual(["c0", "c2", "c3"])
      expect(fs.existsSync(path.join(cwd, "two"))).toBe(false)
      // only the answer kept for the project is remembered
      expect(remembered).toEqual([{ _tag: "ExactCommand", command: "touch three" }])
    }))

  it.live("after [p]roject, a write through a dangling link (absolute or relative) is asked, with its real path", () =>
    Effect.gen(function*() {
      const cwd = tempDir("mm-bypass-")
      const elsewhere = outsideDir()
      fs.symlinkSync(path.join(elsewhere, "abs.txt"), path.join(cwd, "dangling.txt"))
      fs.symlinkSync(path.relative(cwd, path.join(elsewhere, "rel.txt")), path.join(cwd, "dangling2.txt"))
      const { asked } = yield* turn(cwd, [
        { name: "write_file", arguments: { path: "a.txt", content: "a" } },
        { name: "write_file", arguments: { path: "dangling.txt", content: "x" } },
        { name: "write_file", arguments: { path: "dangling2.txt", content: "x" } }
      ], ["project", "deny", "deny"])
      expect(asked.map((a) => a.toolCallId)).toEqual(["c0", "c1", "c2"])
      expect(previewLines(asked[1].preview)[0].text).toBe(`outside the project: ${path.join(elsewhere, "abs.txt")}`)
      expect(previewLines(asked[2].preview)[0].text).toBe(`outside the project: ${path.join(elsewhere, "rel.txt")}`)
      expect(asked[1].always).toEqual([])
      expect(fs.readdirSync(elsewhere)).toEqual([])
    }))

  it.live("a hard link to an outside file: edits and writes are asked after [p]roject, and so is reading it", () =>
    Effect.gen(function*() {
      const cwd = tempDir("mm-bypass-")
      const elsewhere = outsideDir()
      fs.writeFileSync(path.join(elsewhere, "secret.txt"), "the secret\n")
      fs.linkSync(path.join(elsewhere, "secret.txt"), path.join(cwd, "hard.txt"))
      const { asked, results } = yield* turn(cwd, [
        { name: "write_file", arguments: { path: "a.txt", content: "a" } },
        { name: "edit_file", arguments: { path: "hard.txt", old: "the secret", new: "changed" } },
        { name: "write_file", arguments: { path: "hard.txt", content: "changed" } },
        { name: "read_file", arguments: { path: "hard.txt" } }
      ], ["project", "deny", "deny", "deny"])
      expect(asked.map((a) => a.toolCallId)).toEqual(["c0", "c1", "c2", "c3"])
      expect(fs.readFileSync(path.join(elsewhere, "secret.txt"), "utf8")).toBe("the secret\n")
      expect(results.join("\n")).not.toContain("the secret")
    }))

  const OPTION_ROWS = [
    ["python3 pytest", `python3 '-cimport os;os.system("touch x")' pytest`],
    ["node build.js", `node '--eval=require("fs").writeFileSync("x","")' build.js`],
    ["find .", "find . -exec touch x \\;"],
    ["find .", "find . -delete"],
    ["git diff", "git diff --output=/tmp/mm-outside-file"],
    ["make test", `make '--eval=X:=$(shell touch x)' test`],
    ["sed -n 1p README.md", "sed -n 1p -e '1e touch x' README.md"],
    ["tar -tf a.tar", "tar -tf a.tar --checkpoint=1 '--checkpoint-action=exec=touch x'"],
    // issue 43: an exact answer never covers the destructive form of the same command
    ["rm -rf build", "rm -rf build keep"],
    ["git checkout feature", "git checkout -- ."],
    ["git reset calc.py", "git reset --hard HEAD~1"],
    ["node --version", "node -e 'require(\"fs\").writeFileSync(\"x\", \"\")'"],
    ["pytest --version", "pytest --basetemp=/tmp/mm-outside-basetemp"],
    ["npm test --version", "npm test --prefix /tmp/mm-outside-prefix"],
    ["ls", "sed -n 1,20p keep '--expr=1e touch x'"],
    ["cat keep", "cat ../keep"]
  ]
  for (const [harmless, risky] of OPTION_ROWS) {
    it.live(`after an always on ${JSON.stringify(harmless)}, ${JSON.stringify(risky)} is asked`, () =>
      Effect.gen(function*() {
        const cwd = tempDir("mm-bypass-")
        fs.writeFileSync(path.join(cwd, "keep"), "")
        const { asked } = yield* turn(cwd, [
          { name: "bash", arguments: { command: harmless } },
          { name: "bash", arguments: { command: risky } }
        ], ["always", "deny"])
        expect(asked.map((a) => a.toolCallId)).toEqual(["c0", "c1"])
        expect(fs.readdirSync(cwd).filter((f) => f !== ".mm")).toEqual(["keep"])
      }))
  }
})
