import type Database from 'better-sqlite3';

/** A finished run row in the columns a version 6-8 database has (the migration tests insert it before migrating). */
export function insertOldRun(db: Database.Database, id: string): void {
  db.exec(`INSERT INTO runs (id, model_id, model_repo, model_revision, model_dir, packed_dir, weights, manifest_sha256, manifest_json,
    backend, device_label, residency, policy_json, app_version, dataset_sha256, total, status, created_at)
    VALUES ('${id}', 'm', 'r', 'v', '/models/m', NULL, 'int4', 'h', '{}', 'cpu', 'CPU', 'host', '{"batch":2}', '0', 'h', 1, 'completed', 't')`);
}
