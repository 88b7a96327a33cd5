import { fileURLToPath } from "node:url";

/** The project's root folder, from the compiled file in `dist/testing/` or the source in `testing/`. */
export const repoRoot = fileURLToPath(
  new URL(import.meta.url.includes("/dist/") ? "../../" : "../", import.meta.url),
);
