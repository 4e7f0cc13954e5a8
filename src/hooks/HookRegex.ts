/**
 * RE2's regular expressions (linear in time, whatever the pattern), for the matchers of hooks
 * that are more than tool names. Built as `dist/mm-regex.cjs`, loaded only by such a matcher.
 */
export { RE2JS } from "re2js"
