export { createEchoTarget } from "./echo-target.js";
