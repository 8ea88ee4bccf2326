import { type LookupAddress, lookup as dnsLookup } from "node:dns";
import { lookup as resolveAll } from "node:dns/promises";
import { BlockList, isIP, type LookupFunction } from "node:net";

// Where a member's webhook must never make the host post: the host's own machine and network,
// its cloud's metadata service (169.254.169.254), and addresses that are no single host.
const REFUSED_RANGES: readonly (readonly [string, number, "ipv4" | "ipv6", string])[] = [
  ["0.0.0.0", 8, "ipv4", "this network (0.0.0.0/8)"],
  ["10.0.0.0", 8, "ipv4", "private (10/8)"],
  ["100.64.0.0", 10, "ipv4", "shared address space (CGNAT 100.64/10)"],
  ["127.0.0.0", 8, "ipv4", "loopback (127/8)"],
  ["169.254.0.0", 16, "ipv4", "link-local (169.254/16)"],
  ["172.16.0.0", 12, "ipv4", "private (172.16/12)"],
  ["192.0.0.0", 24, "ipv4", "IETF protocol assignments (192.0.0/24)"],
  ["192.168.0.0", 16, "ipv4", "private (192.168/16)"],
  ["198.18.0.0", 15, "ipv4", "benchmarking (198.18/15)"],
  ["224.0.0.0", 4, "ipv4", "multicast (224/4)"],
  ["240.0.0.0", 4, "ipv4", "reserved (240/4, broadcast)"],
  // ::/96 holds ::, ::1 and the deprecated IPv4-compatible addresses.
  ["::", 96, "ipv6", "unspecified, loopback or IPv4-compatible (::/96)"],
  ["fe80::", 10, "ipv6", "link-local (fe80::/10)"],
  ["fec0::", 10, "ipv6", "site-local (fec0::/10)"],
  // Teredo tunnels to a relay and a client behind a NAT: where it lands cannot be judged from here.
  ["2001::", 32, "ipv6", "Teredo (2001::/32)"],
  ["fc00::", 7, "ipv6", "unique local (fc00::/7)"],
  ["ff00::", 8, "ipv6", "multicast (ff00::/8)"],
];

// One BlockList per range, built once and never changed after, so a refusal can name its range.
// A BlockList also matches IPv4-mapped IPv6 addresses (::ffff:127.0.0.1) against the IPv4 ranges.
const RANGES: readonly (readonly [BlockList, string])[] = REFUSED_RANGES.map(([network, prefix, type, name]) => {
  const list = new BlockList();
  list.addSubnet(network, prefix, type);
  return [list, name] as const;
});

// Ranges that carry an IPv4 address a translator or a relay connects to: judged by that address.
// NAT64 (RFC 6052): 64:ff9b::/96, the last 32 bits; IPv4-translated (SIIT, ::ffff:0:0:0/96), the
// last 32 bits too; 6to4 (2002::/16), bits 16 to 47. 64:ff9b:1::/48 is for local translators, so
// refused whole.
const EMBEDDING: readonly (readonly [BlockList, string, number])[] = (
  [
    ["64:ff9b::", 96, "NAT64", 6],
    ["::ffff:0:0:0", 96, "IPv4-translated", 6],
    ["2002::", 16, "6to4", 1],
  ] as const
).map(([network, prefix, name, group]) => {
  const list = new BlockList();
  list.addSubnet(network, prefix, "ipv6");
  return [list, name, group] as const;
});
const LOCAL_NAT64 = new BlockList();
LOCAL_NAT64.addSubnet("64:ff9b:1::", 48, "ipv6");

/** Why `address` (an IP literal) is no public unicast address, or null when it is one. */
export function refusedAddress(address: string): string | null {
  const type = isIP(address) === 6 ? "ipv6" : "ipv4";
  if (type === "ipv6" && LOCAL_NAT64.check(address, type)) return "local NAT64 (64:ff9b:1::/48)";
  const embedding = type === "ipv6" ? EMBEDDING.find(([list]) => list.check(address, type)) : undefined;
  if (embedding) {
    const [, name, group] = embedding;
    const embedded = refusedAddress(ipv4At(address, group));
    return embedded ? `${name} of a ${embedded}` : null;
  }
  return RANGES.find(([list]) => list.check(address, type))?.[1] ?? null;
}

/** The IPv4 address in groups `group` and `group + 1` of an IPv6 address (written with or without a dotted tail). */
function ipv4At(address: string, group: number): string {
  const groups = groupsOf(address);
  const [high = 0, low = 0] = groups.slice(group, group + 2);
  return [high >> 8, high & 255, low >> 8, low & 255].join(".");
}

/** The eight 16-bit groups of a valid IPv6 literal: `::` expanded, a dotted IPv4 tail as two groups. */
function groupsOf(address: string): number[] {
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(address);
  const hex = dotted
    ? `${address.slice(0, dotted.index)}${((Number(dotted[1]) << 8) | Number(dotted[2])).toString(16)}:${((Number(dotted[3]) << 8) | Number(dotted[4])).toString(16)}`
    : address;
  const [head = "", tail] = hex.split("::");
  const parse = (part: string) => (part ? part.split(":").map((g) => Number.parseInt(g, 16)) : []);
  const before = parse(head);
  const after = tail === undefined ? [] : parse(tail);
  return [...before, ...Array.from({ length: 8 - before.length - after.length }, () => 0), ...after];
}

/** The host of a URL as an IP literal (brackets of IPv6 removed), or null for a name. */
const literalOf = (url: URL): string | null => {
  const host = url.hostname.replace(/^\[(.*)\]$/, "$1");
  return isIP(host) ? host : null;
};

/**
 * Why a member may not use `target` as a webhook, or null. Refused: a scheme other than http(s),
 * credentials in the URL, a host that is or resolves to an address `refusedAddress` names. A name
 * that does not resolve now is let through: the notifier checks every address again when it
 * connects, so a name that later resolves into a private network is refused then.
 */
export async function webhookTargetRefusal(target: string, options: { allowPrivateNetworks?: boolean } = {}): Promise<string | null> {
  if (!URL.canParse(target)) return "not a URL";
  const url = new URL(target);
  if (url.protocol !== "https:" && url.protocol !== "http:") return "only http and https webhooks are allowed";
  if (url.username || url.password) return "a webhook URL may not carry a user name or password";
  if (options.allowPrivateNetworks) return null;
  const literal = literalOf(url);
  const addresses = literal ? [literal] : await resolvedWithin(url.hostname, RESOLVE_AT_CREATE_MS);
  for (const address of addresses) {
    const refused = refusedAddress(address);
    if (refused) return `the webhook's host ${literal ? "is" : "resolves to"} a ${refused} address`;
  }
  return null;
}

/** How long a channel's create waits for its host's name to resolve; past it, the send-time check decides. */
const RESOLVE_AT_CREATE_MS = 3_000;

/** The addresses `hostname` resolves to, or none when it does not resolve within `ms` (a member's route must not hang on DNS). */
async function resolvedWithin(hostname: string, ms: number): Promise<string[]> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<string[]>((resolve) => {
    timer = setTimeout(() => resolve([]), ms);
  });
  const found = resolveAll(hostname, { all: true }).then(
    (addresses) => addresses.map((a) => a.address),
    () => [],
  );
  try {
    return await Promise.race([found, late]);
  } finally {
    clearTimeout(timer);
  }
}

/** A connection the notifier refused to open: the target is (now) in a refused range. */
export class PrivateAddressRefused extends Error {
  constructor(reason: string) {
    super(`refused to connect: the webhook's host is a ${reason} address`);
    this.name = "PrivateAddressRefused";
  }
}

/** The refusal of a URL whose host is an IP literal in a refused range (no lookup runs for those), or null. */
export function literalRefusal(url: URL): PrivateAddressRefused | null {
  const literal = literalOf(url);
  const refused = literal ? refusedAddress(literal) : null;
  return refused ? new PrivateAddressRefused(refused) : null;
}

/**
 * A `lookup` for node:http(s) that resolves as usual, then refuses the connection when any
 * address is in a refused range: the socket connects only to addresses checked here, so a name
 * that resolved to a public address when the channel was created and to a private one now (DNS
 * rebinding) is refused at send time.
 */
export const publicOnlyLookup: LookupFunction = (hostname, options, callback) => {
  dnsLookup(hostname, { ...options, all: true }, (error, addresses: LookupAddress[]) => {
    if (error) return callback(error, "", 0);
    const refused = addresses.map((a) => refusedAddress(a.address)).find((reason) => reason !== null);
    if (refused) return callback(Object.assign(new PrivateAddressRefused(refused), { code: "EPRIVATEADDRESS" }), "", 0);
    if (options.all) return callback(null, addresses);
    const [first] = addresses;
    return first ? callback(null, first.address, first.family) : callback(Object.assign(new Error(`${hostname} has no address`), { code: "ENOTFOUND" }), "", 0);
  });
};
