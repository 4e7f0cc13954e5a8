import { appendError, type Message, type Session } from "../domain/Session"
import { firstLine } from "../lib/OneLine"

/**
 * A turn that was still being answered when mm stopped (killed, power lost): its file says
 * `inProgress`. Loading such a session closes the turn so that the history is one the model
 * can be sent again, and keeps the question to offer it back.
 */

/** The line of the `generation` record a closed turn leaves, and what the façades say. */
export const STOPPED_LINE = "mm stopped during this turn"

/** The result given to a tool call the model asked for but mm never ran. */
export const NEVER_RAN = "not run: mm stopped before this call ran"

export const interruptedLine = (question: string): string =>
  `the last question was interrupted: ${JSON.stringify(firstLine(question))}`

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

/** The turn's messages with every call that has no result closed as never run. */
const answered = (turn: ReadonlyArray<Message>): Array<Message> => {
  const out: Array<Message> = []
  const results = new Set(turn.filter((m) => m.role === "tool").map((m) => m.tool_call_id))
  for (const message of turn) {
    out.push(message)
    for (const call of message.tool_calls ?? []) {
      if (!results.has(call.id)) out.push({ role: "tool", tool_call_id: call.id, content: NEVER_RAN, failed: true })
    }
  }
  return out
}

/**
 * The session with its interrupted turn closed: the tool calls that completed stay (the model
 * must know what already ran), with their question; a turn where no tool ran leaves `messages`
 * as a failed turn does. Either way one `generation` record says so.
 */
export const closeInterrupted = (session: Session, at: Date): Closed => {
  const marker = session.inProgress
  if (marker === undefined) return { session, question: undefined }
  const { inProgress: _dropped, ...rest } = session
  const start = startOf(session.messages, marker.question, marker.start)
  const before = start < 0 ? session.messages : session.messages.slice(0, start)
  const turn = start < 0 ? [] : session.messages.slice(start)
  const ran = turn.some((m) => m.role === "tool")
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
      messages: ran ? [...before, ...answered(turn)] : before,
      // a question that stays is a turn held (domain/Turns.ts)
      turns: ran ? session.turns + 1 : session.turns,
      errors: appendError(session.errors, record),
      updatedAt: at.toISOString()
    },
    question: marker.question
  }
}
