import * as Effect from "effect/Effect"
import { absurd } from "effect/Function"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"

import { Agent } from "../agent/Agent"
import type { TurnEvent } from "../agent/TurnEvent"
import { Approval, Approver } from "../approvals/Approver"
import { AppConfig } from "../config/Config"
import type { ChosenStart } from "../domain/StartOn"
import { Secrets } from "../lib/Secrets"
import { startedUp } from "../lib/StartedUp"
import { ModelClient } from "../model/ModelClient"
import type { Conversation } from "../sessions/Conversation"
import { closedUnanswered, interruptedLine } from "../sessions/Interrupted"
import { openOn, type Started } from "../sessions/SessionStart"
import { sessionsLine, startedLines, toolResultLine, toolStartLine } from "../text/Lines"
import { sanitize, sanitizeOutput, sanitizeProse } from "../text/Sanitize"
import { plain } from "../text/Style"
import { cutLine, cutNote, readOwnStdin, stdinCap } from "./BoundedStdin"
import { interruptedEvent, type PrintEvent, printEventJson } from "./PrintEvents"

/** The question sent: what was typed, then what came on stdin, as context. */
export const promptOf = (question: string | undefined, piped: string | undefined): string | undefined => {
  const context = piped === undefined || piped.trim() === "" ? undefined : piped.replace(/\s+$/, "")
  if (question === undefined) return context
  return context === undefined ? question : `${question}\n\n${context}`
}

/** The line said when a tool that needs approval was refused because nobody can be asked. */
export const NO_TERMINAL = "not approved: no terminal to ask (pass --yes, or set permissions: allow)"

/** `-p` has no terminal to ask: a call that needs approval is refused, and said on stderr. */
export const printApprover = (err: (line: string) => void) =>
  Layer.succeed(Approver, {
    ask: (request) =>
      Effect.sync(() => {
        const call = `${request.agent === undefined ? "" : `${request.agent}: `}${request.tool}  ${request.title}`
        err(
          sanitize(
            request.outsideSandbox === undefined
              ? `${call}: ${NO_TERMINAL}`
              : `${call}: the sandbox blocked it (${request.outsideSandbox}); not run outside it: no terminal to ask`
          )
        )
        return Approval.noOneToAsk
      })
  })

export interface PrintIO {
  readonly out: (text: string) => void
  readonly err: (line: string) => void
  readonly outIsTerminal: boolean
}

/** The process's own stdout and stderr, every known secret redacted. */
export const printIO = (redact: (text: string) => string): PrintIO => ({
  outIsTerminal: process.stdout.isTTY === true,
  out: (text) => void process.stdout.write(redact(text)),
  err: (line) => void process.stderr.write(`${redact(line)}\n`)
})

/**
 * `mm -p`: one turn, the answer alone on stdout (or one JSON object per event), everything
 * else on stderr. Resolves with the exit code: 0 answered, 1 the turn failed, 2 bad usage.
 */
export interface PrintOptions {
  readonly question: string | undefined
  readonly outputFormat: "text" | "json"
  readonly start: ChosenStart
  /** Tool lines and the session id on stderr. */
  readonly verbose: boolean
  /** Lines to show (with --verbose) before the answer: what the command line's pick said. */
  readonly notes?: ReadonlyArray<string>
}

export const runPrint = (run: PrintOptions, cwd: string, given?: PrintIO) =>
  Effect.gen(function*() {
    const io = given ?? printIO((yield* Secrets).redact)
    const window = yield* Effect.flatMap(ModelClient, (model) => model.contextWindow)
    const read = yield* Effect.promise(() => readOwnStdin(stdinCap(window)))
    const piped = read === undefined || read.kept >= read.total ? read?.text : `${read.text}\n\n${cutNote(read)}`
    if (read !== undefined && read.kept < read.total) io.err(cutLine(read))
    const prompt = promptOf(run.question, piped)
    if (prompt === undefined) {
      io.err("mm: -p needs a question, as an argument or on stdin")
      return 2
    }
    const { conversation, started } = yield* openOn(cwd, run.start)
    if (started._tag === "Failed") {
      if (started.line !== "") io.err(`mm: ${started.line}`)
      return started.code
    }
    const told = yield* withUnanswered(conversation, started)
    if (run.verbose) { for (const line of [...(run.notes ?? []), ...startedLines(told)]) io.err(line) }
    for (const line of yield* startNotices(run, conversation, told)) {
      io.err(line)
      if (run.outputFormat === "json") {
        io.out(`${JSON.stringify({ type: "notice", text: line } satisfies PrintEvent)}\n`)
      }
    }
    const unanswered = told.report?.interrupted
    if (unanswered !== undefined) {
      if (!run.verbose) io.err(sanitize(interruptedLine(unanswered)))
      if (run.outputFormat === "json") io.out(`${JSON.stringify(interruptedEvent(unanswered))}\n`)
    }
    const code = yield* Effect.flatMap(Agent, (agent) => answer(run, agent, conversation, prompt, io))
    if (run.verbose) {
      const id = yield* conversation.id
      const status = yield* conversation.status
      io.err(status._tag === "Saving" && id !== "" ? `session ${id} (mm --resume ${id} to go on)` : "session not saved")
    }
    return code
  })

/**
 * What a script is told before the turn even without `--verbose`: that the conversation will not
 * be kept (and why), and that `--continue` found nothing to continue and started a new one.
 */
const startNotices = (run: PrintOptions, conversation: Conversation, told: Extract<Started, { _tag: "Started" }>) =>
  Effect.map(conversation.status, (status): ReadonlyArray<string> => [
    ...(status._tag === "NotSaved" ? [sessionsLine(status, 0)] : []),
    ...(!run.verbose && told.note !== undefined ? [told.note] : [])
  ])

/**
 * What was resumed, naming the question of its last turn when mm stopped during it: closed by
 * this load, or by an earlier one with nothing changed since (a script is told either way).
 */
const withUnanswered = (conversation: Conversation, started: Extract<Started, { _tag: "Started" }>) =>
  Effect.gen(function*() {
    if (started.report === undefined || started.report.interrupted !== undefined) return started
    const question = closedUnanswered(yield* conversation.snapshot)
    return question === undefined ? started : { ...started, report: { ...started.report, interrupted: question } }
  })

/** What print mode keeps of a turn while it runs, and prints of each event, as text or as JSON. */
const makeEventSink = (run: PrintOptions, io: PrintIO) => {
  const json = run.outputFormat === "json"
  const kept = { text: "", failed: false }
  let open = false
  /** What the server reported for the turn's last model call. */
  let lastUsage: { readonly promptTokens: number; readonly completionTokens: number } | undefined
  const onEvent = (event: TurnEvent): void => {
    if (json) {
      const line = printEventJson(event, event._tag === "TurnFinished" ? lastUsage : undefined)
      if (line !== undefined) io.out(`${JSON.stringify(line)}\n`)
    }
    switch (event._tag) {
      case "TextDelta": {
        // answers of several steps (around tool calls) are kept apart by a line end
        const piece = open || kept.text === "" || kept.text.endsWith("\n") ? event.text : `\n${event.text}`
        kept.text += piece
        open = true
        // a terminal gets no escape sequence from the model; a pipe gets the answer as it is
        if (!json) io.out(io.outIsTerminal ? sanitizeProse(piece) : piece)
        break
      }
      case "ToolCallStarted":
        open = false
        if (!json && run.verbose) io.err(toolStartLine(sanitize(event.name), sanitize(event.title), plain))
        break
      case "ToolCallFinished":
        open = false
        if (!json && run.verbose) io.err(toolResultLine(sanitizeOutput(event.output), event.failed, plain))
        break
      case "Notice":
        // a notice (an MCP server that did not start, say) is for the person: on stderr, in JSON too
        io.err(sanitize(event.text))
        break
      case "CompactionFailed":
        if (!json) io.err(sanitize(event.error.message))
        break
      case "TurnFailed":
        kept.failed = true
        if (!json) io.err(sanitize(event.error.message))
        break
      case "Usage":
        lastUsage = event.estimated ? undefined : event
        break
      case "ReasoningDelta": // the answer alone on stdout: the reasoning only in JSON
      case "ToolOutput": // a running command's output: its whole output comes with ToolCallFinished
      case "PromptProgress": // the server reading the prompt: a terminal's status line only
      case "Plan": // the plan: in JSON only (the answer alone on stdout)
      case "SubAgentUsage": // a sub-agent's tokens: in JSON only
      case "TurnFinished": // the answer's last line end is written once the stream is over
        break
      default:
        // an event added to TurnEvent that print mode does not handle here does not compile
        absurd(event)
    }
  }
  return { onEvent, kept }
}

const answer = (run: PrintOptions, agent: Agent["Type"], conversation: Conversation, prompt: string, io: PrintIO) =>
  Effect.gen(function*() {
    const { config } = yield* AppConfig
    const json = run.outputFormat === "json"
    const emit = (event: PrintEvent) => io.out(`${JSON.stringify(event)}\n`)
    const { kept, onEvent } = makeEventSink(run, io)
    yield* agent.turn(conversation, prompt).pipe(Stream.runForEach((event) => Effect.sync(() => onEvent(event))))
    // print mode's start-up is its whole turn: the code that ends an answer (the text's last
    // checks, the save) is kept compiled too, which takes some 4 ms off every later run's end
    startedUp()
    if (!json && kept.text !== "" && !kept.text.endsWith("\n")) io.out("\n")
    if (json) {
      const id = yield* conversation.id
      const status = yield* conversation.status
      emit({
        type: "result",
        status: kept.failed ? "failed" : "answered",
        sessionId: status._tag === "Saving" && id !== "" ? id : null,
        answer: kept.text,
        model: config.model.name
      })
    }
    return kept.failed ? 1 : 0
  })
