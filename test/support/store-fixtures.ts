import * as fs from "node:fs"
import * as path from "node:path"

import * as Effect from "effect/Effect"

import type { Message, ParentRef, Session } from "../../src/domain/Session"
import { encodeSession } from "../../src/sessions/SessionCodec"

/**
 * Waits for a listing's index file: the store writes it once the listing is returned, after the
 * current turn of the event loop (src/sessions/SessionListingIndex.ts, `writeSoon`).
 */
export const indexWritten = Effect.promise(() => new Promise<void>((resolve) => setImmediate(resolve)))

/** A session using every part of the format, with fields mm does not know at each level. */
export const richSession = (id: string, cwd = "/work/project"): Session =>
  ({
    version: 1,
    id,
    cwd,
    createdAt: "2026-09-16T10:15:30.412Z",
    updatedAt: "2026-09-16T10:17:02.093Z",
    title: "add a /new command",
    turns: 2,
    messages: [
      { role: "system", content: "you are mm" },
      { role: "user", content: "add a /new command\nplease", at: "2026-09-16T10:15:31Z" },
      {
        role: "assistant",
        content: null,
        tool_calls: [
          { id: "call_1", type: "function", function: { name: "bash", arguments: "{\"command\":\"ls -la\"}" } },
          {
            id: "call_2",
            type: "function",
            function: { name: "read_file", arguments: "{\"path\":\"a \\\"b\\\".ts\"}" }
          }
        ]
      },
      { role: "tool", content: "exit 0\nsrc\ntest", tool_call_id: "call_1", durationMs: 12 },
      { role: "tool", content: "no such file", tool_call_id: "call_2", failed: true },
      { role: "assistant", content: "Older turns, summarised: … «quoted» \u0000 done", summary: true },
      { role: "user", content: "and now?" },
      { role: "assistant", content: "Done — see `src/Cli.ts`." }
    ],
    errors: [
      {
        kind: "generation",
        at: "2026-09-16T10:16:00.000Z",
        turns: 1,
        question: "add a /new command",
        line: "cannot reach http://127.0.0.1:11434/v1",
        raw: "ECONNREFUSED 127.0.0.1:11434"
      },
      { kind: "resume", at: "2026-09-16T10:16:30.000Z", turns: 1, question: "", line: "no session x", host: "box" }
    ],
    origin: { editor: "zed", tags: ["a", { b: null }] },
    pinned: true
  }) as unknown as Session

/** The session the crash-test child writes at step `seq`: its size and shape change every step. */
export const crashSession = (id: string, seq: number): Session =>
  ({
    version: 1,
    id,
    cwd: "/crash",
    createdAt: "2026-01-01T00:00:00.000Z",
    updatedAt: new Date(Date.UTC(2026, 0, 1) + seq * 1000).toISOString(),
    title: `step ${seq}`,
    turns: seq,
    messages: Array.from({ length: 1 + (seq % 40) }, (_, k) => ({
      role: k % 2 === 0 ? "user" : "assistant",
      content: `m${seq}-${k}-` + "x".repeat((seq * 131 + k * 977) % 6000)
    })),
    errors: [],
    seq
  }) as unknown as Session

/** A session holding `messages` (a turn per user message), with `extra` fields over it. */
export const sessionOf = (messages: ReadonlyArray<Message>, extra: Partial<Session> = {}): Session => ({
  version: 1,
  id: "20261203-101530-4f2a9c1e",
  cwd: "/p",
  createdAt: "2026-12-03T10:15:30.000Z",
  updatedAt: "2026-12-03T10:20:00.000Z",
  title: "q1",
  turns: messages.filter((m) => m.role === "user").length,
  messages,
  errors: [],
  ...extra
})

/**
 * The file names a listing's index (`.index.json`, parsed) has an entry for, in its order: the
 * usual sessions' rows of its columns, then its other entries (see ListingIndexFile.ts).
 */
export const indexedNames = (index: { id: ReadonlyArray<string>; others: ReadonlyArray<ReadonlyArray<unknown>> }) => [
  ...index.id.map((id) => `${id}.json`),
  ...index.others.map((entry) => entry[0] as string)
]

/**
 * A one-turn session file in `dir` (mode 0600, as mm writes them): a question answered, asked
 * `minute` minutes after 10:00 on 2026-12-01, and a sub-agent's when `parent` is given.
 */
export const writeAnsweredSession = (
  dir: string,
  fields: {
    readonly id: string
    readonly cwd: string
    readonly question: string
    readonly answer?: string
    readonly minute: number
    readonly parent?: ParentRef
  }
): void => {
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 })
  const at = new Date(Date.UTC(2026, 11, 1, 10, fields.minute)).toISOString()
  const session: Session = {
    version: 1,
    id: fields.id,
    cwd: fields.cwd,
    createdAt: at,
    updatedAt: at,
    title: fields.question,
    turns: 1,
    messages: [
      { role: "system", content: "s" },
      { role: "user", content: fields.question },
      { role: "assistant", content: fields.answer ?? `answer to ${fields.question}` }
    ],
    errors: [],
    ...(fields.parent === undefined ? {} : { parent: fields.parent })
  }
  fs.writeFileSync(path.join(dir, `${fields.id}.json`), encodeSession(session), { mode: 0o600 })
}
