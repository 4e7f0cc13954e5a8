import { spawn, spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"

import { describe, expect, it } from "@effect/vitest"

import { DIST } from "../../support/paths"

/** A copy of the built program, as another checkout would have it. */
const checkout = (change?: string): string => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "mm-checkout-"))
  for (const name of ["mm.js", "mm-core.cjs", "package.json"]) {
    fs.copyFileSync(path.join(DIST, name), path.join(dir, name))
  }
  if (change !== undefined) fs.appendFileSync(path.join(dir, "mm-core.cjs"), change)
  return dir
}

/** What mm printed on stderr: piped, the banner is there. */
const run = (bin: string, cache: string, cwd: string, args: ReadonlyArray<string> = []): string =>
  spawnSync(process.execPath, [path.join(bin, "mm.js"), ...args], {
    cwd,
    input: "/exit\n",
    encoding: "utf8",
    env: { ...process.env, XDG_CACHE_HOME: cache, MM_NO_CODE_CACHE: undefined, AGENT_CONFIG: undefined }
  }).stderr

/** The code cache's files (the cache directory holds other things too: the configuration memo). */
const codeCaches = (cache: string): Array<string> =>
  fs.readdirSync(path.join(cache, "mm")).filter((name) => name.endsWith(".v8")).sort()

describe("the V8 code cache", () => {
  it("is kept per checkout and per content: two checkouts of different code neither share nor evict it", () => {
    const cache = fs.mkdtempSync(path.join(os.tmpdir(), "mm-cache-"))
    const project = fs.mkdtempSync(path.join(os.tmpdir(), "mm-project-"))
    fs.writeFileSync(path.join(project, "agent.yaml"), "model:\n  url: http://127.0.0.1:9/v1\n")
    const a = checkout()
    const b = checkout("\n// another checkout, other code\n")
    run(a, cache, project)
    const afterA = codeCaches(cache)
    expect(afterA).toHaveLength(1)
    run(b, cache, project)
    const afterB = codeCaches(cache)
    expect(afterB).toHaveLength(2)
    expect(afterB).toContain(afterA[0])
    // a changed in place (same length, other bytes) gets a cache of its own
    const core = path.join(a, "mm-core.cjs")
    const text = fs.readFileSync(core, "utf8")
    fs.writeFileSync(core, text.replace(/"mm"/, "\"mM\""))
    fs.utimesSync(core, new Date(), new Date(Date.now() + 5000))
    expect(run(a, cache, project)).toMatch(/^mm /)
    const afterChange = codeCaches(cache)
    expect(afterChange).toHaveLength(2)
    expect(afterChange).not.toContain(afterA[0])
  })

  it("is kept per kind of run: print mode's beside the terminal's, each read and written by its own kind only", () => {
    const cache = fs.mkdtempSync(path.join(os.tmpdir(), "mm-cache-"))
    const project = fs.mkdtempSync(path.join(os.tmpdir(), "mm-project-"))
    fs.writeFileSync(path.join(project, "agent.yaml"), "model:\n  url: http://127.0.0.1:9/v1\n")
    const bin = checkout()
    const files = () =>
      Object.fromEntries(
        fs.readdirSync(path.join(cache, "mm")).filter((name) => name.endsWith(".v8")).map((name) => {
          const stat = fs.statSync(path.join(cache, "mm", name))
          return [name.replace(/^.*-/, ""), { name, size: stat.size, mtime: stat.mtimeMs }]
        })
      )
    run(bin, cache, project)
    const terminal = files()
    expect(Object.keys(terminal)).toEqual(["terminal.v8"])
    // print mode runs code the terminal's banner never did (nothing answers here: it fails at once, and says so)
    expect(run(bin, cache, project, ["-p", "hello"])).toContain("cannot reach the model server")
    const both = files()
    expect(Object.keys(both).sort()).toEqual(["print.v8", "terminal.v8"])
    expect(both["terminal.v8"]).toEqual(terminal["terminal.v8"])
    // each kind reads its own: nothing is written again
    run(bin, cache, project, ["-p", "hello"])
    run(bin, cache, project)
    expect(files()).toEqual(both)
  })

  it("is written once start-up is over, not at exit: a terminal left open at its prompt has it already", async () => {
    const cache = fs.mkdtempSync(path.join(os.tmpdir(), "mm-cache-"))
    const project = fs.mkdtempSync(path.join(os.tmpdir(), "mm-project-"))
    fs.writeFileSync(path.join(project, "agent.yaml"), "model:\n  url: http://127.0.0.1:9/v1\n")
    const bin = checkout()
    const child = spawn(process.execPath, [path.join(bin, "mm.js")], {
      cwd: project,
      stdio: ["pipe", "pipe", "pipe"],
      env: { ...process.env, XDG_CACHE_HOME: cache, MM_NO_CODE_CACHE: undefined, AGENT_CONFIG: undefined }
    })
    const ended = new Promise<number | null>((resolve) => child.on("close", resolve))
    const kept = () => {
      const dir = path.join(cache, "mm")
      return fs.existsSync(dir) ? fs.readdirSync(dir).filter((name) => name.endsWith("-terminal.v8")) : []
    }
    // stdin stays open: mm waits at its prompt, and the cache is there meanwhile
    while (kept().length === 0 && child.exitCode === null) await new Promise((resolve) => setTimeout(resolve, 20))
    expect(child.exitCode).toBeNull()
    expect(kept()).toHaveLength(1)
    const written = fs.statSync(path.join(cache, "mm", kept()[0])).mtimeMs
    child.stdin.end("/exit\n")
    expect(await ended).toBe(0)
    // not written again at exit
    expect(fs.statSync(path.join(cache, "mm", kept()[0])).mtimeMs).toBe(written)
  })
})
