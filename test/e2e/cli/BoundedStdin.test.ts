import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"

import { type FakeModelServer, startFakeModelServer } from "../../support/FakeModelServer"
import { configFor, MM_BIN, tempProject } from "../../support/MmProcess"
import { runShell } from "../../support/processes"

describe("mm -p reads stdin up to a cap", () => {
  let server: FakeModelServer
  beforeAll(async () => {
    server = await startFakeModelServer()
  })
  afterAll(() => server.close())

  it("200 MB on stdin: one line, the first part sent, peak memory under 400 MB", async () => {
    const project = tempProject(configFor(server.url))
    server.push({ text: "summarised" })
    // GNU time writes its report to the file given, apart from mm's own stderr
    const run = await runShell(
      project,
      `head -c 200M /dev/zero | tr '\\0' 'x' | /usr/bin/time -v -o time.txt node ${MM_BIN} -p summarize; ` +
        `grep 'Maximum resident set size' time.txt`
    )
    const [answer, rss] = run.stdout.trim().split("\n")
    expect(answer).toBe("summarised")
    expect(run.stderr).toBe("stdin is 200 MB; mm read the first 64 KB\n")
    const kb = Number(/(\d+)$/.exec(rss)![1])
    console.log(`peak RSS with 200 MB on stdin: ${Math.round(kb / 1024)} MB`)
    expect(kb).toBeLessThan(400 * 1024)
    // the model gets the first 64 KB (half of a 32k-token window, 4 bytes a token), and is told the rest was cut
    const question = server.completions().at(-1)!.body.messages.at(-1).content as string
    expect(question.startsWith("summarize\n\nxxx")).toBe(true)
    expect(question.split("x").length - 1).toBe(64 * 1024)
    expect(question.endsWith(`[stdin was cut: these are the first ${64 * 1024} of its ${200 * 1024 * 1024} bytes]`))
      .toBe(true)
  }, 120_000)
})
