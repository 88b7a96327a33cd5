/**
 * Confluence Cloud's fixed values as the fake wiki serves them: the account, the paging and body limits, the
 * sort orders, statuses and body formats the description allows, and the vendor's answer to rejected Basic
 * credentials.
 */

export const ACCOUNT_ID = "712020:5f0c2a9e-7d41-4b8e-9a53-fa4e00000001";
export const ACCOUNT_DISPLAY_NAME = "svc fake";
/** "Someone else": the account the test helpers write comments as unless told otherwise. */
export const OTHER_ACCOUNT_ID = "712020:5f0c2a9e-7d41-4b8e-9a53-fa4e00000002";
export const OTHER_DISPLAY_NAME = "Jane Doe";
export const FIRST_COMMENT_ID = 3_200_001;
export const COMMENT_SORTS = ["created-date", "modified-date"] as const;
export const SEED_EPOCH = Date.UTC(2025, 0, 6, 9, 0, 0, 0);
export const DEFAULT_LIMIT = 25;
export const MAX_LIMIT = 250;
export const MAX_BODY_BYTES = 5 * 1024 * 1024;
export const PAGE_SORTS = ["id", "created-date", "modified-date", "title"] as const;
export const SPACE_SORTS = ["id", "key", "name"] as const;
export const PAGE_STATUSES = ["current", "archived", "deleted", "trashed"] as const;
export const BODY_FORMATS = ["storage", "atlas_doc_format"] as const;
export const SINGLE_BODY_FORMATS = [
  "storage",
  "atlas_doc_format",
  "view",
  "export_view",
  "anonymous_export_view",
  "styled_view",
  "editor",
] as const;
/**
 * What the vendor answers to Basic credentials it does not accept (recorded in kovetskiy/mark#146 and
 * justmiles/go-markdown2confluence#47; text/plain, trailing newline included).
 */
export const BASIC_REJECTED =
  "Basic authentication with passwords is deprecated.  For more information, see: " +
  "https://developer.atlassian.com/cloud/confluence/deprecation-notice-basic-auth/\n";
