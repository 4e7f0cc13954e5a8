import type { ForkedFrom, Message, Session } from "./Session"

/**
 * A conversation's turns as a person counts them: turn N begins with the N-th question. What
 * `/fork N`, `/rewind N`, the Esc Esc list and `mm sessions search` call "turn N".
 */

/** A `!command` line kept as context: a user message that is not a question. */
export const SHELL_CONTEXT_HEAD = "I ran a shell command in the project (context for what follows, no answer needed):"

/** A question asked by the person (not an undo's note, a compaction summary or a `!command`'s output). */
const isQuestion = (message: Message): boolean =>
  message.role === "user" && message.note !== true && message.summary !== true &&
  !(message.content ?? "").startsWith(SHELL_CONTEXT_HEAD)

interface TurnStart {
  readonly turn: number
  /** Where the question is in `messages`. */
  readonly index: number
  readonly question: string
}

/** Turns a compaction took out of `messages` (they live in the session's archives). */
const compactedTurns = (session: Pick<Session, "turns" | "messages">): number => {
  const asked = session.messages.filter(isQuestion).length
  return session.messages.some((m) => m.summary === true) ? Math.max(0, session.turns - asked) : 0
}

/** Each question still in `messages`, with its turn number. */
export const turnStarts = (session: Pick<Session, "turns" | "messages">): ReadonlyArray<TurnStart> => {
  const starts: Array<TurnStart> = []
  let turn = compactedTurns(session)
  session.messages.forEach((message, index) => {
    if (isQuestion(message)) starts.push({ turn: ++turn, index, question: message.content ?? "" })
  })
  return starts
}

/** The number of the last turn (0 for none). */
export const lastTurn = (session: Pick<Session, "turns" | "messages">): number => {
  const starts = turnStarts(session)
  return starts.length === 0 ? compactedTurns(session) : starts[starts.length - 1].turn
}

/** The turn each message belongs to (0: before the first question still held). */
export const turnOfMessages = (session: Pick<Session, "turns" | "messages">): ReadonlyArray<number> => {
  let turn = compactedTurns(session)
  return session.messages.map((message) => (isQuestion(message) ? ++turn : turn))
}

const callIds = (messages: ReadonlyArray<Message>): Set<string> =>
  new Set(messages.flatMap((message) => (message.tool_calls ?? []).map((call) => call.id)))

/**
 * Where turn `turn` begins in the change log: the first change made by a tool call of that
 * turn or a later one (so a cancelled turn kept in `messages`, which leaves `turns` as it was,
 * does not shift the cut), else the first recorded with that turn number or a later one.
 */
export const changesSince = (session: Pick<Session, "turns" | "messages" | "changes">, turn: number): number => {
  const changes = session.changes ?? []
  const start = turnStarts(session).find((t) => t.turn === turn)
  if (start === undefined && turn > lastTurn(session)) return changes.length
  if (start !== undefined) {
    const earlier = callIds(session.messages.slice(0, start.index))
    const later = callIds(session.messages.slice(start.index))
    const byCall = changes.findIndex((c) =>
      c.tool_call_id !== undefined && later.has(c.tool_call_id) && !earlier.has(c.tool_call_id)
    )
    if (byCall >= 0) return byCall
  }
  const byTurn = changes.findIndex((change) => change.turn >= turn)
  return byTurn === -1 ? changes.length : byTurn
}

/** Why a session cannot be cut after `turn`, or undefined when it can. */
export const cutProblem = (session: Session, turn: number): string | undefined => {
  const last = lastTurn(session)
  if (!Number.isSafeInteger(turn) || turn < 0) return `not a turn number: ${turn}`
  if (turn > last) return last === 0 ? "this conversation has no turn yet" : `there is no turn ${turn} (last: ${last})`
  const compacted = compactedTurns(session)
  if (turn < compacted) return `turns 1–${compacted} were compacted into a summary; pick a turn after ${compacted}`
  return undefined
}

/**
 * The session as it stood after `turn`: a new conversation (no id yet, dated `now`) holding
 * its messages up to that turn, the changes and errors made by then, and `forkedFrom`. The
 * original is not touched. A turn in progress is not carried over.
 */
export const forkOf = (session: Session, turn: number, now: Date): Session => {
  const next = turnStarts(session).find((start) => start.turn === turn + 1)
  const messages = next === undefined ? session.messages : session.messages.slice(0, next.index)
  const { inProgress: _inProgress, archiveOf: _archiveOf, ...kept } = session as Session & {
    readonly inProgress?: unknown
    readonly archiveOf?: unknown
  }
  const changes = (session.changes ?? []).slice(0, changesSince(session, turn + 1))
  const { changes: _changes, ...rest } = kept
  return {
    ...rest,
    id: "",
    createdAt: now.toISOString(),
    updatedAt: now.toISOString(),
    title: turn === 0 ? "" : session.title,
    turns: turn,
    messages,
    errors: session.errors.filter((error) => error.turns < turn),
    ...(changes.length > 0 ? { changes } : {}),
    ...(session.id !== "" ? { forkedFrom: { id: session.id, turn } satisfies ForkedFrom } : {})
  }
}
