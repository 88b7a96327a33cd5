/**
 * Where the helper's printed commands must run: the three places git 2.39 starts the helper from (a clone's
 * fetch, the clone's checkout, any fetch in a working tree), measured with a probe helper.
 */
import test from "ava";
import {
  cdPrefix,
  gitSubcommand,
  pullCommand,
  userGitCommand,
  userObjectsDir,
  userWorkTree,
} from "./user-command.js";

const noIndex = () => false;
const hasIndex = () => true;

test("a clone's fetch runs from the user's folder: cd to the new folder, relative", (t) => {
  const env = { GIT_DIR: "/home/u/work/big/.git" };
  t.is(cdPrefix({ env, cwd: "/home/u/work", exists: noIndex }), "cd big && ");
  t.is(cdPrefix({ env, cwd: "/home/u/elsewhere", exists: noIndex }), "cd ../work/big && ");
  t.is(
    cdPrefix({ env: { GIT_DIR: "/tmp/a b/it's/.git" }, cwd: "/tmp", exists: noIndex }),
    `cd "a b/it's" && `,
  );
  t.is(
    cdPrefix({ env: { GIT_DIR: "/tmp/a $b/it's/.git" }, cwd: "/tmp", exists: noIndex }),
    "cd 'a $b/it'\\''s' && ",
  );
});

test("the clone's checkout runs inside the new folder before it has an index: cd to its absolute path", (t) => {
  const env = { GIT_DIR: "/home/u/work/big/.git" };
  t.is(cdPrefix({ env, cwd: "/home/u/work/big", exists: noIndex }), "cd /home/u/work/big && ");
});

test("a fetch in a working tree with an index needs no cd, whatever its GIT_DIR looks like", (t) => {
  t.is(cdPrefix({ env: { GIT_DIR: ".git" }, cwd: "/home/u/work/big", exists: hasIndex }), "");
  t.is(cdPrefix({ env: { GIT_DIR: "/r/.git/worktrees/x" }, cwd: "/wt/x", exists: hasIndex }), "");
  t.is(cdPrefix({ env: {}, cwd: "/anywhere" }), "");
  t.is(cdPrefix({ env: { GIT_DIR: "/srv/bare.git" }, cwd: "/srv", exists: noIndex }), "", "bare: no tree");
});

test("GIT_WORK_TREE wins over the folder of GIT_DIR", (t) => {
  t.is(userWorkTree({ env: { GIT_DIR: "/g/.git", GIT_WORK_TREE: "../w" }, cwd: "/g/sub" }), "/g/w");
});

test("a pull is repeated with its plain-word options; anything else is a fetch", (t) => {
  t.is(pullCommand({ GIT_REFLOG_ACTION: "pull --rebase -q" }), "pull --rebase -q");
  t.is(pullCommand({ GIT_REFLOG_ACTION: "pull" }), "pull");
  t.is(pullCommand({ GIT_REFLOG_ACTION: "pull origin 'a b'" }), "pull");
  t.is(pullCommand({ GIT_REFLOG_ACTION: "pullx" }), undefined);
  t.is(pullCommand({}), undefined);
});

test("the objects folder of a linked worktree is in its common dir", (t) => {
  t.is(userObjectsDir({ env: { GIT_DIR: ".git" }, cwd: "/w" }), "/w/.git/objects");
  t.is(userObjectsDir({ env: { GIT_DIR: ".git", GIT_COMMON_DIR: "/c" }, cwd: "/w" }), "/c/objects");
  t.is(userObjectsDir({ env: { GIT_OBJECT_DIRECTORY: "o" }, cwd: "/w" }), "/w/o");
  t.is(userObjectsDir({ env: {}, cwd: "/w" }), undefined);
});

test("svc init says where its user stands: the cd is relative to that folder", (t) => {
  const env = { GIT_DIR: "/home/u/work/big/.git", SVC_USER_CWD: "/home/u/work" };
  t.is(cdPrefix({ env, cwd: "/home/u/work/big", exists: noIndex }), "cd big && ");
  t.is(
    cdPrefix({ env: { ...env, SVC_USER_CWD: "/home/u/work/big/issues" }, cwd: "/x", exists: noIndex }),
    "",
  );
});

/** The ancestors of a helper started for a lazy fetch of `git checkout main`, as /proc shows them. */
const CHECKOUT_CHAIN = [
  ["/usr/lib/git-core/git", "remote-svc", "origin", "http://127.0.0.1:38357/projects/big"],
  [
    "/usr/lib/git-core/git",
    "-c",
    "fetch.negotiationAlgorithm=noop",
    "fetch",
    "origin",
    "--no-tags",
    "--no-write-fetch-head",
    "--recurse-submodules=no",
    "--filter=blob:none",
    "--stdin",
  ],
  ["git", "-C", "big", "checkout", "main"],
  ["bash"],
];

test("the user's git command is the first ancestor that is not git's own remote helper or a fetch git started", (t) => {
  t.deepEqual(userGitCommand(CHECKOUT_CHAIN), ["git", "-C", "big", "checkout", "main"]);
  t.deepEqual(
    userGitCommand([
      ["/usr/bin/git", "clone", "x", "y"],
      ["node", "svc"],
    ]),
    ["git", "clone", "x", "y"],
  );
  t.is(userGitCommand([CHECKOUT_CHAIN[0] as string[], ["python3", "script.py"]]), undefined);
  t.deepEqual(
    userGitCommand([CHECKOUT_CHAIN[0] as string[], ["git", "fetch", "origin"], ["bash"]]),
    ["git", "fetch", "origin"],
    "a fetch the user ran",
  );
  t.deepEqual(
    userGitCommand([CHECKOUT_CHAIN[0] as string[], ["git", "fetch"], ["git", "pull", "--no-rebase"]]),
    ["git", "pull", "--no-rebase"],
    "the fetch of a pull",
  );
  t.is(userGitCommand([]), undefined);
});

test("gitSubcommand skips git's own options", (t) => {
  t.is(
    gitSubcommand(["git", "-c", "a=b", "-C", "dir", "--no-pager", "sparse-checkout", "set"]),
    "sparse-checkout",
  );
  t.is(gitSubcommand(["git", "--git-dir", "x", "clone"]), "clone");
  t.is(gitSubcommand(["git"]), undefined);
  t.is(gitSubcommand(["node", "clone"]), undefined);
});
