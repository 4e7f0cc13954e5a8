import { type ChildProcess, spawn } from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"

import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"

import * as FileSessionStore from "../../src/sessions/FileSessionStore"
import { encodeSession } from "../../src/sessions/SessionCodec"
import { snapshotHelper } from "../support/store-bundle"
import { crashSession } from "../support/store-fixtures"

const KILLS = 200
const LANES = 4

const root = NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "mm-crash-"))
let saver: ReadonlyArray<string> = []
beforeAll(async () => {
  saver = await snapshotHelper("store-saver", root)
})
afterAll(() => NodeFs.rmSync(root, { recursive: true, force: true }))

interface Run {
  readonly printed: ReadonlyArray<number>
  readonly stderr: string
  readonly signal: NodeJS.Signals | null
}

/** Starts the saver, kills it with SIGKILL at a random moment, and says what it had printed. */
const runAndKill = (dir: string, id: string): Promise<Run> =>
  new Promise((resolve, reject) => {
    const child: ChildProcess = spawn(process.execPath, [...saver, dir, id], { stdio: ["ignore", "pipe", "pipe"] })
    let stdout = ""
    let stderr = ""
    const kill = () => child.kill("SIGKILL")
    child.stderr!.on("data", (chunk) => (stderr += chunk))
    if (Math.random() < 0.1) {
      setTimeout(kill, Math.random() * 300)
      child.stdout!.on("data", (chunk) => (stdout += chunk))
    } else {
      child.stdout!.on("data", (chunk) => {
        if (stdout === "") setTimeout(kill, Math.random() * 25)
        stdout += chunk
      })
    }
    child.on("error", reject)
    child.on("close", (_code, signal) =>
      resolve({
        printed: stdout.split("\n").filter((line) => line !== "").map(Number),
        stderr,
        signal
      }))
  })

interface LaneReport {
  readonly kills: number
  readonly saves: number
  readonly aheadOfPrint: number
}

const lane = async (index: number, kills: number): Promise<LaneReport> => {
  const dir = NodePath.join(root, `lane-${index}`)
  const id = `20260916-101530-0000000${index}`
  const store = FileSessionStore.make({ indexFile: false })
  await Effect.runPromise(store.save(dir, crashSession(id, 0)))
  const file = NodePath.join(dir, `${id}.json`)
  let seq = 0
  let saves = 0
  let aheadOfPrint = 0
  for (let k = 0; k < kills; k++) {
    const run = await runAndKill(dir, id)
    expect(run.stderr).toBe("")
    expect(run.signal).toBe("SIGKILL")
    run.printed.forEach((printed, i) => expect(printed).toBe(seq + 1 + i))
    const lastPrinted = run.printed.at(-1) ?? seq
    const text = NodeFs.readFileSync(file, "utf8")
    const onDisk = (JSON.parse(text) as { seq: number }).seq
    expect([lastPrinted, lastPrinted + 1]).toContain(onDisk)
    expect(text).toBe(encodeSession(crashSession(id, onDisk)))
    if (onDisk > lastPrinted) aheadOfPrint++
    saves += onDisk - seq
    seq = onDisk
  }
  const listing = await Effect.runPromise(store.list(dir))
  expect(listing).toEqual([{ _tag: "Readable", summary: expect.objectContaining({ id, turns: seq }) }])
  return { kills, saves, aheadOfPrint }
}

describe("FileSessionStore under SIGKILL", () => {
  it("never leaves a torn file: after each kill the file is the last saved one or the next", async () => {
    const reports = await Promise.all(
      Array.from({ length: LANES }, (_, i) => lane(i + 1, Math.ceil(KILLS / LANES)))
    )
    const total = reports.reduce((sum, r) => ({
      kills: sum.kills + r.kills,
      saves: sum.saves + r.saves,
      aheadOfPrint: sum.aheadOfPrint + r.aheadOfPrint
    }))
    expect(total.kills).toBeGreaterThanOrEqual(KILLS)
    expect(total.saves).toBeGreaterThan(KILLS)
    console.log(
      `crash test: ${total.kills} kills, ${total.saves} saves completed, ` +
        `${total.aheadOfPrint} kills between a rename and its print`
    )
  }, 120_000)
})
