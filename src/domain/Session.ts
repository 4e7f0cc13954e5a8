import * as Schema from "effect/Schema"

import { firstLine } from "../lib/OneLine"
import { PlanEntrySchema } from "./Plan"

/**
 * A background job (`bash` with `background: true`): its number in the conversation, its
 * command, the call that started it, when it started and ended, how it ended, and the end of
 * what it printed (at most a few lines). Never sent to the model, which has its calls.
 */
const makeJobRecord = () =>
  Schema.Struct({
    id: Schema.Number,
    command: Schema.String,
    callId: Schema.String,
    startedAt: Schema.String,
    endedAt: Schema.optional(Schema.String),
    exit: Schema.optional(Schema.Struct({ code: Schema.NullOr(Schema.Number), signal: Schema.NullOr(Schema.String) })),
    output: Schema.optional(Schema.String)
  })

/** The schemas of a message and its parts. */
const makeMessageSchemas = () => {
  /** A tool call as the model wrote it, in the chat-completions shape. */
  const ToolCall = Schema.Struct({
    id: Schema.String,
    type: Schema.Literal("function"),
    function: Schema.Struct({ name: Schema.String, arguments: Schema.String })
  })

  /**
   * One content block of a prompt as the editor sent it (ACP), kept so that a reload shows the
   * question as it was asked: its type, and the uri, name, title, MIME type and range of a
   * mention. Text is kept inline when small; a large embedded text or an image goes to a
   * checkpoint blob named by `blob`. Never sent to the model.
   */
  const EditorBlock = Schema.Struct({
    type: Schema.String,
    text: Schema.optional(Schema.String),
    uri: Schema.optional(Schema.String),
    name: Schema.optional(Schema.String),
    title: Schema.optional(Schema.String),
    mimeType: Schema.optional(Schema.String),
    blob: Schema.optional(Schema.String),
    /** An embedded resource whose blob holds bytes rather than text. */
    binary: Schema.optional(Schema.Boolean)
  })

  /** An image the user attached to a question: its bytes are a checkpoint blob named by their sha-256. */
  const ImageRef = Schema.Struct({
    blob: Schema.String.pipe(Schema.pattern(/^[0-9a-f]{64}$/)),
    mime: Schema.String,
    name: Schema.String
  })

  /**
   * One message the model sees. `failed` (tool results), `summary` (compaction), `note` (a
   * line from mm, such as an undo) and `reasoning` (assistant) are mm's own: kept in the file,
   * stripped by `toWire` before a request.
   */
  const Message = Schema.Struct({
    role: Schema.Literal("system", "user", "assistant", "tool"),
    content: Schema.NullOr(Schema.String),
    tool_calls: Schema.optional(Schema.Array(ToolCall)),
    tool_call_id: Schema.optional(Schema.String),
    failed: Schema.optional(Schema.Boolean),
    summary: Schema.optional(Schema.Boolean),
    note: Schema.optional(Schema.Boolean),
    /** The model's reasoning before this assistant message; shown and replayed, never sent to the model. */
    reasoning: Schema.optional(Schema.String),
    /** Images sent with a question (to a model that can see), kept as checkpoint blobs. */
    images: Schema.optional(Schema.Array(ImageRef)),
    /** A question from an editor: the blocks it sent, replayed on load instead of `content`. */
    blocks: Schema.optional(Schema.Array(EditorBlock)),
    /**
     * What only the API that wrote this assistant message understands (signed thinking,
     * encrypted reasoning), as it sent it: given back to that API and model only.
     */
    opaque: Schema.optional(Schema.Struct({
      api: Schema.Literal("anthropic", "responses"),
      model: Schema.String,
      items: Schema.Array(Schema.Unknown)
    }))
  })
  return { ToolCall, EditorBlock, ImageRef, Message }
}

/**
 * The session file's schemas, made at their first use (a file read back): made as the module
 * loaded, they were about 1.4 ms of every start, and a new conversation never decodes one.
 */
const makeSessionSchemas = () => {
  const { ToolCall, EditorBlock, ImageRef, Message } = makeMessageSchemas()
  const ErrorKind = Schema.Literal("generation", "compaction", "resume")

  /** One red line shown to the user, kept beside the conversation (never sent to the model). */
  const ErrorRecord = Schema.Struct({
    kind: ErrorKind,
    at: Schema.String,
    turns: Schema.Number,
    question: Schema.String,
    line: Schema.String,
    raw: Schema.optional(Schema.String)
  })

  /** A hex sha-256: the name of a blob under `.mm/checkpoints/`. */
  const BlobHash = Schema.String.pipe(Schema.pattern(/^[0-9a-f]{64}$/))

  /**
   * One file changed through mm's file tools (`kind` absent) or by `/undo` (`kind: "undo"`):
   * its content before and after as blob names; `before: null` for a file that did not exist,
   * `after: null` for a file an undo deleted. `failed` marks a change made by a question that
   * failed (its calls left `messages`): it holds when that question was asked (the records of one
   * failed question share it), and `turn` is then the last turn the conversation held when it
   * was asked (domain/Turns.ts). Never sent to the model.
   */
  const ChangeRecord = Schema.Struct({
    turn: Schema.Number,
    at: Schema.String,
    tool_call_id: Schema.optional(Schema.String),
    path: Schema.String,
    before: Schema.NullOr(BlobHash),
    after: Schema.NullOr(BlobHash),
    kind: Schema.optional(Schema.Literal("undo")),
    question: Schema.optional(Schema.String),
    skipped: Schema.optional(Schema.Literal("too large")),
    failed: Schema.optional(Schema.String)
  })

  /**
   * The turn being answered, while it is (saved when its question is sent, before and after each
   * tool call, and while a call prints): `start` is the index of its question in `messages`;
   * `running`, the call running then and what it had printed so far (its last `maxOutput`
   * characters); `by`, the mm answering it (its pid, host and start time), so that another mm
   * does not take a turn still running for one whose mm was killed. Never sent to the model.
   */
  const InProgress = Schema.Struct({
    question: Schema.String,
    at: Schema.String,
    start: Schema.Number,
    running: Schema.optional(Schema.Struct({ id: Schema.String, output: Schema.String })),
    by: Schema.optional(
      Schema.Struct({ pid: Schema.Number, host: Schema.String, start: Schema.optional(Schema.Number) })
    )
  })

  /** Where a fork came from: the original session and the last turn the fork kept. */
  const ForkedFrom = Schema.Struct({ id: Schema.String, turn: Schema.Number })

  /**
   * A sub-agent's conversation: the session whose `task` call ran it, the turn that call was
   * made in, and the call's id (whose result names this session).
   */
  const Parent = Schema.Struct({ id: Schema.String, turn: Schema.Number, callId: Schema.String })

  /** The latest plan the model wrote with `todo`, and the turn that wrote it (domain/Plan.ts). */
  const Plan = Schema.Struct({ turn: Schema.Number, entries: Schema.Array(PlanEntrySchema) })

  const JobRecord = makeJobRecord()

  const Session = Schema.Struct({
    version: Schema.Number,
    id: Schema.String,
    cwd: Schema.String,
    createdAt: Schema.String,
    updatedAt: Schema.String,
    title: Schema.String,
    turns: Schema.Number,
    messages: Schema.Array(Message),
    errors: Schema.optionalWith(Schema.Array(ErrorRecord), { default: () => [] }),
    changes: Schema.optional(Schema.Array(ChangeRecord)),
    /** A turn still being answered when the file was written (see `InProgress`). */
    inProgress: Schema.optional(InProgress),
    /**
     * In an archive: the id of the session whose compaction moved these turns here, or that
     * holds them now (a fork it was left to, the id an ACP `/new` moved that session to).
     */
    archiveOf: Schema.optional(Schema.String),
    /** In a compacted session: the ids of its archives, oldest first. */
    archives: Schema.optional(Schema.Array(Schema.String)),
    /** Set on a fork (`/fork`, `/rewind`, `--fork`, `session/fork`); never sent to the model. */
    forkedFrom: Schema.optional(ForkedFrom),
    /** Set on a sub-agent's conversation: the `task` call that ran it. */
    parent: Schema.optional(Parent),
    /** The latest plan (`todo`); never sent to the model, which has its calls. */
    plan: Schema.optional(Plan),
    /** The conversation's background jobs, oldest first (`JobRecord`). */
    jobs: Schema.optional(Schema.Array(JobRecord)),
    /** What an editor chose for this session (`mm acp`): restored on load and resume; the terminal ignores it. */
    settings: Schema.optional(Schema.Struct({ mode: Schema.String, model: Schema.optional(Schema.String) }))
  })
  return {
    ToolCall,
    EditorBlock,
    ImageRef,
    Message,
    ErrorKind,
    ErrorRecord,
    BlobHash,
    ChangeRecord,
    InProgress,
    ForkedFrom,
    Parent,
    Plan,
    JobRecord,
    Session
  }
}

type SessionSchemas = ReturnType<typeof makeSessionSchemas>

let schemas: SessionSchemas | undefined

export const sessionSchemas = (): SessionSchemas => (schemas ??= makeSessionSchemas())

// the session file's types: what each is, beside its schema in `makeMessageSchemas` and `makeSessionSchemas`
export type ToolCall = SessionSchemas["ToolCall"]["Type"]
export type EditorBlock = SessionSchemas["EditorBlock"]["Type"]
export type ImageRef = SessionSchemas["ImageRef"]["Type"]
export type Message = SessionSchemas["Message"]["Type"]
export type ErrorKind = SessionSchemas["ErrorKind"]["Type"]
export type ErrorRecord = SessionSchemas["ErrorRecord"]["Type"]
export type ChangeRecord = SessionSchemas["ChangeRecord"]["Type"]
export type Session = SessionSchemas["Session"]["Type"]
export type ForkedFrom = SessionSchemas["ForkedFrom"]["Type"]
export type ParentRef = SessionSchemas["Parent"]["Type"]
export type JobRecord = SessionSchemas["JobRecord"]["Type"]

export const SESSION_VERSION = 1
export const ERRORS_CAP = 200
const TITLE_MAX = 100

export const emptySession = (id: string, cwd: string, now: Date): Session => ({
  version: SESSION_VERSION,
  id,
  cwd,
  createdAt: now.toISOString(),
  updatedAt: now.toISOString(),
  title: "",
  turns: 0,
  messages: [],
  errors: []
})

/** The title of a session: the first line of its first question, at most 100 characters. */
export const titleOf = (question: string): string => {
  const line = firstLine(question)
  return line.length > TITLE_MAX ? line.slice(0, TITLE_MAX) : line
}

/** The session continues under the agent's current system prompt, whatever it was saved with. */
export const withSystem = (
  messages: ReadonlyArray<Message>,
  system: string
): ReadonlyArray<Message> => {
  const head: Message = { role: "system", content: system }
  return messages.length > 0 && messages[0].role === "system"
    ? [head, ...messages.slice(1)]
    : [head, ...messages]
}

/** Appends a record, keeping only the newest `ERRORS_CAP`. */
export const appendError = (
  errors: ReadonlyArray<ErrorRecord>,
  record: ErrorRecord,
  cap: number = ERRORS_CAP
): ReadonlyArray<ErrorRecord> => {
  const all = [...errors, record]
  return all.length > cap ? all.slice(all.length - cap) : all
}

/** A part of a message's content as the server receives it: text, or an image as a data URL. */
export type WirePart =
  | { readonly type: "text"; readonly text: string }
  | { readonly type: "image_url"; readonly image_url: { readonly url: string } }

/**
 * The message as the server receives it: mm's own marks removed. `opaque` is for the adapter
 * of the API that wrote it, which alone sends it back; every other adapter leaves it out.
 */
export interface WireMessage {
  readonly role: Message["role"]
  readonly content: string | null | ReadonlyArray<WirePart>
  readonly tool_calls?: ReadonlyArray<ToolCall>
  readonly tool_call_id?: string
  readonly opaque?: Message["opaque"]
}

export const toWire = (message: Message): WireMessage => {
  const wire: { -readonly [K in keyof WireMessage]: WireMessage[K] } = {
    role: message.role,
    content: message.content
  }
  if (message.tool_calls !== undefined && message.tool_calls.length > 0) {
    wire.tool_calls = message.tool_calls.map((call) => ({
      id: call.id,
      type: "function",
      function: { name: call.function.name, arguments: call.function.arguments }
    }))
  }
  if (message.tool_call_id !== undefined) wire.tool_call_id = message.tool_call_id
  if (message.opaque !== undefined) wire.opaque = message.opaque
  return wire
}
