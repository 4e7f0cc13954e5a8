import type { Message, Session } from "../domain/Session"
import { lastTurn, turnStarts } from "../domain/Turns"
import { userMessageKind } from "./UserMessages"

/** The longest run of backticks in `text`, at least 2 (counted in a loop: a spread of every run overflows the stack). */
export const longestBackticks = (text: string): number => {
  let longest = 2
  for (let at = text.indexOf("`"); at >= 0; at = text.indexOf("`", at)) {
    const start = at
    while (text.charCodeAt(at) === 96) at++
    longest = Math.max(longest, at - start)
  }
  return longest
}

/** A fence longer than any run of backticks in `text`, so the block cannot be closed early. */
const fence = (text: string, info = ""): string => {
  const longest = longestBackticks(text)
  const ticks = "`".repeat(longest + 1)
  return `${ticks}${info}\n${text.replace(/\n$/, "")}\n${ticks}`
}

const inputOf = (raw: string): string => {
  try {
    const parsed = JSON.parse(raw) as Record<string, unknown>
    // a call whose one argument is a command line shows it as a shell block
    if (typeof parsed.command === "string" && Object.keys(parsed).length === 1) {
      return fence(parsed.command, "sh")
    }
    return fence(JSON.stringify(parsed, null, 2), "json")
  } catch {
    return fence(raw)
  }
}

/** A quoted block: each line of a question prefixed by `> `. */
const quoted = (text: string): string =>
  text
    .split("\n")
    .map((line) => (line === "" ? ">" : `> ${line}`))
    .join("\n")

/**
 * A stored conversation as Markdown (`mm sessions show`): its questions, answers, each tool
 * call with its input and output in fenced blocks, then the errors. The system prompt is left
 * out (it belongs to the agent); a compaction summary is shown as such. Sections are separate
 * functions so that more of the session (its changes) can be added after the messages.
 */
export const sessionMarkdown = (
  session: Session,
  forks: ReadonlyArray<ForkOf> = [],
  subAgents: ReadonlyArray<SubAgentOf> = []
): string =>
  [header(session, forks, subAgents), ...conversation(session), ...stillAnswered(session), ...errors(session)].join(
    "\n\n"
  ) + "\n"

/** A turn still in progress (another mm is answering it): said after what it holds so far. */
const stillAnswered = (session: Session): Array<string> => {
  const marker = session.inProgress
  if (marker === undefined) return []
  const by = marker.by === undefined ? "mm" : `mm pid ${marker.by.pid}`
  return [`*(this turn is still being answered by ${by})*`]
}

/** A session forked from the one shown: its id and the last turn it kept. */
interface ForkOf {
  readonly id: string
  readonly turn: number
}

/** `⑂ forked from … at turn N`, then one line per fork made of it. */
const forkLines = (session: Session, forks: ReadonlyArray<ForkOf>): Array<string> => [
  ...(session.forkedFrom === undefined
    ? []
    : [`- ⑂ forked from \`${session.forkedFrom.id}\` at turn ${session.forkedFrom.turn}`]),
  ...forks.map((fork) => `- ⑂ forked into \`${fork.id}\` at turn ${fork.turn}`)
]

/** A sub-agent's conversation the session shown ran: its id, the `task` call that ran it, its task and turns. */
export interface SubAgentOf {
  readonly id: string
  readonly turn: number
  readonly callId: string
  readonly title: string
  readonly turns: number
}

/** `↳ sub-agent of … at turn N`, then one line per sub-agent's conversation it ran, oldest first. */
const subAgentLines = (session: Session, subAgents: ReadonlyArray<SubAgentOf>): Array<string> => [
  ...(session.parent === undefined
    ? []
    : [
      `- ↳ sub-agent of \`${session.parent.id}\`, run by its call \`${session.parent.callId}\` at turn ${session.parent.turn}`
    ]),
  ...subAgents.map((child) =>
    `- ↳ sub-agent \`${child.id}\` (call \`${child.callId}\` at turn ${child.turn}, ${child.turns} turn(s)): ${
      child.title === "" ? "(no task yet)" : child.title
    }`
  )
]

const header = (session: Session, forks: ReadonlyArray<ForkOf>, subAgents: ReadonlyArray<SubAgentOf>): string =>
  [
    `# ${session.title === "" ? "(no question yet)" : session.title}`,
    "",
    `- id: \`${session.id}\``,
    `- project: \`${session.cwd}\``,
    `- started: ${session.createdAt} · last update: ${session.updatedAt}`,
    `- ${lastTurn(session)} turn(s)${session.errors.length > 0 ? ` · ${session.errors.length} error(s)` : ""}`,
    ...forkLines(session, forks),
    ...subAgentLines(session, subAgents)
  ].join("\n")

/**
 * A question under its heading, numbered as every command numbers turns (domain/Turns.ts); a
 * `!command` and a note of mm's marked as such, not numbered as questions.
 */
const userPart = (content: string, turn: number | undefined): string => {
  const kind = userMessageKind(content)
  if (kind._tag === "Shell") {
    const head = `**! ${
      kind.command.replace(/[`*]/g, "")
    }** — a shell command the user ran; its output went to the model as context`
    return kind.output.trim() === "" ? head : `${head}\n\n${fence(kind.output.trimEnd())}`
  }
  if (kind._tag === "Note" || turn === undefined) return `*(mm) ${kind.text.split("\n")[0]}*`
  return `## ${turn}. Question\n\n${quoted(content)}`
}

type Call = NonNullable<Message["tool_calls"]>[number]
type Running = NonNullable<Session["inProgress"]>["running"]

/** A tool call, its input and output; the one running now with what it has printed so far. */
const callPart = (call: Call, result: Message | undefined, running: Running): string => {
  const now = result === undefined && running?.id === call.id ? running : undefined
  const status = now !== undefined
    ? "running"
    : result === undefined
    ? "no result"
    : result.failed === true
    ? "failed"
    : "completed"
  const output = now !== undefined
    ? ["Output so far:", fence(now.output, "text")]
    : result === undefined
    ? []
    : ["Output:", fence(result.content ?? "", "text")]
  return [`**Tool call \`${call.function.name}\`** (${status})`, inputOf(call.function.arguments), ...output].join(
    "\n\n"
  )
}

const conversation = (session: Session): Array<string> => {
  const { messages } = session
  const running = session.inProgress?.running
  const turnAt = new Map(turnStarts(session).map((start) => [start.index, start.turn]))
  const outputs = new Map<string, Message>()
  for (const message of messages) {
    if (message.role === "tool" && message.tool_call_id !== undefined) outputs.set(message.tool_call_id, message)
  }
  const parts: Array<string> = []
  messages.forEach((message, index) => {
    switch (message.role) {
      case "system":
        break
      case "user":
        if (message.summary === true) {
          parts.push(`## Summary of the earlier conversation\n\n${message.content ?? ""}`)
          break
        }
        parts.push(
          `${userPart(message.content ?? "", turnAt.get(index))}${
            (message.images ?? []).map((image) => `\n\n*(image: ${image.name}, blob ${image.blob.slice(0, 12)})*`).join(
              ""
            )
          }`
        )
        break
      case "assistant": {
        if (message.summary === true) {
          parts.push(`## Summary of the earlier conversation\n\n${message.content ?? ""}`)
          break
        }
        if (message.content !== null && message.content.trim() !== "") parts.push(message.content.trim())
        for (const call of message.tool_calls ?? []) parts.push(callPart(call, outputs.get(call.id), running))
        break
      }
      case "tool":
        break
    }
  })
  return parts
}

const errors = (session: Session): Array<string> =>
  session.errors.length === 0
    ? []
    : [
      [
        "## Errors",
        "",
        ...session.errors.map(
          (e) =>
            `- ${e.at} · ${e.kind} · after turn ${e.turns} · ${JSON.stringify(e.question)}: ${e.line}${
              e.raw !== undefined && e.raw !== "" && e.raw !== e.line ? ` (${e.raw})` : ""
            }`
        )
      ].join("\n")
    ]
