// scripts/lazy-http.cjs and scripts/lazy-https.cjs stand in for node:http and node:https in the
// HTTP client of the bundle: neither module (nor tls) is loaded until a request goes out, and
// then the real module and a real agent are used.
import { execFileSync } from "node:child_process"
import * as path from "node:path"

import { describe, expect, it } from "@effect/vitest"

const runNode = (shim: string, code: string): string =>
  execFileSync(process.execPath, ["-e", code], {
    encoding: "utf8",
    env: { ...process.env, SHIM: path.resolve(__dirname, "../../scripts", shim) }
  })

describe.each([
  { shim: "lazy-http.cjs", module: "http", modules: /^NativeModule http$/ },
  { shim: "lazy-https.cjs", module: "https", modules: /^NativeModule (https|tls)$/ }
])("the $module stand-in", ({ module, modules, shim }) => {
  it("loads nothing of the module when an agent is made and destroyed unused", () => {
    const out = runNode(
      shim,
      `
      const { Agent } = require(process.env.SHIM)
      new Agent({ keepAlive: false }).destroy()
      const loaded = process.moduleLoadList.filter((m) => ${modules}.test(m))
      process.stdout.write(JSON.stringify(loaded))
    `
    )
    expect(JSON.parse(out)).toEqual([])
  })

  it("a request goes through the real module with a real agent made of the same options", () => {
    const out = runNode(
      shim,
      `
      const { Agent, request } = require(process.env.SHIM)
      const agent = new Agent({ maxSockets: 3 })
      const req = request(new URL("${module}://127.0.0.1:9/"), { agent, method: "GET" })
      const real = require("node:${module}")
      req.on("error", (e) => {
        process.stdout.write(JSON.stringify({
          real: agent.agent instanceof real.Agent,
          same: req.agent === agent.agent,
          maxSockets: agent.agent.maxSockets,
          code: e.code
        }))
        agent.destroy()
      })
      req.end()
    `
    )
    expect(JSON.parse(out)).toEqual({ real: true, same: true, maxSockets: 3, code: "ECONNREFUSED" })
  })
})
