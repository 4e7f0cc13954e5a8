import * as fs from "node:fs"

import { describe, expect, it } from "vitest"

import { configYaml, makeProject, useAgents } from "../../support/acp-agent"
import { plantLeftTemps } from "../../support/leftTemps"
import { until } from "../../support/until"

const harness = useAgents()

describe("mm acp removes what a killed mm left in .mm/", () => {
  it("its temporary files are gone once it has started, before any session", async () => {
    const project = makeProject(configYaml({ url: harness.fake().url }))
    const planted = plantLeftTemps(project.dir)
    const agent = harness.start({ cwd: project.dir, config: project.config })
    await agent.initialize()
    await until(() => planted.every((file) => !fs.existsSync(file)), "the left temporary files to be removed")
    expect(planted.filter((file) => fs.existsSync(file))).toEqual([])
  })
})
