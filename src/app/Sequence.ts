/**
 * A façade's services made one after the other, in one layer. Effect builds a graph of layers
 * node by node, each with a memo map entry, a scope and, under `Layer.mergeAll`, a fiber of its
 * own; for the dozen small services mm starts with, that machinery cost more than the services
 * (about 7 ms before the banner, measured). Here each step is made in the order given and sees
 * every service made before it, in the one scope of the layer; finalizers run in reverse order.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"

/** A service's tag with the effect that makes it (from the services made before it). */
export interface Made {
  readonly _tag: "Made"
  readonly tag: Context.Tag<unknown, unknown>
  readonly make: Effect.Effect<unknown, unknown, unknown>
}

/** A layer among the steps, built on its own (a test's store, a library's layer). */
export interface Built {
  readonly _tag: "Built"
  readonly layer: Layer.Layer<unknown, unknown, unknown>
}

/** One step of a sequence. */
export type Step = Made | Built

export const made = <I, S, E, R>(tag: Context.Tag<I, S>, make: Effect.Effect<S, E, R>): Made => ({
  _tag: "Made",
  tag: tag as Context.Tag<unknown, unknown>,
  make: make as Effect.Effect<unknown, unknown, unknown>
})

export const built = <A, E, R>(layer: Layer.Layer<A, E, R>): Built => ({
  _tag: "Built",
  layer: layer as unknown as Layer.Layer<unknown, unknown, unknown>
})

const makeStep = (step: Step, scope: Scope.Scope) =>
  step._tag === "Made"
    ? Effect.map(step.make, (service) => Context.make(step.tag, service))
    : Layer.buildWithScope(step.layer, scope)

/**
 * The services of `steps`, made in order. The caller names what the layer gives and needs:
 * a step that needs a service neither given nor made before it is a defect at start-up, which
 * every façade's end-to-end tests reach.
 */
export const inSequence = <ROut, E = never, RIn = never>(
  steps: ReadonlyArray<Step>
): Layer.Layer<ROut, E, RIn> =>
  Layer.scopedContext(
    Effect.gen(function*() {
      const scope = yield* Effect.scope
      let built = Context.empty() as Context.Context<unknown>
      for (const step of steps) {
        const context = built
        built = Context.merge(built, yield* Effect.provide(makeStep(step, scope), context))
      }
      return built
    })
  ) as unknown as Layer.Layer<ROut, E, RIn>
