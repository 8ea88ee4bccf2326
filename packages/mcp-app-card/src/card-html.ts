import { CARD_SCRIPT } from "./card-script.js";
import { CARD_STYLE } from "./card-style.js";

/**
 * The card, as one self-contained HTML document (inline style and script, no network), so hosts
 * need no CSP exceptions. It speaks the MCP Apps view protocol over postMessage itself (see
 * `card-script.ts`). `structuredContent` is read first; a host that sends only `content` gets its
 * JSON text parsed instead.
 */
export const CARD_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Remote session</title>
<style>${CARD_STYLE}</style>
</head>
<body>
<div class="card" id="card"><p class="small">Waiting for the session&hellip;</p></div>
<script>${CARD_SCRIPT}</script>
</body>
</html>
`;
