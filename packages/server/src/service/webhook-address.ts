/**
 * Where a webhook may be sent. Unless the operator allows private networks
 * (PROMPTSTORE_WEBHOOK_ALLOW_PRIVATE), an endpoint must not reach the server's own machine or its network:
 * loopback, private (RFC 1918), carrier-grade NAT, link-local (cloud metadata at 169.254.169.254), IPv6
 * unique-local and link-local, multicast, unspecified and reserved ranges are refused, IPv4 written inside
 * IPv6 (mapped ::ffff:a.b.c.d, compatible ::a.b.c.d, NAT64 64:ff9b::/96, 6to4 2002::/16) by the IPv4 it
 * carries.
 *
 * A literal address is checked when the endpoint is created; a host name only at send time, where every
 * address it resolves to is checked and the connection goes to the address that was checked (the lookup
 * below), so a name that resolves to a public address for the check and a private one for the connection
 * (DNS rebinding) gets nowhere.
 */
import { lookup as dnsLookup, type LookupAddress } from "node:dns";
import { isIP } from "node:net";

interface Range {
  /** The network's first address and prefix length, over the address's bytes. */
  bytes: number[];
  prefix: number;
  what: string;
}

const v4 = (cidr: string, what: string): Range => {
  const [address, prefix] = cidr.split("/") as [string, string];
  return { bytes: address.split(".").map(Number), prefix: Number(prefix), what };
};

const v6 = (cidr: string, what: string): Range => {
  const [address, prefix] = cidr.split("/") as [string, string];
  return { bytes: ipv6Bytes(address) as number[], prefix: Number(prefix), what };
};

const IPV4_RANGES: Range[] = [
  v4("0.0.0.0/8", "an unspecified address"),
  v4("10.0.0.0/8", "a private address"),
  v4("100.64.0.0/10", "a shared (carrier-grade NAT) address"),
  v4("127.0.0.0/8", "a loopback address"),
  v4("169.254.0.0/16", "a link-local address"),
  v4("172.16.0.0/12", "a private address"),
  v4("192.0.0.0/24", "a reserved address"),
  v4("192.0.2.0/24", "a reserved address"),
  v4("192.168.0.0/16", "a private address"),
  v4("198.18.0.0/15", "a reserved address"),
  v4("198.51.100.0/24", "a reserved address"),
  v4("203.0.113.0/24", "a reserved address"),
  v4("224.0.0.0/4", "a multicast address"),
  v4("240.0.0.0/4", "a reserved address"),
];

/** Ranges that carry an IPv4 address: [range, byte offset of the IPv4 address]. */
const EMBEDDING: [Range, number][] = [
  [v6("::ffff:0:0/96", "an IPv4-mapped address"), 12],
  [v6("64:ff9b::/96", "a NAT64 address"), 12],
  [v6("2002::/16", "a 6to4 address"), 2],
];

const IPV6_RANGES: Range[] = [
  v6("::/128", "an unspecified address"),
  v6("::1/128", "a loopback address"),
  v6("64:ff9b:1::/48", "a private address"),
  v6("100::/64", "a reserved address"),
  v6("2001:db8::/32", "a reserved address"),
  v6("fc00::/7", "a unique-local address"),
  v6("fe80::/10", "a link-local address"),
  v6("fec0::/10", "a site-local address"),
  v6("ff00::/8", "a multicast address"),
];
const COMPATIBLE = v6("::/96", "an IPv4-compatible address");

function inRange(bytes: number[], range: Range): boolean {
  let bits = range.prefix;
  for (let i = 0; bits > 0; i++, bits -= 8) {
    const mask = bits >= 8 ? 0xff : (0xff << (8 - bits)) & 0xff;
    if (((bytes[i] ?? 0) & mask) !== ((range.bytes[i] ?? 0) & mask)) return false;
  }
  return true;
}

/** The 16 bytes of an IPv6 address (zone id ignored), or null when it is not one. */
export function ipv6Bytes(text: string): number[] | null {
  let address = text.replace(/%.*$/, "");
  if (isIP(address) !== 6) return null;
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(address);
  if (dotted?.[1]) {
    const [a, b, c, d] = dotted[1].split(".").map(Number) as [number, number, number, number];
    address = `${address.slice(0, -dotted[1].length)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = address.includes("::") ? (address.split("::") as [string, string]) : [address, undefined];
  const groups = (part: string | undefined) => (part ? part.split(":").map((g) => Number.parseInt(g, 16)) : []);
  const first = groups(head);
  const last = groups(tail);
  const all = tail === undefined ? first : [...first, ...new Array(8 - first.length - last.length).fill(0), ...last];
  return all.flatMap((g) => [g >> 8, g & 0xff]);
}

/**
 * Why an address may not be reached ("a loopback address"), or null when it is public. Anything that is not
 * an IP address is refused too.
 */
export function refusedAddress(address: string): string | null {
  const family = isIP(address.replace(/%.*$/, ""));
  if (family === 4) {
    const bytes = address.split(".").map(Number);
    return IPV4_RANGES.find((r) => inRange(bytes, r))?.what ?? null;
  }
  const bytes = family === 6 ? ipv6Bytes(address) : null;
  if (!bytes) return "not an IP address";
  for (const [range, offset] of EMBEDDING) {
    if (inRange(bytes, range)) {
      const inner = refusedAddress(bytes.slice(offset, offset + 4).join("."));
      return inner === null ? null : `${range.what} of ${inner}`;
    }
  }
  const own = IPV6_RANGES.find((r) => inRange(bytes, r));
  if (own) return own.what;
  if (inRange(bytes, COMPATIBLE)) {
    const inner = refusedAddress(bytes.slice(12).join("."));
    return inner === null ? null : `${COMPATIBLE.what} of ${inner}`;
  }
  return null;
}

/** A URL's host as an IP address when it is one (brackets of IPv6 removed), else null. */
export function literalAddress(hostname: string): string | null {
  const bare = hostname.startsWith("[") && hostname.endsWith("]") ? hostname.slice(1, -1) : hostname;
  return isIP(bare) === 0 ? null : bare;
}

export const ALLOW_PRIVATE_HINT = "set PROMPTSTORE_WEBHOOK_ALLOW_PRIVATE=true to allow private networks";

/**
 * The message of a refusal, as a delivery's last_error, a run's error or a 400 shows it. A literal address is
 * the writer's own words and is named with its kind; for a host name, what it resolves to is the server's
 * network, which nobody outside should learn: only that its address is not allowed.
 */
export function refusalMessage(host: string, address: string, what: string): string {
  const target = host === address ? `${address}, ${what}` : `${host}: address not allowed`;
  return `refused: ${target}; ${ALLOW_PRIVATE_HINT}`;
}

export class RefusedAddressError extends Error {
  readonly code = "EWEBHOOKREFUSED";
}

export type Resolver = (hostname: string) => Promise<LookupAddress[]>;

const systemResolver: Resolver = (hostname) =>
  new Promise((resolve, reject) =>
    dnsLookup(hostname, { all: true, verbatim: true }, (error, addresses) =>
      error ? reject(error) : resolve(addresses),
    ),
  );

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/**
 * A `lookup` for `http.request`: resolves the host, refuses it when any of its addresses is refused, and
 * hands the checked addresses to the connection, which therefore goes to one of them and nowhere else.
 */
export function guardedLookup(allowPrivate: boolean, resolver: Resolver = systemResolver) {
  return (hostname: string, options: { all?: boolean; family?: number | string }, callback: LookupCallback): void => {
    resolver(hostname).then(
      (found) => {
        const wanted = options.family === 4 || options.family === 6 ? options.family : 0;
        const addresses = wanted === 0 ? found : found.filter((a) => a.family === wanted);
        if (addresses.length === 0) {
          const error: NodeJS.ErrnoException = new Error(`${hostname} has no address`);
          error.code = "ENOTFOUND";
          return callback(error, []);
        }
        if (!allowPrivate) {
          for (const { address } of addresses) {
            const what = refusedAddress(address);
            if (what !== null) return callback(new RefusedAddressError(refusalMessage(hostname, address, what)), []);
          }
        }
        if (options.all) return callback(null, addresses);
        const first = addresses[0] as LookupAddress;
        callback(null, first.address, first.family);
      },
      (error: NodeJS.ErrnoException) => callback(error, []),
    );
  };
}
