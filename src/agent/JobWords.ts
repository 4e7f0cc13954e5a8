// What the model reads of its background jobs: the results of `bash` with `background: true`,
// `job_output` and `job_kill`, and the line naming the running jobs when an id is unknown.
import type { JobRecord } from "../domain/Session"
import { squashed } from "../lib/OneLine"
import { exitWords, type JobExit } from "../tools/Job"
import type { Taken } from "../tools/JobBuffer"

/** What the words need of a job. */
export interface JobFacts {
  readonly id: number
  readonly command: string
  readonly pid: number | undefined
  readonly exit: JobExit | undefined
}

/** `started job 1 (pid 4242): npm run dev`. */
export const startedWords = (job: JobFacts): string =>
  `started job ${job.id}${job.pid === undefined ? "" : ` (pid ${job.pid})`}: ${squashed(job.command, 200)}`

/** `job 1 is running` or `job 1 ended: exit code 0`. */
export const stateWords = (job: JobFacts): string =>
  job.exit === undefined ? `job ${job.id} is running` : `job ${job.id} ended: ${exitWords(job.exit)}`

/** `job_output`'s result: the state, what was dropped, then the new output. */
export const outputWords = (job: JobFacts, taken: Taken): string =>
  [
    stateWords(job),
    ...(taken.dropped > 0 ? [`[${taken.dropped} bytes of older output were dropped: the buffer was full]`] : []),
    taken.text === "" ? "(no new output)" : taken.text
  ].join("\n")

/** `job_kill`'s result: how it ended, then its last output. */
export const killedWords = (job: JobFacts, already: boolean, tail: string): string =>
  [
    already ?
      `job ${job.id} had already ended: ${exitWords(job.exit!)}` :
      `job ${job.id} killed (${job.exit === undefined ? "still ending" : exitWords(job.exit)})`,
    tail === "" ? "(no output)" : `last output:\n${tail}`
  ].join("\n")

/** The answer for an id no job has: the running jobs, named. */
export const unknownJobWords = (id: number, running: ReadonlyArray<JobFacts>): string =>
  running.length === 0
    ? `no job ${id}; no job is running`
    : `no job ${id}; running: ${running.map((job) => `${job.id} (${squashed(job.command, 60)})`).join(", ")}`

/** Characters of a recorded job's last output a replay shows. */
const REPLAYED_OUTPUT = 500

/**
 * What a replay shows of a recorded job under the call that started it: how it ended (or that
 * its end was never recorded: mm was killed), and the end of its last output.
 */
export const recordedJobWords = (job: JobRecord): string => {
  const state = job.exit === undefined
    ? `[job ${job.id}: its end was not recorded (mm stopped while it ran)]`
    : `[job ${job.id} ended: ${exitWords(job.exit)}]`
  const output = job.output === undefined || job.output === "" ? "" : `\n${job.output.slice(-REPLAYED_OUTPUT)}`
  return state + output
}
