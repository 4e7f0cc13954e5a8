// Background jobs under `mm acp` when the editor offers terminals: the job runs in an editor
// terminal shown under its bash call, job_output reads it through terminal/output, job_kill
// kills and releases it, session/close ends a job still running, and session/load shows the
// job's end under the call that started it.
import * as path from "node:path"

import * as acp from "@agentclientprotocol/sdk"
import { describe, expect, it } from "vitest"

import { configYaml, type EditorSide, makeProject, readSession, replayOf, useAgents } from "../../support/acp-agent"
import { until } from "../../support/until"

const harness = useAgents()

/** An editor terminal whose output the test sets, and which ends only when killed or released. */
const editorTerminal = () => {
  const log: Array<string> = []
  const state = { output: "" }
  let ended: (() => void) | undefined
  const exited = new Promise<void>((resolve) => (ended = resolve))
  const side: EditorSide = {
    createTerminal: (params) => {
      log.push(`create ${[params.command, ...(params.args ?? [])].join(" ")}`)
      return { terminalId: "job-term" }
    },
    terminalOutput: () => ({ output: state.output, truncated: false }),
    waitForTerminalExit: async () => {
      await exited
      return { exitCode: null, signal: "SIGTERM" }
    },
    killTerminal: () => {
      log.push("kill")
      ended?.()
      return {}
    },
    releaseTerminal: () => {
      log.push("release")
      ended?.()
      return {}
    }
  }
  return { side, log, state }
}

const open = async (editor: EditorSide) => {
  const project = makeProject(configYaml({ url: harness.fake().url, extra: "jobs:\n  enabled: true" }))
  const agent = harness.start({ cwd: project.dir, config: project.config, editor })
  await agent.initialize({ fs: { readTextFile: false, writeTextFile: false }, terminal: true })
  const { sessionId } = await agent.agent.request(acp.methods.agent.session.new, { cwd: project.dir, mcpServers: [] })
  const file = path.join(project.dir, ".mm", "sessions", `${sessionId}.json`)
  /** One turn whose model calls `name` with `args`; the result the model read. */
  const call = async (name: string, args: object) => {
    const id = `c${harness.fake().completions().length}`
    harness.fake().push({ toolCalls: [{ id, name, arguments: args }] }, { text: "ok" })
    await agent.agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: name }] })
    return readSession(file).messages.find((m: any) => m.role === "tool" && m.tool_call_id === id).content as string
  }
  return { project, agent, sessionId, file, call }
}

describe("mm acp: background jobs in the editor's terminal", () => {
  it("starts in a terminal shown under its call, is read twice, killed, and replayed with its end", async () => {
    const terminal = editorTerminal()
    const { agent, call, file, project, sessionId } = await open(terminal.side)
    const started = await call("bash", { command: "npm run watch", background: true })
    expect(started).toBe("started job 1: npm run watch")
    expect(terminal.log[0]).toMatch(/^create .*npm run watch/)
    const shown = agent.updates.map((n) => n.update as any).find((u) => u.content?.[0]?.type === "terminal")
    expect(shown).toMatchObject({ toolCallId: "c0", content: [{ type: "terminal", terminalId: "job-term" }] })

    terminal.state.output = "one\n"
    expect(await call("job_output", { id: 1 })).toBe("job 1 is running\none\n")
    terminal.state.output = "one\ntwo\n"
    expect(await call("job_output", { id: 1 })).toBe("job 1 is running\ntwo\n")
    const killed = await call("job_kill", { id: 1 })
    expect(killed).toBe("job 1 killed (killed by signal SIGTERM)\nlast output:\none\ntwo\n")
    expect(terminal.log.slice(1)).toEqual(["kill", "release"])
    await until(() => readSession(file).jobs?.[0]?.endedAt !== undefined, "the job's end in the session file")
    expect(agent.invalid()).toEqual([])
    await agent.close()

    const replay = await replayOf(harness.start({ cwd: project.dir, config: project.config }), sessionId, project.dir)
    const bash = replay.find((u) => u.toolCallId === "c0")
    expect(JSON.stringify(bash.content)).toContain("[job 1 ended: killed by signal SIGTERM]\\none\\ntwo\\n")
  })

  it("a job still running ends when the editor closes its session", async () => {
    const terminal = editorTerminal()
    const { agent, call, file, sessionId } = await open(terminal.side)
    await call("bash", { command: "npm run watch", background: true })
    await agent.agent.request(acp.methods.agent.session.close, { sessionId })
    expect(terminal.log.slice(1)).toEqual(["kill", "release"])
    expect(readSession(file).jobs[0]).toMatchObject({ id: 1, exit: { code: null, signal: "SIGTERM" } })
    expect(agent.invalid()).toEqual([])
  })
})
