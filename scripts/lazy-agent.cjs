// What scripts/lazy-http.cjs and scripts/lazy-https.cjs give @effect/platform-node's HTTP
// client in place of node:http and node:https (scripts/build.mjs): the client makes an agent of
// each kind as mm's services are made, which loaded both modules (and node:tls under https, a
// few milliseconds in all) at every start, before the terminal's banner, which sends nothing.
// Here `load` is called, and the real agent made, only when a request goes out.
"use strict"

module.exports = (load) => {
  let real
  const module = () => (real ??= load())

  class Agent {
    constructor(options) {
      this.options = options
      this.real = undefined
    }
    get agent() {
      return (this.real ??= new (module().Agent)(this.options))
    }
    destroy() {
      this.real?.destroy()
    }
  }

  const request = (url, options, ...rest) =>
    module().request(url, options?.agent instanceof Agent ? { ...options, agent: options.agent.agent } : options, ...rest)

  return { Agent, request }
}
