/**
 * The fake forge's JSON: GitHub's `full-repository`, `issue`, `issue-comment`, `label`, `simple-user` and
 * `private-user` (`GET /user`) with every member the description requires, API URLs on the fake's origin and web URLs under its `/web`.
 */
import { isoSeconds } from "./http.js";
import type { Comment, Forge, Issue, Milestone, Repo } from "./store.js";
import { REACTIONS } from "./vendor-data.js";

/** GitHub's JSON for the state (the OpenAPI `issue`, `label`, `simple-user`), with API URLs on the fake's origin. */
export class Shapes {
  /** ASSUMPTION: web pages (html_url) live under the fake's own origin, so nothing points at github.com. */
  private readonly web: string;

  constructor(
    private readonly origin: string,
    private readonly forge: Forge,
  ) {
    this.web = `${origin}/web`;
  }

  repoApi(repo: Repo): string {
    return `${this.origin}/repos/${repo.owner}/${repo.name}`;
  }

  /**
   * GitHub's `full-repository`. ASSUMPTION: the dates (the fake has no history of the repository itself)
   * and the counts svc never reads (forks, stars, watchers, size: 0).
   */
  repository(repo: Repo): object {
    const api = this.repoApi(repo);
    const full = `${repo.owner}/${repo.name}`;
    const open = [...repo.issues.values()].filter((issue) => issue.state === "open").length;
    const created = "2020-01-01T00:00:00Z";
    return {
      id: repo.id,
      node_id: `R_kgDO${Buffer.from(String(repo.id)).toString("base64url")}`,
      name: repo.name,
      full_name: full,
      owner: this.user(repo.owner),
      private: false,
      html_url: `${this.web}/${full}`,
      description: null,
      fork: false,
      url: api,
      ...this.repositoryUrls(api, full),
      clone_url: `${this.web}/${full}.git`,
      mirror_url: null,
      hooks_url: `${api}/hooks`,
      svn_url: `${this.web}/${full}`,
      homepage: null,
      language: null,
      forks: 0,
      forks_count: 0,
      stargazers_count: 0,
      watchers: 0,
      watchers_count: 0,
      size: 0,
      default_branch: "main",
      open_issues: open,
      open_issues_count: open,
      has_issues: !repo.issuesDisabled,
      permissions: { admin: false, maintain: false, push: repo.pushAccess, triage: true, pull: true },
      has_projects: false,
      has_wiki: false,
      has_pages: false,
      has_discussions: false,
      archived: false,
      disabled: false,
      license: null,
      pushed_at: created,
      created_at: created,
      updated_at: created,
      network_count: 0,
      subscribers_count: 0,
    };
  }

  /** The hypermedia URL templates of a `full-repository` (`{/sha}` and the like, RFC 6570). */
  private repositoryUrls(api: string, full: string): object {
    return {
      archive_url: `${api}/{archive_format}{/ref}`,
      assignees_url: `${api}/assignees{/user}`,
      blobs_url: `${api}/git/blobs{/sha}`,
      branches_url: `${api}/branches{/branch}`,
      collaborators_url: `${api}/collaborators{/collaborator}`,
      comments_url: `${api}/comments{/number}`,
      commits_url: `${api}/commits{/sha}`,
      compare_url: `${api}/compare/{base}...{head}`,
      contents_url: `${api}/contents/{+path}`,
      contributors_url: `${api}/contributors`,
      deployments_url: `${api}/deployments`,
      downloads_url: `${api}/downloads`,
      events_url: `${api}/events`,
      forks_url: `${api}/forks`,
      git_commits_url: `${api}/git/commits{/sha}`,
      git_refs_url: `${api}/git/refs{/sha}`,
      git_tags_url: `${api}/git/tags{/sha}`,
      git_url: `git://${new URL(this.origin).host}/${full}.git`,
      issue_comment_url: `${api}/issues/comments{/number}`,
      issue_events_url: `${api}/issues/events{/number}`,
      issues_url: `${api}/issues{/number}`,
      keys_url: `${api}/keys{/key_id}`,
      labels_url: `${api}/labels{/name}`,
      languages_url: `${api}/languages`,
      merges_url: `${api}/merges`,
      milestones_url: `${api}/milestones{/number}`,
      notifications_url: `${api}/notifications{?since,all,participating}`,
      pulls_url: `${api}/pulls{/number}`,
      releases_url: `${api}/releases{/id}`,
      ssh_url: `git@${new URL(this.origin).hostname}:${full}.git`,
      stargazers_url: `${api}/stargazers`,
      statuses_url: `${api}/statuses/{sha}`,
      subscribers_url: `${api}/subscribers`,
      subscription_url: `${api}/subscription`,
      tags_url: `${api}/tags`,
      teams_url: `${api}/teams`,
      trees_url: `${api}/git/trees{/sha}`,
    };
  }

  user(login: string): object {
    const id = this.forge.userId(login);
    const api = `${this.origin}/users/${login}`;
    return {
      login,
      id,
      node_id: `U_kgDO${Buffer.from(String(id)).toString("base64url")}`,
      avatar_url: `${this.web}/avatars/${id}`,
      gravatar_id: "",
      url: api,
      html_url: `${this.web}/${login}`,
      followers_url: `${api}/followers`,
      following_url: `${api}/following{/other_user}`,
      gists_url: `${api}/gists{/gist_id}`,
      starred_url: `${api}/starred{/owner}{/repo}`,
      subscriptions_url: `${api}/subscriptions`,
      organizations_url: `${api}/orgs`,
      repos_url: `${api}/repos`,
      events_url: `${api}/events{/privacy}`,
      received_events_url: `${api}/received_events`,
      type: "User",
      user_view_type: "public",
      site_admin: false,
    };
  }

  /** The issue's labels as the labels endpoints answer them. */
  labels(repo: Repo, issue: Issue): object[] {
    return issue.labels.map((name) => {
      const label = this.forge.labelOf(repo, name);
      return {
        id: label.id,
        node_id: `LA_kwDO${Buffer.from(String(label.id)).toString("base64url")}`,
        url: `${this.repoApi(repo)}/labels/${encodeURIComponent(label.name)}`,
        name: label.name,
        color: label.color,
        default: label.default,
        description: label.description,
      };
    });
  }

  issue(repo: Repo, issue: Issue): object {
    const api = `${this.repoApi(repo)}/issues/${issue.number}`;
    const closedAt = issue.closedMs === null ? null : isoSeconds(issue.closedMs);
    return {
      id: issue.id,
      node_id: `${issue.pullRequest ? "PR" : "I"}_kwDO${Buffer.from(String(issue.id)).toString("base64url")}`,
      url: api,
      repository_url: this.repoApi(repo),
      labels_url: `${api}/labels{/name}`,
      comments_url: `${api}/comments`,
      events_url: `${api}/events`,
      html_url: `${this.web}/${repo.owner}/${repo.name}/${issue.pullRequest ? "pull" : "issues"}/${issue.number}`,
      number: issue.number,
      state: issue.state,
      title: issue.title,
      body: issue.body,
      user: this.user(issue.author),
      labels: this.labels(repo, issue),
      assignee: issue.assignees[0] === undefined ? null : this.user(issue.assignees[0]),
      assignees: issue.assignees.map((login) => this.user(login)),
      ...this.planningMembers(repo, issue),
      locked: false,
      active_lock_reason: null,
      comments: issue.commentCount,
      ...(issue.pullRequest ? { pull_request: this.pullRequest(repo, issue, closedAt), draft: false } : {}),
      closed_at: closedAt,
      created_at: isoSeconds(issue.createdMs),
      updated_at: isoSeconds(issue.updatedMs),
      closed_by: issue.closedBy === null ? null : this.user(issue.closedBy),
      author_association: issue.author === repo.owner ? "OWNER" : "COLLABORATOR",
      state_reason: issue.stateReason,
      timeline_url: `${api}/timeline`,
      performed_via_github_app: null,
      reactions: {
        url: `${api}/reactions`,
        total_count: 0,
        ...Object.fromEntries(REACTIONS.map((r) => [r, 0])),
      },
    };
  }

  /** The issue object's `milestone`, `type` and `parent_issue_url` (issue 35). */
  private planningMembers(repo: Repo, issue: Issue): object {
    const parent = issue.parent;
    return {
      milestone: issue.milestone && this.milestone(repo, issue.milestone),
      type: issue.type && this.issueType(repo, issue.type),
      parent_issue_url: parent && `${this.repoApi(parent.repo)}/issues/${parent.number}`,
    };
  }

  /** GitHub's `milestone`. ASSUMPTION: open, no description or due date, its creator the repository's owner. */
  milestone(repo: Repo, milestone: Milestone): object {
    const api = `${this.repoApi(repo)}/milestones/${milestone.number}`;
    const issues = [...repo.issues.values()].filter((issue) => issue.milestone === milestone);
    const created = isoSeconds(milestone.createdMs);
    return {
      url: api,
      html_url: `${this.web}/${repo.owner}/${repo.name}/milestone/${milestone.number}`,
      labels_url: `${api}/labels`,
      id: milestone.id,
      node_id: `MI_kwDO${Buffer.from(String(milestone.id)).toString("base64url")}`,
      number: milestone.number,
      state: "open",
      title: milestone.title,
      description: null,
      creator: this.user(repo.owner),
      open_issues: issues.filter((issue) => issue.state === "open").length,
      closed_issues: issues.filter((issue) => issue.state === "closed").length,
      created_at: created,
      updated_at: created,
      closed_at: null,
      due_on: null,
    };
  }

  /** GitHub's `issue-type`. ASSUMPTION: the ids and dates, which svc never reads. */
  issueType(repo: Repo, name: string): object {
    const id = 70_000 + (repo.issueTypes?.indexOf(name) ?? 0);
    return {
      id,
      node_id: `IT_kwDO${Buffer.from(String(id)).toString("base64url")}`,
      name,
      description: null,
      color: "gray",
      created_at: "2020-01-01T00:00:00Z",
      updated_at: "2020-01-01T00:00:00Z",
      is_enabled: true,
    };
  }

  /**
   * GitHub's `issue-comment`. `issue_url` names the issue by number whether it is an issue or a pull request;
   * `html_url` is the web page of either (`…/pull/<n>#issuecomment-<id>` for a pull request, as GitHub
   * writes it). ASSUMPTION: `body` is sent without `body_text`/`body_html` (those need a media type svc never
   * asks for).
   */
  comment(repo: Repo, comment: Comment): object {
    const api = this.repoApi(repo);
    const issue = repo.issues.get(comment.issueNumber);
    const kind = issue?.pullRequest ? "pull" : "issues";
    return {
      id: comment.id,
      node_id: `IC_kwDO${Buffer.from(String(comment.id)).toString("base64url")}`,
      url: `${api}/issues/comments/${comment.id}`,
      html_url: `${this.web}/${repo.owner}/${repo.name}/${kind}/${comment.issueNumber}#issuecomment-${comment.id}`,
      body: comment.body,
      user: this.user(comment.author),
      created_at: isoSeconds(comment.createdMs),
      updated_at: isoSeconds(comment.updatedMs),
      issue_url: `${api}/issues/${comment.issueNumber}`,
      author_association: comment.author === repo.owner ? "OWNER" : "COLLABORATOR",
      performed_via_github_app: null,
      reactions: {
        url: `${api}/issues/comments/${comment.id}/reactions`,
        total_count: 0,
        ...Object.fromEntries(REACTIONS.map((r) => [r, 0])),
      },
    };
  }

  /**
   * `GET /user` for the token's user: GitHub's `private-user` (the profile as its owner sees it).
   * ASSUMPTION: the profile's counts and dates, which svc never reads.
   */
  authenticatedUser(login: string): object {
    const created = "2020-01-01T00:00:00Z";
    return {
      ...this.user(login),
      user_view_type: "private",
      name: null,
      company: null,
      blog: "",
      location: null,
      email: null,
      hireable: null,
      bio: null,
      public_repos: 0,
      public_gists: 0,
      followers: 0,
      following: 0,
      created_at: created,
      updated_at: created,
      private_gists: 0,
      total_private_repos: 0,
      owned_private_repos: 0,
      disk_usage: 0,
      collaborators: 0,
      two_factor_authentication: true,
    };
  }

  /** ASSUMPTION: a pull request closed as completed was merged when it was closed. */
  private pullRequest(repo: Repo, issue: Issue, closedAt: string | null): object {
    const html = `${this.web}/${repo.owner}/${repo.name}/pull/${issue.number}`;
    return {
      url: `${this.repoApi(repo)}/pulls/${issue.number}`,
      html_url: html,
      diff_url: `${html}.diff`,
      patch_url: `${html}.patch`,
      merged_at: issue.stateReason === "completed" ? closedAt : null,
    };
  }
}
