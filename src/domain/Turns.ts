import type { ChangeRecord, ForkedFrom, Message, Session } from "./Session"

/**
 * A conversation's turns as a person counts them: turn N begins with the N-th question the
 * conversation holds. A cancelled turn stays (with its partial answer) and counts; a failed one
 * leaves `messages` and does not; turns a compaction replaced keep their numbers (their archive
 * holds them). The session's `turns` is the number of turns held, compacted ones included, so
 * `lastTurn(session) === session.turns` once no turn is in progress. What `/changes`, `/undo`,
 * `/fork N`, `/rewind N`, `--fork ID:N`, the Esc Esc list, `mm sessions show|search` and the
 * change records call "turn N".
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

/** What numbering reads of a session: a turn in progress has its question in `messages` but is not in `turns` yet. */
type Numbered = Pick<Session, "turns" | "messages"> & { readonly inProgress?: unknown }

/** How many questions `messages` holds (what an archive's `turns` counts). */
export const questionsIn = (messages: ReadonlyArray<Message>): number => messages.filter(isQuestion).length

/** The questions held whose turn has ended (the last one is still being answered while `inProgress` is set). */
const endedHeld = (session: Numbered): number => {
  const asked = questionsIn(session.messages)
  return session.inProgress !== undefined && asked > 0 ? asked - 1 : asked
}

/** Turns a compaction took out of `messages` (they live in the session's archives). */
const compactedTurns = (session: Numbered): number =>
  session.messages.some((m) => m.summary === true) ? Math.max(0, session.turns - endedHeld(session)) : 0

/** Each question still in `messages`, with its turn number. */
export const turnStarts = (session: Numbered): ReadonlyArray<TurnStart> => {
  const starts: Array<TurnStart> = []
  let turn = compactedTurns(session)
  session.messages.forEach((message, index) => {
    if (isQuestion(message)) starts.push({ turn: ++turn, index, question: message.content ?? "" })
  })
  return starts
}

/** The number of the last turn (0 for none). */
export const lastTurn = (session: Numbered): number => {
  const starts = turnStarts(session)
  return starts.length === 0 ? compactedTurns(session) : starts[starts.length - 1].turn
}

/** The turn each message belongs to (0: before the first question still held). */
export const turnOfMessages = (session: Numbered): ReadonlyArray<number> => {
  let turn = compactedTurns(session)
  return session.messages.map((message) => (isQuestion(message) ? ++turn : turn))
}

const callIds = (messages: ReadonlyArray<Message>): Set<string> =>
  new Set(messages.flatMap((message) => (message.tool_calls ?? []).map((call) => call.id)))

/**
 * Where turn `turn` begins in the change log: the first change made by a tool call of that
 * turn or a later one, else the first recorded with that turn number or a later one.
 */
export const changesSince = (session: Numbered & Pick<Session, "changes">, turn: number): number => {
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

/**
 * A session read from a file, numbered as above. Files written before cancelled turns counted
 * had `turns` counting completed turns only, and change records numbered `turns + 1` of that
 * count; this brings them to the numbering, and leaves a file written since as it is (the same
 * object: nothing to change). `turns` becomes the turns held (a turn in progress excluded) plus
 * those a compaction replaced, never less than it was: for a compacted old file the number of
 * turns in its archives is not read here, so the old count stands for them. A change record made
 * by a tool call still in `messages` takes the number of the turn holding that call; one whose
 * call left `messages` (compacted, or from a failed turn), or whose call id is in two turns,
 * keeps its number. An undo's record has
 * no call: it takes the number of the latest turn whose call made a record before it, when that is
 * higher (an undo runs after those turns; it counted fewer only because cancelled turns did not
 * count), else keeps its own.
 */
export const withNumbering = <S extends Numbered & Pick<Session, "changes">>(session: S): S => {
  const turns = Math.max(session.turns, endedHeld(session))
  const numbered = turns === session.turns ? session : { ...session, turns }
  const changes = renumbered(numbered)
  return changes === undefined ? numbered : { ...numbered, changes }
}

/** The change log with each record numbered by the turn holding its call; undefined when none moves. */
const renumbered = (session: Numbered & Pick<Session, "changes">): ReadonlyArray<ChangeRecord> | undefined => {
  const changes = session.changes
  if (changes === undefined || changes.length === 0) return undefined
  // a call id given in two turns (some servers number calls afresh in each answer) names neither
  const turnOfCall = new Map<string, number | undefined>()
  const turnOf = turnOfMessages(session)
  session.messages.forEach((message, index) => {
    for (const call of message.tool_calls ?? []) {
      turnOfCall.set(
        call.id,
        turnOfCall.has(call.id) && turnOfCall.get(call.id) !== turnOf[index] ? undefined : turnOf[index]
      )
    }
  })
  let moved = false
  let latest = 0
  const out = changes.map((change) => {
    const held = change.kind === "undo" || change.tool_call_id === undefined
      ? undefined
      : turnOfCall.get(change.tool_call_id)
    if (held !== undefined) latest = Math.max(latest, held)
    const turn = held ?? (change.kind === "undo" ? Math.max(change.turn, latest) : change.turn)
    if (turn === change.turn) return change
    moved = true
    return { ...change, turn }
  })
  return moved ? out : undefined
}
