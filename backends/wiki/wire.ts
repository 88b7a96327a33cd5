/**
 * The wiki's wire shapes (Confluence Cloud REST API v2). Answers from the model types `confluence.js`
 * (version 3, package-lock.json) generates from Atlassian's description; type-only, so neither it nor zod
 * reaches the bundle (`verbatimModuleSyntax` keeps `import type` out of the emitted JavaScript).
 *
 * Two departures, written down in fixtures/vendor/SHAPES.md: confluence.js types the description's
 * date-time strings as `Date` (its zod schemas coerce them; on the wire they are strings), so `WirePage`
 * puts the strings back; and it types the page write bodies as `Record<string, any>`, so the two request
 * bodies svc sends are written here from the description ("Confluence Cloud REST API v2" 2.0.0: `createPage`,
 * `updatePage`).
 */
import type { Page, PageBodyWrite } from "confluence.js/v2";

type PageVersion = NonNullable<Page["version"]>;

/** A page as `GET /wiki/api/v2/pages/{id}` and the listings answer it (every member optional). */
export type WirePage = Omit<Page, "createdAt" | "version"> & {
  readonly createdAt?: string;
  readonly version?: (Omit<PageVersion, "createdAt"> & { readonly createdAt?: string }) | null;
};

/** The body of `POST /wiki/api/v2/pages` ("Create page") as svc sends it. */
export interface CreatePageBody {
  readonly spaceId: string;
  readonly status?: "current" | "draft";
  readonly title?: string;
  readonly parentId?: string;
  readonly body?: PageBodyWrite;
}

/** The body of `PUT /wiki/api/v2/pages/{id}` ("Update page") as svc sends it. */
export interface UpdatePageBody {
  readonly id: string;
  readonly status: "current" | "draft";
  readonly title: string;
  readonly body: PageBodyWrite;
  readonly version: { readonly number: number; readonly message?: string };
}
