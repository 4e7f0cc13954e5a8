import * as fs from "node:fs"
import * as path from "node:path"

import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"

import { SANDBOX_BLOCKED } from "../../../src/tools/Sandbox"
import { type FakeModelServer, lastToolResults, startFakeModelServer } from "../../support/FakeModelServer"
import { configFor, runMm, tempProject } from "../../support/MmProcess"
import { outsideDir, requireSandbox } from "../../support/sandbox"

const BLOCKED = SANDBOX_BLOCKED

const bash = (id: string, command: string) => ({ id, name: "bash", arguments: { command } })

describe("the sandbox: the model's bash calls confined with bubblewrap (mm -p)", () => {
  let server: FakeModelServer
  beforeAll(async () => {
    requireSandbox()
    server = await startFakeModelServer()
  })
  afterAll(() => server.close())

  it("sandbox: on — no write outside, the project writable, no network, a private /tmp, no API key", async () => {
    const project = tempProject(
      configFor(server.url, ["sandbox: on"]).map((l) =>
        l === "  name: fake-model" ? "  name: fake-model\n  apiKeyEnv: MM_SANDBOX_TEST_KEY" : l
      )
    )
    const outside = outsideDir()
    const hostTmp = fs.mkdtempSync("/tmp/mm-host-")
    fs.writeFileSync(path.join(hostTmp, "seen"), "host")
    const fromInside = `/tmp/mm-from-inside-${process.pid}`
    server.push(
      {
        toolCalls: [
          bash("outside", `touch ${outside}/x`),
          bash("inside", "echo made-inside > inside.txt && cat inside.txt"),
          bash("network", `exec 3<>/dev/tcp/127.0.0.1/${server.port} && echo reached`),
          bash("tmp", `ls ${hostTmp} || echo host-tmp-not-seen; echo mine > ${fromInside} && cat ${fromInside}`),
          bash("key", "echo \"key=[${MM_SANDBOX_TEST_KEY-absent}]\"")
        ]
      },
      { text: "done" }
    )
    const run = await runMm(project, [], ["-p", "try things"], { MM_SANDBOX_TEST_KEY: "sk-test-sandbox-1234" })
    expect(run.stdout).toBe("done\n")
    const results = lastToolResults(server)

    expect(fs.existsSync(path.join(outside, "x"))).toBe(false)
    expect(results.outside).toContain("Read-only file system")
    expect(results.outside).toContain("not run outside the sandbox: no terminal to ask")
    expect(results.outside.trimEnd().split("\n").at(-1)).toBe(BLOCKED)
    expect(run.stderr).toContain(
      `the sandbox blocked it (${outside}/x is read-only in the sandbox: it is outside the project)`
    )

    expect(fs.readFileSync(path.join(project, "inside.txt"), "utf8")).toBe("made-inside\n")
    expect(results.inside).toMatch(/^exit code 0\nmade-inside/)
    expect(results.inside).not.toContain(BLOCKED)

    expect(results.network).toContain("Connection refused")
    expect(results.network).not.toContain("reached")
    expect(results.network.trimEnd().split("\n").at(-1)).toBe(BLOCKED)

    expect(results.tmp).toContain("host-tmp-not-seen")
    expect(results.tmp).toContain("mine")
    expect(fs.existsSync(fromInside)).toBe(false)

    expect(results.key).toContain("key=[absent]")
  })

  it("the map form: sandbox.writable and sandbox.network loosen it", async () => {
    const outside = outsideDir()
    const project = tempProject(
      configFor(server.url, ["sandbox:", "  mode: on", "  network: true", `  writable: [${outside}]`])
    )
    server.push(
      {
        toolCalls: [
          bash("outside", `touch ${outside}/x && echo touched`),
          bash("network", `exec 3<>/dev/tcp/127.0.0.1/${server.port} && echo reached`),
          bash("elsewhere", "touch /var/tmp/mm-sandbox-elsewhere")
        ]
      },
      { text: "done" }
    )
    const run = await runMm(project, [], ["-p", "try"])
    expect(run.stdout).toBe("done\n")
    const results = lastToolResults(server)
    expect(fs.existsSync(path.join(outside, "x"))).toBe(true)
    expect(results.outside).toMatch(/^exit code 0\ntouched/)
    expect(results.network).toMatch(/^exit code 0\nreached/)
    expect(results.elsewhere).toContain("Read-only file system")
  })

  it("sandbox: off — the same touch outside works (the control)", async () => {
    const project = tempProject(configFor(server.url, ["sandbox: off"]))
    const outside = outsideDir()
    server.push({ toolCalls: [bash("outside", `touch ${outside}/x`)] }, { text: "done" })
    const run = await runMm(project, [], ["-p", "touch it"])
    expect(run.stdout).toBe("done\n")
    expect(fs.existsSync(path.join(outside, "x"))).toBe(true)
    expect(lastToolResults(server).outside).not.toContain(BLOCKED)
  })

  it("sandbox: on where bubblewrap cannot start: one line and exit code 2 before anything runs", async () => {
    const project = tempProject(configFor(server.url, ["sandbox: on"]))
    const before = server.requests.length
    const run = await runMm(project, [], ["-p", "hi"], { MM_BWRAP: "/nonexistent/bwrap" })
    expect(run.code).toBe(2)
    expect(run.stdout).toBe("")
    expect(run.stderr.trimEnd().split("\n")).toEqual([
      `mm: sandbox: on in ${path.join(project, "agent.yaml")}, but bubblewrap not found — apt-get install bubblewrap`
    ])
    expect(server.requests.length).toBe(before)
  })

  it("sandbox: auto where bubblewrap cannot start: off, said on the banner, and commands run unconfined", async () => {
    const project = tempProject(configFor(server.url))
    const outside = outsideDir()
    server.push({ toolCalls: [bash("outside", `touch ${outside}/x`)] }, { text: "done" })
    const run = await runMm(project, ["touch it"], [], { MM_BWRAP: "/nonexistent/bwrap" })
    expect(run.stderr).toContain("sandbox: off (bubblewrap not found — apt-get install bubblewrap)")
    expect(fs.existsSync(path.join(outside, "x"))).toBe(true)
  })

  it("the banner says when the sandbox is on", async () => {
    const project = tempProject(configFor(server.url))
    const run = await runMm(project, [], [])
    expect(run.stderr).toContain("sandbox: on — bash writes only the project, no network")
  })

  it("permissions: auto — a command runs in the sandbox without asking; a write outside the project is asked", async () => {
    const project = tempProject(
      configFor(server.url).map((l) => (l === "permissions: allow" ? "permissions: auto" : l))
    )
    const outside = outsideDir()
    server.push(
      {
        toolCalls: [
          bash("cmd", "echo ran > ran.txt && echo ok"),
          { id: "edit", name: "write_file", arguments: { path: "inside.txt", content: "x" } },
          { id: "far", name: "write_file", arguments: { path: `${outside}/far.txt`, content: "x" } }
        ]
      },
      { text: "done" }
    )
    const run = await runMm(project, [], ["-p", "go"])
    expect(run.stdout).toBe("done\n")
    const results = lastToolResults(server)
    expect(results.cmd).toMatch(/^exit code 0\nok/)
    expect(fs.readFileSync(path.join(project, "ran.txt"), "utf8")).toBe("ran\n")
    expect(fs.readFileSync(path.join(project, "inside.txt"), "utf8")).toBe("x")
    // asked: with no terminal to ask, refused
    expect(results.far).toContain("no terminal to ask")
    expect(fs.existsSync(path.join(outside, "far.txt"))).toBe(false)
  })

  it("permissions: auto without a working sandbox asks as ask does, and says so once", async () => {
    const project = tempProject(
      configFor(server.url).map((l) => (l === "permissions: allow" ? "permissions: auto" : l))
    )
    server.push({ toolCalls: [bash("cmd", "echo ran > ran.txt")] }, { text: "done" })
    const run = await runMm(project, [], ["-p", "go"], { MM_BWRAP: "/nonexistent/bwrap" })
    expect(run.stdout).toBe("done\n")
    expect(run.stderr.split("permissions auto: the sandbox is off, so mm asks as under ask")).toHaveLength(2)
    expect(lastToolResults(server).cmd).toContain("no terminal to ask")
    expect(fs.existsSync(path.join(project, "ran.txt"))).toBe(false)
  })
})
