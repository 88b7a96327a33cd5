/**
 * What the mirror takes from its command line, whichever front end parsed it (`svc mirror`,
 * cli/commands/mirror.ts; the `scripts/mirror-refresh` launcher), and the refusals both front ends share:
 * a usage error that shows the caller's own usage line and example, and the mirror URLs it never pushes to.
 */
import { UserFacingError } from "../../core/errors.js";

export interface MirrorArgs {
  readonly remote: string;
  readonly mirror: string;
  readonly branch: string;
  readonly dryRun: boolean;
}

/** How the front end the user ran is called, for its refusals. */
export interface MirrorUsage {
  /** `scripts/mirror-refresh <svc-remote-url> <mirror-git-url> [--branch main] [--dry-run]`. */
  readonly line: string;
  /** A command line to copy. */
  readonly example: string;
  /** The command that prints the help (`scripts/mirror-refresh --help`). */
  readonly help: string;
}

/** A refusal of the command line: the problem, the usage, an example and where the help is. */
export function usageError(usage: MirrorUsage, problem: string): UserFacingError {
  return new UserFacingError(
    "SVC_USAGE",
    `${problem}\nusage: ${usage.line}\nfor example: ${usage.example}\n(${usage.help} says more)`,
  );
}

/**
 * Refuses a mirror URL that is not a plain git URL the mirror may push to: empty, an option, an svc remote
 * (a push there would write to the backend), or a URL carrying a password (it would end up in messages;
 * `rerunWith` gives the command with the URL without it).
 */
export function checkMirrorUrl(
  mirror: string,
  usage: MirrorUsage,
  rerunWith: (clean: string) => string,
): void {
  if (mirror === "") throw usageError(usage, "the mirror's git URL is empty");
  if (mirror.startsWith("-"))
    throw usageError(usage, `the mirror's git URL ${JSON.stringify(mirror)} starts with -`);
  if (mirror.startsWith("svc::")) {
    throw usageError(
      usage,
      `the mirror ${mirror} is an svc remote; a push there would write to the backend. The mirror must be a plain git repository (for one on disk: git init --bare /srv/git/mirror.git)`,
    );
  }
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(mirror)) {
    let url: URL | undefined;
    try {
      url = new URL(mirror);
    } catch {
      url = undefined;
    }
    if (url?.password) {
      url.password = "";
      throw new UserFacingError(
        "SVC_USAGE",
        `the mirror's git URL must not carry a password (it would show in messages and logs): let git's credential helper hold it ` +
          `(git config --global credential.helper store; git asks for it once), or use an SSH URL. Then run: ${rerunWith(url.href)}`,
      );
    }
  }
}
