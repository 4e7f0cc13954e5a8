import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { type Approval, Approver } from "../Approver"
import { redact } from "../Secrets"
import { sanitize } from "./Sanitize"
import { CANCELLED, makePipedInput, type TerminalInput } from "./Input"
import { makeLineEditor } from "./LineEditor"
import { type Style, styleFor } from "./Style"

/**
 * Where the terminal façade writes; it remembers whether the cursor sits at a line start.
 * Known secrets never reach the screen; text from outside is `sanitize`d by the caller
 * (mm's own colours pass through here).
 */
export interface Printer {
  readonly write: (text: string) => void
  /** Writes a whole line, first ending any line left open by streamed text. */
  readonly line: (text: string) => void
  /** Ends a line left open by streamed text. */
  readonly endLine: () => void
}

export const makePrinter = (out: NodeJS.WritableStream): Printer => {
  let atLineStart = true
  const write = (text: string) => {
    if (text === "") return
    out.write(redact(text))
    atLineStart = text.endsWith("\n")
  }
  const endLine = () => {
    if (!atLineStart) write("\n")
  }
  return { write, endLine, line: (text) => (endLine(), write(`${text}\n`)) }
}

export class TerminalIO extends Context.Tag("mm/TerminalIO")<
  TerminalIO,
  { readonly input: TerminalInput; readonly print: Printer; readonly style: Style }
>() {}

export const TerminalIOLive = Layer.scoped(
  TerminalIO,
  Effect.acquireRelease(
    Effect.sync(() => ({
      input: process.stdin.isTTY === true ? makeLineEditor(process.stdin, process.stdout) : makePipedInput(process.stdin, process.stdout),
      print: makePrinter(process.stdout),
      style: styleFor(process.stdout, process.env)
    })),
    (io) => Effect.sync(() => io.input.close())
  )
)

/** The terminal's approval: one key, y (yes), n (no), a (always for this session). */
export const TerminalApprover = Layer.effect(
  Approver,
  Effect.map(TerminalIO, ({ input, print, style }) => ({
    ask: (request) =>
      Effect.flatMap(
        Effect.promise(() => {
          print.endLine()
          return input.key(style.yellow(`allow ${sanitize(request.tool)}  ${sanitize(request.title)}? [y]es [n]o [a]lways: `), ["y", "n", "a"])
        }),
        // on Ctrl-C the turn is being cancelled: its call is closed as cancelled, not refused
        (answer): Effect.Effect<Approval> =>
          answer === CANCELLED ? Effect.never : Effect.succeed(answer === "y" ? "once" : answer === "a" ? "always" : "deny")
      )
  }))
)
