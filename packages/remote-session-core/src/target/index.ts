// For writing a Target: the helpers the cloud and desktop targets build their answers with, so a
// third target pages, bounds and refuses the same way (the conformance kit is in `/testing`).
export { pendingInput, checkAnswerFits, inputNotPending } from "../pending-input.js";

export { boundText } from "../transcript/transcript-message.js";
export { decodeCursor, resumePointOf, encodeTargetCursor, decodeTargetCursor } from "../transcript/cursor.js";
export { type Transcript, sliceTranscript } from "../transcript/slice-transcript.js";
