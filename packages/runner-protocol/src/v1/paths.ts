/** The canonical prefix of the runner routes. */
export const RUNNER_ROUTE_PREFIX = "/v1/desktop-runner";

/** Route paths below a prefix; the gateway mounts them and the client calls them. */
export const RUNNER_PATHS = {
  token: "/token",
  presence: "/presence",
  work: "/work",
  events: "/events",
  /** `PUT`: what this machine has (workspaces, engines, models), replacing the last report. */
  inventory: "/inventory",
  claim: (taskId: string) => `/tasks/${encodeURIComponent(taskId)}/claim`,
  /** Protocol 3: claims any task this runner may take now, oldest first. */
  claimNext: "/tasks/claim-next",
  heartbeat: (taskId: string) => `/tasks/${encodeURIComponent(taskId)}/heartbeat`,
  taskEvents: (taskId: string) => `/tasks/${encodeURIComponent(taskId)}/events`,
  complete: (taskId: string) => `/tasks/${encodeURIComponent(taskId)}/complete`,
} as const;
