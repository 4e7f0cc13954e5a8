// scripts/lazy-https.cjs stands in for node:https in the HTTP client of the bundle: nothing of
// https or tls is loaded until a request goes to an https URL, and then the real agent is used.
import { execFileSync } from "node:child_process"
import * as path from "node:path"

import { describe, expect, it } from "@effect/vitest"

const shim = path.resolve(__dirname, "../../scripts/lazy-https.cjs")

const runNode = (code: string): string =>
  execFileSync(process.execPath, ["-e", code], { encoding: "utf8", env: { ...process.env, SHIM: shim } })

describe("the https stand-in", () => {
  it("loads neither https nor tls when an agent is made and destroyed unused", () => {
    const out = runNode(`
      const { Agent } = require(process.env.SHIM)
      new Agent({ keepAlive: false }).destroy()
      const loaded = process.moduleLoadList.filter((m) => /^NativeModule (https|tls)$/.test(m))
      process.stdout.write(JSON.stringify(loaded))
    `)
    expect(JSON.parse(out)).toEqual([])
  })

  it("a request to an https URL goes through the real module with a real agent made of the same options", () => {
    const out = runNode(`
      const https = require("node:https")
      const { Agent, request } = require(process.env.SHIM)
      const agent = new Agent({ maxSockets: 3 })
      const real = agent.agent
      const req = request(new URL("https://127.0.0.1:9/"), { agent, method: "GET" })
      req.on("error", (e) => {
        process.stdout.write(JSON.stringify({
          real: real instanceof https.Agent,
          same: agent.agent === real && req.agent === real,
          maxSockets: real.maxSockets,
          code: e.code
        }))
        agent.destroy()
      })
      req.end()
    `)
    expect(JSON.parse(out)).toEqual({ real: true, same: true, maxSockets: 3, code: "ECONNREFUSED" })
  })
})
