// The gateway side of runner tokens: minting and verifying (HMAC-SHA256, interoperable with
// OpenWork's), and reading the bearer token of a request.
export {
  type MintRunnerTokenInput,
  type RunnerTokenRejection,
  type RunnerTokenSecret,
  type RunnerTokenVerification,
  bearerToken,
  mintRunnerToken,
  verifyRunnerToken,
} from "./v1/token.js";
