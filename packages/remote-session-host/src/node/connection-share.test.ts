import { EventEmitter } from "node:events";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Socket } from "node:net";
import { expect, it } from "vitest";
import { createConnectionShare } from "./connection-share.js";

/** A socket as the share sees it: it can be destroyed, and says when it closed. */
const socket = () => {
  const fake = Object.assign(new EventEmitter(), { destroyed: false, remoteAddress: "127.0.0.1" });
  return Object.assign(fake, { destroy: () => ((fake.destroyed = true), fake.emit("close"), fake) }) as unknown as Socket & { destroyed: boolean };
};
/** A request on `on` with `token` (none: a request without credentials); returns its response, to finish. */
const request = (share: ReturnType<typeof createConnectionShare>, on: Socket, token?: string) => {
  const response = new EventEmitter();
  share.request(
    { socket: on, headers: token ? { authorization: `Bearer ${token}` } : {} } as unknown as IncomingMessage,
    response as unknown as ServerResponse,
  );
  return () => response.emit("close");
};

it("at the cap, takes the oldest connection that sent no whole request, then the idle one of a credential past its share, else refuses", () => {
  let clock = 0;
  const share = createConnectionShare({ maxConnections: 5, sharePerCredential: 1, now: () => clock });
  const [quiet, a1, a2, a3, b1] = [socket(), socket(), socket(), socket(), socket()];
  for (const s of [quiet, a1, a2, a3, b1]) expect(share.admit(s)).toBe(true);
  clock += 1_000;
  // a1's request is still being answered; the others' are done.
  request(share, a1, "flooder");
  request(share, a2, "flooder")();
  request(share, a3, "flooder")();
  request(share, b1, "calm")();
  // Full: the one that never sent a request goes first.
  const next = socket();
  expect(share.admit(next)).toBe(true);
  expect(quiet.destroyed).toBe(true);
  request(share, next, "calm")();
  // Full again, with a connection just made that has sent nothing yet: it keeps its slot; the flooder holds the most (3, its share is 1), its least recently used idle connection goes, not its busy one.
  const newest = socket();
  expect(share.admit(newest)).toBe(true);
  expect(share.admit(socket())).toBe(true);
  expect([a1.destroyed, a2.destroyed, a3.destroyed, b1.destroyed, next.destroyed, newest.destroyed]).toEqual([false, true, true, false, false, false]);
  expect(share.stats()).toMatchObject({ open: 5, unidentified: 2, evicted: 3, refused: 0 });
});

it("answers false when every connection is within its credential's share", () => {
  const share = createConnectionShare({ maxConnections: 2, sharePerCredential: 1 });
  const [a, b] = [socket(), socket()];
  share.admit(a);
  share.admit(b);
  request(share, a, "one")();
  request(share, b, "two")();
  expect(share.admit(socket())).toBe(false);
  expect([a.destroyed, b.destroyed]).toEqual([false, false]);
  // A closed connection frees its slot.
  a.destroy();
  expect(share.admit(socket())).toBe(true);
});

it("counts a wake stream's connection apart: streams never fill the requests' cap, and a kept-alive one carrying a request again counts again", () => {
  const share = createConnectionShare({
    maxConnections: 2,
    sharePerCredential: 1,
    isStream: (request) => (request as unknown as { stream?: boolean }).stream === true,
  });
  const streamOf = (on: Socket, token: string) =>
    share.request(
      { socket: on, headers: { authorization: `Bearer ${token}` }, stream: true } as unknown as IncomingMessage,
      new EventEmitter() as unknown as ServerResponse,
    );
  const desktops = Array.from({ length: 10 }, () => socket());
  for (const [i, desktop] of desktops.entries()) {
    expect(share.admit(desktop)).toBe(true);
    streamOf(desktop, `desktop-${i}`);
  }
  expect(share.stats()).toMatchObject({ open: 0, streams: 10 });
  // Two requests still fit, beside ten streams.
  const [a, b] = [socket(), socket()];
  expect([share.admit(a), share.admit(b)]).toEqual([true, true]);
  request(share, a, "agent")();
  request(share, b, "agent-2")();
  expect(share.admit(socket())).toBe(false);
  // A stream's connection that carries a plain request is a request's again; its stream's close frees nothing of the cap.
  request(share, desktops[0]!, "desktop-0")();
  expect(share.stats()).toMatchObject({ open: 3, streams: 9 });
  desktops[1]!.destroy();
  expect(share.stats()).toMatchObject({ open: 3, streams: 8 });
});

it("lends the stream slots no stream holds to requests, and takes them back as streams open", () => {
  const share = createConnectionShare({ maxConnections: 2, maxStreams: 3, sharePerCredential: 1 });
  // No stream yet (a process just restarted): five new connections fit, a sixth does not.
  const early = Array.from({ length: 5 }, () => socket());
  for (const s of early) expect(share.admit(s)).toBe(true);
  for (const [i, s] of early.entries()) request(share, s, `caller-${i}`)();
  expect(share.admit(socket())).toBe(false);
  expect(share.stats()).toMatchObject({ open: 5, refused: 1 });
  for (const s of early) s.destroy();
  // Three streams hold their slots: requests are back to their own two.
  const streamShare = createConnectionShare({ maxConnections: 2, maxStreams: 3, sharePerCredential: 1, isStream: () => true });
  for (let i = 0; i < 3; i++) {
    const s = socket();
    streamShare.admit(s);
    streamShare.request({ socket: s, headers: {} } as unknown as IncomingMessage, new EventEmitter() as unknown as ServerResponse);
  }
  expect(streamShare.stats()).toMatchObject({ open: 0, streams: 3 });
  const [a, b] = [socket(), socket()];
  expect([streamShare.admit(a), streamShare.admit(b), streamShare.admit(socket())]).toEqual([true, true, false]);
  expect(streamShare.stats().open).toBe(2);
});
