/**
 * An issue type's create screen (issue 35): `GET /rest/api/3/issue/createmeta/{projectIdOrKey}/issuetypes/
 * {issueTypeId}` ("Get create field metadata for a project and issue type id"), whose answer is a page of
 * `FieldCreateMetadata` (`fieldId`, `allowedValues`, …: the description's
 * `PageOfCreateMetaIssueTypeWithField`). The pages are followed by `startAt` through the pagination guard
 * (core/pagination.ts), at most 200 fields a page (the description's maximum); an empty page ends the
 * listing whatever `total` says. The fields come back by `fieldId`, as editmeta's `fields` are by id, so
 * edit-check.ts judges a create as it judges an edit.
 */
import { isObject } from "../../core/checks.js";
import { AN_OBJECT } from "../rest.js";
import { startAtListing, type TrackerSite } from "./search.js";
import type { CreateMetaFields } from "./wire.js";
import type { IssueType } from "./workflow.js";

/** The most fields a create-metadata page may hold (the description's `maximum` of `maxResults`). */
const CREATE_META_PAGE_SIZE = 200;

/** The fields on `type`'s create screen in `project`, by field id, each its `FieldCreateMetadata`. */
export async function createScreen(
  site: TrackerSite,
  project: string,
  type: IssueType,
): Promise<Record<string, unknown>> {
  const what = `reading the create screen of issue type ${JSON.stringify(type.name)} in project ${project} (createmeta)`;
  const path = `/issue/createmeta/${encodeURIComponent(project)}/issuetypes/${encodeURIComponent(type.id)}`;
  const items = await startAtListing(
    site,
    what,
    (at) => site.api(`${path}?startAt=${at}&maxResults=${CREATE_META_PAGE_SIZE}`),
    (response) => {
      const page = site.rest.parse<CreateMetaFields>(what, response, AN_OBJECT);
      // `fields` is what the vendor's example sends; `results`, also in the description, is read without it.
      const listed: unknown[] = Array.isArray(page.fields)
        ? page.fields
        : Array.isArray(page.results)
          ? page.results
          : [];
      return { items: listed, total: page.total };
    },
  );
  const fields: Record<string, unknown> = {};
  for (const item of items) {
    if (isObject(item) && typeof item.fieldId === "string") fields[item.fieldId] = item;
  }
  return fields;
}
