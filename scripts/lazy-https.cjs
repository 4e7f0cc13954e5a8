// Stands in for `node:https` in @effect/platform-node's HTTP client (scripts/build.mjs): that
// client makes an https agent at start-up, which loads node:https and node:tls (a few
// milliseconds) even for a model server on plain http, as local ones are. Here the real module
// and agent are made only when a request goes to an https URL.
"use strict"

let https
const load = () => (https ??= require("node:https"))

class Agent {
  constructor(options) {
    this.options = options
    this.real = undefined
  }
  get agent() {
    return (this.real ??= new (load().Agent)(this.options))
  }
  destroy() {
    this.real?.destroy()
  }
}

const request = (url, options, ...rest) =>
  load().request(url, options?.agent instanceof Agent ? { ...options, agent: options.agent.agent } : options, ...rest)

module.exports = { Agent, request }
