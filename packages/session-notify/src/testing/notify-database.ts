import { migrate } from "@openwork/remote-session-core";
import { useTestDatabase } from "@openwork/test-postgres";
import { afterEach, beforeAll } from "vitest";
import { migrateSessionNotify } from "../notify-migrations.js";

/** A test file's own database with the session ledger and the notification tables migrated (the ledger first: the trigger needs it). */
export function useNotifyDatabase(): ReturnType<typeof useTestDatabase> {
  const db = useTestDatabase();
  beforeAll(async () => {
    await migrate(db.current.sql);
    await migrateSessionNotify(db.current.sql);
  });
  return db;
}

/** Registers closers run after each test, last first; returns the function that adds one. */
export function closeAfterEach(): (close: () => Promise<void>) => void {
  const closing: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const close of closing.splice(0).reverse()) await close();
  });
  return (close) => {
    closing.push(close);
  };
}
