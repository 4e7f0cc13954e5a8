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

/**
 * The questions held whose turn has ended: while `inProgress` is set, those before its `start`
 * (where mm put the question being answered), else all but the last.
 */
const endedHeld = (session: Numbered): number => {
  const marker = session.inProgress
  if (marker === undefined) return questionsIn(session.messages)
  const start = typeof marker === "object" && marker !== null
    ? (marker as { readonly start?: unknown }).start
    : undefined
  if (typeof start === "number" && Number.isSafeInteger(start) && start >= 0) {
    return questionsIn(session.messages.slice(0, start))
  }
  const asked = questionsIn(session.messages)
  return asked > 0 ? asked - 1 : asked
}

/** Whether a compaction replaced turns by a summary. */
const isCompacted = (session: Numbered): boolean => session.messages.some((m) => m.summary === true)

/** Turns a compaction took out of `messages` (they live in the session's archives). */
const compactedTurns = (session: Numbered): number =>
  isCompacted(session) ? Math.max(0, session.turns - endedHeld(session)) : 0

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

/** A change made by a question that failed: it came after turn `change.turn`, and is no turn's. */
export const isFailedChange = (change: ChangeRecord): boolean => change.failed !== undefined

/**
 * The change log once turn `turn` failed (its question asked at `askedAt`, its messages
 * `added`): the changes its calls made are marked `failed` and numbered by the turn it came
 * after, so that no number names both them and the next question.
 */
export const markFailed = (
  changes: ReadonlyArray<ChangeRecord>,
  added: ReadonlyArray<Message>,
  turn: number,
  askedAt: string
): ReadonlyArray<ChangeRecord> => {
  const calls = callIds(added)
  return changes.map((change) =>
    change.kind === undefined && !isFailedChange(change) && change.turn === turn && calls.has(change.tool_call_id ?? "")
      ? { ...change, turn: turn - 1, failed: askedAt }
      : change
  )
}

/**
 * Where turn `turn` begins in the change log: the first change made by a tool call of that turn
 * or a later one, or (an undo's, a failed question's, one whose call a compaction took away)
 * recorded with that turn number or a later one. A failed question's changes, numbered by the
 * turn they came after, come before the next turn: the files as they were just before turn K+1
 * include what a question that failed after turn K changed.
 */
export const changesSince = (session: Numbered & Pick<Session, "changes">, turn: number): number => {
  const changes = session.changes ?? []
  const start = turnStarts(session).find((t) => t.turn === turn)
  if (start === undefined && turn > lastTurn(session)) return changes.length
  const earlier = start === undefined ? new Set<string>() : callIds(session.messages.slice(0, start.index))
  const later = start === undefined ? new Set<string>() : callIds(session.messages.slice(start.index))
  const since = changes.findIndex((change) => {
    const id = change.kind === "undo" || isFailedChange(change) ? undefined : change.tool_call_id
    // a call held on one side of the turn's question says where its change is; one held on both sides does not
    if (id !== undefined && later.has(id) !== earlier.has(id)) return later.has(id)
    return change.turn >= turn
  })
  return since === -1 ? changes.length : since
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
 * its messages up to that turn, the changes and errors made by then, the plan if it was written
 * by then, and `forkedFrom`. The
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
  const { changes: _changes, plan, ...rest } = kept
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
    // a plan written after the fork's last turn is not the fork's
    ...(plan !== undefined && plan.turn <= turn ? { plan } : {}),
    ...(session.id !== "" ? { forkedFrom: { id: session.id, turn } satisfies ForkedFrom } : {})
  }
}

/**
 * A session read from a file, numbered as above. Files written before cancelled turns counted
 * had `turns` counting completed turns only, and change records numbered `turns + 1` of that
 * count; this brings them to the numbering, and leaves a file written since as it is (the same
 * object: nothing to change). `turns` becomes the turns held (a turn in progress excluded) plus
 * those a compaction replaced: without a compaction, the questions held, whatever the file said
 * (a larger count, written by hand, is one no command numbers turns by); with one, the number of
 * turns in its archives is not read here, so the file's count stands for them, raised only when
 * it is below the turns held.
 *
 * A change record made by a tool call still in `messages` takes the number of the turn holding
 * that call; one whose call id is in two turns keeps its number. An undo's record has no call:
 * it takes the number of the latest turn a record before it was made in (or after), when that
 * is higher (an undo runs after those turns; it counted fewer only because cancelled turns did
 * not count), else keeps its own. See `failedOnRead` for records of a failed question written
 * before they were marked.
 */
export const withNumbering = <S extends Numbered & Pick<Session, "changes">>(session: S): S => {
  const held = endedHeld(session)
  const turns = isCompacted(session) ? Math.max(session.turns, held) : held
  const numbered = turns === session.turns ? session : { ...session, turns }
  const changes = renumbered(numbered)
  return changes === undefined ? numbered : { ...numbered, changes }
}

/** The turn of each call id in `messages`; undefined for an id given in two turns (some servers number calls afresh in each answer). */
const turnsOfCalls = (session: Numbered): Map<string, number | undefined> => {
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
  return turnOfCall
}

/**
 * Which records were made by a question that failed, in a file written before such records were
 * marked: a tool's record (not an undo's) whose call id is in no message. In a compacted
 * conversation a record of a compacted turn looks the same, so only those after the first record
 * whose call is held count (the compaction came before that call); before it nothing tells them
 * apart, and they are left as they are. A failed call whose id a later turn gave again (a server
 * numbering calls afresh) looks held, and is not found either.
 */
const failedOnRead = (session: Numbered, changes: ReadonlyArray<ChangeRecord>, held: Map<string, unknown>) => {
  const compacted = session.messages.some((m) => m.summary === true)
  const firstHeld = changes.findIndex((c) => c.kind !== "undo" && held.has(c.tool_call_id ?? ""))
  return changes.map((change, index) =>
    change.kind !== "undo" && !isFailedChange(change) && change.tool_call_id !== undefined &&
    !held.has(change.tool_call_id) && (!compacted || (firstHeld >= 0 && index > firstHeld))
  )
}

/**
 * The change log numbered (see `withNumbering`); undefined when nothing changes. A failed
 * question's records found by `failedOnRead` are marked with the time of their first record, and
 * numbered by the turn they came after: the one before the number they were given (`turns + 1`
 * then), or the latest turn of a record before them when that is higher, and never the turn of a
 * record after them or later. Consecutive ones with the same number and question are taken as
 * one question's (two failed tries of one question in a row, with no change between, cannot be
 * told apart).
 */
const renumbered = (session: Numbered & Pick<Session, "changes">): ReadonlyArray<ChangeRecord> | undefined => {
  const changes = session.changes
  if (changes === undefined || changes.length === 0) return undefined
  const turnOfCall = turnsOfCalls(session)
  const heldTurn = changes.map((change) =>
    change.kind === "undo" || isFailedChange(change) || change.tool_call_id === undefined
      ? undefined
      : turnOfCall.get(change.tool_call_id)
  )
  const failed = failedOnRead(session, changes, turnOfCall)
  const anyFailed = failed.includes(true)
  // the lowest held turn of the records after each one (needed only for failed ones)
  const nextHeld: Array<number> = []
  for (let i = changes.length - 1, low = Infinity; anyFailed && i >= 0; i--) {
    nextHeld[i] = low
    low = Math.min(low, heldTurn[i] ?? Infinity)
  }
  const last = anyFailed ? lastTurn(session) : 0
  let moved = false
  let latest = 0
  let run: { readonly key: string; readonly mark: string } | undefined
  const out = changes.map((change, index): ChangeRecord => {
    const held = heldTurn[index]
    let next = change
    if (failed[index]) {
      const key = `${change.turn} ${change.question ?? ""}`
      run = run?.key === key ? run : { key, mark: change.at }
      const after = Math.max(0, Math.min(Math.max(latest, change.turn - 1), nextHeld[index] - 1, last))
      next = { ...change, turn: after, failed: run.mark }
    } else {
      run = undefined
      const turn = held ?? (change.kind === "undo" ? Math.max(change.turn, latest) : change.turn)
      if (turn !== change.turn) next = { ...change, turn }
    }
    if (held !== undefined || isFailedChange(next)) latest = Math.max(latest, next.turn)
    if (next !== change) moved = true
    return next
  })
  return moved ? out : undefined
}
