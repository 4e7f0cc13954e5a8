import * as os from "node:os"
import * as path from "node:path"

import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import type * as Layer from "effect/Layer"
import * as Ref from "effect/Ref"
import * as Runtime from "effect/Runtime"
import * as Stream from "effect/Stream"

import { Agent } from "../agent/Agent"
import { findInstructionFiles, instructionLabel } from "../agent/Instructions"
import { Jobs } from "../agent/Jobs"
import { RememberedApprovals } from "../approvals/RememberedApprovals"
import { modeLine, nextMode } from "../approvals/SessionSettings"
import { Changes } from "../changes/Changes"
import { restoreModel } from "../commands/ModelChoice"
import { readUserCommands, type UserCommands } from "../commands/UserCommands"
import { AppConfig } from "../config/Config"
import { projectAboveLine } from "../config/ProjectHint"
import type { ImageInput } from "../domain/Images"
import type { ChosenStart } from "../domain/StartOn"
import { startedUp } from "../lib/StartedUp"
import { VERSION } from "../lib/Version"
import { McpServers, summaryLine } from "../mcp/McpServers"
import { missingKeyWarning } from "../model/Failures"
import type { ServerCheck } from "../model/ModelClient"
import { ModelClient } from "../model/ModelClient"
import { modelNames, windowFigure } from "../model/ServerWords"
import { type Conversation } from "../sessions/Conversation"
import { Keeper } from "../sessions/Keeper"
import { startOn } from "../sessions/SessionStart"
import { withJobCount } from "../text/JobsText"
import {
  answeringPart,
  banner,
  earlierCount,
  goodbyeLine,
  listingRows,
  type ServerState,
  startedLines
} from "../text/Lines"
import { sanitize, sanitizeOutput } from "../text/Sanitize"
import { escapesFor, type Style, themeOf } from "../text/Style"
import { bashTool } from "../tools/Bash"
import { Sandbox, sandboxLine } from "../tools/Sandbox"
import { attachFiles, secretAttachmentsAllowed, shellContext } from "./Attachments"
import { type CommandContext, commandMenu, commandNames, runCommandLine, type TerminalMemory } from "./Commands"
import { ESC_ESC, type TerminalInput } from "./Input"
import { type Answers, makeAnswers } from "./Markdown"
import { modelIds } from "./ModelCommand"
import { offerPlanExit } from "./PlanExit"
import { makeProgress, type Progress } from "./Progress"
import { recapLines } from "./Recap"
import { pickRewind } from "./Rewind"
import { makeCompleter } from "./TabCompletion"
import { type Printer, TerminalIO } from "./TerminalIO"
import { makeTurnView, type TurnView, type WaitingLabel, waitingLabel } from "./TurnView"

/** How the command line starts the terminal: on which conversation, and with which first question. */
export interface TerminalStart {
  readonly start: ChosenStart
  readonly question: string | undefined
}

/** How the terminal ended, for the exit code: 0, 1 when the last turn failed (piped), 2 bad usage, 130. */
export type TerminalEnd = number

/**
 * The terminal façade: a banner, then questions and slash commands until the user leaves.
 * The agent's layer is built once the banner is out, so that it costs no start-up time.
 */
export const runTerminal = <E, R>(
  cwd: string,
  agentLayer: Layer.Layer<Agent | Changes | Jobs, E, R>,
  begin: TerminalStart = { start: { _tag: "New" }, question: undefined }
) =>
  Effect.gen(function*() {
    const loaded = yield* AppConfig
    const keeper = yield* Keeper
    const model = yield* ModelClient
    const { info, style } = yield* TerminalIO

    // the banner waits a moment for what the server says of itself, not longer, and not at all
    // when a run of the last minutes kept it (the server is asked all the same, after)
    const [server, conversation, listing, window] = yield* Effect.all(
      [
        model.known === undefined ? model.check : Effect.succeed(model.known),
        keeper.open(cwd, { createFile: "later" }),
        keeper.list(cwd),
        model.settledWindow
      ],
      { concurrency: "unbounded" }
    )
    const earlier = earlierCount(listing, "")
    // tips until the project has a saved conversation
    const tips = earlier === 0
    info.line(
      banner({
        version: VERSION,
        loaded,
        answering: server.answering,
        cwd,
        status: yield* conversation.status,
        earlier,
        style,
        tips,
        missingFrom: missingFrom(server),
        contextWindow: window,
        modelNames,
        instructions: findInstructionFiles(loaded.config.instructions, cwd, os.homedir()).map((file) =>
          sanitize(instructionLabel(file.shown, file.size))
        ),
        serverState: serverState(server)
      })
    )
    info.line(sandboxLine(yield* (yield* Sandbox).state))
    if (server.notOpenAi !== undefined) info.line(style.yellow(sanitize(server.notOpenAi)))
    const noKey = missingKeyWarning(loaded.config.model.apiKeyEnv, process.env)
    if (noKey !== undefined) info.line(style.yellow(noKey))
    const warning = yield* model.takeWarning
    if (warning !== undefined) info.line(style.yellow(sanitize(warning)))
    const mcp = yield* McpServers
    if (mcp.configured !== undefined) info.line(summaryLine(mcp.configured))
    const own = yield* readUserCommands(loaded, cwd)
    for (const note of own.notes) info.line(style.yellow(sanitize(note)))
    const above = projectAboveLine(cwd, loaded.file)
    if (above !== undefined) info.line(style.yellow(above))
    const started = yield* startOn(conversation, cwd, begin.start)
    if (started._tag === "Failed") {
      if (started.line !== "") info.line(style.red(sanitize(started.line)))
      return started.code
    }
    for (const line of startedLines(started)) info.line(line)
    const kept = started.resumed ? yield* restoreModel(conversation) : undefined
    if (kept !== undefined) info.line(sanitize(kept))
    const answers = makeAnswers(
      (yield* TerminalIO).print,
      process.env,
      process.stdout,
      themeOf(loaded.config.theme, process.env)
    )
    if (started.resumed) {
      const recap = recapLines(
        (yield* conversation.snapshot).messages,
        cwd,
        style,
        yield* answers.engine,
        loaded.config.sessions.recap
      )
      if (recap.length > 0) info.line(recap.join("\n"))
    }
    if (started.report?.interrupted !== undefined) (yield* TerminalIO).input.offer?.(started.report.interrupted)
    const talk = (agent: Agent["Type"]) => converse(cwd, agent, conversation, begin.question, answers, window, own)
    return yield* Effect.flatMap(Agent, talk).pipe(Effect.provide(agentLayer))
  })

/** What the prompt loop, its questions and its shell lines share: the commands' context, and more. */
interface Conversing extends CommandContext {
  readonly info: Printer
  readonly progress: Progress
  readonly view: TurnView
  /** What the progress line says while the model is awaited, set as each turn starts. */
  readonly waiting: WaitingLabel
}

/** Questions and slash commands, until the user leaves. */
const converse = (
  cwd: string,
  agent: Agent["Type"],
  conversation: Conversation,
  first: string | undefined,
  answers: Answers,
  bannerWindow: number | undefined,
  own: UserCommands
) =>
  Effect.gen(function*() {
    const keeper = yield* Keeper
    const changes = yield* Changes
    const remembered = yield* RememberedApprovals
    const { config } = yield* AppConfig
    const { input, print, info, questions, style } = yield* TerminalIO
    const memory: TerminalMemory = { rows: undefined, lastTool: undefined, own }
    const progress = makeProgress(print, style, Date.now, () => terminal.jobs.running())
    const waiting = waitingLabel(config.model.name)
    const live = input.interactive && escapesFor(process.stdout, process.env)
    const view = makeTurnView({ print, info, style, live, answers, progress, memory, waiting, questions })
    const terminal: Conversing = {
      cwd,
      agent,
      jobs: yield* Jobs,
      conversation,
      keeper,
      changes,
      remembered,
      input,
      print,
      info,
      style,
      red: (line) => info.line(style.red(sanitize(line))),
      notice: (line) => (line === undefined ? undefined : info.line(style.yellow(sanitize(line)))),
      cancellable: makeCancellable(input, progress, info, style),
      memory,
      answers,
      recapExchanges: config.sessions.recap,
      progress,
      view,
      waiting
    }
    configureInput(terminal, yield* Effect.runtime<ModelClient | AppConfig>())
    yield* promptLoop(terminal, first, bannerWindow)
    yield* goodbye(conversation)
    return !input.interactive && view.failed() ? 1 : 0
  })

/** A runner of `work` until it ends or the user presses Ctrl-C, which interrupts it. */
const makeCancellable =
  (input: TerminalInput, progress: Progress, info: Printer, style: Style) => <A, E>(work: Effect.Effect<A, E>) =>
    Effect.gen(function*() {
      const cancel = yield* Deferred.make<void>()
      const stopWatching = input.watchCancel(() => Deferred.unsafeDone(cancel, Exit.void))
      const outcome = yield* work.pipe(
        Effect.map((value) => ({ _tag: "Done" as const, value })),
        Effect.raceFirst(Effect.as(Deferred.await(cancel), { _tag: "Cancelled" as const })),
        Effect.ensuring(Effect.sync(stopWatching))
      )
      if (outcome._tag === "Cancelled") {
        progress.stop()
        // what the running command printed stays on screen, above the cancel line
        for (const line of progress.erased()) info.line(line)
        info.line(style.dim("⏹ cancelled"))
      }
      return outcome
    })

/** The prompt's history (in the project's `.mm`, or in memory) and its Tab completion. */
const configureInput = (terminal: Conversing, runtime: Runtime.Runtime<ModelClient | AppConfig>) => {
  const { conversation, cwd, input, keeper, style } = terminal
  const sessionsDir = keeper.dirFor(cwd)
  input.configure({
    ...(sessionsDir === undefined
      ? { history: "memory" as const }
      : { historyFile: path.join(cwd, ".mm", "history") }),
    commandMenu: commandMenu(terminal.style, terminal.memory.own),
    complete: makeCompleter({
      cwd,
      commands: () => commandNames(terminal.memory.own),
      models: () => Runtime.runPromise(runtime)(modelIds),
      sessionIds: () =>
        Runtime.runPromise(runtime)(Effect.map(keeper.list(cwd), (listing) => listingRows(listing, { all: true })))
    }),
    // Shift-Tab: the next permission mode, for this run (approvalModes in SessionSettings.ts)
    nextMode: () =>
      style.dim(modeLine(
        Runtime.runSync(runtime)(
          Ref.modify(conversation.settings, (settings) => {
            const mode = nextMode(settings.mode)
            return [mode, { ...settings, mode }]
          })
        )
      ))
  })
}

const missingFrom = (server: ServerCheck): ReadonlyArray<string> | undefined =>
  server.missing && server.models !== undefined ? server.models.map(sanitize) : undefined

const serverState = (server: ServerCheck): ServerState =>
  server.loading === true
    ? "loading"
    : server.notOpenAi !== undefined
    ? "not-openai"
    : server.reached === true
    ? "reached"
    : undefined

/** How the banner tells the server's state: `(answering)`, `(not answering)`… */
const serverPart = (model: string, server: ServerCheck, style: Style): string =>
  answeringPart(model, server.answering, missingFrom(server), style, modelNames, serverState(server))

/**
 * A banner drawn from what a run of the last minutes kept of the server: the server is asked
 * all the same, and when it says otherwise now (it no longer answers, lost the model, serves
 * another window), that is said above the prompt if mm is waiting at it. The window the server
 * serves now is in force at once, said or not.
 */
const tellServerWhenChecked = (idle: () => boolean, prompt: string, bannerWindow: number | undefined) =>
  Effect.gen(function*() {
    const model = yield* ModelClient
    const known = model.known
    if (known === undefined) return
    const { print, style } = yield* TerminalIO
    const { config } = yield* AppConfig
    const before = serverPart(config.model.name, known, style)
    const named = `model ${config.model.name} at ${sanitize(config.model.url)}`
    const say = (lines: ReadonlyArray<string>) => {
      print.write("\r\u001b[K")
      for (const line of lines) print.line(line)
      print.write(prompt)
    }
    yield* Effect.fork(Effect.gen(function*() {
      const now = yield* model.check
      const part = serverPart(config.model.name, now, style)
      if (part !== before && idle()) {
        say([`${named} ${part}`, ...(now.notOpenAi === undefined ? [] : [style.yellow(sanitize(now.notOpenAi))])])
      }
      const window = yield* model.freshWindow
      if (bannerWindow !== undefined && window !== bannerWindow && idle()) {
        const was = `${windowFigure(bannerWindow)} was kept from a run before`
        say([`${named} serves ${windowFigure(window)} context now (${was})`])
      }
    }))
  })

/** The first question, then a line at a time until the input ends or a command leaves. */
const promptLoop = (terminal: Conversing, first: string | undefined, bannerWindow: number | undefined) =>
  Effect.gen(function*() {
    const { input, print, style } = terminal
    const prompt = style.bold("> ")
    let atPrompt = false
    yield* tellServersWhenUp(() => atPrompt && input.interactive, prompt)
    yield* tellServerWhenChecked(() => atPrompt && input.interactive, prompt, bannerWindow)
    // start-up is over once the first prompt is drawn (or the first question sent)
    setImmediate(startedUp)
    if (first !== undefined) {
      if (input.interactive) print.line(`${prompt}${first}`)
      yield* ask(terminal, first)
    }
    while (true) {
      atPrompt = true
      const draft = terminal.memory.draft
      terminal.memory.draft = undefined
      const shown = withJobCount(prompt, terminal.jobs.running(), style)
      const line = yield* Effect.promise(() => input.question(input.interactive ? shown : "", draft)).pipe(
        Effect.ensuring(Effect.sync(() => (atPrompt = false)))
      )
      if (line === undefined) break
      if (line === ESC_ESC) {
        yield* pickRewind(terminal)
        continue
      }
      if ((yield* handleLine(terminal, line)) === "leave") break
    }
  })

/** One line typed at the prompt: a `!command`, a slash command, or a question. */
const handleLine = (terminal: Conversing, line: string) =>
  Effect.gen(function*() {
    const text = line.trim()
    if (text === "") return
    if (text.startsWith("!") && text.length > 1) return yield* shellLine(terminal, text.slice(1).trim())
    const command = runCommandLine(terminal, text)
    const outcome = command === undefined ? { send: line } : yield* command
    if (typeof outcome === "object") yield* question(terminal, outcome.send)
    else return outcome
  })

/** One turn, then, when it ended in plan mode, whether to carry the plan out, and in which mode (PlanExit.ts). */
const ask = (terminal: Conversing, question: string, images: ReadonlyArray<ImageInput> = []) =>
  Effect.gen(function*() {
    const outcome = yield* oneTurn(terminal, question, images)
    if (outcome._tag === "Done" && !terminal.view.failed()) {
      yield* offerPlanExit(terminal, (next) => oneTurn(terminal, next))
    }
  })

/** One turn of the agent, drawn as it streams, until it ends or the user cancels it. */
const oneTurn = (terminal: Conversing, question: string, images: ReadonlyArray<ImageInput> = []) =>
  Effect.gen(function*() {
    const { agent, answers, conversation, input, print, progress, view } = terminal
    view.begin()
    progress.start(terminal.waiting.asking((yield* Ref.get(conversation.settings)).model))
    const finish = Effect.sync(() => {
      progress.stop()
      answers.flush()
    })
    yield* answers.preload
    const stream = agent.turn(conversation, question, images).pipe(
      Stream.runForEach(view.render),
      Effect.onInterrupt(() => Effect.sync(view.cancelled)),
      Effect.ensuring(finish)
    )
    const outcome = yield* terminal.cancellable(stream).pipe(Effect.ensuring(Effect.sync(view.end)))
    // on a terminal, a blank line before the next prompt: one turn is told from the next
    if (input.interactive && process.stdout.isTTY === true) {
      print.endLine()
      print.write("\n")
    }
    return outcome
  })

/** A question with the files it names (`@path`) attached; a file that cannot be attached stops it. */
const question = (terminal: Conversing, line: string) =>
  Effect.gen(function*() {
    if (!(yield* secretAttachmentsAllowed(terminal, line))) return
    const attached = yield* attachFiles(terminal.cwd, line)
    if (attached._tag === "Problem") return terminal.notice(attached.line)
    if (attached.files.length > 0) terminal.info.line(terminal.style.dim(`attached ${attached.files.join(", ")}`))
    yield* ask(terminal, attached.text, attached.images)
  })

/** `!command`: run in the project, shown, and kept in the conversation as context for the next question. */
const shellLine = (terminal: Conversing, command: string) =>
  Effect.gen(function*() {
    const { agent, conversation, cwd, memory, print, progress, style } = terminal
    progress.start(`running ${command.split(/\s+/)[0]}`)
    const run = agent.runShell(command, cwd, (text) => Effect.sync(() => progress.output(sanitizeOutput(text))))
    const outcome = yield* terminal.cancellable(run.pipe(Effect.ensuring(Effect.sync(progress.stop))))
    if (outcome._tag === "Cancelled") return
    const output = sanitizeOutput(outcome.value.output)
    memory.lastTool = { name: bashTool.name, title: command, output }
    print.line(outcome.value.failed ? style.yellow(output) : output)
    terminal.notice(
      yield* conversation.update((session) => ({
        ...session,
        messages: [...session.messages, { role: "user", content: shellContext(command, outcome.value.output) }]
      }))
    )
  })

/**
 * Once every MCP server of agent.yaml has started or failed: their summary, and a yellow
 * line for each failure, above the prompt if mm is waiting at it (otherwise the next turn
 * tells the failures, and /mcp shows the rest).
 */
const tellServersWhenUp = (idle: () => boolean, prompt: string) =>
  Effect.gen(function*() {
    const { print, style } = yield* TerminalIO
    const servers = (yield* McpServers).configured
    if (servers === undefined || servers.settled()) return
    void servers.ready.then(() => {
      if (!idle()) return
      print.write("\r\u001b[K")
      print.line(summaryLine(servers))
      for (const problem of servers.takeProblems()) print.line(style.yellow(problem))
      print.write(prompt)
    })
  })

/** Leaving: the session's id, when it was saved, so it can be found again. */
const goodbye = (conversation: Conversation) =>
  Effect.gen(function*() {
    const { print, info } = yield* TerminalIO
    print.endLine()
    info.endLine()
    const id = yield* conversation.id
    const status = yield* conversation.status
    if (id !== "" && status._tag === "Saving") info.line(goodbyeLine(id))
  })
