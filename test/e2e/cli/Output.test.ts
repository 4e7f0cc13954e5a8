import { spawn } from "node:child_process"

import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"

import { type FakeModelServer, startFakeModelServer } from "../../support/FakeModelServer"
import { configFor, MM_BIN, tempProject } from "../../support/MmProcess"

/** Runs a shell pipeline in `cwd`; resolves with what it printed on stdout. */
const pipeline = (cwd: string, line: string): Promise<string> =>
  new Promise((resolve, reject) => {
    const shell = spawn("bash", ["-c", line], { cwd, stdio: ["ignore", "pipe", "inherit"] })
    let out = ""
    shell.stdout.on("data", (chunk: Buffer) => (out += chunk.toString()))
    shell.on("error", reject)
    shell.on("exit", () => resolve(out))
  })

describe("output through a pipe", () => {
  let server: FakeModelServer
  beforeAll(async () => {
    server = await startFakeModelServer()
  })
  afterAll(() => server.close())

  it(
    "a reader that starts late still gets every byte of a long answer: mm exits only once stdout drained",
    async () => {
      const project = tempProject(configFor(server.url))
      const answer = `${"0123456789".repeat(86_999)}012345678\n`
      server.push({ text: answer })
      // the reader waits before it reads: far more than a pipe holds is waiting in mm by then
      const counted = await pipeline(project, `node ${MM_BIN} -p "say a lot" | (sleep 1; wc -c)`)
      expect(Number(counted.trim())).toBe(Buffer.byteLength(answer))
    },
    60_000
  )
})
