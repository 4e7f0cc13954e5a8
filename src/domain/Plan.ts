import * as Schema from "effect/Schema"

/**
 * The plan the model keeps with the `todo` tool: the whole list, written again each time it
 * changes. The terminal draws it as a checklist, an editor gets it as an ACP `plan` update, and
 * the session file keeps the latest one (`plan`) so that a resume or a reload shows it again.
 */

export type PlanStatus = "pending" | "in_progress" | "completed"
export type PlanPriority = "high" | "medium" | "low"

export interface PlanEntry {
  readonly content: string
  readonly status: PlanStatus
  readonly priority?: PlanPriority
}

/** The latest plan of a conversation: its entries and the turn that wrote them. */
export interface SavedPlan {
  readonly turn: number
  readonly entries: ReadonlyArray<PlanEntry>
}

/** One entry's schema: what the tool decodes and the session file holds. */
export const PlanEntrySchema = Schema.Struct({
  content: Schema.String,
  status: Schema.Literal("pending", "in_progress", "completed"),
  priority: Schema.optional(Schema.Literal("high", "medium", "low"))
})

/** `2 of 5 done · now: write the tests`: a plan in one line (a resume says it). */
export const planSummary = (entries: ReadonlyArray<PlanEntry>): string => {
  const done = entries.filter((entry) => entry.status === "completed").length
  const now = entries.find((entry) => entry.status === "in_progress") ??
    entries.find((entry) => entry.status === "pending")
  return `${done} of ${entries.length} done${
    now === undefined ? "" : ` · ${now.status === "in_progress" ? "now" : "next"}: ${now.content}`
  }`
}
