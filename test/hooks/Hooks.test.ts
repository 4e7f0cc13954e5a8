// The user's hooks through the whole core: real child processes run the hook scripts (written
// to a temporary directory), the scripted fake model server answers, and what a user sees —
// notices, tool results, the requests on the wire, files a hook writes — is checked.
import * as fs from "node:fs"
import * as path from "node:path"

import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"

import { Agent } from "../../src/agent/Agent"
import type { TurnEvent } from "../../src/agent/TurnEvent"
import type { ApprovalRequest } from "../../src/approvals/Approver"
import type { AgentConfig } from "../../src/config/Config"
import { Keeper } from "../../src/sessions/Keeper"
import * as MemorySessionStore from "../../src/sessions/MemorySessionStore"
import { type FakeModelServer, startFakeModelServer, type Step } from "../support/FakeModelServer"
import { coreLayer, runTurn, type ScriptedAnswer, scriptedApprover, testConfig } from "../support/layers"
import { tempDir } from "../support/processes"
import { until } from "../support/until"

/** Whether a process runs (a zombie waiting to be reaped counts as ended). */
const alive = (pid: number): boolean => {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8")
    return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) !== "Z"
  } catch {
    return false
  }
}

describe("hooks", () => {
  let server: FakeModelServer
  beforeAll(async () => {
    server = await startFakeModelServer()
  })
  afterAll(() => server.close())

  /** A hook script in its own temporary directory: its path, and the directory it may write to. */
  const script = (body: string) => {
    const dir = tempDir("mm-hook-")
    const file = path.join(dir, "hook.sh")
    fs.writeFileSync(file, `#!/bin/sh\n${body}\n`, { mode: 0o755 })
    return { file, dir }
  }

  /** One turn of `question` in a new project with `hooks`, the server answering `steps`. */
  const turnWith = (
    hooks: AgentConfig["hooks"],
    steps: ReadonlyArray<Step>,
    options: {
      readonly question?: string
      readonly permissions?: "ask" | "allow"
      readonly answers?: Array<ScriptedAnswer>
    } = {}
  ) => {
    const cwd = tempDir("mm-hooks-project-")
    const asked: Array<ApprovalRequest> = []
    const before = server.completions().length
    server.push(...steps)
    return Effect.gen(function*() {
      const conversation = yield* Effect.flatMap(Keeper, (keeper) => keeper.open(cwd, { createFile: "later" }))
      const events = yield* runTurn(conversation, options.question ?? "go")
      return {
        cwd,
        events,
        asked,
        requests: server.completions().slice(before).map((request) => JSON.stringify(request.body.messages))
      }
    }).pipe(
      Effect.provide(
        coreLayer(
          { ...testConfig(server.url, { permissions: options.permissions ?? "allow" }), hooks },
          MemorySessionStore.layer(),
          scriptedApprover(options.answers ?? [], asked)
        )
      )
    )
  }

  const notices = (events: ReadonlyArray<TurnEvent>) => events.flatMap((e) => (e._tag === "Notice" ? [e.text] : []))
  const results = (events: ReadonlyArray<TurnEvent>) =>
    events.flatMap((e) => (e._tag === "ToolCallFinished" ? [e.output] : []))

  const bashCall = (command: string): Step => ({ toolCalls: [{ id: "c1", name: "bash", arguments: { command } }] })

  it.live("a PreToolUse hook that exits 2 refuses a bash call: it never runs, and the model reads why", () =>
    Effect.gen(function*() {
      const hook = script("cat > /dev/null\necho 'no touching in this project' >&2\nexit 2")
      const { cwd, events, requests } = yield* turnWith(
        { PreToolUse: [{ matcher: "Bash", hooks: [{ type: "command", command: hook.file }] }] },
        [bashCall("touch marker"), { text: "ok" }]
      )
      expect(fs.existsSync(path.join(cwd, "marker"))).toBe(false)
      expect(results(events)).toEqual(["blocked by a PreToolUse hook: no touching in this project"])
      expect(requests).toHaveLength(2)
      expect(requests[1]).toContain("blocked by a PreToolUse hook: no touching in this project")
    }))

  it.live("a matcher that does not take the tool leaves the call alone; a regular expression is matched", () =>
    Effect.gen(function*() {
      const hook = script("cat > /dev/null\necho refused >&2\nexit 2")
      const { cwd, events } = yield* turnWith(
        {
          PreToolUse: [
            { matcher: "Read|Write", hooks: [{ type: "command", command: hook.file }] },
            { matcher: "^ba.h$", hooks: [{ type: "command", command: `touch ${hook.dir}/regex-ran` }] }
          ]
        },
        [bashCall("touch marker"), { text: "ok" }]
      )
      expect(fs.existsSync(path.join(cwd, "marker"))).toBe(true)
      expect(fs.existsSync(path.join(hook.dir, "regex-ran"))).toBe(true)
      expect(notices(events)).toEqual([])
    }))

  it.live("a JSON permissionDecision deny refuses the call with its reason", () =>
    Effect.gen(function*() {
      const answer = {
        hookSpecificOutput: {
          hookEventName: "PreToolUse",
          permissionDecision: "deny",
          permissionDecisionReason: "not today"
        }
      }
      const hook = script(`cat > /dev/null\necho '${JSON.stringify(answer)}'`)
      const { cwd, events } = yield* turnWith(
        { PreToolUse: [{ matcher: "*", hooks: [{ type: "command", command: hook.file }] }] },
        [bashCall("touch marker"), { text: "ok" }]
      )
      expect(fs.existsSync(path.join(cwd, "marker"))).toBe(false)
      expect(results(events)).toEqual(["blocked by a PreToolUse hook: not today"])
    }))

  it.live("permissionDecision ask asks the user even when permissions allow everything", () =>
    Effect.gen(function*() {
      const hook = script(
        `cat > /dev/null\necho '{"hookSpecificOutput":{"permissionDecision":"ask","permissionDecisionReason":"touches the tree"}}'`
      )
      const { asked, cwd, events } = yield* turnWith(
        { PreToolUse: [{ hooks: [{ type: "command", command: hook.file }] }] },
        [bashCall("touch marker"), { text: "ok" }],
        { permissions: "allow", answers: ["deny"] }
      )
      expect(asked.map((request) => request.tool)).toEqual(["bash"])
      expect(fs.existsSync(path.join(cwd, "marker"))).toBe(false)
      // the hook's reason is said just before the question
      expect(notices(events)).toEqual(["a PreToolUse hook asks you: touches the tree"])
    }))

  it.live("a PostToolUse hook receives the call and its result on stdin", () =>
    Effect.gen(function*() {
      const hook = script(`cat > "$(dirname "$0")/input.json"`)
      const { cwd, events } = yield* turnWith(
        { PostToolUse: [{ matcher: "bash", hooks: [{ type: "command", command: hook.file }] }] },
        [bashCall("echo hello from bash"), { text: "ok" }]
      )
      const input = JSON.parse(fs.readFileSync(path.join(hook.dir, "input.json"), "utf8"))
      expect(input).toMatchObject({
        hook_event_name: "PostToolUse",
        cwd,
        tool_name: "bash",
        tool_input: { command: "echo hello from bash" },
        tool_use_id: "c1",
        tool_response: { failed: false }
      })
      expect(input.tool_response.output).toContain("hello from bash")
      expect(typeof input.session_id).toBe("string")
      expect(results(events)[0]).toContain("hello from bash")
    }))

  it.live("what a PostToolUse hook blocks with is added to the result the model reads", () =>
    Effect.gen(function*() {
      const hook = script("cat > /dev/null\necho 'lint: 2 warnings' >&2\nexit 2")
      const { requests } = yield* turnWith(
        { PostToolUse: [{ hooks: [{ type: "command", command: hook.file }] }] },
        [bashCall("echo done"), { text: "ok" }]
      )
      expect(requests[1]).toContain("[PostToolUse hook]\\nlint: 2 warnings")
    }))

  it.live("a hook that hangs is killed at its timeout, said in one line, and the call goes on", () =>
    Effect.gen(function*() {
      const hook = script(`echo $$ > "$(dirname "$0")/pid"\nexec sleep 100`)
      const { cwd, events } = yield* turnWith(
        { PreToolUse: [{ hooks: [{ type: "command", command: hook.file, timeout: 1 }] }] },
        [bashCall("touch marker"), { text: "ok" }]
      )
      expect(notices(events)).toEqual([`hook PreToolUse ${JSON.stringify(hook.file)}: timed out after 1 s`])
      expect(fs.existsSync(path.join(cwd, "marker"))).toBe(true)
      // the hook's process group is gone (a killed process is reaped soon after, not at once)
      const pid = Number(fs.readFileSync(path.join(hook.dir, "pid"), "utf8"))
      yield* Effect.promise(() => until(() => !alive(pid), `the hook's sleep (pid ${pid}) to end`))
    }))

  it.live("a hook that fails otherwise is one line and the turn goes on", () =>
    Effect.gen(function*() {
      const { cwd, events } = yield* turnWith(
        { PreToolUse: [{ hooks: [{ type: "command", command: "echo 'jq: not found' >&2; exit 1" }] }] },
        [bashCall("touch marker"), { text: "ok" }]
      )
      expect(notices(events)).toEqual([`hook PreToolUse "echo 'jq: not found' >&2; exit 1": exit 1: jq: not found`])
      expect(fs.existsSync(path.join(cwd, "marker"))).toBe(true)
    }))

  it.live("UserPromptSubmit's stdout reaches the request as context for the model", () =>
    Effect.gen(function*() {
      const hook = script(`cat > "$(dirname "$0")/input.json"\necho "the build is red since Tuesday"`)
      const { requests } = yield* turnWith(
        { UserPromptSubmit: [{ hooks: [{ type: "command", command: hook.file }] }] },
        [{ text: "ok" }],
        { question: "what broke?" }
      )
      expect(requests[0]).toContain("what broke?")
      expect(requests[0]).toContain("[UserPromptSubmit hook]\\nthe build is red since Tuesday")
      const input = JSON.parse(fs.readFileSync(path.join(hook.dir, "input.json"), "utf8"))
      expect(input).toMatchObject({ hook_event_name: "UserPromptSubmit", prompt: "what broke?" })
    }))

  it.live("UserPromptSubmit's exit 2 keeps the prompt from the model and tells the user why", () =>
    Effect.gen(function*() {
      const before = server.completions().length
      const hook = script("cat > /dev/null\necho 'no secrets in prompts' >&2\nexit 2")
      const { events } = yield* turnWith(
        { UserPromptSubmit: [{ hooks: [{ type: "command", command: hook.file }] }] },
        [],
        { question: "my password is hunter2" }
      )
      expect(notices(events)).toEqual(["prompt blocked by a UserPromptSubmit hook: no secrets in prompts"])
      expect(events[events.length - 1]).toEqual({ _tag: "TurnFinished", stopReason: "end_turn" })
      expect(server.completions().length).toBe(before)
    }))

  it.live("a Stop hook's decision block makes one more model call, told the reason", () =>
    Effect.gen(function*() {
      const hook = script([
        `input=$(cat)`,
        `echo "$input" >> "$(dirname "$0")/inputs"`,
        `case "$input" in *'"stop_hook_active":false'*) echo '{"decision":"block","reason":"run the tests first"}';; esac`
      ].join("\n"))
      const { requests } = yield* turnWith(
        { Stop: [{ hooks: [{ type: "command", command: hook.file }] }] },
        [{ text: "all done" }, { text: "tests pass" }]
      )
      expect(requests).toHaveLength(2)
      expect(requests[1]).toContain("[Stop hook]\\nrun the tests first")
      const inputs = fs.readFileSync(path.join(hook.dir, "inputs"), "utf8").trim().split("\n").map((line) =>
        JSON.parse(line).stop_hook_active
      )
      expect(inputs).toEqual([false, true])
    }))

  it.live("SessionStart runs once for a new conversation, with source startup, its stdout as context", () =>
    Effect.gen(function*() {
      const hook = script(`cat >> "$(dirname "$0")/inputs"\necho "use pnpm, not npm"`)
      const { requests } = yield* turnWith(
        { SessionStart: [{ matcher: "startup", hooks: [{ type: "command", command: hook.file }] }] },
        [{ text: "ok" }]
      )
      expect(requests[0]).toContain("[SessionStart hook]\\nuse pnpm, not npm")
      const input = JSON.parse(fs.readFileSync(path.join(hook.dir, "inputs"), "utf8"))
      expect(input).toMatchObject({ hook_event_name: "SessionStart", source: "startup" })
    }))

  it.live("a matcher that is not a valid regular expression is said once, and its group never runs", () =>
    Effect.gen(function*() {
      const { cwd, events } = yield* turnWith(
        { PreToolUse: [{ matcher: "ba(sh", hooks: [{ type: "command", command: "exit 2" }] }] },
        [bashCall("touch one"), bashCall("touch two"), { text: "ok" }]
      )
      expect(notices(events)).toEqual(["hook PreToolUse: the matcher \"ba(sh\" is not a valid regular expression"])
      expect(fs.existsSync(path.join(cwd, "one")) && fs.existsSync(path.join(cwd, "two"))).toBe(true)
    }))

  it.live("PreCompact runs before /compact with its words; the next turn runs SessionStart with source compact", () =>
    Effect.gen(function*() {
      const starts = script(`cat >> "$(dirname "$0")/inputs"; echo >> "$(dirname "$0")/inputs"`)
      const compacts = script(`cat > "$(dirname "$0")/input.json"\necho 'saving a copy first' >&2\nexit 2`)
      const cwd = tempDir("mm-hooks-project-")
      const config: AgentConfig = {
        ...testConfig(server.url),
        hooks: {
          SessionStart: [{ hooks: [{ type: "command", command: starts.file }] }],
          PreCompact: [{ matcher: "manual", hooks: [{ type: "command", command: compacts.file }] }]
        }
      }
      server.push({ text: "one" }, { text: "two" }, { text: "three" }, { text: "the summary" }, { text: "four" })
      const report = yield* Effect.gen(function*() {
        const conversation = yield* Effect.flatMap(Keeper, (keeper) => keeper.open(cwd, { createFile: "later" }))
        for (const question of ["q1", "q2", "q3"]) yield* runTurn(conversation, question)
        const compacted = yield* Effect.flatMap(Agent, (agent) => agent.compact(conversation, "keep the API notes"))
        yield* runTurn(conversation, "q4")
        return compacted
      }).pipe(Effect.provide(coreLayer(config, MemorySessionStore.layer(), scriptedApprover([]))))
      expect(report).toMatchObject({ _tag: "Compacted" })
      expect(report._tag === "Compacted" && report.warning).toBe(
        `hook PreCompact ${JSON.stringify(compacts.file)}: saving a copy first`
      )
      const input = JSON.parse(fs.readFileSync(path.join(compacts.dir, "input.json"), "utf8"))
      expect(input).toMatchObject({
        hook_event_name: "PreCompact",
        trigger: "manual",
        custom_instructions: "keep the API notes"
      })
      const sources = fs.readFileSync(path.join(starts.dir, "inputs"), "utf8").trim().split("\n").map((line) =>
        JSON.parse(line).source
      )
      expect(sources).toEqual(["startup", "compact"])
    }))
})
