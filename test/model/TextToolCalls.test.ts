import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"

import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"

import type { TurnEvent } from "../../src/agent/TurnEvent"
import { ModelClient } from "../../src/model/ModelClient"
import { HeldText, malformedTextCall, textToolCalls } from "../../src/model/TextToolCalls"
import { Keeper } from "../../src/sessions/Keeper"
import * as MemorySessionStore from "../../src/sessions/MemorySessionStore"
import { type FakeModelServer, startFakeModelServer } from "../support/FakeModelServer"
import { type ConfigOverrides, coreLayer, runTurn, testConfig } from "../support/layers"
import { SERVER_FIXTURES } from "../support/paths"
import { tempDir } from "../support/processes"

const known = new Set(["bash", "read_file", "write_file", "edit_file"])
const call = (text: string) => {
  const found = textToolCalls(text, known)
  return found === undefined
    ? undefined
    : { content: found.content, calls: found.calls.map((c) => [c.function.name, JSON.parse(c.function.arguments)]) }
}

describe("tool calls written as text", () => {
  it("Hermes / Qwen: <tool_call> blocks, the text before kept", () => {
    expect(call("<tool_call>\n{\"name\": \"bash\", \"arguments\": {\"command\": \"ls\"}}\n</tool_call>")).toEqual({
      content: "",
      calls: [["bash", { command: "ls" }]]
    })
    expect(
      call(
        "Let me look.\n<tool_call>\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"a.txt\"}}\n</tool_call>\n<tool_call>\n{\"name\": \"bash\", \"arguments\": \"{\\\"command\\\": \\\"pwd\\\"}\"}\n</tool_call>"
      )
    ).toEqual({ content: "Let me look.", calls: [["read_file", { path: "a.txt" }], ["bash", { command: "pwd" }]] })
    // a last block whose closing tag never came
    expect(call("<tool_call>{\"name\": \"bash\", \"arguments\": {\"command\": \"ls\"}}")?.calls).toEqual([["bash", {
      command: "ls"
    }]])
  })

  it("Mistral: [TOOL_CALLS] with a JSON list, or name[ARGS]{…}", () => {
    expect(call("[TOOL_CALLS][{\"name\": \"bash\", \"arguments\": {\"command\": \"ls\"}, \"id\": \"a1b2c3d4e\"}]"))
      .toEqual({
        content: "",
        calls: [["bash", { command: "ls" }]]
      })
    expect(call("I will check.[TOOL_CALLS]bash[ARGS]{\"command\": \"ls\"}[TOOL_CALLS]read_file[ARGS]{\"path\": \"b\"}"))
      .toEqual({
        content: "I will check.",
        calls: [["bash", { command: "ls" }], ["read_file", { path: "b" }]]
      })
  })

  it("a bare JSON call as the whole answer, with arguments or parameters, or a list of them", () => {
    expect(call("{\"name\": \"bash\", \"arguments\": {\"command\": \"ls\"}}")?.calls).toEqual([["bash", {
      command: "ls"
    }]])
    expect(call("\n  {\"type\": \"function\", \"name\": \"bash\", \"parameters\": {\"command\": \"ls\"}}\n")).toEqual({
      content: "",
      calls: [["bash", { command: "ls" }]]
    })
    expect(
      call(
        "[{\"name\": \"bash\", \"arguments\": {\"command\": \"a\"}}, {\"name\": \"bash\", \"arguments\": {\"command\": \"b\"}}]"
      )?.calls
    ).toEqual([["bash", { command: "a" }], ["bash", { command: "b" }]])
  })

  it("JSON after prose, or in a code fence, is text: only the whole answer or a model's own tags count", () => {
    const json = "{\"name\": \"write_file\", \"arguments\": {\"path\": \"a.txt\", \"content\": \"x\"}}"
    expect(call(`The call would look like this:\n${json}`)).toBeUndefined()
    expect(call(`Two things:\n[${json}, ${json}]`)).toBeUndefined()
    expect(call(`Running it now:\n\`\`\`json\n${json}\n\`\`\``)).toBeUndefined()
    expect(call(`\`\`\`json\n${json}\n\`\`\``)).toBeUndefined()
    expect(call(`${json}\nThat is how a call looks.`)).toBeUndefined()
    // a model's own tags inside a fence left open, or an inline code span, are an example
    expect(call(`An example:\n\`\`\`\n<tool_call>${json}</tool_call>`)).toBeUndefined()
    expect(call(`An example:\n\`\`\`\n[TOOL_CALLS][${json}]`)).toBeUndefined()
    expect(call(`Write \`<tool_call>${json}</tool_call>\``)).toBeUndefined()
    // a fence that was closed before the tags does not hide them
    expect(call(`\`\`\`sh\nls\n\`\`\`\n<tool_call>${json}</tool_call>`)?.calls).toEqual([["write_file", {
      path: "a.txt",
      content: "x"
    }]])
  })

  it("anything malformed, or naming no known tool, stays text", () => {
    expect(call("<tool_call>\n{\"name\": \"bash\", \"arguments\": {\"command\": \n</tool_call>")).toBeUndefined()
    expect(call("<tool_call>{\"name\": \"delete_everything\", \"arguments\": {}}</tool_call>")).toBeUndefined()
    expect(call("[TOOL_CALLS][{\"name\": \"bash\", \"arguments\": {\"command\": \"ls\"}")).toBeUndefined()
    expect(call("{\"name\": \"bash\"}")).toBeUndefined()
    expect(call("{\"name\": \"Ada\", \"age\": 36}")).toBeUndefined()
    expect(call("Use `<tool_call>` tags, then some prose after it.")).toBeUndefined()
    expect(call("The config is:\n{\"model\": {\"name\": \"x\"}}")).toBeUndefined()
    expect(call("plain answer")).toBeUndefined()
  })
})

describe("tool calls written as text that cannot be read", () => {
  it("tags that run to the end around JSON that is broken, cut or not a call", () => {
    expect(malformedTextCall("<tool_call>{bash</tool_call>")).toMatchObject({
      start: 0,
      written: "<tool_call>{bash</tool_call>",
      why: expect.stringMatching(/^its JSON is not valid \(.+\)$/)
    })
    const cut = "Let me look.\n<tool_call>\n{\"name\": \"bash\", \"arguments\": {\"command\": "
    expect(malformedTextCall(cut)).toMatchObject({ start: 13, written: cut.slice(13).trim() })
    // the second block is the broken one
    expect(
      malformedTextCall(
        "<tool_call>{\"name\": \"bash\", \"arguments\": {\"command\": \"ls\"}}</tool_call>\n<tool_call>{\"name\": bash}</tool_call>"
      )?.why
    ).toMatch(/^its JSON is not valid/)
    expect(malformedTextCall("<tool_call>{\"command\": \"ls\"}</tool_call>")?.why).toBe(
      "it is not a call: {\"name\": …, \"arguments\": {…}}"
    )
    expect(malformedTextCall("[TOOL_CALLS][{\"name\": \"bash\", \"arguments\": {\"command\": \"ls\"}")?.why).toMatch(
      /^its JSON is not valid/
    )
    expect(malformedTextCall("[TOOL_CALLS]bash{\"command\": \"ls\"}")?.why).toBe("[ARGS] is missing")
  })

  it("a call that can be read, tags in code or followed by prose, and plain text are not malformed", () => {
    expect(malformedTextCall("<tool_call>{\"name\": \"bash\", \"arguments\": {\"command\": \"ls\"}}</tool_call>"))
      .toBeUndefined()
    // a tool mm does not have stays text, as before
    expect(malformedTextCall("<tool_call>{\"name\": \"delete_everything\", \"arguments\": {}}</tool_call>"))
      .toBeUndefined()
    expect(malformedTextCall("For example:\n```\n<tool_call>{bash</tool_call>")).toBeUndefined()
    expect(malformedTextCall("Use `<tool_call>{bash` tags")).toBeUndefined()
    expect(malformedTextCall("<tool_call>{bash</tool_call> is how a broken call looks.")).toBeUndefined()
    expect(malformedTextCall("{\"name\": \"bash\", \"arguments\": {")).toBeUndefined()
    expect(malformedTextCall("plain answer")).toBeUndefined()
  })
})

describe("text held back while it may be a call", () => {
  const run = (deltas: ReadonlyArray<string>) => {
    const held = new HeldText()
    const shown = deltas.map((d) => held.push(d))
    return { shown, rest: held.flush() }
  }

  it("shows prose at once and holds a marker, even one split across deltas", () => {
    expect(run(["Let me look.", "\n<tool", "_call>\n{", "\"name\": \"bash\"}"])).toEqual({
      shown: ["Let me look.", "\n", "", ""],
      rest: "<tool_call>\n{\"name\": \"bash\"}"
    })
    expect(run(["ok [TOOL", "_CALLS][]"]).shown).toEqual(["ok ", ""])
  })

  it("holds an answer that opens like a JSON call, not a fence nor JSON after prose", () => {
    expect(run(["{\"name\"", ": \"bash\"}"]).shown).toEqual(["", ""])
    expect(run(["  [", "{\"name\"", ": \"bash\"}]"]).shown).toEqual(["", "", ""])
    expect(run(["```json\n", "{}"]).shown).toEqual(["```json\n", "{}"])
    expect(run(["Here: ", "{\"a\": 1}"]).shown).toEqual(["Here: ", "{\"a\": 1}"])
  })

  it("shows an answer opening with a bracket at once when it cannot be a JSON call", () => {
    expect(run(["[", "1] first", " point"])).toEqual({ shown: ["", "[1] first", " point"], rest: "" })
    expect(run(["{", " x }"])).toEqual({ shown: ["", "{ x }"], rest: "" })
    // but a marker's start is still held
    expect(run(["[TOOL", "_CALLS]"]).shown).toEqual(["", ""])
  })

  it("a partial marker that goes nowhere is shown with the next delta", () => {
    expect(run(["a <", "b"])).toEqual({ shown: ["a ", "<b"], rest: "" })
  })
})

describe("text tool calls in a turn", () => {
  let server: FakeModelServer
  beforeAll(async () => {
    server = await startFakeModelServer()
  })
  afterAll(() => server.close())

  const layer = (overrides: ConfigOverrides = {}) =>
    coreLayer(testConfig(server.url, overrides), MemorySessionStore.layer())

  /** The text cut in pieces of three characters: a call split across many deltas. */
  const pieces = (text: string) =>
    Array.from({ length: Math.ceil(text.length / 3) }, (_, i) => text.slice(i * 3, i * 3 + 3))

  const formats = {
    hermes:
      "Let me list the files.\n<tool_call>\n{\"name\": \"bash\", \"arguments\": {\"command\": \"echo from-hermes\"}}\n</tool_call>",
    mistral: "[TOOL_CALLS][{\"name\": \"bash\", \"arguments\": {\"command\": \"echo from-mistral\"}}]",
    "bare JSON": "{\"name\": \"bash\", \"arguments\": {\"command\": \"echo from-json\"}}"
  }

  for (const [format, text] of Object.entries(formats)) {
    it.live(`${format}: the tool runs and the next request carries its result`, () =>
      Effect.gen(function*() {
        server.push({ text: pieces(text) }, { text: "done" })
        const before = server.completions().length
        const conversation = yield* Effect.flatMap(Keeper, (k) =>
          k.open(tempDir("mm-textcalls-"), { createFile: "later" }))
        const events = yield* runTurn(conversation, "list the files")
        const started = events.find((e): e is Extract<TurnEvent, { _tag: "ToolCallStarted" }> =>
          e._tag === "ToolCallStarted"
        )
        expect(started?.name).toBe("bash")
        const finished = events.find((e): e is Extract<TurnEvent, { _tag: "ToolCallFinished" }> =>
          e._tag === "ToolCallFinished"
        )
        const word =
          (JSON.parse(text.slice(text.indexOf("{"), text.lastIndexOf("}") + 1)).arguments.command as string).split(
            " "
          )[1]
        expect(finished?.output).toContain(word)
        expect(events.at(-1)?._tag).toBe("TurnFinished")
        // the call was never shown as text
        const shown = events.flatMap((e) => (e._tag === "TextDelta" ? [e.text] : [])).join("")
        expect(shown).toBe(format === "hermes" ? "Let me list the files.\ndone" : "done")
        const requests = server.completions().slice(before)
        expect(requests).toHaveLength(2)
        const [assistant, result] = requests[1].body.messages.slice(-2)
        expect(assistant.role).toBe("assistant")
        expect(assistant.content).toBe(format === "hermes" ? "Let me list the files." : null)
        expect(assistant.tool_calls[0].function.name).toBe("bash")
        expect(result).toMatchObject({ role: "tool", tool_call_id: assistant.tool_calls[0].id })
        expect(result.content).toContain(word)
      }).pipe(Effect.provide(layer())))
  }

  const writeCall = "{\"name\": \"write_file\", \"arguments\": {\"path\": \"made.txt\", \"content\": \"x\"}}"
  const prose = {
    "prose ending with a JSON call": `To create it, an agent would send:\n${writeCall}`,
    "a JSON call in a code fence after prose": `For example:\n\`\`\`json\n${writeCall}\n\`\`\``,
    "a tagged call inside a fence left open": `For example:\n\`\`\`\n<tool_call>\n${writeCall}\n</tool_call>`
  }

  for (const [shape, text] of Object.entries(prose)) {
    it.live(`${shape}: under allow, nothing runs and the whole text is the answer`, () =>
      Effect.gen(function*() {
        server.push({ text: pieces(text) })
        const before = server.completions().length
        const cwd = tempDir("mm-textcalls-")
        const conversation = yield* Effect.flatMap(Keeper, (k) => k.open(cwd, { createFile: "later" }))
        const events = yield* runTurn(conversation, "how would you create made.txt?")
        expect(events.some((e) => e._tag === "ToolCallStarted")).toBe(false)
        expect(fs.existsSync(path.join(cwd, "made.txt"))).toBe(false)
        expect(events.flatMap((e) => (e._tag === "TextDelta" ? [e.text] : [])).join("")).toBe(text)
        expect(events.at(-1)?._tag).toBe("TurnFinished")
        expect(server.completions().length - before).toBe(1)
        const session = yield* conversation.snapshot
        expect(session.messages.at(-1)).toEqual({ role: "assistant", content: text })
      }).pipe(Effect.provide(layer({ permissions: "allow" }))))
  }

  it.live("text held from another form's marker is shown when a tagged call follows it", () =>
    Effect.gen(function*() {
      const prose = "Mistral would write [TOOL_CALLS] here; I use tags."
      const text = `${prose}\n<tool_call>\n{"name": "bash", "arguments": {"command": "echo hi"}}\n</tool_call>`
      server.push({ text: pieces(text) }, { text: "done" })
      const conversation = yield* Effect.flatMap(
        Keeper,
        (k) => k.open(tempDir("mm-textcalls-"), { createFile: "later" })
      )
      const events = yield* runTurn(conversation, "list the files")
      expect(events.find((e) => e._tag === "ToolCallStarted")).toMatchObject({ name: "bash" })
      expect(events.flatMap((e) => (e._tag === "TextDelta" ? [e.text] : [])).join("")).toBe(`${prose}done`)
    }).pipe(Effect.provide(layer())))

  it.live("a whole answer that is a write_file call writes the file under allow", () =>
    Effect.gen(function*() {
      server.push({ text: pieces(writeCall) }, { text: "written" })
      const cwd = tempDir("mm-textcalls-")
      const conversation = yield* Effect.flatMap(Keeper, (k) => k.open(cwd, { createFile: "later" }))
      const events = yield* runTurn(conversation, "create made.txt")
      expect(events.find((e) => e._tag === "ToolCallStarted")).toMatchObject({ name: "write_file" })
      expect(fs.readFileSync(path.join(cwd, "made.txt"), "utf8")).toBe("x")
      expect(events.flatMap((e) => (e._tag === "TextDelta" ? [e.text] : [])).join("")).toBe("written")
    }).pipe(Effect.provide(layer({ permissions: "allow" }))))

  it.live("a call that cannot be read: one line, recorded, never the answer, and the model asked again", () =>
    Effect.gen(function*() {
      server.push({ text: pieces("Checking.\n<tool_call>{bash</tool_call>") }, { text: "done" })
      const before = server.completions().length
      const conversation = yield* Effect.flatMap(
        Keeper,
        (k) => k.open(tempDir("mm-textcalls-"), { createFile: "later" })
      )
      const events = yield* runTurn(conversation, "list the files")
      const line = events.filter((e) => e._tag === "Notice").map((e) => (e as { text: string }).text)
      expect(line).toHaveLength(1)
      expect(line[0]).toMatch(
        /^the model wrote a tool call that cannot be read \(its JSON is not valid \(.+\)\): <tool_call>\{bash<\/tool_call> — it is asked to write it again$/
      )
      expect(events.some((e) => e._tag === "ToolCallStarted")).toBe(false)
      expect(events.flatMap((e) => (e._tag === "TextDelta" ? [e.text] : [])).join("")).toBe("Checking.\ndone")
      expect(events.at(-1)?._tag).toBe("TurnFinished")
      // the model was told, and answered again
      const requests = server.completions().slice(before)
      expect(requests).toHaveLength(2)
      const [assistant, note] = requests[1].body.messages.slice(-2)
      expect(assistant).toEqual({ role: "assistant", content: "Checking." })
      expect(note.role).toBe("user")
      expect(note.content).toMatch(/^\[mm\] your tool call could not be read, so it did not run: its JSON is not valid/)
      expect(note.content).toContain("You wrote: <tool_call>{bash</tool_call>")
      const session = yield* conversation.snapshot
      expect(session.messages.slice(1).map((m) => [m.role, m.content])).toEqual([
        ["user", "list the files"],
        ["assistant", "Checking."],
        ["user", note.content],
        ["assistant", "done"]
      ])
      expect(session.errors?.map((e) => [e.kind, e.line, e.raw])).toEqual([[
        "generation",
        line[0],
        "Checking.\n<tool_call>{bash</tool_call>"
      ]])
    }).pipe(Effect.provide(layer())))

  it.live("a model that writes the same unreadable call again is not asked a third time", () =>
    Effect.gen(function*() {
      const broken = { text: pieces("<tool_call>{bash</tool_call>") }
      // a third request, if made, would find no step scripted and show in the count
      server.push(broken, broken)
      const before = server.completions().length
      const conversation = yield* Effect.flatMap(
        Keeper,
        (k) => k.open(tempDir("mm-textcalls-"), { createFile: "later" })
      )
      const events = yield* runTurn(conversation, "list the files")
      expect(server.completions().slice(before)).toHaveLength(2)
      const lines = events.filter((e) => e._tag === "Notice").map((e) => (e as { text: string }).text)
      expect(lines).toHaveLength(3)
      expect(lines[2]).toBe(
        "the model wrote a call that could not run 2 times in a row — the turn stops here; ask again"
      )
      expect(events.at(-1)).toMatchObject({ _tag: "TurnFinished", stopReason: "end_turn" })
    }).pipe(Effect.provide(layer())))

  it.live("a call written as text that the length limit cut says so, and the model is asked again", () =>
    Effect.gen(function*() {
      const text = "<tool_call>{\"name\": \"write_file\", \"arguments\": {\"path\": \"a.txt\", \"content\": \"the sta"
      server.push({ text: pieces(text), finishReason: "length" }, { text: "done" })
      const before = server.completions().length
      const conversation = yield* Effect.flatMap(
        Keeper,
        (k) => k.open(tempDir("mm-textcalls-"), { createFile: "later" })
      )
      const events = yield* runTurn(conversation, "write a.txt")
      expect(events.filter((e) => e._tag === "Notice").map((e) => (e as { text: string }).text)).toEqual([
        expect.stringMatching(
          /^the model wrote a tool call that cannot be read \(the output limit cut it \(finish_reason: length\)\): <tool_call>/
        )
      ])
      expect(events.flatMap((e) => (e._tag === "TextDelta" ? [e.text] : [])).join("")).toBe("done")
      const note = server.completions().slice(before)[1].body.messages.at(-1)
      expect(note.content).toMatch(
        /^\[mm\] your tool call could not be read, so it did not run: the output limit cut it/
      )
    }).pipe(Effect.provide(layer())))

  it.live("model.textToolCalls: false leaves the text as the answer", () =>
    Effect.gen(function*() {
      server.push({ text: pieces(formats.hermes) })
      const before = server.completions().length
      const conversation = yield* Effect.flatMap(
        Keeper,
        (k) => k.open(tempDir("mm-textcalls-"), { createFile: "later" })
      )
      const events = yield* runTurn(conversation, "list the files")
      expect(events.some((e) => e._tag === "ToolCallStarted")).toBe(false)
      expect(events.flatMap((e) => (e._tag === "TextDelta" ? [e.text] : [])).join("")).toBe(formats.hermes)
      expect(server.completions().length - before).toBe(1)
      const session = yield* conversation.snapshot
      expect(session.messages.at(-1)).toEqual({ role: "assistant", content: formats.hermes })
    }).pipe(Effect.provide(layer({ model: { textToolCalls: false } }))))

  it.live("after each model call, a Usage event: the server's count, or an estimate", () =>
    Effect.gen(function*() {
      server.push({ text: "counted", usage: { prompt_tokens: 1200, completion_tokens: 340 } }, { text: "not counted" })
      const conversation = yield* Effect.flatMap(
        Keeper,
        (k) => k.open(tempDir("mm-textcalls-"), { createFile: "later" })
      )
      const first = (yield* runTurn(conversation, "one")).filter((e) => e._tag === "Usage")
      expect(first).toEqual([{
        _tag: "Usage",
        promptTokens: 1200,
        completionTokens: 340,
        contextWindow: 32768,
        estimated: false
      }])
      const second = (yield* runTurn(conversation, "two")).filter((e) => e._tag === "Usage")
      expect(second).toHaveLength(1)
      expect(second[0]).toMatchObject({ _tag: "Usage", completionTokens: 3, contextWindow: 32768, estimated: true })
    }).pipe(Effect.provide(layer())))
})

describe("an Ollama serving 4096 tokens", () => {
  it.scopedLive("says so once, and compacts at 80% of 4096", () =>
    Effect.gen(function*() {
      const server = yield* Effect.acquireRelease(
        Effect.promise(() =>
          startFakeModelServer({
            ollama: true,
            routes: {
              "POST /api/show": {
                body: JSON.parse(fs.readFileSync(path.join(SERVER_FIXTURES, "ollama/api-show.json"), "utf8"))
              },
              "GET /api/ps": { body: { models: [] } }
            }
          })
        ),
        (s) => Effect.promise(() => s.close())
      )
      const cwd = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "mm-ollama-")))
      yield* Effect.gen(function*() {
        const model = yield* ModelClient
        yield* model.askServer
        for (let tries = 0; (yield* model.contextWindow) !== 4096; tries++) {
          if (tries === 500) throw new Error("timed out waiting for the probe's window of 4096")
          yield* Effect.sleep("20 millis")
        }
        const conversation = yield* Effect.flatMap(Keeper, (k) => k.open(cwd, { createFile: "later" }))
        const long = "z".repeat(4500)
        const notices: Array<Array<string>> = []
        for (let i = 1; i <= 4; i++) {
          server.push({ text: `${long} ${i}` })
          if (i === 4) server.push({ text: "summary" })
          const events = yield* runTurn(conversation, `q${i}`)
          notices.push(events.flatMap((e) => (e._tag === "Notice" ? [e.text] : [])))
          const usage = events.find((e) => e._tag === "Usage")
          expect(usage?._tag === "Usage" && usage.contextWindow).toBe(4096)
        }
        expect(notices[0]).toEqual([
          "ollama serves fake-model with 4096 tokens of context — set OLLAMA_CONTEXT_LENGTH=32768 and restart ollama"
        ])
        // two answers of 4500 characters are about 2300 tokens, under 3276; three pass it
        expect(notices[1]).toEqual([])
        expect(notices[2]).toEqual([])
        // the summariser is answered with the fourth long answer, so the compacted history stays over: said once
        expect(notices[3].slice(1)).toEqual([
          expect.stringMatching(/^compaction cannot bring this conversation under 3,276/)
        ])
        expect(notices[3][0]).toMatch(/^history compacted: .* over 3276\)$/)
      }).pipe(
        Effect.provide(
          coreLayer(testConfig(server.url, { compaction: { keepTurns: 1 } }), MemorySessionStore.layer())
        )
      )
    }))
})
