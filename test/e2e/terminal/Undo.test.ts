import { createHash } from "node:crypto"
import * as fs from "node:fs"
import * as path from "node:path"

import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"

import { type FakeModelServer, startFakeModelServer } from "../../support/FakeModelServer"
import { configFor, MmProcess, runMm, tempProject, withSessions } from "../../support/MmProcess"
import { until } from "../../support/until"

const sessionOf = (project: string) => {
  const dir = path.join(project, ".mm/sessions")
  const [file] = fs.readdirSync(dir).filter((f) => f.endsWith(".json") && !f.startsWith("."))
  return JSON.parse(fs.readFileSync(path.join(dir, file), "utf8"))
}

const read = (project: string, file: string) => fs.readFileSync(path.join(project, file), "utf8")

/** mm's temporary files in `dir` (none when it is missing). */
const tempsIn = (dir: string): Array<string> =>
  fs.existsSync(dir) ? fs.readdirSync(dir).filter((name) => /^\..+\.\d+\.[0-9a-f]{8}\.tmp$/.test(name)) : []

/** mm's temporary files anywhere under `dir`, `.mm/` included. */
const tempsUnder = (dir: string): Array<string> =>
  (fs.readdirSync(dir, { recursive: true }) as Array<string>).filter((name) => name.endsWith(".tmp"))
const sha = (bytes: Buffer) => createHash("sha256").update(bytes).digest("hex")

/** A turn that edits a.txt, overwrites b.txt and creates c.txt, then answers "done". */
const editingTurn = (server: FakeModelServer, answer = "done") =>
  server.push(
    {
      toolCalls: [
        { id: "call_edit", name: "edit_file", arguments: { path: "a.txt", old: "two", new: "TWO" } },
        { id: "call_write", name: "write_file", arguments: { path: "b.txt", content: "beta\nnew line\n" } },
        { id: "call_create", name: "write_file", arguments: { path: "sub/c.txt", content: "created\nby\nmm\n" } }
      ]
    },
    { text: answer }
  )

const project3 = (server: FakeModelServer) => {
  const project = tempProject(withSessions(server.url))
  fs.writeFileSync(path.join(project, "a.txt"), "one\ntwo\nthree\n")
  fs.writeFileSync(path.join(project, "b.txt"), "beta\n")
  return project
}

describe("/changes and /undo in the terminal", () => {
  let server: FakeModelServer
  beforeAll(async () => {
    server = await startFakeModelServer()
  })
  afterAll(() => server.close())

  it("records a turn's changes as blobs, lists them, and /undo restores every file and tells the model", async () => {
    const project = project3(server)
    const original = {
      a: fs.readFileSync(path.join(project, "a.txt")),
      b: fs.readFileSync(path.join(project, "b.txt"))
    }
    editingTurn(server)
    const mm = new MmProcess(project)
    mm.send("make the changes")
    await mm.waitFor("done")
    expect(read(project, "a.txt")).toBe("one\nTWO\nthree\n")
    expect(read(project, "sub/c.txt")).toBe("created\nby\nmm\n")

    // the session file points at blobs that exist and hash to their names
    const saved = sessionOf(project)
    expect(saved.changes.map((c: any) => [c.turn, c.tool_call_id, c.path, c.before === null])).toEqual([
      [1, "call_edit", "a.txt", false],
      [1, "call_write", "b.txt", false],
      [1, "call_create", path.join("sub", "c.txt"), true]
    ])
    const blobDir = path.join(project, ".mm/checkpoints")
    expect(fs.statSync(blobDir).mode & 0o777).toBe(0o700)
    for (const change of saved.changes) {
      for (const hash of [change.before, change.after].filter((h: string | null) => h !== null)) {
        const blob = path.join(blobDir, hash)
        expect(sha(fs.readFileSync(blob))).toBe(hash)
        expect(fs.statSync(blob).mode & 0o777).toBe(0o600)
      }
    }
    expect(fs.readFileSync(path.join(blobDir, saved.changes[0].before))).toEqual(original.a)
    expect(saved.messages.some((m: any) => "changes" in m)).toBe(false)

    let mark = mm.all.length
    mm.send("/changes")
    const listing = await mm.waitFor("c.txt", mark, undefined, "all")
    expect(listing).toContain("turn 1  \"make the changes\"")
    expect(listing).toContain("  a.txt  +1 -1\n")
    expect(listing).toContain("  b.txt  +1 -0\n")
    expect(listing).toContain(`  ${path.join("sub", "c.txt")}  +3 -0  (created)`)

    mark = mm.all.length
    mm.send("/changes 1")
    const diffs = await mm.waitFor("+mm", mark, undefined, "all")
    expect(diffs).toContain("    -two\n    +TWO")

    mark = mm.all.length
    mm.send("/undo")
    const preview = await mm.waitFor("undo turn 1? [y]es [n]o: ", mark, undefined, "all")
    expect(preview).toContain("/undo takes back turn 1:")
    expect(preview).toContain("  restore a.txt  +1 -1")
    expect(preview).toContain("    -TWO\n    +two")
    expect(preview).toContain(`  delete ${path.join("sub", "c.txt")}  (it did not exist before)`)
    mm.send("y")
    const undone = await mm.waitFor("the model is told", mark, undefined, "all")
    expect(undone).toContain(`↩️ undid turn 1: restored a.txt, b.txt; deleted ${path.join("sub", "c.txt")}`)
    expect(fs.readFileSync(path.join(project, "a.txt"))).toEqual(original.a)
    expect(fs.readFileSync(path.join(project, "b.txt"))).toEqual(original.b)
    expect(fs.existsSync(path.join(project, "sub/c.txt"))).toBe(false)

    server.push({ text: "understood" })
    mark = mm.all.length
    mm.send("what now?")
    await mm.waitFor("understood", mark, undefined, "all")
    expect(await mm.end()).toBe(0)
    const messages = server.completions().at(-1)!.body.messages
    const note = messages.at(-2)
    expect(note.role).toBe("user")
    expect(note.content).toBe(
      `[mm] the user reverted the changes of turn 1: files a.txt, b.txt, ${path.join("sub", "c.txt")} (${
        path.join("sub", "c.txt")
      } deleted)`
    )
    expect(Object.keys(note)).toEqual(["role", "content"])
    expect(messages.at(-1)).toEqual({ role: "user", content: "what now?" })

    const after = sessionOf(project)
    const undo = after.changes.filter((c: any) => c.kind === "undo")
    expect(undo.map((c: any) => [c.path, c.question, c.after === null])).toEqual([
      ["a.txt", "undo of turn 1", false],
      ["b.txt", "undo of turn 1", false],
      [path.join("sub", "c.txt"), "undo of turn 1", true]
    ])
    expect(after.messages.filter((m: any) => m.note === true)).toHaveLength(1)
  })

  it("leaves a file changed by hand alone until confirmed, and /undo of an undo brings the agent's version back", async () => {
    const project = project3(server)
    editingTurn(server)
    const mm = new MmProcess(project)
    mm.send("make the changes")
    await mm.waitFor("done")
    fs.writeFileSync(path.join(project, "b.txt"), "edited by hand\n")

    let mark = mm.all.length
    mm.send("/undo")
    const preview = await mm.waitFor("undo turn 1? [y]es [n]o: ", mark, undefined, "all")
    expect(preview).toContain("  b.txt was changed after mm wrote it: asked separately")
    mm.send("y")
    const asked = await mm.waitFor("restore b.txt anyway? [y]es [n]o: ", mark, undefined, "all")
    expect(asked).toContain("b.txt was changed after mm wrote it; restoring it gives up these changes:\n")
    expect(asked).toContain("    -edited by hand\n    +beta")
    mm.send("n")
    const undone = await mm.waitFor("the model is told", mark, undefined, "all")
    expect(undone).toContain("left as they are: b.txt (changed since mm wrote it)")
    expect(read(project, "a.txt")).toBe("one\ntwo\nthree\n")
    expect(read(project, "b.txt")).toBe("edited by hand\n")
    expect(fs.existsSync(path.join(project, "sub/c.txt"))).toBe(false)

    mark = mm.all.length
    mm.send("/undo")
    const again = await mm.waitFor("? [y]es [n]o: ", mark, undefined, "all")
    expect(again).toContain("/undo takes back undo of turn 1:")
    mm.send("y")
    await mm.waitFor("the model is told", mark, undefined, "all")
    expect(read(project, "a.txt")).toBe("one\nTWO\nthree\n")
    expect(read(project, "sub/c.txt")).toBe("created\nby\nmm\n")
    expect(read(project, "b.txt")).toBe("edited by hand\n")

    mark = mm.all.length
    mm.send("/changes")
    const listing = await mm.waitFor("undo of undo of turn 1", mark, undefined, "all")
    expect(listing).toMatch(/undo of turn 1\n {2}a\.txt {2}\+1 -1\n/)
    expect(await mm.end()).toBe(0)
  })

  it("says so when nothing was changed, and does nothing when the user says no", async () => {
    const project = project3(server)
    const idle = await runMm(project, ["/changes", "/undo", "/undo x"])
    expect(idle.all).toContain(
      "no file changed by mm in this session yet (changes made by bash commands are not tracked)"
    )
    expect(idle.all).toContain("nothing to undo: no file changed by mm in this session yet")
    expect(idle.all).toContain("usage: /undo [N]")

    editingTurn(server)
    const run = await runMm(project, ["make the changes", "/undo", "n"])
    expect(run.all).toContain("nothing undone")
    expect(read(project, "a.txt")).toBe("one\nTWO\nthree\n")
  })

  it("/undo 2 takes back the last two turns that changed files", async () => {
    const project = project3(server)
    server.push(
      { toolCalls: [{ id: "t1", name: "write_file", arguments: { path: "a.txt", content: "first\n" } }] },
      { text: "one" },
      { text: "no change" },
      { toolCalls: [{ id: "t3", name: "edit_file", arguments: { path: "a.txt", old: "first", new: "second" } }] },
      { text: "three" }
    )
    const run = await runMm(project, ["q1", "q2", "q3", "/changes", "/undo 2", "y"])
    expect(run.all).toContain("/undo takes back turns 3, 1:")
    expect(run.all).toMatch(/turn 1 {2}"q1"\n {2}a\.txt {2}\+1 -3\nturn 3 {2}"q3"\n {2}a\.txt {2}\+1 -1\n/)
    expect(read(project, "a.txt")).toBe("one\ntwo\nthree\n")
  })

  it("keeps changes in memory when sessions are off", async () => {
    const project = tempProject(configFor(server.url, ["sessions:", "  enabled: false"]))
    fs.writeFileSync(path.join(project, "a.txt"), "one\ntwo\nthree\n")
    server.push({ toolCalls: [{ id: "x", name: "write_file", arguments: { path: "a.txt", content: "gone\n" } }] }, {
      text: "ok"
    })
    const run = await runMm(project, ["q", "/undo", "y"])
    expect(run.all).toContain("↩️ undid turn 1: restored a.txt")
    expect(read(project, "a.txt")).toBe("one\ntwo\nthree\n")
    expect(fs.existsSync(path.join(project, ".mm"))).toBe(false)
  })
})

describe("/undo killed midway", () => {
  let server: FakeModelServer
  beforeAll(async () => {
    server = await startFakeModelServer()
  })
  afterAll(() => server.close())

  /**
   * A project of `count` files of `size` bytes that one turn rewrites whole, and mm at the
   * question of its `/undo`, answered yes: the undo is under way when this returns.
   */
  const undoUnderWay = async (count: number, size: number, name: (i: number) => string) => {
    // MBs of tool arguments in one answer: more than model.maxAnswerBytes allows by default
    const project = tempProject(
      configFor(server.url, ["sessions:", "  enabled: true"]).map((line) =>
        line === "  name: fake-model" ? `${line}\n  maxAnswerBytes: 33554432` : line
      )
    )
    const names = Array.from({ length: count }, (_, i) => name(i))
    const before = (i: number) => `before ${i}\n`.padEnd(size - 1, "b") + "\n"
    const after = (i: number) => `after ${i}\n`.padEnd(size - 1, "a") + "\n"
    names.forEach((file, i) => fs.writeFileSync(path.join(project, file), before(i)))
    server.push(
      {
        toolCalls: names.map((file, i) => ({
          id: `w${i}`,
          name: "write_file",
          arguments: { path: file, content: after(i) }
        }))
      },
      { text: "rewritten" }
    )
    const mm = new MmProcess(project)
    mm.send("rewrite them")
    await mm.waitFor("rewritten", 0, 60_000, "all")
    mm.send("/undo")
    await mm.waitFor("undo turn 1? [y]es [n]o: ", 0, 60_000, "all")
    mm.send("y")
    return { project, names, before, after, mm }
  }

  it("a SIGKILL during /undo leaves each file whole, either as before or as after", async () => {
    const { project, names, before, after, mm } = await undoUnderWay(12, 1024 * 1024, (i) => `big${i}.txt`)
    // stopped once the first file is restored and another one's temporary copy exists (the undo
    // writes its files in order), else let go and watched again; then killed
    const tmp = path.join(project, ".mm", "tmp")
    const midway = () => tempsIn(tmp).some((temp) => !temp.startsWith(`.${names[0]}.`))
    const pid = mm.child.pid!
    const deadline = Date.now() + 60_000
    for (;;) {
      while (!midway() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 1))
      if (Date.now() >= deadline) throw new Error("no temporary file of the undo's second file or later seen")
      process.kill(pid, "SIGSTOP")
      if (midway()) break
      process.kill(pid, "SIGCONT")
    }
    mm.kill()
    await mm.exited
    const states = names.map((name, i) => {
      const text = fs.readFileSync(path.join(project, name), "utf8")
      return text === before(i) ? "before" : text === after(i) ? "after" : "torn"
    })
    expect(states).not.toContain("torn")
    expect(states).toContain("after")
    expect(states).toContain("before")
    // the session file is whole, and a second /undo finishes the job
    expect(sessionOf(project).changes.filter((c: any) => c.kind === "undo")).toEqual([])
    const again = await runMm(project, ["/resume", "/undo", "y"])
    expect(again.all).toContain("↩️ undid turn 1")
    names.forEach((name, i) => expect(fs.readFileSync(path.join(project, name), "utf8") === before(i)).toBe(true))
    // the killed undo's temporary file is gone, and the undo of the undo brings back every file
    expect(fs.readdirSync(project).filter((name) => name.endsWith(".tmp"))).toEqual([])
    const back = await runMm(project, ["/resume", "/undo", "y"])
    expect(back.all).toContain("↩️ undid undo of turn 1")
    names.forEach((name, i) => expect(fs.readFileSync(path.join(project, name), "utf8") === after(i)).toBe(true))
  }, 120_000)

  it("what an /undo killed in the middle of a write left is gone once mm starts again", async () => {
    const { project, mm } = await undoUnderWay(20, 512 * 1024, (i) => `f${String(i).padStart(2, "0")}.txt`)
    // stopped while one of its files' temporary copy exists (else let go and watched again), then killed
    const tmp = path.join(project, ".mm", "tmp")
    const writing = () => tempsIn(tmp).length + tempsIn(project).length > 0
    const pid = mm.child.pid!
    const deadline = Date.now() + 60_000
    for (;;) {
      while (!writing() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 1))
      if (Date.now() >= deadline) throw new Error("no temporary file of the undo seen")
      process.kill(pid, "SIGSTOP")
      if (writing()) break
      process.kill(pid, "SIGCONT")
    }
    mm.kill()
    await mm.exited
    // the litter: none among the project's files, one under .mm/tmp/
    expect(tempsIn(project)).toEqual([])
    expect(tempsIn(tmp).length).toBeGreaterThan(0)
    // mm started again, and doing nothing, removes it
    const next = new MmProcess(project)
    await until(() => tempsUnder(project).length === 0, "the killed undo's temporary file to be removed", 30_000)
    expect(await next.end()).toBe(0)
    expect(tempsUnder(project)).toEqual([])
    expect(tempsIn(tmp)).toEqual([])
  }, 120_000)

  it(
    "an undo killed after its last write, before it was recorded, is recorded by the next /undo, and its undo is complete",
    async () => {
      const project = project3(server)
      editingTurn(server)
      const first = await runMm(project, ["make the changes"])
      expect(first.stdout).toContain("done")
      // what such a kill leaves: every file restored, no undo in the session
      fs.writeFileSync(path.join(project, "a.txt"), "one\ntwo\nthree\n")
      fs.writeFileSync(path.join(project, "b.txt"), "beta\n")
      fs.rmSync(path.join(project, "sub/c.txt"))
      expect(sessionOf(project).changes.filter((c: any) => c.kind === "undo")).toEqual([])
      const again = await runMm(project, ["/resume", "/undo"])
      expect(again.all).toContain("↩️ undid turn 1: restored a.txt, b.txt; deleted sub/c.txt")
      const saved = sessionOf(project)
      expect(saved.changes.filter((c: any) => c.kind === "undo").map((c: any) => c.path)).toEqual([
        "a.txt",
        "b.txt",
        "sub/c.txt"
      ])
      expect(saved.messages.at(-1).content).toContain("the user reverted the changes of turn 1")
      // the undo of that undo brings every file back
      const back = await runMm(project, ["/resume", "/undo", "y"])
      expect(back.all).toContain("↩️ undid undo of turn 1")
      expect(read(project, "a.txt")).toBe("one\nTWO\nthree\n")
      expect(read(project, "b.txt")).toBe("beta\nnew line\n")
      expect(read(project, "sub/c.txt")).toBe("created\nby\nmm\n")
    },
    60_000
  )

  it("/undo leaves a file whose symbolic link now leads outside the project, and restores the rest", async () => {
    const project = project3(server)
    const outside = fs.mkdtempSync(path.join(path.dirname(project), "outside-"))
    fs.writeFileSync(path.join(outside, "secret.txt"), "outside\n")
    editingTurn(server)
    const mm = new MmProcess(project)
    mm.send("make the changes")
    await mm.waitFor("done")
    // b.txt is now a link to a file outside the project
    fs.rmSync(path.join(project, "b.txt"))
    fs.symlinkSync(path.join(outside, "secret.txt"), path.join(project, "b.txt"))
    mm.send("/undo")
    await mm.waitFor("undo turn 1? [y]es [n]o: ", 0, 30_000, "all")
    mm.send("y")
    const line = await mm.waitFor("↩️ undid turn 1", 0, 30_000, "all")
    const real = fs.realpathSync(path.join(outside, "secret.txt"))
    expect(line).toContain(`left as it is: b.txt (it now leads outside the project: ${real})`)
    expect(fs.readFileSync(path.join(outside, "secret.txt"), "utf8")).toBe("outside\n")
    expect(read(project, "a.txt")).toBe("one\ntwo\nthree\n")
    expect(fs.existsSync(path.join(project, "sub/c.txt"))).toBe(false)
    mm.kill()
    await mm.exited
  }, 60_000)
})
