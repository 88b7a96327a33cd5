/**
 * File systems for the tests of local faults (issue 31): a small tmpfs to fill up or to remount read-only,
 * and a command prefix that takes root's permission override away (root ignores permission bits, so
 * EACCES needs it). mount(8) and setpriv(1) need root, or a machine that allows them: where they fail, the
 * fixture logs `SKIP: <why>` and returns undefined, and the test passes without checking anything (it says
 * so in its log). Every tmpfs is unmounted by the test's teardown, before its folder is removed.
 */
import { execFileSync } from "node:child_process";
import { closeSync, mkdirSync, mkdtempSync, openSync, rmSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ExecutionContext } from "ava";

export interface Tmpfs {
  /** Its mount point (mode 0700: the cache root must be the user's alone). */
  readonly dir: string;
  /** Writes a file until the file system is full (ENOSPC). */
  fill(): void;
  /** Removes what `fill` wrote. */
  free(): void;
  /** `mount -o remount,ro`. */
  readOnly(): void;
  /** `mount -o remount,rw`. */
  writable(): void;
}

function mount(args: readonly string[]): void {
  execFileSync("mount", args, { stdio: ["ignore", "ignore", "pipe"] });
}

/** What a failed command said, in one line. */
function said(error: unknown): string {
  const stderr = (error as { stderr?: Buffer }).stderr?.toString("utf8").trim();
  return (stderr || (error as Error).message).split("\n")[0] ?? "";
}

/** A tmpfs of `sizeKiB` mounted for this test; undefined (with `SKIP:` logged) where mounting is not allowed. */
export function givenTmpfs(t: ExecutionContext, sizeKiB = 4096): Tmpfs | undefined {
  const parent = mkdtempSync(join(tmpdir(), "svc-tmpfs-"));
  const dir = join(parent, "mnt");
  mkdirSync(dir);
  try {
    mount(["-t", "tmpfs", "-o", `size=${sizeKiB}k,mode=0700`, "svc-test", dir]);
  } catch (error) {
    rmSync(parent, { recursive: true, force: true });
    t.log(`SKIP: cannot mount a tmpfs here (${said(error)}); run the tests as root to check this`);
    return undefined;
  }
  t.teardown(() => {
    try {
      execFileSync("umount", [dir], { stdio: "ignore" });
    } catch {
      // a process still holds a file there: detach it now, the kernel frees it when they are gone
      execFileSync("umount", ["-l", dir], { stdio: "ignore" });
    }
    rmSync(parent, { recursive: true, force: true });
  });
  const filler = join(dir, "filler");
  return {
    dir,
    fill() {
      const fd = openSync(filler, "a");
      const chunk = Buffer.alloc(64 * 1024);
      try {
        // Large writes first, then page-sized ones for the last partial chunk: nothing is left.
        for (const size of [chunk.length, 4096, 1]) {
          for (;;) {
            try {
              writeSync(fd, chunk, 0, size);
            } catch (error) {
              if ((error as NodeJS.ErrnoException).code !== "ENOSPC") throw error;
              break;
            }
          }
        }
      } finally {
        closeSync(fd);
      }
    },
    free() {
      rmSync(filler, { force: true });
    },
    readOnly() {
      mount(["-o", "remount,ro", dir]);
    },
    writable() {
      mount(["-o", "remount,rw", dir]);
    },
  };
}

/**
 * The words to put before a command so that permission bits hold for it: nothing for a user other than
 * root; for root, setpriv(1) without CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH. Undefined (with `SKIP:`
 * logged) for root without a working setpriv.
 */
export function withoutPermissionOverride(t: ExecutionContext): string[] | undefined {
  if (process.getuid?.() !== 0) return [];
  const prefix = ["setpriv", "--bounding-set=-dac_override,-dac_read_search", "--"];
  try {
    execFileSync(prefix[0] as string, [...prefix.slice(1), "true"], { stdio: ["ignore", "ignore", "pipe"] });
  } catch (error) {
    t.log(`SKIP: root ignores permission bits and setpriv cannot take that away here (${said(error)})`);
    return undefined;
  }
  return prefix;
}
