import * as Effect from "effect/Effect"
import * as Ref from "effect/Ref"

import { CARRY_OUT_PLAN } from "../approvals/PlanMode"
import type { ApprovalMode } from "../approvals/SessionSettings"
import type { Conversation } from "../sessions/Conversation"
import type { Style } from "../text/Style"
import { Sandbox } from "../tools/Sandbox"
import type { TerminalInput } from "./Input"
import type { Printer } from "./TerminalIO"

/**
 * Leaving plan mode in the terminal (docs/how-to/approvals.md): after a turn that ended in plan
 * mode, one question, "start with this plan?". Choosing a mode puts the conversation in it and
 * sends CARRY_OUT_PLAN, so the model goes on with the plan it wrote (the plan stays in the
 * conversation and its file); Esc, or "keep planning", leaves everything as it was. Asked only
 * with the line editor on a terminal: piped, there is nobody to answer.
 */

interface PlanExitIO {
  readonly conversation: Conversation
  readonly input: TerminalInput
  readonly print: Printer
  readonly style: Style
}

export const PLAN_EXIT_TITLE = "start with this plan? (↑↓, Enter; Esc to keep planning)"

/** The modes offered to carry the plan out in: `auto` only when the sandbox is on (else it is `ask`). */
export const exitModes = (sandboxed: boolean): ReadonlyArray<ApprovalMode> =>
  sandboxed ? ["ask", "edits", "auto", "allow"] : ["ask", "edits", "allow"]

/** Each mode in a few words, short enough for the list's line on a narrow terminal. */
const EXIT_WORDS: Record<ApprovalMode, string> = {
  ask: "asked as agent.yaml's permissions say",
  edits: "edits in the project go ahead, commands are asked",
  auto: "edits and sandboxed commands go ahead",
  allow: "nothing is asked",
  plan: "still planning"
}

/** The list's lines: one per mode, then the one that keeps planning. */
export const exitItems = (modes: ReadonlyArray<ApprovalMode>): ReadonlyArray<string> => [
  ...modes.map((mode) => `yes, in ${mode}: ${EXIT_WORDS[mode]}`),
  "no, keep planning"
]

/** Said when the user keeps planning. */
export const STILL_PLANNING = "still in plan mode — Shift-Tab at the prompt changes the mode"

/**
 * After a turn: when the conversation is still in plan mode, asks whether to carry the plan
 * out, and in which mode; `carryOut` runs the turn that does (Repl.ts's, drawn as any other).
 */
export const offerPlanExit = <A, E, R>(io: PlanExitIO, carryOut: (prompt: string) => Effect.Effect<A, E, R>) =>
  Effect.gen(function*() {
    if (!io.input.interactive || process.stdout.isTTY !== true) return
    if ((yield* Ref.get(io.conversation.settings)).mode !== "plan") return
    const modes = exitModes((yield* (yield* Sandbox).state)._tag === "On")
    const items = exitItems(modes)
    const chosen = yield* Effect.promise(() => io.input.choose(PLAN_EXIT_TITLE, items, 0))
    if (chosen === undefined || chosen >= modes.length) return io.print.line(io.style.dim(STILL_PLANNING))
    const mode = modes[chosen]
    yield* Ref.update(io.conversation.settings, (settings) => ({ ...settings, mode }))
    io.print.line(`${io.style.bold("> ")}${CARRY_OUT_PLAN}`)
    yield* carryOut(CARRY_OUT_PLAN)
  })
