/**
 * The fake wiki's label routes: v2 reads a page's labels; adding them takes the v1 API
 * (`/wiki/rest/api/content/{id}/label`, the one v1 route modelled), which answers v1's own listing shape.
 */
import type { Call } from "./call.js";
import { type Answer, fail, parseId, parseJsonBody } from "./http.js";

function v1LabelsAnswer(call: Call, pageId: string): Answer {
  const results = call.store.labelsOf(pageId).map((name) => {
    const label = call.store.labelJson(name);
    return { prefix: label.prefix, name, id: label.id, label: name };
  });
  return { status: 200, body: { results, start: 0, limit: 200, size: results.length, _links: {} } };
}

/** v1 `GET /wiki/rest/api/content/{id}/label`. */
export function listV1Labels(call: Call, rawId: string): Answer {
  return v1LabelsAnswer(call, call.store.readablePage(parseId(rawId, "content"), ["current", "archived"]).id);
}

/** v1 `POST /wiki/rest/api/content/{id}/label`: a JSON array of `{prefix, name}` (or one such object). */
export function addLabelsRequest(call: Call, rawId: string): Answer {
  const page = call.store.readablePage(parseId(rawId, "content"), ["current", "archived"]);
  const parsed = parseJsonBody(call.text, call.contentType);
  const items = Array.isArray(parsed) ? parsed : [parsed];
  const names = items.map((item) => {
    const name = (item as { name?: unknown } | null)?.name;
    // ASSUMPTION: the product lower-cases labels and refuses spaces and empty names.
    if (typeof name !== "string" || name.trim() === "" || /\s/.test(name)) {
      fail(400, "INVALID_REQUEST_PARAMETER", "Each label needs a non-empty name without spaces");
    }
    return name.toLowerCase();
  });
  for (const name of names) call.store.addLabel(page.id, name);
  return v1LabelsAnswer(call, page.id);
}

/** v2 `GET /wiki/api/v2/pages/{id}/labels`: a page in the trash still has its labels. */
export function listPageLabels(call: Call, rawId: string): Answer {
  const page = call.store.readablePage(parseId(rawId, "page"), ["current", "archived", "trashed"]);
  return {
    status: 200,
    body: {
      results: call.store.labelsOf(page.id).map((name) => call.store.labelJson(name)),
      _links: {},
    },
  };
}
