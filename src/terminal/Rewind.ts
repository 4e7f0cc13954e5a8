import * as Effect from "effect/Effect"

import type { ChangesShape } from "../changes/Changes"
import type { UndoPlan } from "../changes/UndoPlan"
import { type Session } from "../domain/Session"
import { cutProblem, lastTurn, turnStarts } from "../domain/Turns"
import { firstLine } from "../lib/OneLine"
import type { Conversation } from "../sessions/Conversation"
import { diffBody, plannedLine, PREVIEW_LINES, undoneLine } from "../text/ChangesText"
import { forkedLine } from "../text/Lines"
import { sanitize } from "../text/Sanitize"
import type { Style } from "../text/Style"
import type { TerminalInput } from "./Input"
import type { Printer } from "./TerminalIO"

/**
 * `/rewind N` (and Esc Esc at an empty prompt): back to just before turn N. The files mm's
 * tools changed since are restored as `/undo` restores them, then the conversation goes on in
 * a fork holding turns 1 to N-1; the original keeps every turn (docs/how-to/go-back.md).
 */

interface RewindIO {
  readonly input: TerminalInput
  readonly print: Printer
  readonly style: Style
  readonly red: (line: string) => void
  readonly notice: (line: string | undefined) => void
}

const QUESTION_SHOWN = 70

const shortQuestion = (question: string) => {
  const line = firstLine(question)
  return line.length > QUESTION_SHOWN ? `${line.slice(0, QUESTION_SHOWN - 1)}…` : line
}

/** What will happen: the turns that leave the conversation, then each file put back. */
const rewindPreview = (session: Session, turn: number, plan: UndoPlan | undefined, style: Style): string => {
  const leaving = turnStarts(session).filter((start) => start.turn >= turn)
  const kept = session.id === "" ? "" : ` (they stay in ${session.id})`
  const lines = [
    style.bold(`/rewind ${turn} goes back to just before turn ${turn}; leaving the conversation${kept}:`),
    ...leaving.map((start) => sanitize(`  turn ${start.turn}  ${JSON.stringify(shortQuestion(start.question))}`))
  ]
  if (plan === undefined || plan.files.length === 0) {
    lines.push(`no file was changed by mm's file tools since turn ${turn} began`)
  } else {
    lines.push(style.bold(`files mm's tools changed since, put back as they were before turn ${turn}:`))
    for (const file of plan.files) lines.push(`  ${plannedLine(file)}`)
  }
  return lines.join("\n")
}

const yes = (io: RewindIO, prompt: string) =>
  Effect.map(Effect.promise(() => io.input.key(io.style.yellow(prompt), ["y", "n"])), (answer) => answer === "y")

/** The files back, each one changed by someone else since asked about with its diff. */
const restore = (changes: ChangesShape, conversation: Conversation, plan: UndoPlan, io: RewindIO) =>
  Effect.gen(function*() {
    const confirmed = new Set<string>()
    for (const file of plan.files.filter((f) => f.state === "changed")) {
      io.print.line(`${sanitize(file.path)} was changed after mm wrote it; restoring it gives up these changes:`)
      io.print.line(diffBody(file.diff, io.style, PREVIEW_LINES))
      if (yield* yes(io, `restore ${sanitize(file.path)} anyway? [y]es [n]o: `)) confirmed.add(file.path)
    }
    const report = yield* changes.apply(conversation, plan, confirmed)
    for (const warning of report.warnings) io.print.line(io.style.yellow(warning))
    if (report.restored.length + report.deleted.length + report.left.length > 0) {
      io.print.line(undoneLine({ ...report, note: undefined }))
    }
  })

/**
 * `/rewind N`: the preview, one confirmation, the files, then the fork. Returns the question
 * of turn N once rewound (the terminal offers it again on the prompt line), else undefined.
 */
export const runRewind = (changes: ChangesShape, conversation: Conversation, arg: string, io: RewindIO) =>
  Effect.gen(function*() {
    if (!/^\d{1,6}$/.test(arg)) {
      io.print.line("usage: /rewind N — go back to just before turn N")
      return undefined
    }
    const turn = Number(arg)
    const session = yield* conversation.snapshot
    const last = lastTurn(session)
    const problem = turn === 0 ? "turns count from 1" : (cutProblem(session, turn - 1) ?? cutProblem(session, turn))
    if (problem !== undefined) {
      io.red(problem)
      return undefined
    }
    const plan = yield* changes.planSince(conversation, turn, last)
    io.print.line(rewindPreview(session, turn, plan, io.style))
    if (!(yield* yes(io, `rewind to before turn ${turn}? [y]es [n]o: `))) {
      io.print.line("nothing rewound")
      return undefined
    }
    if (plan !== undefined) yield* restore(changes, conversation, plan, io)
    const forked = yield* Effect.either(conversation.fork(turn - 1))
    if (forked._tag === "Left") {
      io.red(forked.left.message)
      return undefined
    }
    io.notice(forked.right.warning)
    io.print.line(forkedLine(forked.right))
    return turnStarts(session).find((start) => start.turn === turn)?.question
  })

/**
 * Esc Esc at an empty prompt: the earlier questions, newest last and highlighted; the one
 * chosen is rewound to (with the same preview and confirmation) and put back on the prompt.
 */
export const pickRewind = (
  terminal: RewindIO & {
    readonly changes: ChangesShape
    readonly conversation: Conversation
    readonly memory: { draft?: string }
  }
) =>
  Effect.gen(function*() {
    const starts = turnStarts(yield* terminal.conversation.snapshot)
    if (starts.length === 0) return terminal.print.line("no earlier question to go back to")
    const items = starts.map((start) => sanitize(`turn ${start.turn}  ${shortQuestion(start.question)}`))
    const chosen = yield* Effect.promise(() =>
      terminal.input.choose("rewind to just before which question? (↑↓, Enter; Esc to stay)", items, items.length - 1)
    )
    if (chosen === undefined) return
    const question = yield* runRewind(terminal.changes, terminal.conversation, String(starts[chosen].turn), terminal)
    if (question !== undefined) terminal.memory.draft = question
  })
