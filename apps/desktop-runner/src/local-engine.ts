/** The desktop's local chat engine, as the runner drives it. The Electron app's is OpenWork's own. */
export interface LocalEngine {
  /** Makes a visible local session and returns its id. */
  createSession(input: { title: string; workspaceId: string | null }): Promise<string>;
  /**
   * Runs one prompt in a session, reporting text as it streams, and resolves with the whole
   * reply. Honours `signal` (stop, lease loss) by ending early.
   */
  prompt(input: { sessionId: string; messageId: string; text: string; signal: AbortSignal; onText(delta: string): void }): Promise<{ messageId: string; text: string }>;
}
