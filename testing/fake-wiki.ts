/**
 * A fake of the hosted wiki's REST API v2 (Atlassian Confluence Cloud REST API v2) on an ephemeral loopback
 * port, for the wiki adapter's tests (DESIGN.md §6: "a fake server … that speaks the vendor's real
 * request/response shapes").
 *
 * Shapes follow the vendor's public OpenAPI document for v2 (https://developer.atlassian.com/cloud/confluence/rest/v2/,
 * spec file https://dac-static.atlassian.com/cloud/confluence/openapi-v2.v3.json):
 * - `GET /wiki/api/v2/spaces` (`ids`, `keys` comma-separated, `type`, `status`, `sort`, `cursor`, `limit`
 *   default 25, 1..250; sorted by id ascending) → `{results: SpaceBulk[], _links: {next?, base}}`.
 * - `GET /wiki/api/v2/spaces/{id}/pages` (`depth`, `sort` PageSortOrder, `status` default current+archived,
 *   repeated or comma-separated, `title`, `body-format`, `cursor`, `limit`) → `{results: PageBulk[], _links:
 *   {next?, base}}`. `sort=modified-date` orders by the page's last version (`version.createdAt`).
 * - `GET|PUT|DELETE /wiki/api/v2/pages/{id}`, `POST /wiki/api/v2/pages` → PageSingle plus `_links.base`
 *   (POST and PUT answer 200; DELETE answers 204, moves the page to the trash, and `purge=true` on a trashed
 *   page removes it for good; PUT with status `current` on a trashed page restores it without touching its
 *   content).
 * - Pagination: `_links.next` is a relative URL (`/wiki/api/v2/...?...&cursor=<opaque>`), repeated in a
 *   `Link: <next>; rel="next", <base>; rel="base"` header; neither is present on the last page.
 * - Footer comments (pages only; no replies, no inline comments): `GET /wiki/api/v2/pages/{id}/footer-comments`
 *   and the site-wide `GET /wiki/api/v2/footer-comments` (`body-format`, `sort` CommentSortOrder, `cursor`,
 *   `limit`; paginated as above), `POST /wiki/api/v2/footer-comments` (`{pageId, body}` → 201),
 *   `GET|PUT|DELETE /wiki/api/v2/footer-comments/{comment-id}` (PUT with `version.number` = current + 1, else
 *   409 as for pages; DELETE for good, 204), `GET /wiki/api/v2/footer-comments/{id}/versions`; the accounts:
 *   `POST /wiki/api/v2/users-bulk` and v1 `GET /wiki/rest/api/user/current`.
 * Where the vendor documents nothing, the choice is marked ASSUMPTION in a comment.
 *
 * `_links.base` defaults to a second loopback server that only counts its hits (`baseHits`): the adapter must
 * join `_links.next` to its own tenant base URL and never follow `_links.base` (Document 3 "Pagination
 * rules" 2), so any test can assert `baseHits === 0`.
 *
 * Every exchange is judged as it happens against the operations recorded in
 * fixtures/vendor/confluence-v2.json (testing/vendor-contract.ts); `close()`, which each test's teardown
 * calls, fails naming every departure. An answer or request wrong on purpose says so where it is made
 * (`deliberate`; DELIBERATE_HEADER).
 *
 * The parts, in testing/fake-wiki/: `types.ts` (the public names, re-exported here), `vendor-data.ts` and
 * `seed-data.ts` (the vendor's fixed values; the seeds), `store.ts` (spaces, pages, labels), `comments.ts`
 * (footer comments, accounts), `pagination.ts`
 * (cursors), `shapes.ts` (the JSON), `*-routes.ts` and `router.ts` (the handlers and how a request reaches one),
 * `auth.ts`, `rate-limit.ts` and `hostile.ts` (refusals and faults), `server.ts` (HTTP, the contract watch, the
 * helpers).
 */
export { basicAuthorization } from "./fake-wiki/auth.js";
export { givenFakeWiki, startFakeWiki } from "./fake-wiki/server.js";
export type {
  FakeWiki,
  FakeWikiAccount,
  FakeWikiComment,
  FakeWikiOptions,
  FakeWikiPage,
  FakeWikiRequest,
  FakeWikiSpace,
  FakeWikiSpaceSpec,
  FakeWikiVersion,
  HostileListing,
  PageChanges,
  PageStatus,
  SpaceType,
  StreamedAnswer,
  VendorErrorBody,
} from "./fake-wiki/types.js";
