import { createHash } from "node:crypto"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"

import { afterAll, describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"

import { type FileChange, groupChanges, netChanges, recordedPath } from "../../src/changes/ChangeGroups"
import { Changes } from "../../src/changes/Changes"
import { collectGarbage, hashOf, MAX_CHECKPOINT_BYTES, putBlob, writeFileAtomic } from "../../src/changes/Checkpoints"
import { noteText, planLabel } from "../../src/changes/UndoPlan"
import { defaultConfig } from "../../src/config/ConfigSchema"
import { type ChangeRecord, emptySession } from "../../src/domain/Session"
import { Keeper } from "../../src/sessions/Keeper"
import { encodeSession, parseSession } from "../../src/sessions/SessionCodec"
import { changesMarkdown } from "../../src/text/ChangesText"
import { keeperAndChanges } from "../support/layers"

const root = fs.mkdtempSync(path.join(os.tmpdir(), "mm-checkpoints-"))
afterAll(() => fs.rmSync(root, { recursive: true, force: true }))
let serial = 0
const freshDir = () => path.join(root, `case-${++serial}`)

const H = (c: string) => c.repeat(64)
const change = (fields: Partial<ChangeRecord>): ChangeRecord => ({
  turn: 1,
  at: "2026-11-30T10:00:00.000Z",
  tool_call_id: "call",
  path: "a.txt",
  before: H("a"),
  after: H("b"),
  question: "q",
  ...fields
})

describe("blobs", () => {
  it("are stored once under their sha-256, 0600 in a 0700 directory, whatever the umask", () => {
    const dir = path.join(freshDir(), ".mm", "checkpoints")
    const bytes = Buffer.from("hello\n")
    const previous = process.umask(0)
    try {
      const hash = putBlob(dir, bytes)
      expect(hash).toBe(createHash("sha256").update(bytes).digest("hex"))
      const file = path.join(dir, hash)
      expect(fs.readFileSync(file)).toEqual(bytes)
      expect(fs.statSync(file).mode & 0o777).toBe(0o600)
      expect(fs.statSync(dir).mode & 0o777).toBe(0o700)
      const inode = fs.statSync(file).ino
      expect(putBlob(dir, bytes)).toBe(hash)
      expect(fs.statSync(file).ino).toBe(inode)
      expect(fs.readdirSync(dir)).toEqual([hash])
    } finally {
      process.umask(previous)
    }
  })

  it("an atomic rewrite keeps the file's mode and writes through a symbolic link", () => {
    const dir = freshDir()
    fs.mkdirSync(dir, { recursive: true })
    const target = path.join(dir, "real.sh")
    fs.writeFileSync(target, "old\n", { mode: 0o755 })
    fs.chmodSync(target, 0o755)
    fs.symlinkSync("real.sh", path.join(dir, "link.sh"))
    writeFileAtomic(path.join(dir, "link.sh"), Buffer.from("new\n"))
    expect(fs.lstatSync(path.join(dir, "link.sh")).isSymbolicLink()).toBe(true)
    expect(fs.readFileSync(target, "utf8")).toBe("new\n")
    expect(fs.statSync(target).mode & 0o777).toBe(0o755)
    expect(fs.readdirSync(dir).sort()).toEqual(["link.sh", "real.sh"])
  })

  it("garbage collection removes unreferenced blobs and stale temporary files, and keeps recent ones", () => {
    const dir = freshDir()
    const used = putBlob(dir, Buffer.from("used"))
    const unused = putBlob(dir, Buffer.from("unused"))
    const recent = putBlob(dir, Buffer.from("recent"))
    const temp = path.join(dir, `.${H("c")}.123.abcdef01.tmp`)
    fs.writeFileSync(temp, "half")
    const old = new Date(Date.now() - 2 * 60 * 60 * 1000)
    for (const name of [used, unused]) fs.utimesSync(path.join(dir, name), old, old)
    fs.utimesSync(temp, old, old)
    const report = collectGarbage(dir, new Set([used]), Date.now())
    expect(report).toEqual({ dir, removed: 1, freedBytes: 6, kept: 2 })
    expect(fs.readdirSync(dir).sort()).toEqual([used, recent].sort())
    expect(collectGarbage(path.join(dir, "missing"), new Set(), Date.now()).removed).toBe(0)
  })
})

describe("changes in the session file", () => {
  // the call that made the changes is in the conversation (else they would be read as a failed question's)
  const session = (changes: ReadonlyArray<unknown>) => ({
    ...emptySession("20261130-100000-0a1b2c3d", "/p", new Date(0)),
    turns: 1,
    messages: [{ role: "user", content: "q" }, {
      role: "assistant",
      content: null,
      tool_calls: [{ id: "call", type: "function", function: { name: "write_file", arguments: "{}" } }]
    }],
    changes
  })

  it("are written after messages, known fields first, unknown ones kept; absent when empty", () => {
    const text = encodeSession(session([{ extra: 1, ...change({ before: null }) }]) as never)
    const keys = Object.keys(JSON.parse(text))
    expect(keys.slice(-2)).toEqual(["messages", "changes"])
    const parsed = parseSession(text, "20261130-100000-0a1b2c3d")
    expect(Either.isRight(parsed)).toBe(true)
    const stored = Either.getOrThrow(parsed).changes![0] as Record<string, unknown>
    expect(Object.keys(stored)).toEqual(["turn", "at", "tool_call_id", "path", "before", "after", "question", "extra"])
    expect(Object.keys(JSON.parse(encodeSession(Either.getOrThrow(parsed) as never)).changes[0])[0]).toBe("turn")
    expect(encodeSession(session([]) as never)).not.toContain("\"changes\"")
  })

  it("are validated: a bad blob name makes the file unreadable with a line that says where", () => {
    const text = encodeSession(session([change({ after: "../../etc/passwd" })]) as never)
    const parsed = parseSession(text, "20261130-100000-0a1b2c3d")
    expect(Either.isLeft(parsed) && parsed.left._tag === "Unreadable" && parsed.left.detail).toMatch(
      /^changes\[0\]\.after: /
    )
  })
})

describe("grouping", () => {
  it("gathers changes by turn and by undo, and nets a file's changes over a group", () => {
    const changes = [
      change({ path: "a", before: null, after: H("1") }),
      change({ path: "b", before: H("2"), after: H("3"), tool_call_id: "c2" }),
      change({ path: "a", before: H("1"), after: H("4"), tool_call_id: "c3" }),
      change({ turn: 2, question: "q2", path: "b", before: H("3"), after: H("5") }),
      {
        turn: 2,
        at: "2026-11-30T11:00:00.000Z",
        path: "b",
        before: H("5"),
        after: H("3"),
        kind: "undo",
        question: "undo of turn 2"
      } as ChangeRecord
    ]
    const groups = groupChanges(changes)
    expect(groups.map((g) => [g.kind, g.label, g.entries.length])).toEqual([
      ["turn", "turn 1", 3],
      ["turn", "turn 2", 1],
      ["undo", "undo of turn 2", 1]
    ])
    expect(netChanges(groups[0].entries)).toEqual([
      { path: "a", before: null, after: H("4"), skipped: false },
      { path: "b", before: H("2"), after: H("3"), skipped: false }
    ])
    expect(netChanges([change({ skipped: "too large", before: null, after: null })])[0].skipped).toBe(true)
  })

  it("keeps a failed question's changes apart, named by the turn it came after, each failed question its own", () => {
    const failed = (at: string, fields: Partial<ChangeRecord>) =>
      change({ question: "q2 fails", failed: at, ...fields })
    const changes = [
      change({ path: "a", question: "q1" }),
      failed("2026-11-30T10:01:00.000Z", { path: "x" }),
      failed("2026-11-30T10:01:00.000Z", { path: "y" }),
      // asked again, failed again: the same turn before it and the same question, another group
      failed("2026-11-30T10:02:00.000Z", { path: "x" }),
      change({ turn: 2, path: "b", question: "q3" }),
      failed("2026-11-30T10:03:00.000Z", { turn: 0, path: "z", question: "first" })
    ]
    const groups = groupChanges(changes)
    expect(groups.map((g) => [g.kind, g.turn, g.label, g.question, g.entries.map((e) => e.path).join()])).toEqual([
      ["turn", 1, "turn 1", "q1", "a"],
      ["failed", 1, "failed question after turn 1", "q2 fails", "x,y"],
      ["failed", 1, "failed question after turn 1", "q2 fails", "x"],
      ["turn", 2, "turn 2", "q3", "b"],
      ["failed", 0, "failed question before turn 1", "first", "z"]
    ])
    // what /undo calls them
    expect(planLabel([groups[2]])).toBe("the failed question after turn 1")
    expect(planLabel([groups[3], groups[2]])).toBe("turn 2, the failed question after turn 1")
    expect(planLabel([groups[3], groups[0]])).toBe("turns 2, 1")
  })

  it("names files relative to the project when inside it", () => {
    expect(recordedPath("/p", "/p/src/a.ts")).toBe(path.join("src", "a.ts"))
    expect(recordedPath("/p", "/elsewhere/a.ts")).toBe("/elsewhere/a.ts")
    expect(recordedPath("/p", "/p/../pq/a.ts")).toBe("/pq/a.ts")
    expect(recordedPath("/p", "/p/..hidden")).toBe("..hidden")
  })

  it("tells the model what was reverted", () => {
    expect(
      noteText({ label: "turn 3", ofTurns: true }, {
        restored: ["a"],
        deleted: ["c"],
        left: [{ path: "b", reason: "x" }]
      })
    ).toBe(
      "[mm] the user reverted the changes of turn 3: files a, c (c deleted); left as they are: b"
    )
    expect(noteText({ label: "undo of turn 3", ofTurns: false }, { restored: ["a"], deleted: [], left: [] })).toBe(
      "[mm] the user took back the undo of turn 3: files a"
    )
  })

  it("hashes like sha256sum", () => {
    expect(hashOf(Buffer.from(""))).toBe("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
  })
})

describe("recording limits", () => {
  const layer = () => {
    const config = { ...defaultConfig(), sessions: { ...defaultConfig().sessions, enabled: true } }
    return keeperAndChanges(config)
  }

  it.effect("a file over 10 MB is recorded as skipped, and /undo leaves it alone", () =>
    Effect.gen(function*() {
      const project = freshDir()
      fs.mkdirSync(project, { recursive: true })
      const big = path.join(project, "big.log")
      fs.writeFileSync(big, Buffer.alloc(MAX_CHECKPOINT_BYTES + 1, 97))
      const conversation = yield* Effect.flatMap(Keeper, (keeper) => keeper.open(project, { createFile: "now" }))
      const changes = yield* Changes
      yield* changes.recorder(conversation, { turn: 1, question: "trim the log", toolCallId: "c" }, () => Effect.void)({
        file: big,
        content: "short\n"
      })
      fs.writeFileSync(big, "short\n")
      const { changes: kept } = yield* conversation.snapshot
      expect(kept).toEqual([
        {
          turn: 1,
          at: expect.any(String),
          tool_call_id: "c",
          path: "big.log",
          before: null,
          after: null,
          question: "trim the log",
          skipped: "too large"
        }
      ])
      expect(fs.existsSync(path.join(project, ".mm", "checkpoints"))).toBe(false)
      const plan = yield* changes.plan(conversation, 1)
      expect(plan?.files.map((f) => [f.path, f.state, f.reason])).toEqual([[
        "big.log",
        "unavailable",
        "larger than 10 MB: not recorded"
      ]])
      const report = yield* changes.apply(conversation, plan!, new Set(["big.log"]))
      expect(report.left).toEqual([{ path: "big.log", reason: "larger than 10 MB: not recorded" }])
      expect(report.note).toBeUndefined()
      expect(fs.readFileSync(big, "utf8")).toBe("short\n")
    }).pipe(Effect.provide(layer())))

  it.effect("a missing checkpoint is said, and its file left alone", () =>
    Effect.gen(function*() {
      const project = freshDir()
      fs.mkdirSync(project, { recursive: true })
      const file = path.join(project, "a.txt")
      fs.writeFileSync(file, "one\n")
      const conversation = yield* Effect.flatMap(Keeper, (keeper) => keeper.open(project, { createFile: "now" }))
      const changes = yield* Changes
      yield* changes.recorder(conversation, { turn: 1, question: "q", toolCallId: "c" }, () => Effect.void)({
        file,
        content: "two\n"
      })
      fs.writeFileSync(file, "two\n")
      fs.rmSync(path.join(project, ".mm", "checkpoints", hashOf(Buffer.from("one\n"))))
      const plan = yield* changes.plan(conversation, 1)
      expect(plan?.files[0].state).toBe("unavailable")
      expect(plan?.files[0].reason).toMatch(/^checkpoint [0-9a-f]{12} is missing from /)
      const listed = yield* changes.overview(conversation)
      expect(listed[0].files[0].problem).toMatch(/is missing/)
      expect(fs.readFileSync(file, "utf8")).toBe("two\n")
    }).pipe(Effect.provide(layer())))

  it.effect("planning an undo removes what a killed undo left beside a file; a path in a loop is said", () =>
    Effect.gen(function*() {
      const project = freshDir()
      fs.mkdirSync(project, { recursive: true })
      const conversation = yield* Effect.flatMap(Keeper, (keeper) => keeper.open(project, { createFile: "now" }))
      const changes = yield* Changes
      for (const name of ["a.txt", "b.txt"]) {
        const file = path.join(project, name)
        fs.writeFileSync(file, "one\n")
        yield* changes.recorder(conversation, { turn: 1, question: "q", toolCallId: name }, () => Effect.void)({
          file,
          content: "two\n"
        })
        fs.writeFileSync(file, "two\n")
      }
      // a temporary file two hours old, of each: what a write killed midway left
      const hoursAgo = new Date(Date.now() - 2 * 60 * 60 * 1000)
      const leftover = (name: string) => {
        const temp = path.join(project, `.${name}.1.0123abcd.tmp`)
        fs.writeFileSync(temp, "half")
        fs.utimesSync(temp, hoursAgo, hoursAgo)
        return temp
      }
      const leftA = leftover("a.txt")
      const leftB = leftover("b.txt")
      // b.txt is now a link that leads to itself: where it leads cannot be resolved
      fs.rmSync(path.join(project, "b.txt"))
      fs.symlinkSync("b.txt", path.join(project, "b.txt"))
      const plan = yield* changes.plan(conversation, 1)
      expect(plan?.files.map((f) => [f.path, f.state])).toEqual([["a.txt", "ready"], ["b.txt", "unavailable"]])
      expect(plan?.files[1].reason).toMatch(/^cannot resolve it: too many symbolic links/)
      expect(fs.existsSync(leftA)).toBe(false)
      expect(fs.existsSync(leftB)).toBe(true)
    }).pipe(Effect.provide(layer())))
})

describe("changes in mm sessions show", () => {
  it("lists each turn, failed question and undo with its files", () => {
    const group = (kind: "turn" | "failed" | "undo", label: string, question: string) => ({
      kind,
      turn: 1,
      label,
      question,
      at: "2026-11-30T10:00:00.000Z",
      entries: []
    })
    const file = (path: string, extra: Partial<FileChange> = {}): FileChange => ({
      path,
      added: 1,
      removed: 1,
      created: false,
      deleted: false,
      diff: "",
      before: null,
      after: null,
      ...extra
    })
    expect(
      changesMarkdown([
        {
          group: group("turn", "turn 1", "fix prices"),
          files: [file("src/a.ts"), file("new.ts", { added: 3, removed: 0, created: true })]
        },
        {
          group: group("failed", "failed question after turn 1", "it fails"),
          files: [file("x.txt", { added: 1, removed: 0, created: true })]
        },
        {
          group: group("undo", "undo of turn 1", ""),
          files: [file("big.log", { problem: "larger than 10 MB: not recorded" })]
        }
      ])
    ).toBe(
      [
        "## Files changed",
        "",
        "- turn 1 · \"fix prices\" · 2026-11-30T10:00:00.000Z",
        "  - `src/a.ts` +1 -1",
        "  - `new.ts` +3 -0 (created)",
        "- failed question after turn 1 · \"it fails\" · 2026-11-30T10:00:00.000Z",
        "  - `x.txt` +1 -0 (created)",
        "- undo of turn 1 · 2026-11-30T10:00:00.000Z",
        "  - `big.log` larger than 10 MB: not recorded"
      ].join("\n")
    )
  })
})
