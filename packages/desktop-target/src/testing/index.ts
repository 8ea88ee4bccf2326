// Test doubles of OpenWork's desktop runners, written from the wire spec (for hosts' own tests).
export { type OpenworkDesktopDouble, type OpenworkDesktopDoubleOptions, QUICK_OPENWORK_PHASES, startOpenworkDesktopDouble } from "./openwork-desktop-double.js";
export { type R0Double, startR0Double } from "./openwork-r0-double.js";
export { openworkMintRequest } from "./openwork-desktop-bridge.js";
