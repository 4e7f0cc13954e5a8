import * as Effect from "effect/Effect"

import type { ChangesShape } from "../changes/Changes"
import { undoActionable } from "../changes/UndoPlan"
import type { Conversation } from "../sessions/Conversation"
import {
  changesListing,
  diffBody,
  NO_CHANGES,
  PREVIEW_LINES,
  turnDiffsText,
  undoneLine,
  undoPreview
} from "../text/ChangesText"
import { sanitize } from "../text/Sanitize"
import type { Style } from "../text/Style"
import type { TerminalInput } from "./Input"
import type { Printer } from "./TerminalIO"

interface ViewIO {
  readonly input: TerminalInput
  readonly print: Printer
  readonly style: Style
}

/** `/changes`, `/changes N` and `/undo [N]` in the terminal (docs/how-to/undo.md); their text is text/ChangesText.ts. */

const positive = (arg: string): number | undefined => (/^[1-9]\d{0,5}$/.test(arg) ? Number(arg) : undefined)

/** `/changes` and `/changes N`. */
export const showChanges = (changes: ChangesShape, conversation: Conversation, arg: string, io: ViewIO) =>
  Effect.gen(function*() {
    const { print, style } = io
    if (arg === "") return print.line(changesListing(yield* changes.overview(conversation), style))
    const turn = positive(arg)
    if (turn === undefined) return print.line("usage: /changes [N] — N a turn number, as /changes lists them")
    const overview = yield* changes.turnDiffs(conversation, turn)
    if (overview === undefined) return print.line(`turn ${turn} changed no file through mm's file tools`)
    return print.line(turnDiffsText(overview, style))
  })

/**
 * `/undo [N]`: the preview, one confirmation, then one question per file changed since mm
 * wrote it (with its diff), then the restore.
 */
export const runUndo = (changes: ChangesShape, conversation: Conversation, arg: string, io: ViewIO) =>
  Effect.gen(function*() {
    const { input, print, style } = io
    const count = arg === "" ? 1 : positive(arg)
    if (count === undefined) {
      return print.line("usage: /undo [N] — take back the last N turns that changed files (default 1)")
    }
    const plan = yield* changes.plan(conversation, count)
    if (plan === undefined) return print.line(NO_CHANGES.replace("no file changed", "nothing to undo: no file changed"))
    print.line(undoPreview(plan, style))
    const { toWrite: actionable, recordOnly } = undoActionable(plan)
    if (recordOnly) {
      // an earlier /undo wrote every file and was stopped before it was recorded: recorded now
      const report = yield* changes.apply(conversation, plan, new Set())
      for (const warning of report.warnings) print.line(style.yellow(warning))
      return print.line(undoneLine(report))
    }
    if (actionable.length === 0) return print.line(`nothing to undo of ${plan.label}`)
    const yes = (prompt: string) =>
      Effect.map(
        Effect.promise(() => input.key(style.yellow(prompt), ["y", "n"])),
        (answer) => answer === "y"
      )
    if (!(yield* yes(`undo ${plan.label}? [y]es [n]o: `))) return print.line("nothing undone")
    const confirmed = new Set<string>()
    for (const file of actionable.filter((f) => f.state === "changed")) {
      print.line(`${sanitize(file.path)} was changed after mm wrote it; restoring it gives up these changes:`)
      print.line(diffBody(file.diff, style, PREVIEW_LINES))
      if (yield* yes(`restore ${sanitize(file.path)} anyway? [y]es [n]o: `)) confirmed.add(file.path)
    }
    const report = yield* changes.apply(conversation, plan, confirmed)
    for (const warning of report.warnings) print.line(style.yellow(warning))
    return print.line(undoneLine(report))
  })
