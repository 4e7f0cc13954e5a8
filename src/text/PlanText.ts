import type { PlanEntry } from "../domain/Plan"
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
