import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"

import { describe, expect, it } from "@effect/vitest"

import { MM_BIN } from "../../support/MmProcess"

/** `mm acp` fed a whole input at once, then end of input, as an editor that quits would. */
const acpOnce = (lines: ReadonlyArray<string>, cwd: string) => {
  const result = spawnSync(process.execPath, [MM_BIN, "acp"], {
    cwd,
    input: lines.join("\n") + "\n",
    encoding: "utf8",
    env: { ...process.env, AGENT_CONFIG: undefined },
    timeout: 20_000
  })
  return { ...result, messages: result.stdout.split("\n").filter((l) => l !== "").map((l) => JSON.parse(l)) }
}

const request = (id: number, method: string, params: object) => JSON.stringify({ jsonrpc: "2.0", id, method, params })

describe("mm acp on stdio", () => {
  const cwd = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "mm-acp-stdio-")))

  it("answers every request it read before its input closed, then exits 0", () => {
    const run = acpOnce(
      [request(1, "initialize", { protocolVersion: 1 }), "{not json", request(2, "session/list", {})],
      cwd
    )
    expect(run.status).toBe(0)
    const byId = new Map(run.messages.map((m) => [m.id, m]))
    // no agent.yaml: sessions are on (the default), so load, list and resume are offered
    expect(byId.get(1)?.result?.agentCapabilities?.loadSession).toBe(true)
    expect(byId.get(1)?.result?.agentCapabilities?.sessionCapabilities).toEqual({
      list: {},
      resume: {},
      close: {},
      fork: {}
    })
    expect(byId.get(null)?.error?.code).toBe(-32700)
    expect(byId.get(2)?.result).toEqual({ sessions: [] })
  })
})
