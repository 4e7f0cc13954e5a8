/**
 * The background jobs of each conversation (`bash` with `background: true`): numbered from 1 in
 * it, read and killed by the model's calls (`ctx.jobs`), listed and killed by `/jobs`, counted by
 * the terminal's status line. They belong to their conversation and end with it: `/new`,
 * `/resume` of another session, an editor closing or replacing its session, and mm's exit (the
 * layer's finalizer; the process-group exit hook and watchdog, tools/JobProcess.ts, when mm
 * cannot run it). Each is recorded in the session file when it starts and when it ends.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"

import { AppConfig } from "../config/Config"
import type { JobRecord, Session } from "../domain/Session"
import { Secrets } from "../lib/Secrets"
import type { Conversation } from "../sessions/Conversation"
import type { JobExit, StartedCommand } from "../tools/Job"
import { failure, type JobControl, type ToolResult } from "../tools/Tool"
import { type JobFacts, killedWords, outputWords, startedWords, unknownJobWords } from "./JobWords"

/** Characters of a job's last output kept in the session file. */
const RECORDED_OUTPUT = 1000

/** A job as `/jobs` shows it. */
export interface JobView extends JobFacts {
  readonly startedAt: number
  readonly endedAt: number | undefined
  /** The last line it printed. */
  readonly lastLine: string
}

interface Job {
  readonly id: number
  readonly command: string
  readonly callId: string
  readonly started: StartedCommand
  readonly startedAt: Date
  exit: JobExit | undefined
  endedAt: Date | undefined
  /** The end of its output when it ended. */
  tail: string
}

interface Table {
  next: number
  readonly jobs: Map<number, Job>
}

export interface JobsShape {
  /** The jobs a call of `conversation` reaches (`ctx.jobs`). */
  readonly control: (conversation: Conversation, callId: string) => JobControl
  /** The conversation's jobs, oldest first. */
  readonly list: (conversation: Conversation) => Effect.Effect<ReadonlyArray<JobView>>
  /** `/jobs kill N`: as `job_kill`. */
  readonly kill: (conversation: Conversation, id: number) => Effect.Effect<ToolResult>
  /** Ends every job of the conversation and records how each ended (before it changes session or closes). */
  readonly end: (conversation: Conversation) => Effect.Effect<void>
  /** How many jobs run now, in every conversation. */
  readonly running: () => number
  /** Told whenever a job starts or ends; returns what stops telling. */
  readonly onChange: (listener: () => void) => () => void
}

export class Jobs extends Context.Tag("mm/Jobs")<Jobs, JobsShape>() {}

const lastLineOf = (text: string): string => text.trimEnd().split("\n").pop()?.trim() ?? ""

const recordOf = (job: Job, redact: (text: string) => string): JobRecord => ({
  id: job.id,
  command: job.command,
  callId: job.callId,
  startedAt: job.startedAt.toISOString(),
  ...(job.endedAt === undefined ? {} : { endedAt: job.endedAt.toISOString() }),
  ...(job.exit === undefined ? {} : { exit: { code: job.exit.code, signal: job.exit.signal } }),
  ...(job.tail === "" ? {} : { output: redact(job.tail.slice(-RECORDED_OUTPUT)) })
})

/** The session with `record` in its `jobs`, in place of the one of the same id. */
const withRecord = (session: Session, record: JobRecord): Session => {
  const jobs = session.jobs ?? []
  const at = jobs.findIndex((job) => job.id === record.id && job.callId === record.callId)
  return { ...session, jobs: at < 0 ? [...jobs, record] : jobs.map((job, i) => (i === at ? record : job)) }
}

/** What the service keeps: each conversation's table, who is told of changes, and how a job is recorded. */
interface Book {
  /** Where the watchers of the jobs' ends run: the service's, closed when mm exits. */
  readonly scope: Scope.Scope
  readonly tables: Map<Conversation, Table>
  readonly changed: () => void
  readonly record: (conversation: Conversation, job: Job) => Effect.Effect<void>
}

const factsOf = (job: Job): JobFacts => ({ id: job.id, command: job.command, pid: job.started.pid, exit: job.exit })

/** The conversation's table, made at its first job: a resumed session's numbers go on after those its file records. */
const tableOf = (book: Book, conversation: Conversation) =>
  Effect.gen(function*() {
    const known = book.tables.get(conversation)
    if (known !== undefined) return known
    const recorded = (yield* conversation.snapshot).jobs ?? []
    const table: Table = { next: Math.max(0, ...recorded.map((job) => job.id)) + 1, jobs: new Map() }
    book.tables.set(conversation, table)
    return table
  })

/** When the job ends on its own (or is killed): its end and last output recorded, if it is still this conversation's. */
const watchEnd = (book: Book, conversation: Conversation, job: Job) =>
  Effect.forkIn(
    Effect.gen(function*() {
      const exit = yield* Effect.async<JobExit>((resume) => job.started.onExit((how) => resume(Effect.succeed(how))))
      job.exit = exit
      job.endedAt = new Date()
      book.changed()
      job.tail = yield* job.started.tail
      if (book.tables.get(conversation)?.jobs.get(job.id) === job) yield* book.record(conversation, job)
    }),
    book.scope
  )

const add = (book: Book, conversation: Conversation, callId: string, command: string, started: StartedCommand) =>
  Effect.gen(function*() {
    const table = yield* tableOf(book, conversation)
    const job: Job = {
      id: table.next++,
      command,
      callId,
      started,
      startedAt: new Date(),
      exit: undefined,
      endedAt: undefined,
      tail: ""
    }
    table.jobs.set(job.id, job)
    yield* book.record(conversation, job)
    yield* watchEnd(book, conversation, job)
    book.changed()
    return { output: startedWords(factsOf(job)), failed: false }
  })

/** Job `id` of the conversation, or the failed result naming the running ones. */
const find = (book: Book, conversation: Conversation, id: number) =>
  Effect.map(tableOf(book, conversation), (table): Job | ToolResult => {
    const job = table.jobs.get(id)
    if (job !== undefined) return job
    const running = [...table.jobs.values()].filter((other) => other.exit === undefined).map(factsOf)
    return failure(unknownJobWords(id, running))
  })

/** The job's exit when it has ended, whether or not its watcher has run yet. */
const exitOf = (job: Job) =>
  Effect.sync(() => {
    if (job.exit === undefined) job.started.onExit((how) => (job.exit ??= how))
    return job.exit
  })

const output = (book: Book, conversation: Conversation, id: number) =>
  Effect.gen(function*() {
    const job = yield* find(book, conversation, id)
    if (!("started" in job)) return job
    // the state is read before the output: a job that ended has nothing after what is taken
    yield* exitOf(job)
    const facts = factsOf(job)
    const taken = yield* job.started.take
    return { output: outputWords(facts, taken), failed: false }
  })

const kill = (book: Book, conversation: Conversation, id: number) =>
  Effect.gen(function*() {
    const job = yield* find(book, conversation, id)
    if (!("started" in job)) return job
    const already = job.exit !== undefined
    yield* job.started.kill
    yield* exitOf(job)
    const tail = yield* job.started.tail
    return { output: killedWords(factsOf(job), already, tail), failed: false }
  })

/** Every job of the conversation killed, its end recorded, and its table forgotten. */
const end = (book: Book, conversation: Conversation) =>
  Effect.gen(function*() {
    const table = book.tables.get(conversation)
    if (table === undefined) return
    const jobs = [...table.jobs.values()]
    yield* Effect.forEach(jobs, (job) => job.started.kill, { concurrency: "unbounded", discard: true })
    for (const job of jobs) {
      job.tail = yield* job.started.tail
      job.exit ??= { code: null, signal: "SIGKILL" }
      job.endedAt ??= new Date()
      yield* book.record(conversation, job)
    }
    book.tables.delete(conversation)
    book.changed()
  })

const list = (book: Book, conversation: Conversation) =>
  Effect.forEach(
    [...(book.tables.get(conversation)?.jobs.values() ?? [])],
    (job) =>
      Effect.map(job.started.tail, (tail): JobView => ({
        ...factsOf(job),
        startedAt: job.startedAt.getTime(),
        endedAt: job.endedAt?.getTime(),
        lastLine: lastLineOf(tail)
      }))
  )

/** The service, for `config.jobs`; its finalizer (mm's exit) ends every job still running. */
export const makeJobs = Effect.gen(function*() {
  const secrets = yield* Secrets
  const { config } = yield* AppConfig
  const listeners = new Set<() => void>()
  const book: Book = {
    scope: yield* Effect.scope,
    tables: new Map(),
    changed: () => {
      for (const listener of listeners) listener()
    },
    record: (conversation, job) =>
      Effect.asVoid(conversation.update((session) => withRecord(session, recordOf(job, secrets.redact))))
  }
  yield* Effect.addFinalizer(() =>
    Effect.forEach([...book.tables.keys()], (conversation) => end(book, conversation), { discard: true }).pipe(
      Effect.timeout("5 seconds"),
      Effect.ignore
    )
  )
  return {
    control: (conversation, callId) => ({
      maxBuffer: config.jobs.maxBuffer,
      add: (command, started) => add(book, conversation, callId, command, started),
      output: (id) => output(book, conversation, id),
      kill: (id) => kill(book, conversation, id)
    }),
    list: (conversation) => list(book, conversation),
    kill: (conversation, id) => kill(book, conversation, id),
    end: (conversation) => end(book, conversation),
    running: () =>
      [...book.tables.values()].reduce(
        (n, table) => n + [...table.jobs.values()].filter((job) => job.exit === undefined).length,
        0
      ),
    onChange: (listener) => {
      listeners.add(listener)
      return () => listeners.delete(listener)
    }
  } satisfies JobsShape
})
