import { type ChildProcess, spawn } from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"

import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"

import * as FileSessionStore from "../../src/sessions/FileSessionStore"
import { bundleHelper } from "../support/store-bundle"

const root = NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "mm-race-"))
let creator = ""
beforeAll(async () => {
  creator = await bundleHelper("store-creator", root)
})
const running = new Set<ChildProcess>()
afterAll(() => {
  for (const child of running) child.kill("SIGKILL")
  NodeFs.rmSync(root, { recursive: true, force: true })
})

interface Racer {
  readonly ready: Promise<void>
  readonly go: () => void
  readonly result: Promise<RacerResult>
}

interface RacerResult {
  readonly ids: ReadonlyArray<string>
  /** Ids tried in narrow mode: more than created means collisions were met and retried. */
  readonly attempts: number
}

const startRacer = (dir: string, count: number, mode: string): Racer => {
  const child = spawn(process.execPath, [creator, dir, String(count), mode], { stdio: ["pipe", "pipe", "pipe"] })
  running.add(child)
  child.on("exit", () => running.delete(child))
  let stdout = ""
  let stderr = ""
  let markReady: () => void = () => {}
  const ready = new Promise<void>((resolve) => (markReady = resolve))
  child.stdout.on("data", (chunk) => {
    stdout += chunk
    if (stdout.startsWith("ready\n")) markReady()
  })
  child.stderr.on("data", (chunk) => (stderr += chunk))
  const result = new Promise<RacerResult>((resolve, reject) =>
    child.on("close", (code) =>
      code === 0
        ? resolve(JSON.parse(stdout.slice("ready\n".length)) as RacerResult)
        : reject(new Error(`creator exited ${code}: ${stderr}`)))
  )
  return { ready, go: () => child.stdin.end("go\n"), result }
}

const race = async (mode: "random" | "narrow") => {
  const dir = NodePath.join(root, mode, ".mm", "sessions")
  const racers = [startRacer(dir, 500, mode), startRacer(dir, 500, mode)]
  await Promise.all(racers.map((racer) => racer.ready))
  racers.forEach((racer) => racer.go())
  const [first, second] = await Promise.all(racers.map((racer) => racer.result))
  return { dir, first, second }
}

const checkRace = async ({ dir, first, second }: Awaited<ReturnType<typeof race>>) => {
  expect(first.ids).toHaveLength(500)
  expect(second.ids).toHaveLength(500)
  const all = new Set([...first.ids, ...second.ids])
  expect(all.size).toBe(1000)
  const names = NodeFs.readdirSync(dir)
  expect(names.sort()).toEqual([...all].map((id) => `${id}.json`).sort())
  const store = FileSessionStore.make({ indexFile: false })
  for (const id of all) {
    const session = await Effect.runPromise(store.load(dir, id))
    expect(session).toMatchObject({ id, cwd: "/race", turns: 0, messages: [] })
  }
  const listing = await Effect.runPromise(store.list(dir))
  expect(listing.filter((entry) => entry._tag === "Readable")).toHaveLength(1000)
}

describe("FileSessionStore with two processes creating at once", () => {
  it("gives 1,000 distinct, valid sessions for 2 × 500 creations", async () => {
    await checkRace(await race("random"))
  }, 60_000)

  it("stays exclusive when the ids collide all the time (ten random bits)", async () => {
    const result = await race("narrow")
    await checkRace(result)
    expect(result.first.attempts + result.second.attempts).toBeGreaterThan(1000)
  }, 60_000)
})
