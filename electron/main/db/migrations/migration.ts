import type Database from 'better-sqlite3';

/** One schema step; `version` is the `user_version` after it runs (1, 2, …, no gaps). */
export interface Migration {
  readonly version: number;
  readonly name: string;
  up(db: Database.Database): void;
}
