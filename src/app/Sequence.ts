/**
 * A façade's services made one after the other, in one layer. Effect builds a graph of layers
 * node by node, each with a memo map entry, a scope and, under `Layer.mergeAll`, a fiber of its
 * own; for the dozen small services mm starts with, that machinery cost more than the services
 * (about 7 ms before the banner, measured). Here each step is made in the order given and sees
 * every service made before it, in the one scope of the layer; finalizers run in reverse order.
 *
 * The types follow the steps, in order: the layer gives every service a step makes, and needs
 * every service a step needs that no step before it makes, so a service left out, or made too
 * late, is a compile error where the layer is provided.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"

/** One step: a service's tag with the effect that makes it, or a layer built on its own. */
export type Step<A, E, R> =
  | {
    readonly _tag: "Made"
    readonly tag: Context.Tag<A, unknown>
    readonly make: Effect.Effect<unknown, E, R>
  }
  | { readonly _tag: "Built"; readonly layer: Layer.Layer<A, E, R> }

/** A service made by `make`, from the services made before it (a scoped one in the layer's scope). */
export const made = <I, S, E, R>(tag: Context.Tag<I, S>, make: Effect.Effect<S, E, R>): Step<I, E, R> => ({
  _tag: "Made",
  tag: tag as Context.Tag<I, unknown>,
  make
})

/** A layer among the steps (a test's store, a library's layer, an editor's approver). */
export const built = <A, E, R>(layer: Layer.Layer<A, E, R>): Step<A, E, R> => ({ _tag: "Built", layer })

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- any step, whatever it makes and needs
type AnyStep = Step<any, any, any>

type Gives<S> = S extends Step<infer A, infer _E, infer _R> ? A : never
type Fails<S> = S extends Step<infer _A, infer E, infer _R> ? E : never
type Needs<S> = S extends Step<infer _A, infer _E, infer R> ? R : never

/** What the steps need from outside: each step's needs less what the steps before it made. */
type Missing<Steps, Before = never> = Steps extends readonly [infer First, ...infer Rest]
  ? Exclude<Needs<First>, Before> | Missing<Rest, Before | Gives<First>>
  : never

/** For a list whose order the compiler does not know, what no step makes. */
type Outside<Steps extends ReadonlyArray<AnyStep>> = number extends Steps["length"]
  ? Exclude<Needs<Steps[number]>, Gives<Steps[number]>>
  : Missing<Steps>

const makeStep = (step: AnyStep, scope: Scope.Scope): Effect.Effect<Context.Context<unknown>, unknown, unknown> =>
  step._tag === "Made"
    ? Effect.map(step.make, (service) => Context.make(step.tag, service))
    : Layer.buildWithScope(step.layer, scope)

/** The services of `steps`, made in order, in one layer. */
export const inSequence = <const Steps extends ReadonlyArray<AnyStep>>(
  steps: Steps
): Layer.Layer<
  Gives<Steps[number]>,
  Fails<Steps[number]>,
  Exclude<Outside<Steps>, Scope.Scope>
> =>
  Layer.scopedContext(
    Effect.gen(function*() {
      const scope = yield* Effect.scope
      let made = Context.empty() as Context.Context<unknown>
      for (const step of steps) {
        const before = made
        made = Context.merge(made, yield* Effect.provide(makeStep(step, scope), before))
      }
      return made
    })
  ) as never
