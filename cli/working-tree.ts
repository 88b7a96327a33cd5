/**
 * The svc remote of a working tree, as the commands that work inside one (`svc sync`, `svc log`) read it.
 */
import { UserFacingError } from "../core/errors.js";
import { parseRemoteUrlLookingUp, type RemoteUrl } from "../core/remote-url.js";
import { remoteUrlOf } from "../git/user-git.js";

/** The parsed `svc::` URL of remote `name` in the working tree `dir`; refuses anything else, saying what to run. */
export async function svcRemoteOf(dir: string, name: string, command: string): Promise<RemoteUrl> {
  const url = (await remoteUrlOf(name, dir)) ?? "";
  if (!url.startsWith("svc::")) {
    throw new UserFacingError(
      "SVC_USAGE",
      `${dir} has no svc remote named ${name}${url ? ` (its URL is ${url})` : ""}; run ${command} inside a folder made by svc init`,
    );
  }
  return parseRemoteUrlLookingUp(url);
}
