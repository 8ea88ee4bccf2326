/**
 * The card's style. The host's theme wins over the OS's (`data-theme` from `ui/initialize` and
 * `host-context-changed`), and the host's style variables (`--color-*`, `--font-*`) are used
 * wherever it gives them.
 */
export const CARD_STYLE = `
  :root { color-scheme: light dark; font-family: var(--font-sans, system-ui, sans-serif); }
  :root[data-theme="light"] { color-scheme: light; }
  :root[data-theme="dark"] { color-scheme: dark; }
  body { margin: 0; padding: 12px 14px; background: var(--color-background-primary, Canvas); color: var(--color-text-primary, CanvasText); }
  .card { display: grid; gap: 6px; min-width: 0; }
  .title { font-size: 15px; font-weight: 600; margin: 0; overflow-wrap: anywhere; }
  .meta { font-size: 12px; opacity: .75; display: flex; gap: 10px; flex-wrap: wrap; }
  .state { font-weight: 600; }
  .reply { font-size: 13px; white-space: pre-wrap; overflow-wrap: anywhere; max-height: 12em; overflow: auto; margin: 0; }
  .error { border-left: 3px solid var(--color-border-danger, #d1242f); padding-left: 8px; }
  .small { font-size: 12px; opacity: .75; overflow-wrap: anywhere; }
  table { border-collapse: collapse; font-size: 12px; width: 100%; }
  td, th { text-align: left; padding: 3px 6px 3px 0; overflow-wrap: anywhere; }
  .actions { display: flex; gap: 8px; flex-wrap: wrap; align-items: center; }
  a.open, button { font: inherit; font-size: 13px; padding: 6px 10px; border-radius: 6px; border: 0; cursor: pointer; text-decoration: none;
                   background: var(--color-background-inverse, #1f6feb); color: var(--color-text-inverse, #fff); }
  button.secondary { background: transparent; color: inherit; border: 1px solid var(--color-border-primary, currentColor); }
  textarea { font: inherit; font-size: 13px; width: 100%; box-sizing: border-box; min-height: 3em; }
  .pending { display: grid; gap: 6px; border-left: 3px solid var(--color-border-warning, #bf8700); padding-left: 8px; }
  .pending .detail { font-size: 12px; white-space: pre-wrap; overflow-wrap: anywhere; margin: 0; max-height: 8em; overflow: auto; }
  .notified, .origin { margin: 0; }
  input { font: inherit; font-size: 13px; width: 100%; box-sizing: border-box; padding: 4px 6px; }
  [hidden] { display: none !important; }
`;
