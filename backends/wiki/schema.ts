/**
 * The wiki's record shape (Document 3 "Resources and their fields"; DESIGN.md §2): `pages/<id>.md`, the
 * page id not padded and never renamed; frontmatter `id, title, version, spaceId, parentId, createdAt,
 * updatedAt, labels` with labels always `[]`; the body is the raw storage-format XHTML, byte for byte.
 */
import { field, type RecordSchema } from "../record.js";

export const WIKI_SCHEMA: RecordSchema = {
  kind: "wiki",
  folder: "pages",
  fields: [
    field("id", "numeric-id", { serverControlled: true, required: true }),
    // The wiki refuses page titles over 255 characters, and empty ones.
    field("title", "string", { required: true, limit: { maxLength: 255, nonBlank: true } }),
    field("version", "integer", { serverControlled: true, required: true }),
    field("spaceId", "numeric-id", { serverControlled: true, required: true }),
    field("parentId", "numeric-id", { serverControlled: true, nullable: true }),
    field("createdAt", "timestamp", { serverControlled: true, required: true }),
    field("updatedAt", "timestamp", { serverControlled: true, required: true }),
    // Always empty: labels are not carried over (Document 3). Kept so files have one shape everywhere.
    field("labels", "string-list", { serverControlled: true }),
  ],
  tokenFields: { version: "version", updatedAt: "updatedAt" },
  fileName: (key) => `pages/${key}.md`,
  // Page titles are unique in a space, and the wiki may rewrite the storage XHTML of a body it stores.
  uniqueFields: ["title"],
};
