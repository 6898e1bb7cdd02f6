/**
 * Which IP addresses a link from a user may reach: the guard of every download without a
 * credential and of every link the bot passes on (download.ts). Written once here from the IANA
 * special-purpose registries; parsed by slices, in time linear in the address.
 */
import { isIP } from 'node:net';

/**
 * The addresses no link from a user may reach, written once. From the IANA IPv4 and IPv6
 * Special-Purpose Address Registries (RFC 6890; iana.org/assignments/iana-ipv4-special-registry
 * and iana-ipv6-special-registry): every range whose "Globally Reachable" is False or N/A,
 * plus the translation and tunnelling prefixes that embed another address (an IPv4 address
 * behind NAT64, 6to4 or Teredo may be a private one) and the multicast blocks.
 * Each entry: network, prefix length, what it is.
 */
const NOT_PUBLIC_RANGES = {
  ipv4: [
    ['0.0.0.0', 8, '"this network" (RFC 791), 0.0.0.0 included'],
    ['10.0.0.0', 8, 'private use (RFC 1918)'],
    ['100.64.0.0', 10, 'shared address space, carrier-grade NAT (RFC 6598)'],
    ['127.0.0.0', 8, 'loopback (RFC 1122)'],
    ['169.254.0.0', 16, 'link local, cloud metadata (RFC 3927)'],
    ['172.16.0.0', 12, 'private use (RFC 1918)'],
    // The whole block, with its two globally reachable anycast /32s (PCP, TURN): no image is served there.
    ['192.0.0.0', 24, 'IETF protocol assignments (RFC 6890), NAT64 discovery and DS-Lite included'],
    ['192.0.2.0', 24, 'documentation TEST-NET-1 (RFC 5737)'],
    ['192.88.99.0', 24, 'deprecated 6to4 relay anycast (RFC 7526), 6a44 included'],
    ['192.168.0.0', 16, 'private use (RFC 1918)'],
    ['198.18.0.0', 15, 'benchmarking (RFC 2544)'],
    ['198.51.100.0', 24, 'documentation TEST-NET-2 (RFC 5737)'],
    ['203.0.113.0', 24, 'documentation TEST-NET-3 (RFC 5737)'],
    ['224.0.0.0', 4, 'multicast (RFC 5771)'],
    ['240.0.0.0', 4, 'reserved (RFC 1112)'],
    ['255.255.255.255', 32, 'limited broadcast (RFC 919)'],
  ],
  ipv6: [
    // ::/96 holds the unspecified ::/128 (RFC 4291) and loopback ::1/128; IPv4-mapped ::ffff:0:0/96 is judged as its IPv4 address instead.
    ['::', 96, 'IPv4-compatible, deprecated (RFC 4291 §2.5.5.1), unspecified and loopback included'],
    ['64:ff9b::', 96, 'IPv4/IPv6 translation, NAT64 (RFC 6052)'],
    ['64:ff9b:1::', 48, 'local-use IPv4/IPv6 translation (RFC 8215)'],
    ['100::', 64, 'discard-only (RFC 6666)'],
    ['100:0:0:1::', 64, 'dummy IPv6 prefix (RFC 9780)'],
    // The whole block, with its few globally reachable assignments (anycasts, AMT, AS112, ORCHIDv2): no image is served there.
    ['2001::', 23, 'IETF protocol assignments (RFC 2928): Teredo 2001::/32 (RFC 4380), benchmarking, ORCHID'],
    ['2001:db8::', 32, 'documentation (RFC 3849)'],
    ['2002::', 16, '6to4 (RFC 3056)'],
    ['3fff::', 20, 'documentation (RFC 9637)'],
    ['5f00::', 16, 'segment routing SIDs (RFC 9602)'],
    ['fc00::', 7, 'unique local (RFC 4193)'],
    ['fe80::', 10, 'link-local unicast (RFC 4291)'],
    ['fec0::', 10, 'site-local, deprecated (RFC 3879)'],
    ['ff00::', 8, 'multicast (RFC 4291)'],
  ],
} as const;

/** Global unicast, 2000::/3 (IANA IPv6 Address Space registry): no IPv6 address outside it is public. */
const GLOBAL_UNICAST_V6 = { network: 0x2000n << 112n, prefix: 3 };

/** An IP address as a number: 32 bits for IPv4, 128 for IPv6. */
type ParsedAddress = { family: 4; value: bigint } | { family: 6; value: bigint };

/** `a.b.c.d` as a 32-bit number; undefined when not exactly that. */
function parseIPv4(text: string): bigint | undefined {
  if (isIP(text) !== 4) return undefined;
  return text.split('.').reduce((sum, part) => (sum << 8n) | BigInt(Number(part)), 0n);
}

/**
 * Parses an IPv4 or IPv6 address in any spelling node or a resolver may give: brackets, a zone
 * id (`fe80::1%eth0`), upper case, full or compressed groups, an embedded dotted IPv4 tail.
 */
function parseAddress(raw: string): ParsedAddress | undefined {
  // Slices, not regular expressions: linear whatever a resolver or a URL hands over.
  let text = raw.trim();
  if (text.startsWith('[') && text.endsWith(']')) text = text.slice(1, -1);
  const zone = text.indexOf('%');
  if (zone >= 0) text = text.slice(0, zone);
  const v4 = parseIPv4(text);
  if (v4 !== undefined) return { family: 4, value: v4 };
  if (isIP(text) !== 6) return undefined;
  let body = text.toLowerCase();
  // A valid IPv6 address (isIP) with a dot ends in a dotted IPv4 address after its last colon.
  const dotted = body.includes('.') ? body.slice(body.lastIndexOf(':') + 1) : undefined;
  if (dotted !== undefined) {
    const tail = parseIPv4(dotted);
    if (tail === undefined) return undefined;
    body = `${body.slice(0, -dotted.length)}${(tail >> 16n).toString(16)}:${(tail & 0xffffn).toString(16)}`;
  }
  const [head, rest] = body.split('::') as [string, string | undefined];
  const groupsOf = (part: string) => (part === '' ? [] : part.split(':'));
  const left = groupsOf(head);
  const right = rest === undefined ? [] : groupsOf(rest);
  const groups =
    rest === undefined ? left : [...left, ...Array<string>(8 - left.length - right.length).fill('0'), ...right];
  if (groups.length !== 8) return undefined;
  return { family: 6, value: groups.reduce((sum, group) => (sum << 16n) | BigInt(parseInt(group, 16)), 0n) };
}

/** Whether `value` (of `bits` bits) lies in `network`/`prefix`. */
function inRange(value: bigint, network: bigint, prefix: number, bits: 32 | 128): boolean {
  const shift = BigInt(bits - prefix);
  return value >> shift === network >> shift;
}

const RANGES = {
  4: NOT_PUBLIC_RANGES.ipv4.map(([network, prefix]) => ({ network: parseAddress(network)!.value, prefix })),
  6: NOT_PUBLIC_RANGES.ipv6.map(([network, prefix]) => ({ network: parseAddress(network)!.value, prefix })),
};

/**
 * Whether an IP address is one a link from a user may reach: not in {@link NOT_PUBLIC_RANGES},
 * and for IPv6 inside global unicast 2000::/3. IPv4-mapped IPv6 (`::ffff:a.b.c.d`, any
 * spelling) is judged as its IPv4 address. Accepts brackets, zone ids, upper case, full or
 * compressed IPv6. Anything that is not an IP address is not public.
 */
export function isPublicAddress(address: string): boolean {
  const parsed = parseAddress(address);
  if (!parsed) return false;
  if (parsed.family === 6 && parsed.value >> 32n === 0xffffn)
    return isPublicAddress(formatIPv4(parsed.value & 0xffffffffn));
  if (parsed.family === 6 && !inRange(parsed.value, GLOBAL_UNICAST_V6.network, GLOBAL_UNICAST_V6.prefix, 128))
    return false;
  const bits = parsed.family === 4 ? 32 : 128;
  return !RANGES[parsed.family].some((range) => inRange(parsed.value, range.network, range.prefix, bits));
}

/** A 32-bit number as `a.b.c.d`. */
function formatIPv4(value: bigint): string {
  return [24n, 16n, 8n, 0n].map((shift) => String((value >> shift) & 0xffn)).join('.');
}

/** `localhost`, `*.localhost` (RFC 6761 §6.3: always loopback), with or without the final dot. */
export function isLocalhostName(hostname: string): boolean {
  const name = hostname.toLowerCase().replace(/\.+$/, '');
  return name === 'localhost' || name.endsWith('.localhost');
}

/** A URL's host as an IP address when it is one (brackets removed), else undefined. */
export function ipLiteralOf(url: URL): string | undefined {
  const host = url.hostname.replace(/^\[|\]$/g, '');
  return isIP(host) !== 0 ? host : undefined;
}
