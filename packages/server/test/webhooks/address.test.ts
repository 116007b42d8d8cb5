import type { LookupAddress } from "node:dns";
import { describe, expect, it } from "vitest";
import { guardedLookup, ipv6Bytes, literalAddress, refusedAddress } from "../../src/service/webhook-address.js";
import { nextAttemptAt, RETRY_SCHEDULE_MS, RETRY_WINDOW_MS } from "../../src/service/webhooks/webhook-dispatcher.js";
import { sendWebhook } from "../../src/service/webhooks/webhook-sender.js";

describe("webhook addresses", () => {
  it("names the range of every refused address, IPv4 and IPv6, IPv4 inside IPv6 included", () => {
    const cases: [string, string | null][] = [
      ["127.0.0.1", "a loopback address"],
      ["127.255.0.9", "a loopback address"],
      ["10.1.2.3", "a private address"],
      ["172.16.0.1", "a private address"],
      ["172.31.255.255", "a private address"],
      ["172.32.0.1", null],
      ["192.168.1.1", "a private address"],
      ["169.254.169.254", "a link-local address"],
      ["100.64.0.1", "a shared (carrier-grade NAT) address"],
      ["0.0.0.0", "an unspecified address"],
      ["224.0.0.1", "a multicast address"],
      ["255.255.255.255", "a reserved address"],
      ["8.8.8.8", null],
      ["93.184.216.34", null],
      ["::1", "a loopback address"],
      ["::", "an unspecified address"],
      ["fd00::1", "a unique-local address"],
      ["fc12:3456::1", "a unique-local address"],
      ["fe80::1", "a link-local address"],
      ["fe80::1%eth0", "a link-local address"],
      ["ff02::1", "a multicast address"],
      ["::ffff:127.0.0.1", "an IPv4-mapped address of a loopback address"],
      ["::ffff:7f00:1", "an IPv4-mapped address of a loopback address"],
      ["::ffff:10.0.0.1", "an IPv4-mapped address of a private address"],
      ["::ffff:8.8.8.8", null],
      ["::127.0.0.1", "an IPv4-compatible address of a loopback address"],
      ["64:ff9b::a9fe:a9fe", "a NAT64 address of a link-local address"],
      ["2002:c0a8:101::1", "a 6to4 address of a private address"],
      ["2606:4700:4700::1111", null],
      ["example.com", "not an IP address"],
    ];
    for (const [address, what] of cases) expect(refusedAddress(address), address).toBe(what);
  });

  it("expands IPv6 text to its 16 bytes and reads literal hosts of URLs", () => {
    expect(ipv6Bytes("::ffff:127.0.0.1")).toEqual([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 255, 255, 127, 0, 0, 1]);
    expect(ipv6Bytes("2001:db8::1")).toEqual([32, 1, 13, 184, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1]);
    expect(ipv6Bytes("10.0.0.1")).toBeNull();
    expect(literalAddress(new URL("http://[::ffff:127.0.0.1]:8080/").hostname)).toBe("::ffff:7f00:1");
    expect(literalAddress(new URL("http://127.1/").hostname)).toBe("127.0.0.1");
    expect(literalAddress(new URL("http://0x7f000001/").hostname)).toBe("127.0.0.1");
    expect(literalAddress(new URL("http://hooks.example.com/").hostname)).toBeNull();
  });

  const lookup = (
    addresses: LookupAddress[],
    allowPrivate: boolean,
    options: { all?: boolean; family?: number } = {},
  ) =>
    new Promise<{ error: Error | null; address: unknown; family?: number | undefined }>((resolve) =>
      guardedLookup(allowPrivate, async () => addresses)("hooks.example.com", options, (error, address, family) =>
        resolve({ error, address, family }),
      ),
    );

  it("refuses a host name when any address it resolves to is private (DNS rebinding), and hands on the checked ones", async () => {
    const mixed = await lookup(
      [
        { address: "93.184.216.34", family: 4 },
        { address: "127.0.0.1", family: 4 },
      ],
      false,
      { all: true },
    );
    expect(mixed.error?.message).toBe(
      "refused: hooks.example.com: address not allowed; set PROMPTSTORE_WEBHOOK_ALLOW_PRIVATE=true to allow private networks",
    );
    const mapped = await lookup([{ address: "::ffff:169.254.169.254", family: 6 }], false);
    expect(mapped.error?.message).toBe(
      "refused: hooks.example.com: address not allowed; set PROMPTSTORE_WEBHOOK_ALLOW_PRIVATE=true to allow private networks",
    );
    const public4 = await lookup([{ address: "93.184.216.34", family: 4 }], false);
    expect(public4).toEqual({ error: null, address: "93.184.216.34", family: 4 });
    const all = await lookup(
      [
        { address: "2606:4700:4700::1111", family: 6 },
        { address: "93.184.216.34", family: 4 },
      ],
      false,
      { all: true },
    );
    expect(all).toEqual({
      error: null,
      address: [
        { address: "2606:4700:4700::1111", family: 6 },
        { address: "93.184.216.34", family: 4 },
      ],
      family: undefined,
    });
    const allowed = await lookup([{ address: "127.0.0.1", family: 4 }], true);
    expect(allowed).toEqual({ error: null, address: "127.0.0.1", family: 4 });
  });

  it("connects only to the address the lookup checked: a rebinding name never reaches the receiver", async () => {
    // The resolver answers loopback: the request must fail at the lookup, before any connection.
    const attempt = await sendWebhook(
      { url: "http://rebind.example.com:9/hook", secret: `whsec_${Buffer.alloc(32, 1).toString("base64")}` },
      { id: "msg_1", payload: "{}" },
      { timeoutMs: 2000, allowPrivate: false, resolver: async () => [{ address: "127.0.0.1", family: 4 }] },
    );
    expect(attempt).toEqual({
      ok: false,
      status: null,
      error:
        "refused: rebind.example.com: address not allowed; set PROMPTSTORE_WEBHOOK_ALLOW_PRIVATE=true to allow private networks",
      refused: true,
    });
    const literal = await sendWebhook(
      { url: "http://[::ffff:127.0.0.1]:9/hook", secret: `whsec_${Buffer.alloc(32, 1).toString("base64")}` },
      { id: "msg_1", payload: "{}" },
      { timeoutMs: 2000, allowPrivate: false },
    );
    expect(literal.error).toBe(
      "refused: ::ffff:7f00:1, an IPv4-mapped address of a loopback address; set PROMPTSTORE_WEBHOOK_ALLOW_PRIVATE=true to allow private networks",
    );
  });
});

describe("webhook retry schedule", () => {
  const SECOND = 1000;
  it("waits 30 s, 1 m, 2 m, 5 m, 15 m, 30 m, 1 h, 2 h, 4 h, 8 h, then 8 h, with ±20 % jitter", () => {
    const middle = () => 0.5;
    const waits = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12].map((n) => (nextAttemptAt(0, 0, n, 1, middle) ?? 0) / SECOND);
    expect(waits).toEqual([30, 60, 120, 300, 900, 1800, 3600, 7200, 14400, 28800, 28800, 28800]);
    expect(nextAttemptAt(0, 0, 1, 1, () => 0)).toBe(24_000);
    expect(nextAttemptAt(0, 0, 1, 1, () => 1)).toBe(36_000);
    expect(nextAttemptAt(0, 1000, 2, 0.001, middle)).toBe(1060);
  });

  it("gives up only once an attempt fails 24 hours or more after the first", () => {
    expect(nextAttemptAt(0, RETRY_WINDOW_MS - 1, 12, 1, () => 0.5)).toBe(RETRY_WINDOW_MS - 1 + 8 * 3600 * SECOND);
    expect(nextAttemptAt(0, RETRY_WINDOW_MS, 12, 1, () => 0.5)).toBeNull();
    expect(nextAttemptAt(0, 86_400, 5, 0.001, () => 0.5)).toBeNull();
    // Even with every wait at its shortest, attempts go on for at least 24 hours.
    let at = 0;
    let attempts = 1;
    for (;;) {
      const next = nextAttemptAt(0, at, attempts, 1, () => 0);
      if (next === null) break;
      at = next;
      attempts++;
    }
    expect(at).toBeGreaterThanOrEqual(RETRY_WINDOW_MS);
    expect(attempts).toBe(13);
    expect(RETRY_SCHEDULE_MS).toHaveLength(10);
  });
});
