import { appendError, type ErrorRecord, type Message, type Session } from "../domain/Session"
import { firstLine } from "../lib/OneLine"
import { type ProcessProbe, runsElsewhere, systemProbe } from "../lib/ProcessIdentity"

/**
 * A turn that was still being answered when mm stopped (killed, power lost): its file says
 * `inProgress`. Loading such a session closes the turn so that the history is one the model
 * can be sent again, and keeps the question to offer it back.
 */

/** The line of the `generation` record a closed turn leaves, and what the façades say. */
export const STOPPED_LINE = "mm stopped during this turn"

/** The result given to a tool call the model asked for but mm never ran. */
export const NEVER_RAN = "not run: mm stopped before this call ran"

/** What ends the result of the call that was running when mm stopped, after what it printed. */
export const STOPPED_WHILE_RUNNING = "mm stopped while this ran"

/** The last `max` characters of a call's output, `…` before them when some were cut. */
export const lastOutput = (output: string, max: number): string =>
  output.length > max ? `…${output.slice(-max)}` : output

/**
 * The result of a call that did not finish: what it printed so far, then `[why]` on a line of
 * its own; `why` alone when it printed nothing.
 */
export const unfinishedResult = (output: string | undefined, why: string): string =>
  output === undefined || output.trim() === "" ? why : `${output}${output.endsWith("\n") ? "" : "\n"}[${why}]`

export const interruptedLine = (question: string): string =>
  `the last question was interrupted: ${JSON.stringify(firstLine(question))}`

/**
 * The pid of the other mm still answering the session's turn, if one is: the file is being
 * written by a running mm, not left by a killed one, and must be neither closed nor written.
 * Asked of the system only when the file marks a turn in progress; a marker from before mm
 * named its writer (no `by`) is taken as left.
 */
export const liveWriter = (session: Session, probe: ProcessProbe = systemProbe): number | undefined => {
  const by = session.inProgress?.by
  return by !== undefined && runsElsewhere(by, probe) ? by.pid : undefined
}

/** Why a session whose turn another mm is answering cannot be opened here. */
export const liveLine = (id: string, pid: number): string =>
  `session ${id} is answering a question in another mm (pid ${pid}); wait for it to finish, or start a new conversation`

interface Closed {
  readonly session: Session
  /** The question of the turn closed; undefined when the session had no turn in progress. */
  readonly question: string | undefined
}

/** Where the turn's question is: the recorded index when it still holds it, else the last such question. */
const startOf = (messages: ReadonlyArray<Message>, question: string, recorded: number): number => {
  const at = messages[recorded]
  if (at !== undefined && at.role === "user" && at.content === question) return recorded
  for (let i = messages.length - 1; i >= 0; i--) {
    if (messages[i].role === "user" && messages[i].content === question) return i
  }
  return -1
}

type Running = NonNullable<Session["inProgress"]>["running"]

/**
 * The turn's messages with every call that has no result closed: the one that was running with
 * what it printed so far, the others as never run.
 */
const answered = (turn: ReadonlyArray<Message>, running: Running): Array<Message> => {
  const out: Array<Message> = []
  const results = new Set(turn.filter((m) => m.role === "tool").map((m) => m.tool_call_id))
  for (const message of turn) {
    out.push(message)
    for (const call of message.tool_calls ?? []) {
      if (results.has(call.id)) continue
      const content = call.id === running?.id ? unfinishedResult(running.output, STOPPED_WHILE_RUNNING) : NEVER_RAN
      out.push({ role: "tool", tool_call_id: call.id, content, failed: true })
    }
  }
  return out
}

/** Whether the turn holds the call that was running (it had started: something may have run). */
const holdsRunning = (turn: ReadonlyArray<Message>, running: Running): boolean =>
  running !== undefined && turn.some((m) => (m.tool_calls ?? []).some((call) => call.id === running.id))

/**
 * The session with its interrupted turn closed: the tool calls that completed stay (the model
 * must know what already ran), with their question, and so does the call that was running, with
 * what it printed so far; a turn where no tool ran leaves `messages` as a failed turn does.
 * Either way one `generation` record says so.
 */
export const closeInterrupted = (session: Session, at: Date): Closed => {
  const marker = session.inProgress
  if (marker === undefined) return { session, question: undefined }
  const { inProgress: _dropped, ...rest } = session
  const start = startOf(session.messages, marker.question, marker.start)
  const before = start < 0 ? session.messages : session.messages.slice(0, start)
  const turn = start < 0 ? [] : session.messages.slice(start)
  const ran = turn.some((m) => m.role === "tool") || holdsRunning(turn, marker.running)
  const record = {
    kind: "generation" as const,
    at: at.toISOString(),
    turns: session.turns,
    question: firstLine(marker.question),
    line: STOPPED_LINE
  }
  return {
    session: {
      ...rest,
      messages: ran ? [...before, ...answered(turn, marker.running)] : before,
      // a question that stays is a turn held (domain/Turns.ts)
      turns: ran ? session.turns + 1 : session.turns,
      errors: appendError(session.errors, record),
      updatedAt: at.toISOString()
    },
    question: marker.question
  }
}

/** The record an interrupted turn's closing left, when it is the session's latest. */
const latestStopped = (session: Session): ErrorRecord | undefined => {
  const last = session.errors.at(-1)
  return last !== undefined && last.kind === "generation" && last.line === STOPPED_LINE ? last : undefined
}

/**
 * Whether a turn of the session was interrupted and nothing failed since: still marked in
 * progress, or closed (its record the latest). Such a session is a conversation to go on with,
 * even when its only question left `messages` (no tool ran before mm stopped).
 */
export const wasInterrupted = (session: Session): boolean =>
  session.inProgress !== undefined || latestStopped(session) !== undefined

/**
 * The question (its first line) of an interrupted turn an earlier load closed, when nothing
 * has changed the session since: its last turn is still the one that was never answered.
 */
export const closedUnanswered = (session: Session): string | undefined => {
  const record = latestStopped(session)
  return record !== undefined && record.at === session.updatedAt ? record.question : undefined
}
