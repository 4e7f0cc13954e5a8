import * as fs from "node:fs"

import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"

import { type FakeModelServer, startFakeModelServer } from "../../support/FakeModelServer"
import { plantLeftTemps } from "../../support/leftTemps"
import { runMm, tempProject, withSessions } from "../../support/MmProcess"

describe("mm -p removes what a killed mm left in .mm/", () => {
  let server: FakeModelServer
  beforeAll(async () => {
    server = await startFakeModelServer()
  })
  afterAll(() => server.close())

  it("its temporary files, of tmp/, checkpoints/ and sessions/, are gone after a run", async () => {
    const project = tempProject(withSessions(server.url))
    const planted = plantLeftTemps(project)
    server.push({ text: "hello" })
    const run = await runMm(project, [], ["-p", "hi"])
    expect(run.code).toBe(0)
    expect(run.stdout).toContain("hello")
    expect(planted.filter((file) => fs.existsSync(file))).toEqual([])
  })
})
