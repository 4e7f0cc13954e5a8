// /model in the terminal: the server's models listed, the one in use marked; /model NAME
// switches the model of the next requests, and the session keeps it across /resume.
import { describe, expect, it } from "@effect/vitest"

import { startFakeModelServer } from "../../support/FakeModelServer"
import { onlySession, runMm, tempProject, withSessions } from "../../support/MmProcess"
import { PtyMm } from "../../support/PtyMm"

describe("/model in the terminal", () => {
  it("lists the models, refuses one the server does not list, and switches for the session, across /resume", async () => {
    const server = await startFakeModelServer({ models: ["fake-model", "m2", "m3"] })
    try {
      const project = tempProject(withSessions(server.url))
      server.push({ text: "first" }, { text: "second" }, { text: "third" })
      const first = await runMm(project, ["/model", "/model nope", "hello", "/model m2", "again"])
      expect(first.code).toBe(0)
      expect(first.stdout).toContain(
        "models the server lists (* in use; /model NAME switches):\n* fake-model (agent.yaml)\n  m2\n  m3\n"
      )
      expect(first.stdout).toContain("unknown model nope — the server lists fake-model, m2, m3")
      expect(first.stdout).toContain("model: m2 from now on in this conversation")
      const [hello, again] = server.completions()
      expect(hello.body.model).toBe("fake-model")
      expect(again.body.model).toBe("m2")
      expect(onlySession(project).settings).toMatchObject({ model: "m2" })

      const second = await runMm(project, ["/resume", "/model", "and now"])
      expect(second.code).toBe(0)
      expect(second.stdout).toContain("model: m2, as this conversation chose (/model to change it)\n")
      expect(second.stdout).toContain("  fake-model (agent.yaml)\n* m2\n")
      expect(server.completions()[2].body.model).toBe("m2")

      // so does mm --continue
      server.push({ text: "fourth" })
      const third = await runMm(project, ["once more"], ["--continue"])
      expect(third.code).toBe(0)
      expect(third.stdout + third.stderr).toContain("model: m2, as this conversation chose")
      expect(server.completions()[3].body.model).toBe("m2")
    } finally {
      await server.close()
    }
  })

  it("takes any name when the server lists none, and says so", async () => {
    const server = await startFakeModelServer({
      routes: { "GET /v1/models": { status: 404, body: { error: "no such route" } } }
    })
    try {
      const project = tempProject(withSessions(server.url))
      server.push({ text: "ok" })
      const { stdout } = await runMm(project, ["/model", "/model other-model", "hi"])
      expect(stdout).toContain("model in use: fake-model (the server lists no models: /model NAME takes any name)")
      expect(stdout).toContain("model: other-model from now on in this conversation (the server lists no models")
      expect(server.completions()[0].body.model).toBe("other-model")
      // chosen before the first question: the session's first save keeps it
      expect(onlySession(project).settings).toMatchObject({ model: "other-model" })
    } finally {
      await server.close()
    }
  })

  it("the status line waits for the model the conversation chose", async () => {
    const server = await startFakeModelServer({ models: ["fake-model", "m2"] })
    try {
      const project = tempProject(withSessions(server.url))
      server.push({ text: "first" }, { text: "second" })
      const mm = new PtyMm(project)
      await mm.waitFor(/> /)
      mm.type("hello\r")
      await mm.waitForText(/first/)
      expect(mm.out).toContain("waiting for fake-model")
      let mark = mm.out.length
      mm.type("/model m2\r")
      await mm.waitForText(/model: m2 from now on/, mark)
      mark = mm.out.length
      mm.type("again\r")
      const after = await mm.waitForText(/second/, mark)
      expect(after).toContain("waiting for m2")
      expect(after).not.toContain("waiting for fake-model")
      mm.type("\x04")
      await mm.exit()
    } finally {
      await server.close()
    }
  })
})
