// Run before every test file (vitest.config.ts). mm keeps what a model server said of itself
// under the user's cache directory for a few minutes (src/model/ServerCache.ts); tests start
// many fake servers, and one on a port a former one used must be asked afresh, so the cache is
// off unless a test turns it on for the mm it starts (test/e2e/cli/ServerCache.test.ts).
process.env.MM_NO_SERVER_CACHE ??= "1"
