// scripts/lazy-http.cjs stands in for node:http in the HTTP client of the bundle: node:http is
// not loaded until the first request goes out, and then the real agent is used.
import { execFileSync } from "node:child_process"
import * as path from "node:path"

import { describe, expect, it } from "@effect/vitest"

const shim = path.resolve(__dirname, "../../scripts/lazy-http.cjs")

const runNode = (code: string): string =>
  execFileSync(process.execPath, ["-e", code], { encoding: "utf8", env: { ...process.env, SHIM: shim } })

describe("the http stand-in", () => {
  it("does not load http when an agent is made and destroyed unused", () => {
    const out = runNode(`
      const { Agent } = require(process.env.SHIM)
      new Agent({ keepAlive: false }).destroy()
      process.stdout.write(JSON.stringify(process.moduleLoadList.includes("NativeModule http")))
    `)
    expect(JSON.parse(out)).toBe(false)
  })

  it("a request goes through the real module with a real agent made of the same options", () => {
    const out = runNode(`
      const { Agent, request } = require(process.env.SHIM)
      const agent = new Agent({ maxSockets: 3 })
      const req = request(new URL("http://127.0.0.1:9/"), { agent, method: "GET" })
      const http = require("node:http")
      req.on("error", (e) => {
        process.stdout.write(JSON.stringify({
          real: agent.agent instanceof http.Agent,
          same: req.agent === agent.agent,
          maxSockets: agent.agent.maxSockets,
          code: e.code
        }))
        agent.destroy()
      })
      req.end()
    `)
    expect(JSON.parse(out)).toEqual({ real: true, same: true, maxSockets: 3, code: "ECONNREFUSED" })
  })
})
