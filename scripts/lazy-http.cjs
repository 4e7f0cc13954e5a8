// Stands in for `node:http` in @effect/platform-node's HTTP client (scripts/build.mjs), as
// lazy-https.cjs does for `node:https`: the client makes its agent as the services are made,
// which loaded node:http (about 2 ms) before the terminal's banner, which sends nothing. Here
// the real module and agent are made when the first request goes out.
"use strict"

let http
const load = () => (http ??= require("node:http"))

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
