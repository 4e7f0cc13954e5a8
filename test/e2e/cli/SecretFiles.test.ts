// mm -p and files that look secret (issue 43): read_file .env needs a question, so with no one
// to ask it is refused and nothing of the file reaches the model server; grep leaves such files
// out and says so; --yes and permissions: allow read them unasked.
import * as fs from "node:fs"
import * as path from "node:path"

import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"

import { type FakeModelServer, lastToolResults, startFakeModelServer } from "../../support/FakeModelServer"
import { configFor, runMm, tempProject } from "../../support/MmProcess"

const MARKER = "dotenv-marker-7f3e21"
const REFUSED = "not approved: no terminal to ask"

/** A project (`permissions` as given) with a marker in .env and in a `secrets:` file, and a link to .env. */
const project = (url: string, permissions: string) => {
  const dir = tempProject(
    configFor(url, ["secrets:", "  - config/prod/**"]).map((line) =>
      line === "permissions: allow" ? `permissions: ${permissions}` : line
    )
  )
  fs.writeFileSync(path.join(dir, ".env"), `API_TOKEN=${MARKER}\n`)
  fs.mkdirSync(path.join(dir, "config/prod"), { recursive: true })
  fs.writeFileSync(path.join(dir, "config/prod/db.yml"), `password: ${MARKER}\n`)
  fs.writeFileSync(path.join(dir, "app.py"), "API_TOKEN = read_env()\n")
  fs.symlinkSync(".env", path.join(dir, "notes.txt"))
  return dir
}

describe("mm -p: files that look secret", () => {
  let server: FakeModelServer
  beforeAll(async () => {
    server = await startFakeModelServer()
  })
  afterAll(() => server.close())

  const run = (dir: string, args: ReadonlyArray<string> = []) => runMm(dir, [], [...args, "-p", "go"])

  /** Everything mm sent the model server, as one text. */
  const sent = () => JSON.stringify(server.completions().map((request) => request.body))

  it("read_file .env, a link to it and a secrets: file are refused; the marker never reaches the server", async () => {
    const dir = project(server.url, "ask")
    server.push(
      {
        toolCalls: [
          { id: "env", name: "read_file", arguments: { path: ".env" } },
          { id: "link", name: "read_file", arguments: { path: "notes.txt" } },
          { id: "yml", name: "read_file", arguments: { path: "config/prod/db.yml" } },
          { id: "plain", name: "read_file", arguments: { path: "app.py" } }
        ]
      },
      { text: "done" }
    )
    const result = await run(dir)
    expect(result.stdout).toBe("done\n")
    const results = lastToolResults(server)
    for (const id of ["env", "link", "yml"]) expect(results[id], id).toContain(REFUSED)
    expect(results.plain).toBe("API_TOKEN = read_env()")
    expect(result.stderr).toContain(`read_file  .env: ${REFUSED}`)
    expect(sent()).not.toContain(MARKER)
    expect(result.stdout + result.stderr).not.toContain(MARKER)
  })

  it("grep over the project skips them and says so; grep naming .env is refused", async () => {
    const dir = project(server.url, "ask")
    server.push(
      {
        toolCalls: [
          { id: "all", name: "grep", arguments: { pattern: "API_TOKEN|password" } },
          { id: "named", name: "grep", arguments: { pattern: "API_TOKEN", path: ".env" } },
          { id: "glob", name: "glob", arguments: { pattern: "**/*" } }
        ]
      },
      { text: "done" }
    )
    const result = await run(dir)
    expect(result.stdout).toBe("done\n")
    const results = lastToolResults(server)
    expect(results.all.split("\n")).toEqual([
      "app.py:1: API_TOKEN = read_env()",
      "[2 files that look secret (.env, keys…) not searched; read_file asks the user before reading one]"
    ])
    expect(results.named).toContain(REFUSED)
    const listed = results.glob.split("\n")
    expect(listed.slice(0, -1).sort()).toEqual(["agent.yaml", "app.py"])
    expect(listed.at(-1)).toBe(
      "[2 files that look secret (.env, keys…) not listed; read_file asks the user before reading one]"
    )
    expect(sent()).not.toContain(MARKER)
  })

  it("--yes and permissions: allow read .env without a question", async () => {
    for (const [permissions, args] of [["ask", ["--yes"]], ["allow", []]] as const) {
      const dir = project(server.url, permissions)
      server.push({ toolCalls: [{ id: "env", name: "read_file", arguments: { path: ".env" } }] }, { text: "done" })
      const result = await run(dir, args)
      expect(result.stdout, permissions).toBe("done\n")
      expect(lastToolResults(server).env, permissions).toBe(`API_TOKEN=${MARKER}`)
    }
  })
})
