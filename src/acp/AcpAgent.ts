import * as acp from "@agentclientprotocol/sdk"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import * as Runtime from "effect/Runtime"

import { firstLine } from "../lib/OneLine"
import { startedUp } from "../lib/StartedUp"
import { AcpConnection, type AcpServices, type ConnectionShape, makeConnection } from "./Connection"
import {
  cancelAll,
  cancelPrompt,
  closeSession,
  type ForkRequest,
  forkSession,
  initialize,
  listSessions,
  loadSession,
  newSession,
  parseForkRequest,
  resumeSession
} from "./Handlers"
import { sendCommands } from "./OwnCommands"
import type { PromptOrder } from "./PromptOrder"
import { prompt } from "./PromptTurn"
import { setConfigOption, setMode } from "./Settings"

interface AcpAgent {
  readonly app: acp.AgentApp
  /** Cancels every running prompt and waits until their conversations are saved. */
  readonly shutdown: Effect.Effect<void>
  /** Resolves once every request received so far has been answered (or failed). */
  readonly drained: () => Promise<void>
}

/** Runs one of the agent's programs for the SDK, as a Promise: its typed failure is the JSON-RPC error. */
type Run = <A>(program: Effect.Effect<A, acp.RequestError, AcpServices | AcpConnection>) => Promise<A>

/** A failure that is no JSON-RPC error (a defect): logged, and told to the editor in one line. */
const unexpected = (log: (line: string) => void, cause: Cause.Cause<unknown>): acp.RequestError => {
  const line = firstLine(Cause.pretty(cause))
  log(`internal error: ${line}`)
  return acp.RequestError.internalError(undefined, line)
}

/** The one place where the agent's Effects run: on the layer's `runtime`, with this connection. */
const runnerOf = (runtime: Runtime.Runtime<AcpServices>, connection: ConnectionShape): Run => {
  const runExit = Runtime.runPromiseExit(runtime)
  return async (program) => {
    const exit = await runExit(Effect.provideService(program, AcpConnection, connection))
    if (Exit.isSuccess(exit)) return exit.value
    const failure = Cause.failureOption(exit.cause)
    throw Option.isSome(failure) ? failure.value : unexpected(connection.log, exit.cause)
  }
}

/** Keeps count of each request until its answer is ready, so that none is dropped at exit. */
const requestTracker = () => {
  const inFlight = new Set<Promise<unknown>>()
  const tracked = <P, A>(handle: (request: P) => Promise<A>) => (request: P): Promise<A> => {
    const answered = handle(request)
    inFlight.add(answered)
    const forget = () => void inFlight.delete(answered)
    answered.then(forget, forget)
    return answered
  }
  const drained = async () => {
    while (inFlight.size > 0) await Promise.allSettled([...inFlight])
  }
  return { tracked, drained }
}

/** Each ACP request and notification, wired to its handler. */
const appOf = (
  run: Run,
  tracked: ReturnType<typeof requestTracker>["tracked"],
  order: PromptOrder | undefined
): acp.AgentApp => {
  /** Without an answer to wait for: a failure is already logged by `run`. */
  const runLater = (program: Effect.Effect<void, never, AcpServices | AcpConnection>) =>
    void run(program).catch(() => undefined)
  return acp
    .agent({ name: "mm" })
    .onRequest(
      acp.methods.agent.initialize,
      tracked(async ({ params }) => {
        const answer = await run(initialize(params))
        // start-up is over once the editor is answered
        setImmediate(startedUp)
        return answer
      })
    )
    .onRequest(
      acp.methods.agent.session.new,
      tracked(async ({ params, client }) => {
        const response = await run(newSession(params))
        setImmediate(() => runLater(sendCommands(client, response.sessionId)))
        return response
      })
    )
    .onRequest(acp.methods.agent.session.load, tracked(({ params, client }) => run(loadSession(params, client))))
    .onRequest(
      "session/fork",
      parseForkRequest,
      tracked(async ({ params, client }: { readonly params: ForkRequest; readonly client: acp.AgentContext }) => {
        const response = await run(forkSession(params))
        setImmediate(() => runLater(sendCommands(client, response.sessionId)))
        return response
      })
    )
    .onRequest(acp.methods.agent.session.resume, tracked(({ params, client }) => run(resumeSession(params, client))))
    .onRequest(acp.methods.agent.session.list, tracked(({ params }) => run(listSessions(params))))
    .onRequest(
      acp.methods.agent.session.prompt,
      tracked(({ params, client, signal, requestId }) => run(prompt(params, client, signal, order?.take(requestId))))
    )
    .onRequest(acp.methods.agent.session.setMode, tracked(({ params, client }) => run(setMode(params, client))))
    .onRequest(
      acp.methods.agent.session.setConfigOption,
      tracked(({ params, client }) => run(setConfigOption(params, client)))
    )
    .onRequest(acp.methods.agent.session.close, tracked(({ params }) => run(closeSession(params))))
    .onNotification(acp.methods.agent.session.cancel, ({ params }) => runLater(cancelPrompt(params)))
}

/** The ACP agent: each request translated into calls of the core, run on `runtime`. */
export const makeAcpAgent = (
  runtime: Runtime.Runtime<AcpServices>,
  options: {
    readonly version: string
    readonly log: (line: string) => void
    /** Numbers prompts and cancels as they arrive, so that a stale cancel stops nothing. */
    readonly order?: PromptOrder
  }
): Effect.Effect<AcpAgent> =>
  Effect.gen(function*() {
    const connection = yield* makeConnection(options)
    const { tracked, drained } = requestTracker()
    const app = appOf(runnerOf(runtime, connection), tracked, options.order)
    return { app, shutdown: Effect.provideService(cancelAll, AcpConnection, connection), drained }
  })
