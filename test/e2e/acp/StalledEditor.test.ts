import * as fs from "node:fs"
import * as path from "node:path"

import * as acp from "@agentclientprotocol/sdk"
import { describe, expect, it } from "vitest"

import { configYaml, type EditorSide, makeProject, readSession, useAgents } from "../../support/acp-agent"

/** Issue 44: every wait on the editor has a deadline, and a signal ends mm acp while it waits. */
const harness = useAgents()

const never = <A>(): Promise<A> => new Promise<A>(() => {})

const open = async (editor: EditorSide, capabilities: acp.ClientCapabilities, extra = "editorTimeout: 1") => {
  const project = makeProject(configYaml({ url: harness.fake().url, extra }))
  const agent = harness.start({ cwd: project.dir, config: project.config, editor })
  await agent.initialize(capabilities)
  const { sessionId } = await agent.agent.request(acp.methods.agent.session.new, { cwd: project.dir, mcpServers: [] })
  const file = path.join(project.dir, ".mm", "sessions", `${sessionId}.json`)
  const ask = (text: string) =>
    agent.agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text }] })
  const toolResults = () => readSession(file).messages.filter((m: any) => m.role === "tool")
  return { project, agent, file, ask, toolResults }
}

const files: acp.ClientCapabilities = { fs: { readTextFile: true, writeTextFile: true }, terminal: false }
const terminals: acp.ClientCapabilities = { fs: { readTextFile: false, writeTextFile: false }, terminal: true }

describe("mm acp: an editor that does not answer", () => {
  it("fs/read_text_file and fs/write_text_file unanswered fail after editorTimeout with one line; the turn goes on", async () => {
    const { ask, toolResults } = await open({ readTextFile: never, writeTextFile: never }, files)
    harness.fake().push(
      {
        toolCalls: [
          { id: "r1", name: "read_file", arguments: { path: "notes.txt" } },
          { id: "w1", name: "write_file", arguments: { path: "new.txt", content: "x\n" } }
        ]
      },
      { text: "the editor is stuck" },
      { text: "still here" }
    )
    expect((await ask("read and write")).stopReason).toBe("end_turn")
    expect(toolResults().map((m: any) => [m.content, m.failed])).toEqual([
      ["notes.txt: the editor did not read it within 1 s (editorTimeout)", true],
      ["new.txt: the editor did not write it within 1 s (editorTimeout); it may still write it", true]
    ])
    expect((await ask("are you there?")).stopReason).toBe("end_turn")
  })

  it("an answer to fs/read_text_file without text fails the read in one line", async () => {
    const { ask, toolResults } = await open({ readTextFile: () => ({ content: null }) as any }, files)
    harness.fake().push({ toolCalls: [{ id: "r1", name: "read_file", arguments: { path: "notes.txt" } }] }, {
      text: "odd editor"
    })
    expect((await ask("read it")).stopReason).toBe("end_turn")
    expect(toolResults()[0]).toMatchObject({ content: "notes.txt: the editor's answer holds no text", failed: true })
  })

  it("terminal/create unanswered fails the command after editorTimeout", async () => {
    const { ask, toolResults } = await open({ createTerminal: never }, terminals)
    harness.fake().push({ toolCalls: [{ id: "b1", name: "bash", arguments: { command: "echo hi" } }] }, {
      text: "no terminal"
    })
    expect((await ask("run it")).stopReason).toBe("end_turn")
    expect(toolResults()[0]).toMatchObject({
      content: "cannot run bash in the editor's terminal: the editor did not start it within 1 s (editorTimeout)",
      failed: true
    })
  })

  it("terminal/output unanswered after the command ended fails the call, and the kill and release are only sent", async () => {
    const sentKinds: Array<string> = []
    const { ask, toolResults } = await open({
      createTerminal: () => ({ terminalId: "t1" }),
      waitForTerminalExit: () => ({ exitCode: 0 }),
      terminalOutput: never,
      releaseTerminal: () => {
        sentKinds.push("release")
        return never()
      }
    }, terminals)
    harness.fake().push({ toolCalls: [{ id: "b1", name: "bash", arguments: { command: "echo hi" } }] }, {
      text: "done"
    })
    expect((await ask("run it")).stopReason).toBe("end_turn")
    expect(toolResults()[0].content).toBe(
      "cannot run bash in the editor's terminal: the editor did not give its output within 1 s (editorTimeout)"
    )
    expect(sentKinds).toEqual(["release"])
  })

  it("an answer over 32 MiB fails the read at once, with its size, instead of waiting for the deadline", async () => {
    const big = "a".repeat(33 * 1024 * 1024)
    // the deadline is far: only the dropped answer turned into an error can end the call
    const { agent, ask, toolResults } = await open({ readTextFile: () => ({ content: big }) }, files, "")
    harness.fake().push({ toolCalls: [{ id: "r1", name: "read_file", arguments: { path: "notes.txt" } }] }, {
      text: "too big"
    })
    expect((await ask("read it")).stopReason).toBe("end_turn")
    const [result] = toolResults()
    expect(result.failed).toBe(true)
    expect(result.content).toMatch(
      /^notes\.txt: the editor could not read it \(the answer was \d+ bytes, over mm's limit of 33554432\)$/
    )
    expect(agent.stderr()).toMatch(/dropped an incoming message of \d+ bytes.*the answer to mm's request/)
    expect(agent.invalid()).toEqual([])
  }, 60_000)

  for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) {
    it(`${signal} while the editor holds a read ends mm acp with 130, the question saved`, async () => {
      let asked!: () => void
      const reading = new Promise<void>((resolve) => (asked = resolve))
      const { agent, file, ask } = await open(
        {
          readTextFile: () => {
            asked()
            return never()
          }
        },
        files,
        ""
      )
      harness.fake().push({ toolCalls: [{ id: "r1", name: "read_file", arguments: { path: "notes.txt" } }] })
      void ask("read the notes").catch(() => undefined)
      await reading
      const exited = new Promise<number | null>((resolve) => agent.child.on("exit", (code) => resolve(code)))
      agent.child.kill(signal)
      expect(await exited).toBe(130)
      const session = readSession(file)
      expect(session.messages.find((m: any) => m.role === "user")?.content).toBe("read the notes")
      expect(fs.readdirSync(path.dirname(file)).filter((name) => name.endsWith(".tmp"))).toEqual([])
    })
  }
})
