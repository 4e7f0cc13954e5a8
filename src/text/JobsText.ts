// The lines the terminal shows of background jobs: `/jobs`' listing, the status line's count,
// and the line said when a conversation's end ends its jobs.
import type { JobView } from "../agent/Jobs"
import type { JobRecord } from "../domain/Session"
import { squashed } from "../lib/OneLine"
import { exitWords } from "../tools/Job"
import type { Style } from "./Style"

/** `1 job`, `2 jobs`. */
export const jobCount = (n: number): string => `${n} job${n === 1 ? "" : "s"}`

/** The prompt while background jobs run, saying how many: `2 jobs > `. */
export const withJobCount = (prompt: string, running: number, style: Style): string =>
  running === 0 ? prompt : `${style.dim(jobCount(running))} ${prompt}`

/** `4 s`, `3 min 5 s`, `2 h 1 min`. */
const runtime = (ms: number): string => {
  const s = Math.max(0, Math.floor(ms / 1000))
  if (s < 60) return `${s} s`
  if (s < 3600) return `${Math.floor(s / 60)} min ${s % 60} s`
  return `${Math.floor(s / 3600)} h ${Math.floor((s % 3600) / 60)} min`
}

/**
 * `/jobs`: one row per job of the conversation (id, state, runtime, command, last line), or a
 * line saying there is none.
 */
export const jobsListing = (jobs: ReadonlyArray<JobView>, now: number): string => {
  if (jobs.length === 0) return "no background jobs in this conversation"
  const rows = jobs.map((job) => {
    const state = job.exit === undefined ? "running" : exitWords(job.exit)
    const last = job.lastLine === "" ? "" : ` — ${squashed(job.lastLine, 80)}`
    return `${String(job.id).padStart(3)}  ${state} · ${runtime((job.endedAt ?? now) - job.startedAt)} · ${
      squashed(job.command, 60)
    }${last}`
  })
  return [...rows, "/jobs kill N ends one"].join("\n")
}

/** What `/new` and `/resume` say when they ended running jobs: `ended 2 background jobs`. */
export const endedJobsLine = (n: number): string | undefined =>
  n === 0 ? undefined : `ended ${n} background job${n === 1 ? "" : "s"} of the conversation`

/**
 * What `/resume` says of the jobs a session's file records (all ended: they ended with their
 * conversation): `jobs earlier in this session: 1 npm run watch (killed by signal SIGTERM)`.
 */
export const recordedJobsLine = (jobs: ReadonlyArray<JobRecord> | undefined): string | undefined => {
  if (jobs === undefined || jobs.length === 0) return undefined
  const shown = jobs.slice(-3).map((job) =>
    `${job.id} ${squashed(job.command, 40)} (${job.exit === undefined ? "end not recorded" : exitWords(job.exit)})`
  )
  const more = jobs.length > 3 ? ` and ${jobs.length - 3} more` : ""
  return `background jobs earlier in this session: ${shown.join(", ")}${more}`
}
