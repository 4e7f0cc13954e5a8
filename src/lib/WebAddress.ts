// Which network addresses `web_fetch` may connect to: public (unicast) ones, and the private
// ones the configuration lists (`webFetch.allowPrivate`). Checked on the address a request
// actually connects to — after DNS, through the request's own `lookup` — so that a name
// answering with a public address first and a private one later cannot slip through.
import * as dns from "node:dns"
import * as net from "node:net"

import ipaddr from "ipaddr.js"

/** `webFetch.allowPrivate`: every address (`true`), none (`false`), or these addresses and CIDR ranges. */
export type PrivateAllowance = boolean | ReadonlyArray<string>

type Address = ipaddr.IPv4 | ipaddr.IPv6

/** The address as its own family reads it: an IPv4 address written as IPv6 (`::ffff:10.0.0.1`) is IPv4. */
const parsed = (text: string): Address | undefined => {
  const bare = text.startsWith("[") && text.endsWith("]") ? text.slice(1, -1) : text
  try {
    return ipaddr.process(bare.replace(/%.*$/, ""))
  } catch {
    return undefined
  }
}

const entryMatches = (entry: string, address: Address): boolean => {
  if (ipaddr.isValidCIDR(entry)) {
    const [base, bits] = ipaddr.parseCIDR(entry)
    // an IPv4 range written as IPv6 (`::ffff:10.0.0.0/104`) matches the IPv4 addresses it names
    const [network, length] = base instanceof ipaddr.IPv6 && base.isIPv4MappedAddress() && bits >= 96
      ? [base.toIPv4Address(), bits - 96]
      : [base, bits]
    return network.kind() === address.kind() && address.match(network, length)
  }
  const one = parsed(entry)
  return one !== undefined && one.kind() === address.kind() && one.toNormalizedString() === address.toNormalizedString()
}

/**
 * The address's range, as ipaddr.js names it, with two IPv6 forms that carry an IPv4 address
 * judged by it: NAT64's `64:ff9b::a.b.c.d` (how an IPv6-only network reaches IPv4 sites, its
 * public ones reachable) and the old IPv4-compatible `::a.b.c.d`, which ipaddr.js calls
 * unicast although `::127.0.0.1` names loopback (refused whatever it holds: nothing uses it).
 */
const rangeOf = (address: Address): string => {
  if (address.kind() === "ipv4") return address.range()
  const parts = (address as ipaddr.IPv6).parts
  const embedded = () => ipaddr.fromByteArray(address.toByteArray().slice(12))
  if (parts.slice(0, 6).every((part) => part === 0) && address.range() === "unicast") return "IPv4-compatible"
  if (parts[0] === 0x64 && parts[1] === 0xff9b && parts.slice(2, 6).every((part) => part === 0)) {
    return embedded().range()
  }
  return address.range()
}

/** The kind of a refused address (`loopback`, `private`, `linkLocal`…), or undefined when it may be reached. */
export const refusedRange = (text: string, allowance: PrivateAllowance): string | undefined => {
  const address = parsed(text)
  if (address === undefined) return "not an IP address"
  const range = rangeOf(address)
  if (range === "unicast" || allowance === true) return undefined
  if (allowance !== false && allowance.some((entry) => entryMatches(entry, address))) return undefined
  return range
}

/** The line a refused address gives: `10.0.0.1 is a private address, …`. */
export const refusedLine = (shown: string, range: string): string =>
  `${shown} is ${
    /^[aeiouAEIOU]/.test(range) ? "an" : "a"
  } ${range} address, not reached unless webFetch.allowPrivate allows it`

/** A host name that is an IP address already (no DNS asked, so no lookup runs for it): the address. */
export const literalAddress = (hostname: string): string | undefined => {
  const bare = hostname.startsWith("[") && hostname.endsWith("]") ? hostname.slice(1, -1) : hostname
  return net.isIP(bare) === 0 ? undefined : bare
}

/** The error a lookup fails with when every address of a name is refused; its message is the reason. */
export class AddressRefused extends Error {
  override readonly name = "AddressRefused"
}

type LookupCallback = (
  err: NodeJS.ErrnoException | null,
  address: string | Array<dns.LookupAddress>,
  family?: number
) => void

/**
 * A `lookup` for `http.request` that resolves as Node does, then keeps only the addresses that
 * may be reached: the connection can only go to one of them. None left: fails with
 * `AddressRefused`, naming the first address refused.
 */
export const checkedLookup = (allowance: PrivateAllowance) =>
(
  hostname: string,
  options: dns.LookupOptions,
  callback: LookupCallback
): void => {
  dns.lookup(hostname, { ...options, all: true }, (err, addresses) => {
    if (err !== null) return callback(err, [])
    const allowed = addresses.filter((entry) => refusedRange(entry.address, allowance) === undefined)
    if (allowed.length === 0) {
      const first = addresses[0]
      const why = first === undefined
        ? `${hostname} has no address`
        : refusedLine(`${hostname} (${first.address})`, refusedRange(first.address, allowance) ?? "refused")
      return callback(new AddressRefused(why), [])
    }
    if (options.all === true) return callback(null, allowed)
    return callback(null, allowed[0].address, allowed[0].family)
  })
}
