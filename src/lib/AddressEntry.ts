// What `webFetch.allowPrivate` may list: IP addresses and CIDR ranges, checked when agent.yaml
// is read. With node:net alone, so that the configuration's schema does not bring the address
// library (ipaddr.js, in lib/WebAddress.ts) into the program's core.
import * as net from "node:net"

/** Whether `entry` is an IPv4 or IPv6 address, or one with a prefix length its family allows (`10.0.0.0/8`). */
export const isAddressOrRange = (entry: string): boolean => {
  const slash = entry.indexOf("/")
  if (slash < 0) return net.isIP(entry) !== 0
  const family = net.isIP(entry.slice(0, slash))
  const bits = entry.slice(slash + 1)
  return family !== 0 && /^\d{1,3}$/.test(bits) && Number(bits) <= (family === 4 ? 32 : 128)
}
