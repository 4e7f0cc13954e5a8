import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"
import { Agent } from "../Agent"
import { AppConfig } from "../Config"
import { type Conversation, Keeper } from "../Keeper"
import { ModelClient } from "../ModelClient"
import type { TurnEvent } from "../TurnEvent"
import { banner, COMMANDS, HELP, resumedLine, sessionsListing, toolResultLine, toolStartLine } from "./Render"
import { TerminalIO } from "./TerminalIO"
import { VERSION } from "../Version"


/**
 * The terminal façade: a banner, then questions and slash commands until the user leaves.
 * The agent's layer is built once the banner is out, so that it costs no start-up time.
 */
export const runTerminal = <E>(cwd: string, agentLayer: Layer.Layer<Agent, E, AppConfig | ModelClient | TerminalIO>) =>
  Effect.gen(function* () {
    const loaded = yield* AppConfig
    const keeper = yield* Keeper
    const model = yield* ModelClient
    const { print, style } = yield* TerminalIO

    const [answering, conversation, listing] = yield* Effect.all(
      [model.probe, keeper.open(cwd, { createFile: "later" }), keeper.list(cwd)],
      { concurrency: "unbounded" }
    )
    const earlier = listing._tag === "Listed" ? listing.entries.length : 0
    print.line(banner({ version: VERSION, loaded, answering, cwd, status: yield* conversation.status, earlier, style }))
    yield* Effect.flatMap(Agent, (agent) => converse(cwd, agent, conversation)).pipe(Effect.provide(agentLayer))
  })

/** Questions and slash commands, until the user leaves. */
const converse = (cwd: string, agent: Agent["Type"], conversation: Conversation) =>
  Effect.gen(function* () {
    const keeper = yield* Keeper
    const { input, print, style } = yield* TerminalIO

    const red = (line: string) => print.line(style.red(line))
    const notice = (line: string | undefined) => (line === undefined ? undefined : print.line(style.yellow(line)))

    const render = (event: TurnEvent) =>
      Effect.sync(() => {
        switch (event._tag) {
          case "TextDelta":
            return print.write(event.text)
          case "ToolCallStarted":
            return print.line(toolStartLine(event.name, event.title, style))
          case "ToolCallFinished":
            return print.line(toolResultLine(event.output, event.failed, style))
          case "Notice":
            return notice(event.text)
          case "CompactionFailed":
            return red(event.error.message)
          case "TurnFailed":
            return red(event.error.message)
          case "TurnFinished":
            return print.endLine()
        }
      })

    /** Runs `work` until it ends or the user presses Ctrl-C, which interrupts it. */
    const cancellable = <A, E>(work: Effect.Effect<A, E>) =>
      Effect.gen(function* () {
        const cancel = yield* Deferred.make<void>()
        const stopWatching = input.watchCancel(() => Deferred.unsafeDone(cancel, Exit.void))
        const outcome = yield* work.pipe(
          Effect.map((value) => ({ _tag: "Done" as const, value })),
          Effect.raceFirst(Effect.as(Deferred.await(cancel), { _tag: "Cancelled" as const })),
          Effect.ensuring(Effect.sync(stopWatching))
        )
        if (outcome._tag === "Cancelled") print.line(style.dim("⏹ cancelled"))
        return outcome
      })

    const ask = (question: string) => cancellable(agent.turn(conversation, question).pipe(Stream.runForEach(render)))

    const command = (conv: Conversation, name: string, arg: string) =>
      Effect.gen(function* () {
        switch (name) {
          case "/help":
            return print.line(HELP)
          case "/sessions":
            return print.line(sessionsListing(yield* keeper.list(cwd), yield* conv.id))
          case "/resume": {
            const resumed = yield* Effect.either(conv.resume(arg === "" ? undefined : arg))
            if (resumed._tag === "Left") return red(resumed.left.message)
            if (resumed.right === undefined) return print.line("no earlier session to resume (only sessions with at least one turn count)")
            return print.line(resumedLine(resumed.right))
          }
          case "/new": {
            const previous = yield* conv.id
            yield* conv.detach
            return print.line(
              previous === "" ? "new conversation" : `new conversation — ${previous} stays as it is; /resume ${previous} to go back`
            )
          }
          case "/compact": {
            const outcome = yield* cancellable(Effect.either(agent.compact(conv, arg)))
            if (outcome._tag === "Cancelled") return
            const done = outcome.value
            if (done._tag === "Left") return red(done.left.message)
            if (done.right._tag === "Nothing") return print.line("nothing to compact yet: the history is no longer than the turns kept verbatim")
            notice(done.right.warning)
            return print.line(
              `compacted: ${done.right.replaced} older message(s) replaced by a summary (about ${done.right.tokensBefore} → ${done.right.tokensAfter} tokens)`
            )
          }
          default:
            return print.line(`unknown command ${name} — commands: ${COMMANDS.join(" ")}`)
        }
      })

    const prompt = style.bold("› ")
    while (true) {
      const line = yield* Effect.promise(() => input.question(input.interactive ? prompt : ""))
      if (line === undefined) break
      const text = line.trim()
      if (text === "") continue
      if (text.startsWith("/")) {
        const [name, ...rest] = text.split(/\s+/)
        if (name === "/exit" || name === "/quit") break
        yield* command(conversation, name, rest.join(" "))
        continue
      }
      yield* ask(line)
    }
  })
