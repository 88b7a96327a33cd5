/**
 * Whether a push is stale: each planned write against the server state the push's sync just brought. A
 * record the server changed since the user's base is stale, and the push is refused before anything is
 * written (push-refusals.ts `staleRefusal`), unless `svc.autoMerge` is on and the edits merge field by
 * field (merge.ts); a write an interrupted push already made is dropped, not made twice.
 */

import { schemaForKey } from "../backends/comment.js";
import { parseRecordFile, type RecordContent } from "../backends/record.js";
import { isNoChange, recordChanges } from "../backends/record-diff.js";
import { mergeRecord } from "./merge.js";
import type { PushContext } from "./push-context.js";
import type { PlannedWrite } from "./push-plan.js";

export interface Stale {
  readonly key: string;
  readonly path: string;
  readonly why: string;
  /** The user's edit and the server's merge field by field (`svc.autoMerge` would write the merge). */
  readonly mergeable?: boolean;
}

function currentContent(context: PushContext, key: string): RecordContent | undefined {
  const current = context.cache.db.record(key);
  const blob = current && context.cache.db.blob(current.rendered_oid);
  return blob
    ? parseRecordFile(schemaForKey(context.backend, key), current.path, blob.content.toString("utf8"), true)
    : undefined;
}

/**
 * Staleness per record, against the server state the sync just brought: the writes to make (merged ones
 * under `svc.autoMerge`; none for a write an interrupted push already made) and the stale records.
 */
export function judge(
  context: PushContext,
  planned: readonly PlannedWrite[],
): { writes: PlannedWrite[]; stale: Stale[] } {
  const { cache, backend } = context;
  const stale: Stale[] = [];
  const writes: PlannedWrite[] = [];
  for (const write of planned) {
    if (write.kind === "create") {
      writes.push(write);
      continue;
    }
    const current = cache.db.record(write.key);
    const behind = (version: number | null) => ({
      key: write.key,
      path: write.path,
      why: `version ${version} on the server, your base has ${write.base.version}`,
    });
    if (write.kind === "delete") {
      if (!current) continue; // already deleted on the server: nothing left to do
      if (current.version !== write.base.version) stale.push(behind(current.version));
      else writes.push(write);
      continue;
    }
    if (!current) {
      stale.push({ key: write.key, path: write.path, why: "deleted on the server" });
      continue;
    }
    if (current.version === write.base.version && current.updated_at === write.base.updatedAt) {
      writes.push(write);
      continue;
    }
    const theirs = currentContent(context, write.key);
    const schema = schemaForKey(backend, write.key);
    if (theirs && isNoChange(recordChanges(schema, theirs, write.desired))) continue; // already written
    const merged = theirs && mergeRecord(schema, write.original, write.desired, theirs);
    if (!merged || !context.autoMerge) {
      stale.push({ ...behind(current.version), mergeable: merged !== undefined });
      continue;
    }
    context.log(
      `svc: ${write.path} changed on the server too; the edits merge cleanly (svc.autoMerge), writing the merge`,
    );
    const changes = recordChanges(schema, theirs, merged);
    if (isNoChange(changes)) continue;
    writes.push({
      ...write,
      base: { version: current.version, updatedAt: current.updated_at },
      changes,
      desired: merged,
    });
  }
  return { writes, stale };
}
