// What the global setup hands to test files through vitest's provide/inject.
declare module "vitest" {
  export interface ProvidedContext {
    /** Admin connection string of the run's PostgreSQL; tests make their own databases on it. */
    testDatabaseUrl: string;
    /** The newest database's oid when the run began (this run's test databases have larger ones). */
    testDatabasesAfter: number;
  }
}

export {};
