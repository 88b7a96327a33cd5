/**
 * The svc remote of a working tree, as the commands that work inside one (`svc sync`, `svc log`) read it.
 */
import { UserFacingError } from "../core/errors.js";
import { parseRemoteUrlLookingUp, type RemoteUrl } from "../core/remote-url.js";
import { userGit } from "../git/user-git.js";

/** The parsed `svc::` URL of remote `name` in the working tree `dir`; refuses anything else, saying what to run. */
export async function svcRemoteOf(
  dir: string,
  name: string,
  command: string,
  stderr: NodeJS.WritableStream,
): Promise<RemoteUrl> {
  const config = await userGit(["config", "--get", `remote.${name}.url`], {
    cwd: dir,
    stream: stderr,
    captureStdout: true,
  });
  const url = config.stdout.trim();
  if (config.code !== 0 || !url.startsWith("svc::")) {
    throw new UserFacingError(
      "SVC_USAGE",
      `${dir} has no svc remote named ${name}${url ? ` (its URL is ${url})` : ""}; run ${command} inside a folder made by svc init`,
    );
  }
  return parseRemoteUrlLookingUp(url);
}
