import { type PlanEntry, planSummary, type SavedPlan } from "../domain/Plan"
import { sanitize } from "./Sanitize"
import type { Style } from "./Style"

/** The mark of each status in a checklist. */
const MARKS = { completed: "☒", in_progress: "◼", pending: "☐" } as const

/**
 * The plan as a checklist, one line per entry: done ones dim, the one under way bold, a
 * priority said only when it is high. The model's text is sanitized (no terminal escapes).
 */
export const planChecklist = (entries: ReadonlyArray<PlanEntry>, style: Style): ReadonlyArray<string> =>
  entries.length === 0 ? [style.dim("  plan: (empty)")] : entries.map((entry) => {
    const text = `  ${MARKS[entry.status]} ${sanitize(entry.content)}${entry.priority === "high" ? " (high)" : ""}`
    return entry.status === "completed"
      ? style.dim(text)
      : entry.status === "in_progress"
      ? style.bold(text)
      : text
  })

/** What `/plan` says when the model has written none in this conversation. */
export const NO_PLAN = "no plan in this conversation (the model writes one with its todo tool)"

/** `plan of turn 3 · 2 of 5 done · now: write the tests`: the line above `/plan`'s checklist. */
export const planHeader = (plan: SavedPlan): string =>
  `plan of turn ${plan.turn} · ${sanitize(planSummary(plan.entries))}`

/** The line a resume says of the conversation's plan: `plan: 2 of 5 done · now: write the tests`. */
export const resumedPlanLine = (entries: ReadonlyArray<PlanEntry>): string => `plan: ${sanitize(planSummary(entries))}`
