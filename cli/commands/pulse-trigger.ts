import { Command, Option } from "clipanion";
import { UserFacingError } from "../../core/errors.js";
import type { HttpClient } from "../../core/http.js";
import { parseTimeArgument, readTime } from "../../core/time-arg.js";
import {
  apiBaseUrl,
  ConfigReader,
  checkToken,
  loadEnvironment,
  readApiAddress,
} from "../../server/pulse/config.js";
import { EXIT, SvcCommand } from "../command.js";
import { withValueName } from "../command-spec.js";

interface TriggerAnswer {
  readonly pulse?: { id: number; status: string; scheduled_at: string; priority: string };
  readonly deduplicated?: boolean;
  readonly error?: { code: string; message: string };
}

/**
 * `--at` as the daemon is sent it: a time without a zone is the user's local time, sent as UTC (the daemon
 * refuses one: its clock is not the user's); any other form as typed, relative ones read by the daemon
 * against its own clock, and what it cannot read refused by it with its own message.
 */
export function scheduledAtToSend(at: string, now = Date.now()): string {
  if (readTime(at, now, { zone: "required" }).kind !== "no-zone") return at;
  return new Date(parseTimeArgument("--at", at, now)).toISOString();
}

export class PulseTriggerCommand extends SvcCommand {
  static override paths = [["pulse", "trigger"]];

  static override usage = Command.Usage({
    category: "The pulse daemon",
    description: "Queue a pulse through the running daemon's API",
    details: `
      Sends \`POST /api/pulse/trigger\` to the daemon at PULSE_API_HOST:PULSE_API_PORT with PULSE_API_TOKEN.
      The prompt is the arguments joined by spaces, or standard input when it is \`-\`. \`--at\` takes
      \`now\`, an RFC 3339 time with a zone (2026-11-22T09:00:00+01:00), a relative time (+30s, +15m, +2h,
      +1d, in 2 hours, 3 hours ago), @<seconds since 1970>, or a time without a zone (2026-11-23 14:30,
      2026-11-23), which is this machine's local time and is sent as UTC. With \`--dedup-key\`, a second
      trigger with the same key returns the first pulse.

      Exit codes: 0 queued (or already queued with that key); 1 refused by the daemon; 2 the daemon cannot be
      reached or the input is wrong; 78 the configuration is unusable.
    `,
    examples: [
      ["Now", "svc pulse trigger --environment /etc/svc/pulse.env 'Summarize the open pull requests'"],
      [
        "In two hours, once",
        "svc pulse trigger --at +2h --dedup-key standup-2026-11-23 'Prepare the standup'",
      ],
    ],
  });

  envFile = withValueName(
    "file",
    Option.String("--environment,--env-file", { description: "Environment file (KEY=value lines)" }),
  );
  at = withValueName(
    "when",
    Option.String("--at", "now", {
      description: "When: now, RFC 3339, a local time, or +15m/+2h/+1d (see --help)",
    }),
  );
  priority = withValueName(
    "priority",
    Option.String("--priority", "normal", {
      description: "critical, high, normal (the default), low or deferred",
    }),
  );
  source = withValueName(
    "label",
    Option.String("--source", "cli", { description: "Origin label (default cli)" }),
  );
  dedupKey = withValueName(
    "key",
    Option.String("--dedup-key", { description: "Queue at most one pulse for this key" }),
  );
  json = Option.Boolean("--json", false, { description: "Print the daemon's JSON answer" });
  prompt = Option.Rest({ required: 1 });

  async run(): Promise<number> {
    const { BackendUnreachableError, HttpClient } = await import("../../core/http.js");
    const reader = new ConfigReader(loadEnvironment(this.envFile));
    const address = readApiAddress(reader);
    const token = checkToken(reader, "PULSE_API_TOKEN", true);
    reader.check();
    const prompt =
      this.prompt.length === 1 && this.prompt[0] === "-" ? await this.readStdin() : this.prompt.join(" ");
    const base = apiBaseUrl(address);
    const client = new HttpClient({
      agent: "svc-pulse-trigger",
      allowedOrigins: new URL(base).origin,
      timeoutMs: 15_000,
    });
    const body = {
      prompt,
      scheduled_at: scheduledAtToSend(this.at),
      priority: this.priority,
      source: this.source,
      ...(this.dedupKey === undefined ? {} : { dedup_key: this.dedupKey }),
    };
    let response: Awaited<ReturnType<HttpClient["request"]>>;
    try {
      response = await client.request({
        method: "POST",
        url: `${base}/api/pulse/trigger`,
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
        body: JSON.stringify(body),
      });
    } catch (error) {
      if (error instanceof BackendUnreachableError) {
        throw new UserFacingError(
          "SVC_BACKEND",
          `cannot reach the pulse daemon at ${base}: is it running (svc pulse daemon, or systemctl status svc-pulse)?`,
          { cause: error },
        );
      }
      throw error;
    }
    let answer: TriggerAnswer;
    try {
      answer = JSON.parse(response.body.toString("utf8")) as TriggerAnswer;
    } catch {
      throw new UserFacingError(
        "SVC_BACKEND",
        `the daemon at ${base} answered ${response.status} without JSON`,
      );
    }
    if (this.json) this.context.stdout.write(`${JSON.stringify(answer)}\n`);
    if ((response.status === 201 || response.status === 200) && answer.pulse) {
      if (!this.json) {
        const { id, status, scheduled_at, priority } = answer.pulse;
        this.context.stdout.write(
          answer.deduplicated
            ? `already queued as pulse ${id} (${status}); dedup key ${this.dedupKey}\n`
            : `pulse ${id} queued (${priority}, runs at ${scheduled_at})\n`,
        );
      }
      return EXIT.ok;
    }
    this.context.stderr.write(
      `svc: the daemon refused the pulse (${response.status}): ${answer.error?.message ?? "no reason given"}\n`,
    );
    return EXIT.rejected;
  }

  private async readStdin(): Promise<string> {
    const chunks: Buffer[] = [];
    for await (const chunk of this.context.stdin) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks).toString("utf8");
  }
}
